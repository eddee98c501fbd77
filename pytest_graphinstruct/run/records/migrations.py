"""Older report shapes, each migrated to the current records (:mod:`.results`).

* ``graphinstruct-report/1`` (:func:`from_v1`): a plugin report of one cell (the cell object at
  the top), of several cells (``{"cells": [...]}``), or a ``score`` command report (no model or
  outcome: the model comes from the responses file name, the strategy is ``unknown``).  Its
  items become the current item JSON (:func:`_v1_item`) and are read as strictly as ours.
* the GraphInstruct release's ``*.quality.json`` files (:func:`from_release`:
  ``per_instruction``, ``per_level_scores``, ``total_score``, ``final_score``; ``metadata``
  optional).  Model and strategy come from the file name ``<model>-<strategy>.quality.json``
  (split at the first ``-``), so each cell's label is its file's; from the metadata only for a
  file named otherwise.

The release's files have no item outcome; an item counts as passed when its D4 is 1 (every
constraint held in every sample, the ``all`` pass rule), and the same rule applies to v1
``score`` reports.  Their TPV is the release's leaderboard TPV (mean of the per-instruction
``d5_tokens_per_valid`` that are finite and positive), so published tables reproduce; their
S_total and S_final are the file's own ``total_score``/``final_score``.

A field added to a current record needs no migration when its default is what an older report
meant; a renamed or reshaped one is migrated here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records.results import (
    PREVIOUS_SCHEMA,
    CellMetadata,
    CellReport,
    CellSummary,
    ItemResult,
    LevelRow,
    ReportError,
    RunReport,
    cell_label,
)
from pytest_graphinstruct.score.d5 import mean_instruction_tpv
from pytest_graphinstruct.score.levels import mean_present, s_total
from pytest_graphinstruct.vocab import DIMENSIONS, LEVELS, as_level

RELEASE_SOURCE = "release-quality-json"
RELEASE_SUFFIX = ".quality.json"


# -- graphinstruct-report/1 ------------------------------------------------------------------

def from_v1(data: Mapping[str, Any]) -> RunReport:
    """A ``graphinstruct-report/1`` report (one cell, several, or a ``score`` report) as the
    current records.

    Raises:
        ShapeError: a value that does not fit the current record (named by its path).
        KeyError, TypeError, ValueError: a v1 report missing one of its own fields.
    """
    if "cells" in data:
        cells = [_v1_cell(c) for c in data["cells"]]
        return with_pareto(cells, partial=bool(data.get("partial", False)), tool=None)
    meta = data.get("metadata") or {}
    if "model" in meta:
        return with_pareto([_v1_cell(data)], partial=bool(meta.get("partial", False)),
                           tool=meta.get("tool"))
    return _v1_score(data)


def _v1_item(r: Mapping[str, Any]) -> dict[str, Any]:
    """A v1 item as the current item's JSON: ``tpv`` is ``d5_tokens_per_valid``, and a
    missing ``d1_valid_rate`` is the share of valid samples."""
    samples = r.get("samples") or []
    item = {k: v for k, v in r.items() if k != "tpv"}
    item.setdefault("d5_tokens_per_valid", r.get("tpv"))
    if "d1_valid_rate" not in item:
        item["d1_valid_rate"] = (int(r.get("valid_samples") or 0) / len(samples)
                                 if samples else None)
    return item


def _v1_cell(c: Mapping[str, Any]) -> CellReport:
    meta = CellMetadata.from_json({**c["metadata"], "source": PREVIOUS_SCHEMA})
    items = tuple(ItemResult.from_json(_v1_item(r)) for r in c["per_instruction"])
    return CellReport(meta, CellSummary.from_json(c["summary"]),
                      {as_level(int(lv)): LevelRow.from_json(row)
                       for lv, row in c["per_level"].items()},
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


def from_release(data: Mapping[str, Any], name: str) -> RunReport:
    """A release ``*.quality.json`` file (named ``name``) as the current records (module
    docstring).

    Raises:
        ReportError: a field the commands compute with that is not what it must be.
        KeyError, TypeError, ValueError: a release file missing one of its own fields.
    """
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
            instruction_id=str(r["instruction_id"]), level=as_level(int(r["level"])), cell=label,
            model=model, strategy=strategy, method=method,
            outcome="passed" if d4 == 1.0 else "failed", d4_instruction_score=d4,
            valid_rate=r.get("d1_valid_rate"), tpv=r.get("d5_tokens_per_valid"),
            dimension_scores={d: dims.get(d) for d in DIMENSIONS},
            level_score=r.get("level_score"),
        ))
    named = {int(k): v for k, v in (data.get("per_level_scores") or {}).items()}
    if any(lv not in LEVELS for lv in named):
        raise ReportError(f"per_level_scores names levels outside 0-5: {sorted(named)}")
    levels = {lv: named[lv] for lv in LEVELS if lv in named}
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
        s_total=finite(data.get("total_score"), "total_score"),
        s_total_renormalized=total.renormalized,
        levels_present=tuple(total.levels_present), levels_missing=tuple(total.levels_missing),
        tpv=mean_instruction_tpv(r.tpv for r in items),
        s_final=finite(data.get("final_score"), "final_score"))
    metadata = CellMetadata(
        model=model, strategy=strategy, method=method,
        samples_per_instruction=samples if isinstance(samples, int) else None,
        quality_only=str(meta.get("eval_mode", "quality-only")) == "quality-only",
        source=RELEASE_SOURCE)
    cell = CellReport(metadata, summary, rows, tuple(items))
    return RunReport((cell,), tool=None)


def finite(value: Any, name: str) -> float | None:
    """``value`` as a float (``None`` stays ``None``).

    Raises:
        ReportError: not a finite number (a string, a boolean, NaN).
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ReportError(f"{name} is not a finite number: {value!r}")
    return float(value)
