"""The data document of the HTML report: one JSON-ready object with everything the page shows.

The page's tables are rendered from it by the template and its item table by the page's
script, so the document is the one place the page's data is decided.  Shape (``schema``
``graphinstruct-html/1``)::

    {"schema", "title", "partial", "coverage": [lines], "sources": [names],
     "baseline": name | null, "categories": [...], "classes": [...],
     "cells": [{"key", "model", "strategy", "method", "source", "summary": {...},
                "levels": [{"level", "items", ..., "dims": [D1..D5], "score", "ci"}],
                "taxonomy": {"classes": {...}, "categories": {...}},
                "consistency": {"rows": [{"level", "k", "items", "left_out", "flaky",
                                          "pass_at_1", "pass_at_k", "pass_all_k"}],
                                "flaky": [{"id", "level", "passing", "samples"}]}}],
                                            # consistency: only with 2+ samples per item
     "instructions": {id: text},            # only when a suite was given
     "gate": {"passed", "baseline", "failures", "compared", "baseline_update",  # the first
              "cells": [{"cell", "baseline_cell", "newly_failing",  # report's verdict,
                         "newly_passing", "levels": [{"level", "n", "change",  # or null
                                                      "low", "high", "p", "regressed",
                                                      "changes", "p_text", "verdict"}]}]},
     "items": [{"cell": index, "id", "level", "outcome", "score", "dims", "expected_failure",
                "error", "classes", "categories", "baseline": outcome | null, "differs",
                "samples": [{"class", "parsed", "refusal", "truncated", "error", "raw",
                             "tokens": [in, out], "calls", "violations", "derived",
                             "verdicts": [{"constraint", "category", "gap", "expected",
                                           "observed", "where"}],
                             "steps": [...], "drawing": {...} | {"omitted": reason}}]}]}

Every string from a report (answers, ids, labels) goes into the document as data; the page
shows it as text only.  Numbers are rounded to 4 decimals.  A gated level's ``changes``,
``p_text`` and ``verdict`` are the texts of the report's own record of it
(:class:`~pytest_graphinstruct.run.records.results.LevelChange`: ``changes_text``, ``p_text``,
``verdict_text``) — what the terminal and the Markdown summary print, the p-value labelled
Holm-adjusted or unadjusted; ``p`` is the Holm-adjusted p-value where the report holds it, else
the unadjusted one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_graphinstruct.graphs.model import ParsedGraph
from pytest_graphinstruct.report.render.html.cells import NamedReport, PageCell
from pytest_graphinstruct.report.render.html.drawing import Drawing, Omitted, draw
from pytest_graphinstruct.report.render.html.taxonomy import (
    CLASSES,
    Taxonomy,
    item_classes,
    sample_class,
)
from pytest_graphinstruct.run.records.results import (
    CellReport,
    ConsistencyRow,
    GateRecord,
    ItemResult,
    RunReport,
    SampleResult,
)
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.verdict import CATEGORIES
from pytest_graphinstruct.vocab import DIMENSIONS

DOCUMENT_SCHEMA = "graphinstruct-html/1"

DRAWN_SAMPLES = 2
"""Samples drawn per item: the first, and the first with violations when that is another."""


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), 4)


def document(cells: Sequence[PageCell], taxonomies: Sequence[Taxonomy], *,
             reports: Sequence[NamedReport], baseline: NamedReport | None = None,
             instructions: Mapping[str, Instruction] | None = None,
             title: str = "GraphInstruct report") -> dict[str, Any]:
    """The page's data document (see the module docstring) for ``cells`` (with their
    ``taxonomies``, in the same order), read from ``reports``; ``baseline`` marks the items
    whose outcome differs from it, ``instructions`` gives texts and L5 base graphs."""
    instructions = instructions or {}
    compare = _baseline_outcomes(baseline.report) if baseline is not None else None
    drawings: dict[tuple[str, str | None], Drawing | Omitted] = {}
    items: list[dict[str, Any]] = []
    for k, pc in enumerate(cells):
        for item in pc.cell.per_instruction:
            inst = instructions.get(item.instruction_id)
            items.append(_item(k, pc, item, inst, compare, drawings))
    shown_ids = {i["id"] for i in items}
    return {
        "schema": DOCUMENT_SCHEMA,
        "title": title,
        "partial": any(r.report.partial for r in reports),
        "coverage": [f"{r.name}: {r.report.coverage.describe()}" for r in reports
                     if r.report.partial],
        "sources": [r.name for r in reports],
        "baseline": baseline.name if baseline is not None else None,
        "categories": list(CATEGORIES),
        "classes": list(CLASSES),
        "dimensions": list(DIMENSIONS),
        "cells": [_cell(pc, t) for pc, t in zip(cells, taxonomies, strict=True)],
        "instructions": {i: inst.text for i, inst in sorted(instructions.items())
                         if i in shown_ids},
        "items": items,
        "gate": _gate(reports[0].report.gate) if reports else None,
    }


def _gate(gate: GateRecord | None) -> dict[str, Any] | None:
    """The first report's verdict: passed, the baseline, every reason it failed, what was
    compared, and each gated cell's levels; ``None`` when it was not judged or has nothing to
    show (no baseline, no failure, no baseline update)."""
    if gate is None or not (gate.baseline or gate.failures or gate.baseline_update):
        return None
    return {
        "passed": gate.passed, "baseline": gate.baseline, "failures": list(gate.failures),
        "compared": list(gate.compared), "baseline_update": gate.baseline_update,
        "cells": [{"cell": c.cell, "baseline_cell": c.baseline_cell,
                   "newly_failing": len(c.newly_failing), "newly_passing": len(c.newly_passing),
                   "levels": [{"level": x.level, "n": x.n, "change": _r(x.change),
                               "low": _r(x.low), "high": _r(x.high),
                               "p": x.p_drop if x.p_drop_holm is None else x.p_drop_holm,
                               "regressed": x.regressed, "changes": x.changes_text(),
                               "p_text": x.p_text(), "verdict": x.verdict_text()}
                              for x in c.levels]}
                  for c in gate.cells],
    }


def _cell(pc: PageCell, tax: Taxonomy) -> dict[str, Any]:
    s, m = pc.cell.summary, pc.cell.metadata
    levels = []
    for lv, row in sorted(pc.cell.per_level.items()):
        ci = row.level_score_ci95
        levels.append({
            "level": lv, "items": row.items, "passed": row.passed, "failed": row.failed,
            "error": row.error, "skipped": row.skipped, "pass_rate": _r(row.pass_rate),
            "dims": [_r(row.dimensions.get(d)) for d in DIMENSIONS],
            "score": _r(row.level_score), "ci": None if ci is None else [_r(ci[0]), _r(ci[1])],
        })
    ci = s.s_total_ci95
    return {
        "key": pc.key, "model": m.model, "strategy": m.strategy, "method": m.method,
        "source": pc.source, "partial": m.partial,
        "summary": {
            "items": s.items, "passed": s.passed, "failed": s.failed, "error": s.error,
            "skipped": s.skipped, "s_total": _r(s.s_total),
            "s_total_levels_run": _r(s.s_total_renormalized),
            "s_total_ci": None if ci is None else [_r(ci[0]), _r(ci[1])],
            "s_final": _r(s.s_final), "tpv": _r(s.tpv), "q_per_ktpv": _r(s.q_per_ktpv),
            "tokens": s.tokens_total, "api_calls": s.api_calls,
            "pareto_optimal": s.pareto_optimal,
            "levels_missing": list(s.levels_missing),
        },
        "levels": levels,
        "taxonomy": {"classes": dict(tax.classes), "categories": dict(tax.categories)},
        **_consistency(pc.cell),
    }


def _figures(label: str, row: ConsistencyRow) -> dict[str, Any]:
    return {"level": label, "k": row.k, "items": row.items, "left_out": row.left_out,
            "flaky": row.flaky,
            "pass_at_1": [_r(row.pass_at_1), *map(_r, row.pass_at_1_ci95)],
            "pass_at_k": [_r(row.pass_at_k), *map(_r, row.pass_at_k_ci95)],
            "pass_all_k": [_r(row.pass_all_k), *map(_r, row.pass_all_k_ci95)]}


def _consistency(cell: CellReport) -> dict[str, Any]:
    """``{"consistency": {"rows": [...], "flaky": [...]}}`` for a cell of two or more samples
    per item (each figure ``[estimate, low, high]``; the cell's own row last, level "all");
    ``{}`` otherwise, so a one-sample page is unchanged."""
    total = cell.summary.consistency
    if total is None:
        return {}
    rows = [_figures(f"L{lv}", row.consistency) for lv, row in sorted(cell.per_level.items())
            if row.consistency is not None]
    flaky = [{"id": x.instruction_id, "level": x.level, "passing": x.passing,
              "samples": x.samples} for x in cell.flaky or ()]
    return {"consistency": {"rows": [*rows, _figures("all", total)], "flaky": flaky}}


def _baseline_outcomes(report: RunReport) -> dict[tuple[str | None, str], str]:
    """``(cell label, id) → outcome``; a baseline of one cell also answers ``(None, id)``."""
    out: dict[tuple[str | None, str], str] = {}
    for c in report.cells:
        for r in c.per_instruction:
            out[(c.label, r.instruction_id)] = r.outcome
            if len(report.cells) == 1:
                out[(None, r.instruction_id)] = r.outcome
    return out


def _item(k: int, pc: PageCell, item: ItemResult, inst: Instruction | None,
          compare: Mapping[tuple[str | None, str], str] | None,
          drawings: dict[tuple[str, str | None], Drawing | Omitted]) -> dict[str, Any]:
    base_outcome = None
    if compare is not None:
        base_outcome = compare.get((pc.cell.label, item.instruction_id),
                                   compare.get((None, item.instruction_id)))
    drawn = _drawn_samples(item.samples)
    categories = sorted({d.category for s in item.samples for d in s.violation_details})
    return {
        "cell": k, "id": item.instruction_id, "level": item.level, "outcome": item.outcome,
        "score": _r(item.level_score), "dims": [_r(item.dimension_scores.get(d))
                                                for d in DIMENSIONS],
        "expected_failure": item.expected_failure, "error": item.error,
        "tokens": item.tokens, "classes": list(item_classes(item)), "categories": categories,
        "baseline": base_outcome,
        "differs": base_outcome is not None and base_outcome != item.outcome,
        "samples": [_sample(s, j in drawn, inst, drawings) for j, s in enumerate(item.samples)],
    }


def _drawn_samples(samples: Sequence[SampleResult]) -> set[int]:
    chosen = {0} if samples else set()
    for j, s in enumerate(samples):
        if sample_class(s) == "violations":
            chosen.add(j)
            break
    return set(sorted(chosen)[:DRAWN_SAMPLES])


def _sample(s: SampleResult, drawn: bool, inst: Instruction | None,
            drawings: dict[tuple[str, str | None], Drawing | Omitted]) -> dict[str, Any]:
    picture: Drawing | Omitted
    if not drawn:
        picture = Omitted(f"not drawn: the page draws at most {DRAWN_SAMPLES} samples per "
                          "item (the first, and the first with violations)")
    else:
        picture = _drawing(s, inst, drawings)
    return {
        "class": sample_class(s), "parsed": s.parsed, "refusal": s.refusal,
        "truncated": s.truncated, "error": s.error, "raw": s.raw_answer,
        "tokens": [s.input_tokens, s.output_tokens], "calls": s.api_calls,
        "violations": list(s.violations), "derived": list(s.derived_violations),
        "verdicts": [{"constraint": d.constraint, "category": d.category, "gap": _r(d.gap),
                      "expected": d.expected, "observed": d.observed,
                      "where": d.where.to_json()}
                     for d in s.violation_details],
        "steps": [{"round": x.round, "source": x.source, "temperature": x.temperature,
                   "tokens": [x.input_tokens, x.output_tokens], "calls": x.calls,
                   "d4": _r(x.d4), "passed": x.passed, "kept": x.kept} for x in s.steps],
        "drawing": picture.to_json(),
    }


def _drawing(s: SampleResult, inst: Instruction | None,
             cache: dict[tuple[str, str | None], Drawing | Omitted]) -> Drawing | Omitted:
    base: ParsedGraph | None = inst.base if inst is not None else None
    wheres = [d.where for d in s.violation_details if d.where]
    if s.raw_answer is None or wheres:
        return draw(s.raw_answer, wheres, base=base)
    key = (s.raw_answer, inst.id if base is not None and inst is not None else None)
    if key not in cache:  # the same answer in several cells or samples is laid out once
        cache[key] = draw(s.raw_answer, base=base)
    return cache[key]
