"""The one reader of report files, for every command that takes reports.

:func:`read_report` accepts

* our reports, ``graphinstruct-report/2`` (:class:`~.results.RunReport`);
* the previous shape, ``graphinstruct-report/1``: a plugin report of one cell (the cell object at
  the top), of several cells (``{"cells": [...]}``), or a ``score`` command report (no model
  or outcome: the model comes from the responses file name, the strategy is ``unknown``);
* the GraphInstruct release's ``*.quality.json`` files (``per_instruction``,
  ``per_level_scores``, ``total_score``, ``final_score``; ``metadata`` optional).  Model and
  strategy come from the file name ``<model>-<strategy>.quality.json`` (split at the first
  ``-``), so each cell's label is its file's; from the metadata only for a file named otherwise.

The release's files have no item outcome; an item counts as passed when its D4 is 1 (every
constraint held in every sample, the ``all`` pass rule), and the same rule applies to v1
``score`` reports.  Their TPV is the release's leaderboard TPV (mean of the per-instruction
``d5_tokens_per_valid`` that are finite and positive), so published tables reproduce; their
S_total and S_final are the file's own ``total_score``/``final_score``.

Anything else raises :class:`~.results.ReportError` with one line that names the file and what
is wrong — never a traceback.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.results import (
    PREVIOUS_SCHEMA,
    SCHEMA,
    CellMetadata,
    CellReport,
    CellSummary,
    ItemResult,
    LevelRow,
    ReportError,
    RunReport,
    cell_label,
    describe_error,
)
from pytest_graphinstruct.score.d5 import mean_instruction_tpv
from pytest_graphinstruct.score.levels import mean_present, s_total
from pytest_graphinstruct.vocab import DIMENSIONS, LEVELS

RELEASE_SOURCE = "release-quality-json"
RELEASE_SUFFIX = ".quality.json"
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
        return _checked(parse_report(data, name=p.name))
    except ReportError as exc:
        raise ReportError(f"{p}: {exc}") from None
    except _KNOWN_ERRORS as exc:
        raise ReportError(f"{p}: not a GraphInstruct report ({describe_error(exc)})") from None


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
        return _v1(data)
    if schema is not None:
        raise ReportError(f"unknown report schema {schema!r} (this version reads {SCHEMA}, "
                          f"{PREVIOUS_SCHEMA} and the release's quality.json)")
    if "per_instruction" in data and ("total_score" in data or "per_level_scores" in data):
        return _release(data, name)
    raise ReportError("not a GraphInstruct report (no 'schema', and not a release "
                      "quality.json: expected 'per_instruction' and 'total_score')")


def _checked(report: RunReport) -> RunReport:
    """``report`` when the numbers the commands compute with are numbers (``pareto`` places
    each cell by S_total and TPV, ``compare`` resamples the level scores); a report that only
    looks right (a string or a negative TPV where a number belongs) would otherwise fail later,
    far from the file.

    Raises:
        ReportError: such a value, named with its cell and field.
    """
    for cell in report.cells:
        s = cell.summary
        for field in ("s_total", "s_total_renormalized", "s_final", "tpv"):
            value = _number(getattr(s, field), f"cell {cell.label}: summary.{field}")
            if field == "tpv" and value is not None and value < 0:
                raise ReportError(f"cell {cell.label}: summary.tpv is negative: {value!r}")
        for r in cell.per_instruction:
            _number(r.level_score, f"cell {cell.label}: {r.instruction_id}: level_score")
    return report


def _json_type(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")


# -- graphinstruct-report/1 ------------------------------------------------------------------

def _v1(data: Mapping[str, Any]) -> RunReport:
    if "cells" in data:
        cells = [_v1_cell(c) for c in data["cells"]]
        return with_pareto(cells, partial=bool(data.get("partial", False)), tool=None)
    meta = data.get("metadata") or {}
    if "model" in meta:
        return with_pareto([_v1_cell(data)], partial=bool(meta.get("partial", False)),
                           tool=meta.get("tool"))
    return _v1_score(data)


def _v1_item(r: Mapping[str, Any]) -> dict[str, Any]:
    samples = r.get("samples") or []
    item = dict(r)
    item.setdefault("d5_tokens_per_valid", r.get("tpv"))
    if "d1_valid_rate" not in item:
        item["d1_valid_rate"] = (int(r.get("valid_samples") or 0) / len(samples)
                                 if samples else None)
    return item


def _v1_cell(c: Mapping[str, Any]) -> CellReport:
    meta = CellMetadata.from_json({**c["metadata"], "source": PREVIOUS_SCHEMA})
    items = tuple(ItemResult.from_json(_v1_item(r)) for r in c["per_instruction"])
    return CellReport(meta, CellSummary.from_json(c["summary"]),
                      {int(lv): LevelRow.from_json(row) for lv, row in c["per_level"].items()},
                      items)


def _v1_score(data: Mapping[str, Any]) -> RunReport:
    meta = data["metadata"]
    responses = str(meta.get("responses") or "responses")
    model = Path(responses).name.split(".")[0] or "responses"
    label = cell_label(model, "unknown")
    items = []
    for r in data["per_instruction"]:
        d4 = r.get("d4_instruction_score")
        items.append(ItemResult.from_json(_v1_item({
            **r, "cell": label, "model": model, "strategy": "unknown",
            "outcome": "passed" if d4 == 1.0 else "failed"})))
    cell = build_cell(CellMetadata(model=model, strategy="unknown", tool=meta.get("tool"),
                                   suite=meta.get("suite"), source=PREVIOUS_SCHEMA), items)
    return with_pareto([cell], tool=meta.get("tool"))


# -- the release's quality.json ----------------------------------------------------------------

def _release_names(meta: Mapping[str, Any], name: str) -> tuple[str, str, str]:
    """(model, strategy, method) from the file name ``<model>-<strategy>.quality.json``, else
    from the metadata, else from the file's stem.

    The file name comes first because it is the release's one unique, consistent key: the
    metadata of its method runs names the base strategy (fifteen ``gpt4omini-*`` files all say
    ``gpt-4o-mini`` / ``zero-shot``) and spells one model two ways (``QwenQwen35122BA10B``
    beside ``qwen35122ba10b``).  The "strategy" may name a method (``vgig-T5``, ``caap``); it is
    kept as written, with the baseline method, so each cell's label is the file's own."""
    release_name = name.endswith(RELEASE_SUFFIX)
    stem = name[: -len(RELEASE_SUFFIX)] if release_name else Path(name).stem
    head, _, tail = stem.partition("-")
    if release_name and head and tail:
        return head, tail, "baseline"
    model = str(meta.get("model") or head or "unknown")
    strategy = str(meta.get("strategy") or tail or "unknown")
    return model, strategy, "baseline"


def _release(data: Mapping[str, Any], name: str) -> RunReport:
    meta = data.get("metadata") or {}
    if not isinstance(meta, Mapping):
        raise ReportError("release 'metadata' is not an object")
    model, strategy, method = _release_names(meta, name)
    label = cell_label(model, strategy, method)
    items: list[ItemResult] = []
    for r in data["per_instruction"]:
        d4 = r.get("d4_instruction_score")
        dims = r.get("dimension_scores") or {}
        items.append(ItemResult(
            instruction_id=str(r["instruction_id"]), level=int(r["level"]), cell=label,
            model=model, strategy=strategy, method=method,
            outcome="passed" if d4 == 1.0 else "failed", d4_instruction_score=d4,
            valid_rate=r.get("d1_valid_rate"), tpv=r.get("d5_tokens_per_valid"),
            dimension_scores={d: dims.get(d) for d in DIMENSIONS},
            level_score=r.get("level_score"),
        ))
    levels = {int(k): v for k, v in (data.get("per_level_scores") or {}).items()}
    if any(lv not in LEVELS for lv in levels):
        raise ReportError(f"per_level_scores names levels outside 0-5: {sorted(levels)}")
    total = s_total({lv: v for lv, v in levels.items() if v is not None})
    rows = {}
    for lv, value in sorted(levels.items()):
        rs = [r for r in items if r.level == lv]
        rows[lv] = LevelRow(
            items=len(rs), passed=sum(r.passed for r in rs),
            failed=sum(not r.passed for r in rs), error=0, skipped=0,
            pass_rate=sum(r.passed for r in rs) / len(rs) if rs else None,
            dimensions={d: mean_present(r.dimension_scores.get(d) for r in rs)
                        for d in DIMENSIONS},
            level_score=value, level_score_ci95=None, scored_items=len(rs))
    samples = meta.get("samples")
    summary = CellSummary(
        items=len(items), passed=sum(r.passed for r in items),
        failed=sum(not r.passed for r in items), error=0, skipped=0,
        s_total=_number(data.get("total_score"), "total_score"),
        s_total_renormalized=total.renormalized,
        levels_present=tuple(total.levels_present), levels_missing=tuple(total.levels_missing),
        tpv=mean_instruction_tpv(r.tpv for r in items),
        s_final=_number(data.get("final_score"), "final_score"))
    metadata = CellMetadata(
        model=model, strategy=strategy, method=method,
        samples_per_instruction=samples if isinstance(samples, int) else None,
        quality_only=str(meta.get("eval_mode", "quality-only")) == "quality-only",
        source=RELEASE_SOURCE)
    cell = CellReport(metadata, summary, rows, tuple(items))
    return RunReport((cell,), tool=None)


def _number(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ReportError(f"{name} is not a finite number: {value!r}")
    return float(value)


def read_cells(paths: Sequence[str | Path]) -> dict[str, CellReport]:
    """Every cell of several report files, keyed by label.

    Raises:
        ReportError: a file cannot be read, or two files hold a cell of the same label.
    """
    cells: dict[str, CellReport] = {}
    where: dict[str, str] = {}
    for path in paths:
        for cell in read_report(path).cells:
            if cell.label in cells:
                raise ReportError(f"{path}: cell {cell.label} is also in {where[cell.label]}")
            cells[cell.label] = cell
            where[cell.label] = str(path)
    return cells

