"""``activate``: the domain markers, then the run's plugins (its xdist plugins only with xdist),
or a usage error whose report says why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphinstruct.pytest_run.collection import CollectionPlugin
from pytest_graphinstruct.pytest_run.entry import activate
from pytest_graphinstruct.pytest_run.lifecycle import RunLifecyclePlugin
from pytest_graphinstruct.pytest_run.live import LiveLinePlugin
from pytest_graphinstruct.pytest_run.outcomes import OutcomePlugin
from pytest_graphinstruct.pytest_run.service import AnswerServicePlugin
from pytest_graphinstruct.pytest_run.summary import SummaryPlugin
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


PLAIN = {PYTEST_PLUGIN_NAME: RunLifecyclePlugin,
         "graphinstruct-collection": CollectionPlugin,
         "graphinstruct-outcomes": OutcomePlugin,
         "graphinstruct-live": LiveLinePlugin,
         "graphinstruct-summary": SummaryPlugin}


def test_a_run_registers_one_plugin_per_concern_over_one_state(tmp_path: Path) -> None:
    config = FakeConfig(tmp_path)
    activate(config, _raw(tmp_path))
    registered = config.pluginmanager.registered
    assert {name: type(plugin) for name, plugin in registered.items()} == PLAIN
    (state,) = {id(plugin.state): plugin.state for plugin in registered.values()}.values()
    assert state.config is config and state.run.models == ("oracle",)


def test_the_xdist_plugins_only_with_xdist(tmp_path: Path) -> None:
    config = FakeConfig(tmp_path, plugins=FakePluginManager("xdist"))
    activate(config, _raw(tmp_path))
    registered = config.pluginmanager.registered
    assert {name: type(plugin) for name, plugin in registered.items()} == {
        **PLAIN, XDIST_PLUGIN_NAME: XdistHooks,
        "graphinstruct-service": AnswerServicePlugin}
    assert len({id(plugin.state) for plugin in registered.values()}) == 1


@pytest.mark.parametrize(("plugin", "hook", "options"), [
    (RunLifecyclePlugin, "pytest_sessionstart", {"tryfirst": True}),  # before xdist's workers
    (RunLifecyclePlugin, "pytest_unconfigure", {"trylast": True}),
    (CollectionPlugin, "pytest_collection_modifyitems", {"tryfirst": True}),
    (LiveLinePlugin, "pytest_runtestloop", {"wrapper": True, "trylast": True}),  # inside the
    (OutcomePlugin, "pytest_runtest_makereport", {"wrapper": True}),  # reporter's wrapper
    (OutcomePlugin, "pytest_runtest_logreport", {"trylast": True}),
    # after the run's start (no priority), before xdist's own start (trylast) opens workers
    (AnswerServicePlugin, "pytest_sessionstart", {"tryfirst": None, "trylast": None}),
    (AnswerServicePlugin, "pytest_sessionfinish", {"tryfirst": True}),
])
def test_the_hooks_run_where_their_step_needs(plugin: type, hook: str,
                                              options: dict[str, bool | None]) -> None:
    marked = getattr(getattr(plugin, hook), "pytest_impl", {})
    assert {k: marked.get(k) for k in options} == options


def test_a_bad_value_is_a_usage_error_the_report_repeats(tmp_path: Path) -> None:
    config = FakeConfig(tmp_path)
    report = tmp_path / "r.json"
    with pytest.raises(pytest.UsageError, match=r"^pytest-graphinstruct: .*samples") as info:
        activate(config, _raw(tmp_path, samples="0", report=str(report)))
    assert config.pluginmanager.registered == {}
    coverage = json.loads(report.read_text(encoding="utf-8"))["coverage"]
    assert coverage["reason"] == "usage error: " + " ".join(
        str(info.value).removeprefix("pytest-graphinstruct: ").split())
