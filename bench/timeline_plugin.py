"""A pytest plugin for bench/xdist_breakdown.py: each process of a run (the single process, the
xdist controller, each worker) appends one JSON line of wall-clock timestamps to the file named
by ``GI_TIMELINE_FILE``: when the process started (from ``/proc``), when pytest configured,
finished collecting, began its first item and ended its last (the controller: the first and
last report it received), and when ``pytest_sessionfinish`` began and ended (the run's scoring
and its report are written there); beside each mark, under ``"cpu"``, the process's CPU seconds
(user + system) spent by then.  Loaded with ``-p timeline_plugin`` (bench/ on PYTHONPATH);
it changes nothing in the run.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

PLUGIN_IMPORTED = time.time()


def _process_start() -> float | None:
    """This process's start (epoch seconds, 10 ms resolution): its start in clock ticks since
    boot (/proc/self/stat) against the boot clock now; None off Linux."""
    try:
        stat = Path("/proc/self/stat").read_text()
        ticks = int(stat.rsplit(")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
        return time.time() - age
    except (OSError, ValueError, IndexError, AttributeError):
        return None


class _Timeline:
    def __init__(self) -> None:
        self.marks: dict[str, float | None] = {"process_start": _process_start(),
                                               "plugin_imported": PLUGIN_IMPORTED}
        self.items = 0
        self.cpu: dict[str, float] = {}

    def mark(self, name: str, *, first: bool = False) -> None:
        if first and name in self.marks:
            return
        self.marks[name] = time.time()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        self.cpu[name] = usage.ru_utime + usage.ru_stime


_TIMELINE = _Timeline()


def role(config: pytest.Config) -> str:
    """The process's part in the run: ``single``, ``controller`` or the xdist worker's id."""
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        return str(worker.get("workerid", "gw?"))
    return "controller" if getattr(config.option, "numprocesses", None) else "single"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    _TIMELINE.mark("configure")


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    _TIMELINE.mark("collected")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _TIMELINE.mark("first_item", first=True)


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        _TIMELINE.mark("first_report", first=True)
        _TIMELINE.mark("last_report")
        _TIMELINE.items += 1


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, None, None]:
    _TIMELINE.mark("sessionfinish_start")
    yield
    _TIMELINE.mark("sessionfinish_end")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    _TIMELINE.mark("unconfigure")
    target = os.environ.get("GI_TIMELINE_FILE")
    if target:
        line = json.dumps({"role": role(config), "pid": os.getpid(), "items": _TIMELINE.items,
                           **_TIMELINE.marks,
                           "cpu": _TIMELINE.cpu})
        with open(target, "a", encoding="utf-8") as f:
            f.write(line + "\n")
