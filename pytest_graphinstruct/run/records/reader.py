"""The one reader of report files, for every command that takes reports.

:func:`read_report` accepts our reports, ``graphinstruct-report/2``, read and checked field by
field by the records themselves (:meth:`~.results.RunReport.from_json`), and the older shapes
:mod:`~.migrations` turns into them: ``graphinstruct-report/1`` and the
GraphInstruct release's ``*.quality.json`` files.

Anything else raises :class:`~.results.ReportError` with one line that names the file and what
is wrong — never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_graphinstruct.escaping import escape
from pytest_graphinstruct.run.records.codec import ShapeError
from pytest_graphinstruct.run.records.migrations import finite, from_release, from_v1
from pytest_graphinstruct.run.records.results import (
    PREVIOUS_SCHEMA,
    SCHEMA,
    CellReport,
    ReportError,
    RunReport,
)

_KNOWN_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError)


def read_report(path: str | Path) -> RunReport:
    """Read any report file this package understands (see the module docstring).

    Raises:
        ReportError: the file is missing, unreadable, empty, not JSON, or not a report; the
            message is one line starting with the file's path.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise ReportError(f"{p}: is a directory, not a report file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{p}: cannot be read ({type(exc).__name__}: {exc})") from None
    if not text.strip():
        raise ReportError(f"{p}: the file is empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(f"{p}: not JSON ({exc.msg} at line {exc.lineno}, column "
                          f"{exc.colno})") from None
    try:
        return parse_report(data, name=p.name)
    except ReportError as exc:
        raise ReportError(f"{p}: {exc}") from None
    except ShapeError as exc:
        raise ReportError(f"{p}: not a GraphInstruct report (at {exc})") from None
    except _KNOWN_ERRORS as exc:
        raise ReportError(f"{p}: not a GraphInstruct report ({_describe(exc)})") from None


def read_whole_report(path: str | Path) -> RunReport:
    """:func:`read_report`, refusing a report that contradicts itself
    (:func:`contradiction`): what a verdict or a merge is built on (``gate``'s report and
    baseline, a run's baseline, ``merge``'s inputs).

    Raises:
        ReportError: as :func:`read_report`, or a contradiction (one line starting with the
            file's path).
    """
    return whole(read_report(path), path)


def whole(report: RunReport, path: str | Path) -> RunReport:
    """``report``, read from ``path``, when it does not contradict itself
    (:func:`contradiction`): the check of :func:`read_whole_report` on a report read already.

    Raises:
        ReportError: a contradiction (one line starting with the file's path).
    """
    problem = contradiction(report)
    if problem is not None:
        raise ReportError(f"{path}: the report contradicts itself: {problem}; it was edited "
                          "or damaged after its run wrote it (rerun, or restore the file)")
    return report


def contradiction(report: RunReport) -> str | None:
    """The first way ``report`` contradicts itself, in one phrase (``None``: none found): a
    cell that holds an instruction twice (which copy's scores and outcome would count is
    arbitrary), or coverage that says complete with ``selected`` items while its cells hold
    another number of results.  Labels and ids are escaped and cut."""
    for cell in report.cells:
        seen: set[str] = set()
        for r in cell.per_instruction:
            if r.instruction_id in seen:
                return (f"cell {escape(cell.label[:100])} holds instruction "
                        f"{escape(r.instruction_id[:100])} more than once")
            seen.add(r.instruction_id)
    coverage = report.coverage
    held = sum(len(c.per_instruction) for c in report.cells)
    if coverage.complete and coverage.selected is not None and coverage.selected != held:
        return (f"its coverage says {coverage.selected} item(s) selected and complete, but its "
                f"cells hold {held} result(s)")
    return None


def parse_report(data: Any, *, name: str = "") -> RunReport:
    """A report from its parsed JSON (``name``: the file name, for release files' metadata).

    Raises:
        ReportError: not one of the accepted shapes.
    """
    if not isinstance(data, Mapping):
        raise ReportError(f"not a GraphInstruct report (a JSON {_json_type(data)}, expected "
                          "an object)")
    schema = data.get("schema")
    if schema == SCHEMA:
        return RunReport.from_json(data)
    if schema == PREVIOUS_SCHEMA:
        return _checked(from_v1(data))
    if schema is not None:
        raise ReportError(f"unknown report schema {schema!r} (this version reads {SCHEMA}, "
                          f"{PREVIOUS_SCHEMA} and the release's quality.json)")
    if "per_instruction" in data and ("total_score" in data or "per_level_scores" in data):
        return _checked(from_release(data, name))
    raise ReportError("not a GraphInstruct report (no 'schema', and not a release "
                      "quality.json: expected 'per_instruction' and 'total_score')")


def _checked(report: RunReport) -> RunReport:
    """A migrated ``report`` when the numbers the commands compute with are numbers
    (``pareto`` places each cell by S_total and TPV, ``compare`` resamples the level scores);
    a report that only looks right (a string or a negative TPV where a number belongs) would
    otherwise fail later, far from the file.  (Our own reports are checked field by field as
    they are read.)

    Raises:
        ReportError: such a value, named with its cell and field.
    """
    for cell in report.cells:
        s = cell.summary
        for field in ("s_total", "s_total_renormalized", "s_final", "tpv"):
            value = finite(getattr(s, field), f"cell {cell.label}: summary.{field}")
            if field == "tpv" and value is not None and value < 0:
                raise ReportError(f"cell {cell.label}: summary.tpv is negative: {value!r}")
        for r in cell.per_instruction:
            finite(r.level_score, f"cell {cell.label}: {r.instruction_id}: level_score")
    return report


def _describe(exc: BaseException) -> str:
    """What a failed read of an older report's object means, in a few words."""
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    return f"{type(exc).__name__}: {exc}"


def _json_type(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")


def read_cells(paths: Sequence[str | Path]) -> dict[str, CellReport]:
    """Every cell of several report files, keyed by its distinct label (the label, with the
    prompt set when ``--gi-prompts`` made one: :attr:`~.results.CellMetadata.distinct_label`),
    so two runs that differ only in their prompts are two cells.

    Raises:
        ReportError: a file cannot be read, or two files hold a cell of the same label and
            prompt set.
    """
    cells: dict[str, CellReport] = {}
    where: dict[str, str] = {}
    for path in paths:
        for cell in read_report(path).cells:
            key = cell.metadata.distinct_label
            if key in cells:
                raise ReportError(f"{path}: cell {escape(key[:200])} is also in {where[key]}")
            cells[key] = cell
            where[key] = str(path)
    return cells

