"""Each item's outcome: recorded for scoring where it ran, counted where it is reported, and
kept where pytest's own files need it (a JUnit class per cell, ``--lf`` for the model violations
shown as xfail)."""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Sequence
from pathlib import Path

import pytest

from pytest_graphinstruct.pytest_run.items import (
    GraphInstructItem,
    baseline_xfail,
    is_item_id,
    item_done,
    record_outcome,
)
from pytest_graphinstruct.pytest_run.state import RunState


class OutcomePlugin:
    """Record, count and keep the run's item outcomes."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None],
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if isinstance(item, GraphInstructItem):
            record_outcome(self.state.bench, item, report, call)
        return report

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """In the process that reports (the controller under xdist): show a pending stop
        line, count the item done, and note the model violations shown as xfail for ``--lf``
        (pytest's last-failed cache forgets xfails)."""
        state = self.state
        if state.worker is not None or not is_item_id(report.nodeid):
            return
        line = state.stopper.take_line()
        if line is not None:  # a signal during an item: pytest captured stderr
            state.config.get_terminal_writer().line("\n" + line, yellow=True)
        if item_done(report):
            state.items_done += 1
        if ((state.run.benchmark or state.plan.gated) and report.when == "call"
                and hasattr(report, "wasxfail") and not baseline_xfail(report)):
            state.violations_shown_as_xfail.append(report.nodeid)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Name the JUnit classes and keep the violations shown as xfail for ``--lf`` (pytest
        wrote both files at session finish)."""
        if self.state.worker is None:
            name_junit_classes(config)
            keep_for_last_failed(config, self.state.violations_shown_as_xfail)


def name_junit_classes(config: pytest.Config) -> None:
    """Give each GraphInstruct test case of the ``--junitxml`` file the class
    ``graphinstruct.<cell>`` (pytest names none: an item id has no module part).  The file is
    rewritten as pytest wrote it (its declaration, then the tree); nothing without
    ``--junitxml``, and a file that cannot be read or written is left as it is."""
    import xml.etree.ElementTree as ET

    path = config.getoption("xmlpath", None)
    if not path:
        return
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return
    named = False
    for case in root.iter("testcase"):
        name = case.get("name", "")
        if is_item_id(name) and not case.get("classname"):
            case.set("classname", f"graphinstruct.{name[name.index('[') + 1:-1]}")
            named = True
    if named:
        with contextlib.suppress(OSError):
            Path(path).write_text('<?xml version="1.0" encoding="utf-8"?>'
                                  + ET.tostring(root, encoding="unicode"), encoding="utf-8")


def keep_for_last_failed(config: pytest.Config, nodeids: Sequence[str]) -> None:
    """Add ``nodeids`` (model violations a gated or ``--gi-violations=report`` run showed as
    xfail) to pytest's last-failed record, so ``--lf`` reruns them: pytest's own record
    forgets xfails.  Through the public cache (``config.cache``); nothing without it."""
    cache = getattr(config, "cache", None)
    if cache is None or not nodeids:
        return
    failed = cache.get("cache/lastfailed", {})
    if isinstance(failed, dict):
        cache.set("cache/lastfailed", {**failed, **dict.fromkeys(nodeids, True)})
