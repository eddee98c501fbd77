"""``--gi-dry-run`` at the edge: its hooks replace the run's, it refuses xdist, runs nothing,
opens no cache and writes no output, and prints the estimate."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_graphinstruct.pytest_run.dry_run import DryRunPlugin, dry_run_config, dry_run_lines
from pytest_graphinstruct.pytest_run.entry import activate
from pytest_graphinstruct.pytest_run.state import RunState
from pytest_graphinstruct.vocab import PYTEST_PLUGIN_NAME
from tests.plugin._suite import write_suite

from .fakes import FakeConfig, FakeSession, FakeTerminalReporter, run_config


def test_a_dry_run_registers_only_its_own_hooks_and_writes_nothing(tmp_path: Path) -> None:
    config = FakeConfig(tmp_path)
    report = tmp_path / "r.json"
    activate(config, {"model": "oracle", "suite": str(write_suite(tmp_path / "suite")),
                      "dry_run": True, "report": str(report)})
    (plugin,) = config.pluginmanager.registered.values()
    assert list(config.pluginmanager.registered) == [PYTEST_PLUGIN_NAME]
    assert isinstance(plugin, DryRunPlugin)
    assert plugin.state.run.report is None and plugin.state.run.cache_dir is None


def test_the_config_keeps_everything_but_the_cache_and_outputs(tmp_path: Path) -> None:
    run = run_config(tmp_path, samples="3", markdown=str(tmp_path / "m.md"), dry_run=True)
    dry = dry_run_config(run)
    assert dry.samples == 3 and dry.cells == run.cells and dry.dry_run
    assert (dry.markdown, dry.html, dry.report, dry.store, dry.cache_dir) == (None,) * 5


def test_it_refuses_xdist_and_runs_nothing(tmp_path: Path) -> None:
    run = run_config(tmp_path, dry_run=True)
    plugin = DryRunPlugin(RunState(FakeConfig(tmp_path), dry_run_config(run)))
    with pytest.raises(pytest.UsageError, match="--gi-dry-run runs in one process"):
        plugin.pytest_sessionstart(FakeSession(FakeConfig(tmp_path, numprocesses=2)))
    plugin.pytest_sessionstart(FakeSession(FakeConfig(tmp_path)))  # one process: fine
    assert plugin.pytest_runtestloop(FakeSession()) is True


def test_the_estimate_is_printed_in_the_summary(tmp_path: Path) -> None:
    run = run_config(tmp_path, dry_run=True)
    plugin = DryRunPlugin(RunState(FakeConfig(tmp_path), dry_run_config(run)))
    plugin.lines = dry_run_lines(plugin.state, [])  # no item selected
    reporter = FakeTerminalReporter()
    plugin.pytest_terminal_summary(reporter)  # type: ignore[arg-type]
    texts = reporter.texts()
    assert texts[0] == "GraphInstruct dry run: nothing was sent"
    assert any(t.split()[:3] == ["total", "0", "0"] for t in texts)


def test_a_bad_price_table_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "prices.json"
    bad.write_text("not json", encoding="utf-8")
    run = replace(run_config(tmp_path, dry_run=True), prices=bad)
    state = RunState(FakeConfig(tmp_path), dry_run_config(run))
    with pytest.raises(pytest.UsageError, match=r"prices\.json: not JSON"):
        dry_run_lines(state, [])
