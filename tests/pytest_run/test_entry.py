"""``activate``: the domain markers, then the run's hooks (its xdist hooks only with xdist), or a
usage error whose report says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphinstruct.pytest_run.entry import activate
from pytest_graphinstruct.pytest_run.hooks import GraphInstructPlugin
from pytest_graphinstruct.pytest_run.xdist_hooks import XDIST_PLUGIN_NAME, XdistHooks
from pytest_graphinstruct.suite.constraints import DOMAINS
from pytest_graphinstruct.vocab import PYTEST_PLUGIN_NAME
from tests.plugin._suite import write_suite

from .fakes import FakeConfig, FakePluginManager


def _raw(tmp_path: Path, **kw: object) -> dict[str, object]:
    return {"model": "oracle", "suite": str(write_suite(tmp_path / "suite")), **kw}


def test_without_a_run_only_the_domain_markers(tmp_path: Path) -> None:
    config = FakeConfig(tmp_path)
    activate(config, {})
    assert config.ini_lines == [("markers", f"{d}: GraphInstruct L4 domain {d}")
                                for d in sorted(DOMAINS)]
    assert config.pluginmanager.registered == {}


def test_a_run_registers_its_hooks_over_one_driver(tmp_path: Path) -> None:
    config = FakeConfig(tmp_path)
    activate(config, _raw(tmp_path))
    (name,) = config.pluginmanager.registered
    plugin = config.pluginmanager.registered[name]
    assert name == PYTEST_PLUGIN_NAME and isinstance(plugin, GraphInstructPlugin)
    assert plugin.driver.config is config and plugin.driver.run.models == ("oracle",)


def test_the_xdist_hooks_only_with_xdist(tmp_path: Path) -> None:
    config = FakeConfig(tmp_path, plugins=FakePluginManager("xdist"))
    activate(config, _raw(tmp_path))
    registered = config.pluginmanager.registered
    assert set(registered) == {PYTEST_PLUGIN_NAME, XDIST_PLUGIN_NAME}
    assert isinstance(registered[XDIST_PLUGIN_NAME], XdistHooks)
    assert registered[XDIST_PLUGIN_NAME].driver is registered[PYTEST_PLUGIN_NAME].driver


def test_a_bad_value_is_a_usage_error_the_report_repeats(tmp_path: Path) -> None:
    config = FakeConfig(tmp_path)
    report = tmp_path / "r.json"
    with pytest.raises(pytest.UsageError, match=r"^pytest-graphinstruct: .*samples") as info:
        activate(config, _raw(tmp_path, samples="0", report=str(report)))
    assert config.pluginmanager.registered == {}
    coverage = json.loads(report.read_text(encoding="utf-8"))["coverage"]
    assert coverage["reason"] == "usage error: " + " ".join(
        str(info.value).removeprefix("pytest-graphinstruct: ").split())
