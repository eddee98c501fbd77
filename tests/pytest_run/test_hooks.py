"""``GraphInstructPlugin``: each hook hands its step to the run driver, with what pytest gave it;
the fixtures' ``bench``, ``query`` and ``evaluate`` are the driver's."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_graphinstruct.pytest_run.hooks import GraphInstructPlugin

from .fakes import FakeConfig, FakeSession, FakeTerminalReporter


class RecordingDriver:
    """A driver that records each step it is handed (name, arguments) and answers a few."""

    def __init__(self, tmp_path: Path) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.config = FakeConfig(tmp_path)
        self.bench = "the session"
        self.report = None  # no report yet: the summary writes nothing
        self.worker = None

    def __getattr__(self, name: str) -> Any:
        def step(*args: Any) -> Any:
            self.calls.append((name, args))
            return f"{name} answered"
        return step


def _plugin(tmp_path: Path) -> tuple[GraphInstructPlugin, RecordingDriver]:
    driver = RecordingDriver(tmp_path)
    return GraphInstructPlugin(driver), driver


def _wrapped(gen: Generator[None, Any, Any], result: Any) -> Any:
    next(gen)
    with pytest.raises(StopIteration) as stop:
        gen.send(result)
    return stop.value.value


def test_the_fixtures_ask_the_driver(tmp_path: Path) -> None:
    plugin, driver = _plugin(tmp_path)
    assert plugin.bench == "the session"
    assert plugin.query("inst", "few-shot", 2, "m") == "query answered"
    assert plugin.evaluate("inst", ["a"], "zero-cot") == "evaluate answered"
    assert plugin.query("inst") == "query answered"
    assert driver.calls == [("query", ("inst", "few-shot", 2, "m")),
                            ("evaluate", ("inst", ["a"], "zero-cot")),
                            ("query", ("inst", "zero-shot", 0, None))]


def test_each_hook_hands_its_step_to_the_driver(tmp_path: Path) -> None:
    plugin, driver = _plugin(tmp_path)
    session, items = FakeSession(driver.config), ["an item"]
    plugin.pytest_sessionstart(session)
    plugin.pytest_collection_modifyitems(session, driver.config, items)
    plugin.pytest_collection_finish(session)
    plugin.pytest_runtest_logreport("a report")
    plugin.pytest_sessionfinish(session, 1)
    plugin.pytest_unconfigure(driver.config)
    assert driver.calls == [("start", (session,)), ("collect", (session, items)),
                            ("collected", (session,)), ("reported", ("a report",)),
                            ("end_session", (session, 1)), ("unconfigure", ())]


def test_makereport_records_the_report_and_returns_it_unchanged(tmp_path: Path) -> None:
    plugin, driver = _plugin(tmp_path)
    report = SimpleNamespace(when="call")
    gen = plugin.pytest_runtest_makereport("item", "call")
    assert _wrapped(gen, report) is report
    assert driver.calls == [("made_report", ("item", report, "call"))]


def test_the_run_loop_runs_inside_the_live_line_and_keeps_its_result(tmp_path: Path) -> None:
    plugin, driver = _plugin(tmp_path)
    driver.config.option.collectonly = True  # no live line: only the hand-over is seen
    gen = plugin.pytest_runtestloop(FakeSession(driver.config))
    assert _wrapped(gen, "loop result") == "loop result"


def test_the_terminal_summary_is_the_drivers(tmp_path: Path) -> None:
    plugin, _ = _plugin(tmp_path)
    reporter = FakeTerminalReporter()
    plugin.pytest_terminal_summary(reporter)
    assert reporter.sections == []  # no report yet


@pytest.mark.parametrize(("hook", "options"), [
    ("pytest_sessionstart", {"tryfirst": True}),  # before xdist starts its workers
    ("pytest_collection_modifyitems", {"tryfirst": True}),
    ("pytest_runtestloop", {"wrapper": True, "trylast": True}),  # inside the reporter's
    ("pytest_runtest_makereport", {"wrapper": True}),
    ("pytest_runtest_logreport", {"trylast": True}),
    ("pytest_unconfigure", {"trylast": True}),
])
def test_the_hooks_run_where_their_step_needs(hook: str, options: dict[str, bool]) -> None:
    marked = getattr(getattr(GraphInstructPlugin, hook), "pytest_impl", {})
    assert {k: marked.get(k) for k in options} == options
