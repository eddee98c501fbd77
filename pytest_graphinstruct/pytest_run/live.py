"""The live progress line while a run's items run (docs/PLUGIN.md, "Live progress"): shown by
the process that reports (never an xdist worker), when the terminal and options allow it
(:func:`~pytest_graphinstruct.report.live.line.live_enabled`)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_graphinstruct.pytest_run.state import RunState


class LiveLinePlugin:
    """Run the items inside the live line."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        # trylast: inside the terminal reporter's wrapper, so the live line is gone before it
        # writes its last ``[100%]``
        with live_line(self.state, session):
            return (yield)


def live_wanted(state: RunState) -> bool:
    """Whether this process shows the live line (never an xdist worker)."""
    from pytest_graphinstruct.report.live.line import live_enabled

    config = state.config
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if state.worker is not None or reporter is None:
        return False
    return live_enabled(state.run.progress, isatty=bool(reporter.isatty),
                        hasmarkup=bool(reporter.hasmarkup), verbosity=config.get_verbosity(),
                        capture_off=config.getoption("capture", None) == "no")


@contextlib.contextmanager
def live_line(state: RunState, session: pytest.Session) -> Iterator[None]:
    """Show the live line on the terminal writer's stream for the duration (nothing when the
    run only collects, the line is not wanted, or there are no items to watch)."""
    if session.config.option.collectonly or not live_wanted(state) or not (
            state.selected or state.controller):
        yield
        return
    from pytest_graphinstruct.report.live.line import LiveLine
    from pytest_graphinstruct.report.live.progress import ProgressMeter, progress_line

    writer = state.config.get_terminal_writer()
    stream = getattr(writer, "_file", None)  # pytest keeps no public handle on it
    if stream is None:
        yield
        return
    meter = ProgressMeter(time.monotonic())

    def render(width: int) -> str:
        selected = state.selected
        view = meter.observe(time.monotonic(), state.progress_counts(), state.items_done,
                             None if selected is None else len(selected),
                             state.batch_progress())
        return progress_line(view, width)

    live = LiveLine(stream, render, width=lambda: writer.fullwidth)
    writer._file = live
    live.start()
    try:
        yield
    finally:
        live.stop()
        writer._file = stream
