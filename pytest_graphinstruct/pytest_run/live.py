"""The live progress line while a run's items run (docs/PLUGIN.md, "Live progress"): shown by
the process that reports (never an xdist worker), when the terminal and options allow it
(:func:`~pytest_graphinstruct.report.live.line.live_enabled`)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_graphinstruct.pytest_run.driver import RunDriver


def live_wanted(driver: RunDriver) -> bool:
    """Whether this process shows the live line (never an xdist worker)."""
    from pytest_graphinstruct.report.live.line import live_enabled

    config = driver.config
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if driver.worker is not None or reporter is None:
        return False
    return live_enabled(driver.run.progress, isatty=bool(reporter.isatty),
                        hasmarkup=bool(reporter.hasmarkup), verbosity=config.get_verbosity(),
                        capture_off=config.getoption("capture", None) == "no")


@contextlib.contextmanager
def live_line(driver: RunDriver, session: pytest.Session) -> Iterator[None]:
    """Show the live line on the terminal writer's stream for the duration (nothing when the
    run only collects, the line is not wanted, or there are no items to watch)."""
    if session.config.option.collectonly or not live_wanted(driver) or not (
            driver.selected or driver.controller):
        yield
        return
    from pytest_graphinstruct.report.live.line import LiveLine
    from pytest_graphinstruct.report.live.progress import ProgressMeter, progress_line

    writer = driver.config.get_terminal_writer()
    stream = getattr(writer, "_file", None)  # pytest keeps no public handle on it
    if stream is None:
        yield
        return
    meter = ProgressMeter(time.monotonic())

    def render(width: int) -> str:
        selected = driver.selected
        view = meter.observe(time.monotonic(), driver.progress_counts(), driver.items_done,
                             None if selected is None else len(selected),
                             driver.batch_progress())
        return progress_line(view, width)

    live = LiveLine(stream, render, width=lambda: writer.fullwidth)
    writer._file = live
    live.start()
    try:
        yield
    finally:
        live.stop()
        writer._file = stream
