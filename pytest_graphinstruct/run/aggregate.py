"""Item results → cell reports → the run report (per-level means, CIs, S_total, cost, Pareto).

Deterministic: cells in configured order, items in suite order, no timings or cache flags, so
the same answers give the same report whatever the number of workers or the command that
produced it.  Items that errored or were skipped are counted, never scored as the model's
failure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from statistics import fmean

from pytest_graphinstruct import __version__
from pytest_graphinstruct.run.consistency import measure
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    CellReport,
    CellSummary,
    Coverage,
    ItemResult,
    LevelRow,
    ParetoSummary,
    RunReport,
    items_in_order,
)
from pytest_graphinstruct.score.d5 import CellCost, ItemSpend, cell_cost
from pytest_graphinstruct.score.levels import mean_present, s_total
from pytest_graphinstruct.score.pareto import CellPoint, analyze
from pytest_graphinstruct.score.regression.bootstrap import BootstrapResult, bootstrap_levels
from pytest_graphinstruct.vocab import DIMENSIONS, OUTCOMES, Level

TOOL = f"pytest-graphinstruct {__version__}"


def _counts(items: Sequence[ItemResult]) -> dict[str, int]:
    return {o: sum(1 for r in items if r.outcome == o) for o in OUTCOMES}


def _level_rows(items: Sequence[ItemResult],
                boot: BootstrapResult | None) -> dict[Level, LevelRow]:
    by_level: dict[Level, list[ItemResult]] = {}
    for r in items:
        by_level.setdefault(r.level, []).append(r)
    rows = {}
    for lv, rs in sorted(by_level.items()):
        c = _counts(rs)
        ran = [r for r in rs if r.scored]
        interval = boot.levels.get(lv) if boot is not None else None
        rows[lv] = LevelRow(
            items=len(rs), passed=c["passed"], failed=c["failed"], error=c["error"],
            skipped=c["skipped"], pass_rate=c["passed"] / len(ran) if ran else None,
            dimensions={d: mean_present(r.dimension_scores.get(d) for r in ran)
                        for d in DIMENSIONS},
            level_score=interval.estimate if interval else None,
            level_score_ci95=(interval.low, interval.high) if interval else None,
            scored_items=interval.n if interval else 0,
        )
    return rows


def cost_of(items: Iterable[ItemResult]) -> CellCost:
    """The cell's cost over its scored items: total tokens / valid outputs (TPV), calls."""
    return cell_cost(ItemSpend(r.tokens, r.api_calls, r.d5_valid) for r in items if r.scored)


def usage_sources(items: Iterable[ItemResult]) -> dict[str, int]:
    """Samples per usage source (``provider``, ``tiktoken:<encoding>``, ``recorded``, …;
    ``none`` = no usage at all), sorted by source, over the scored items."""
    counts: dict[str, int] = {}
    for r in items:
        if r.scored:
            for s in r.samples:
                key = s.usage_source or "none"
                counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def build_cell(metadata: CellMetadata, items: Sequence[ItemResult]) -> CellReport:
    """The report of one cell from its items (already in suite order); no Pareto marks yet."""
    by_level: dict[int, list[float]] = {}
    for r in items:
        if r.scored and r.level_score is not None:
            by_level.setdefault(r.level, []).append(r.level_score)
    boot = bootstrap_levels(by_level) if by_level else None
    total = s_total({lv: fmean(xs) for lv, xs in by_level.items()})
    cost = cost_of(items)
    c = _counts(items)
    missing = tuple(sorted({d for r in items if r.scored for d in r.missing_dimensions}))
    summary = CellSummary(
        items=len(items), passed=c["passed"], failed=c["failed"], error=c["error"],
        skipped=c["skipped"], s_total=total.unnormalized,
        s_total_renormalized=total.renormalized,
        s_total_ci95=(boot.total.low, boot.total.high) if boot else None,
        levels_present=tuple(total.levels_present), levels_missing=tuple(total.levels_missing),
        tokens_total=cost.tokens, usage_missing_items=cost.unknown_instructions,
        usage_sources=usage_sources(items), valid_outputs=cost.valid, tpv=cost.tpv,
        api_calls=sum(r.api_calls for r in items),
    )
    meta = replace(metadata, missing_dimensions=missing)
    cell = CellReport(meta, summary, _level_rows(items, boot), tuple(items))
    return with_consistency(cell)


def with_consistency(cell: CellReport) -> CellReport:
    """``cell`` with its consistency over samples (:mod:`.consistency`) in its level rows, its
    summary and its flaky list — only when its items have two or more samples each (``k ≥
    2``): a one-sample cell has nothing to add and stays as it was."""
    measured = measure(cell.per_instruction)
    if measured is None or measured.k < 2:
        return cell
    rows = {lv: replace(row, consistency=measured.levels.get(lv))
            for lv, row in cell.per_level.items()}
    return replace(cell, summary=replace(cell.summary, consistency=measured.cell),
                   per_level=rows, flaky=measured.flaky)


def cell_point(cell: CellReport) -> CellPoint:
    """A cell as a point of the Pareto view (quality = S_total over the levels run, cost = the
    cell's TPV, ``None`` when token usage is unknown)."""
    m = cell.metadata
    return CellPoint(label=cell.label, model=m.model, strategy=m.strategy, method=m.method,
                     quality=cell.summary.s_total_renormalized or 0.0, cost=cell.summary.tpv)


def with_pareto(cells: Sequence[CellReport], *, partial: bool = False,
                tool: str | None = TOOL) -> RunReport:
    """The run report of ``cells``, each cell's summary carrying its Pareto marks.

    With a single cell there is nothing to compare: no frontier, no bonus, and S_final is the
    cell's S_total (the paper's bonus rewards beating other configurations).
    """
    analysis = analyze([cell_point(c) for c in cells])
    marked = []
    for c, a in zip(cells, analysis.cells, strict=True):
        alone = len(cells) == 1
        summary = replace(
            c.summary, pareto_optimal=None if alone else a.on_frontier,
            pareto_bonus=None if alone else a.bonus,
            pareto_compared_cells=a.pareto_compared_cells,
            s_final=c.summary.s_total if alone else a.s_final, q_per_ktpv=a.q_per_ktpv,
            frontier_distance=None if alone else a.frontier_distance)
        marked.append(replace(c, summary=summary))
    pareto = ParetoSummary(tuple(analysis.excluded), dict(analysis.cost_at_q),
                           dict(analysis.sigma_strat))
    return RunReport(tuple(marked), pareto=pareto, partial=partial, tool=tool)


def build_run_report(cells: Sequence[tuple[CellMetadata, Sequence[ItemResult]]], *,
                     suite_order: Mapping[str, int],
                     coverage: Coverage | None = None) -> RunReport:
    """The run report: each cell's items put in suite order, then the Pareto view;
    ``coverage`` says what the run covers (default: complete)."""
    built = [build_cell(meta, items_in_order(items, suite_order)) for meta, items in cells]
    report = with_pareto(built)
    return replace(report, coverage=coverage) if coverage is not None else report
