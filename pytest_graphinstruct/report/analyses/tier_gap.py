"""F1: the tier gap per level (paper §5.1, Tab. 12, Fig. 3; App. H.6, Tab. 37).

Per level, the mean level score of each capability tier (T1, T2, T3 from the models table) and
the gap ``T1 − T3``.  How a model's level score is taken is the *rule*:

* ``best-profile`` — the model's S_total-best cell, all its levels (one profile per model).
  This reproduces Tab. 12's T1 and T2 rows (Sonnet-4 counts in T2, as the paper's §3.1 tier
  list says) to ±0.001; the paper's T3 row differs at L1–L3 by up to 0.007 (the paper says its
  per-cell choice is not one uniform rule, App. H.6).
* ``best-per-level`` — per level the model's best strategy: App. H.6 "per-model best-of-4".
* ``all-cells`` — every plain cell of the tier counts once: App. H.6 "all-strategy avg (45
  cells)".

Only plain prompting cells count (no method, no oracle).  Models without a tier are left out
and named.  The result also gives, for the level with the largest gap, its ratio to every other
level's gap (the paper's "1.8–3×").
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.models_table import PAPER_TIERS
from pytest_graphinstruct.report.analyses.registry import AnalysisOutput, AnalysisRequest
from pytest_graphinstruct.report.analyses.run_set import Run
from pytest_graphinstruct.report.analyses.select import baseline_by_model
from pytest_graphinstruct.report.analyses.table import AnalysisResult, Table, render
from pytest_graphinstruct.vocab import LEVELS, Level

RULES = ("best-profile", "best-per-level", "all-cells")
DEFAULT_RULE = "best-profile"


def _model_values(cells: dict[str, Run], rule: str, level: Level) -> list[float]:
    if rule == "best-profile":
        best = max(cells.values(), key=lambda r: (r.quality or 0.0, r.label))
        v = best.level_score(level)
        return [] if v is None else [v]
    values = [v for r in cells.values() if (v := r.level_score(level)) is not None]
    if rule == "best-per-level":
        return [max(values)] if values else []
    return values


def tier_means(runs: Sequence[Run], rule: str = DEFAULT_RULE
               ) -> tuple[dict[Level, dict[str, float | None]], dict[str, list[str]], list[str]]:
    """``({level: {tier: mean}}, {tier: model displays}, models without a tier)``.

    Raises:
        GraphInstructError: an unknown rule.
    """
    if rule not in RULES:
        raise GraphInstructError(f"unknown tier-gap rule {rule!r} (one of {', '.join(RULES)})")
    by_model = baseline_by_model(runs)
    members: dict[str, list[str]] = {t: [] for t in PAPER_TIERS}
    untiered: list[str] = []
    pools: dict[Level, dict[str, list[float]]] = {lv: {t: [] for t in PAPER_TIERS}
                                                for lv in LEVELS}
    for cells in by_model.values():
        first = next(iter(cells.values()))
        tier = first.info.tier
        if tier is None:
            untiered.append(first.display)
            continue
        members[tier].append(first.display)
        for lv in LEVELS:
            pools[lv][tier] += _model_values(cells, rule, lv)
    means = {lv: {t: (statistics.fmean(xs) if xs else None) for t, xs in pools[lv].items()}
             for lv in LEVELS}
    return means, members, untiered


def tier_gap(runs: Sequence[Run], rule: str = DEFAULT_RULE) -> AnalysisResult:
    means, members, untiered = tier_means(runs, rule)
    gaps: dict[Level, float | None] = {}
    rows = []
    for lv in LEVELS:
        m = means[lv]
        t1, t3 = m["T1"], m["T3"]
        gaps[lv] = None if t1 is None or t3 is None else t1 - t3
        rows.append((f"L{lv}", m["T1"], m["T2"], m["T3"], gaps[lv]))
    known = {lv: g for lv, g in gaps.items() if g is not None}
    notes = [f"rule: {rule}; tiers from the models table (CAAP tiers, T2-GPT/T2-open = T2)"]
    for t in PAPER_TIERS:
        notes.append(f"{t}: {', '.join(members[t]) or 'no model'}")
    if untiered:
        notes.append(f"left out (no tier in the models table): {', '.join(untiered)}")
    ratio_rows = []
    peak = max(known, key=lambda lv: known[lv], default=None)
    if peak is not None:
        for lv, g in known.items():
            if lv != peak and g > 0:
                ratio_rows.append((f"L{peak} / L{lv}", known[peak] / g))
    tables = [Table("Per-level mean quality by tier and the T1 − T3 gap",
                    ("level", "T1 mean", "T2 mean", "T3 mean", "T1 − T3 gap"),
                    tuple(rows), (None, 3, 3, 3, 3))]
    if ratio_rows:
        tables.append(Table(f"The largest gap (L{peak}) over each other level's",
                            ("ratio", "×"), tuple(ratio_rows), (None, 2)))
    data = {"rule": rule, "means": {str(lv): means[lv] for lv in LEVELS},
            "gaps": {str(lv): gaps[lv] for lv in LEVELS}, "members": members,
            "untiered": untiered, "peak_level": peak}
    return AnalysisResult("tier-gap", "F1: tier gap per level", tuple(tables), tuple(notes),
                          data)


def analyze(request: AnalysisRequest) -> AnalysisOutput:
    """``analyze tier-gap``: :func:`tier_gap` under ``--rule`` (default :data:`DEFAULT_RULE`)."""
    o = request.options
    return AnalysisOutput(render(tier_gap(request.runs(), o.rule or DEFAULT_RULE), o.format))
