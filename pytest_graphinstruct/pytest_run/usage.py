"""A run refused by a usage error: the error pytest shows, and the partial report that says why
(so an older complete report never stays in the place of the refused run's)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError


def one_line(text: str) -> str:
    """``text`` with every run of white space (newlines too) made one space."""
    return " ".join(text.split())


def usage_error(exc: GraphInstructError | str) -> pytest.UsageError:
    """The usage error pytest shows for ``exc`` (named after the plugin)."""
    return pytest.UsageError(f"pytest-graphinstruct: {exc}")


def write_stopped(path: Path | None, reason: str, *, baseline: Path | None = None) -> None:
    """Write at ``path`` the report of a run that stopped before its session began (no cells,
    coverage reason ``reason``), unless ``path`` is ``None``, cannot be written, or is the
    ``baseline``'s file (never overwritten by a refused run).  Never raises for I/O: what
    stopped the run is what the user must see."""
    from pytest_graphinstruct.run.records.results import Coverage, RunReport
    from pytest_graphinstruct.run.records.writer import same_file, unwritable_reason, write_report

    if path is None or unwritable_reason(path) is not None:
        return
    if baseline is not None and same_file(path, baseline):
        return
    with contextlib.suppress(OSError):
        write_report(RunReport((), coverage=Coverage.partial(reason)), path)


def refuse(config: pytest.Config, raw: dict[str, Any],
           exc: GraphInstructError | str) -> pytest.UsageError:
    """The usage error to raise for a run refused before its plugin exists (raw options that
    do not validate), after the report of ``raw["report"]`` (``--gi-report`` as given) says
    so: coverage reason ``usage error: <why, one line>``.  An xdist worker writes nothing (the
    controller writes)."""
    report, baseline = raw.get("report"), raw.get("baseline")
    if report is not None and getattr(config, "workerinput", None) is None:
        write_stopped(Path(report).expanduser(), f"usage error: {one_line(str(exc))}",
                      baseline=None if baseline is None else Path(baseline))
    return usage_error(exc)
