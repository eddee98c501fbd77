"""A run refused by a usage error: the error pytest shows, and the partial report that says why
(so an older complete report never stays in the place of the refused run's)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError

if TYPE_CHECKING:
    from pytest_graphinstruct.run.overwrites import Input


def one_line(text: str) -> str:
    """``text`` with every run of white space (newlines too) made one space."""
    return " ".join(text.split())


def usage_error(exc: GraphInstructError | str) -> pytest.UsageError:
    """The usage error pytest shows for ``exc`` (named after the plugin)."""
    return pytest.UsageError(f"pytest-graphinstruct: {exc}")


def write_stopped(path: Path | None, reason: str, *, inputs: Sequence[Input] = ()) -> None:
    """Write at ``path`` the report of a run that stopped before its session began (no cells,
    coverage reason ``reason``), unless ``path`` is ``None``, cannot be written, or would
    overwrite one of the run's ``inputs`` (the baseline, the answer cache's files:
    :func:`~.outputs.run_inputs`) — never overwritten by a refused run.  Never raises for
    I/O: what stopped the run is what the user must see."""
    from pytest_graphinstruct.run.overwrites import overwrite_problem
    from pytest_graphinstruct.run.records.results import Coverage, RunReport
    from pytest_graphinstruct.run.records.writer import unwritable_reason, write_report

    if path is None or unwritable_reason(path) is not None:
        return
    if overwrite_problem("--gi-report", path, inputs) is not None:
        return
    with contextlib.suppress(OSError):
        write_report(RunReport((), coverage=Coverage.partial(reason)), path)


def refuse(config: pytest.Config, raw: dict[str, Any],
           exc: GraphInstructError | str) -> pytest.UsageError:
    """The usage error to raise for a run refused before its plugin exists (raw options that
    do not validate), after the report of ``raw["report"]`` (``--gi-report`` as given) says
    so: coverage reason ``usage error: <why, one line>`` — unless it would overwrite a file
    the options name as an input (:func:`_raw_inputs`).  An xdist worker writes nothing (the
    controller writes)."""
    report = raw.get("report")
    if report is not None and getattr(config, "workerinput", None) is None:
        write_stopped(Path(report).expanduser(), f"usage error: {one_line(str(exc))}",
                      inputs=_raw_inputs(raw, config.rootpath))
    return usage_error(exc)


def _raw_inputs(raw: dict[str, Any], rootdir: Path) -> list[Input]:
    """The inputs that options not yet validated name (``raw``: texts by dest): the baseline,
    recorded answers, price table and suite as given, and the answer cache's files (of
    ``--gi-cache``, or the default folder under ``rootdir``, unless the cache is off)."""
    from pytest_graphinstruct.options import DEFAULT_CACHE_DIR
    from pytest_graphinstruct.pytest_run.outputs import named_inputs

    def given(dest: str) -> Path | None:
        value = raw.get(dest)
        return None if value is None or not str(value).strip() else Path(str(value)).expanduser()

    cache = given("cache")
    off = bool(raw.get("no_cache")) or (cache is not None and str(cache).lower() == "none")
    return named_inputs(baseline=given("baseline"), replay=given("replay"),
                        prices=given("prices"), suite=given("suite"),
                        cache=None if off else cache or rootdir / DEFAULT_CACHE_DIR)
