"""F6: the cost-aware view (paper §5.3, Tab. 16–18, Fig. 10–11).

Over every cell given (the paper's 45 plain cells when those are the files), from
:func:`pytest_graphinstruct.score.pareto.analyze`: the Pareto frontier in ⟨TPV, S_total⟩ by
ascending TPV with S_final; the Frontier Distance of the cells off the frontier (median, the
cells closest to and farthest from it); the top five by Q/kTPV; and the Cost@Q matrix of
Tab. 18: per model and strategy the TPV when that cell reaches S_total ≥ Q (else —), and the
cheapest.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.registry import AnalysisOutput, AnalysisRequest
from pytest_graphinstruct.report.analyses.run_set import STRATEGY_ABBREV, Run
from pytest_graphinstruct.report.analyses.select import baseline_by_model
from pytest_graphinstruct.report.analyses.table import AnalysisResult, Table, render
from pytest_graphinstruct.score import pareto
from pytest_graphinstruct.score.pareto import COST_AT_Q_THRESHOLD
from pytest_graphinstruct.vocab import STRATEGIES

NEAR = 0.02
"""Off-frontier cells with FD below this are listed as near the frontier (paper §5.3)."""


def frontier(runs: Sequence[Run], threshold: float = COST_AT_Q_THRESHOLD) -> AnalysisResult:
    """The frontier, FD, Q/kTPV and Cost@Q tables (see the module docstring).

    Raises:
        GraphInstructError: no cell has both a score and a known cost.
    """
    scored = [r for r in runs if r.quality is not None]
    report = pareto.analyze([r.point() for r in scored], threshold=threshold)
    by_label = {r.label: r for r in scored}
    if not report.frontiers:
        raise GraphInstructError("frontier: no cell has a known cost (token usage)")

    def name(label: str) -> tuple[str, str]:
        r = by_label[label]
        return r.display, STRATEGY_ABBREV.get(r.condition, r.condition)

    front = [(*name(a.point.label), a.point.cost, a.point.quality, a.s_final)
             for a in sorted((a for a in report.cells if a.on_frontier),
                             key=lambda a: (a.point.cost or 0.0, -a.point.quality))]
    off = sorted((a for a in report.cells if a.on_frontier is False),
                 key=lambda a: (a.frontier_distance or 0.0, a.point.label))
    fds = [a.frontier_distance for a in off if a.frontier_distance is not None]
    fd_rows = [(*name(a.point.label), a.frontier_distance, "near" if (a.frontier_distance or 0)
                < NEAR else "") for a in off[:5]]
    fd_rows += [(*name(a.point.label), a.frontier_distance, "") for a in off[-5:]
                if a not in off[:5]]
    eff = sorted((a for a in report.cells if a.q_per_ktpv is not None),
                 key=lambda a: (-(a.q_per_ktpv or 0.0), a.point.label))[:5]
    matrix = []
    for cells in baseline_by_model(scored).values():
        first = next(iter(cells.values()))
        values = []
        for s in STRATEGIES:
            r = cells.get(s)
            values.append(r.tpv if r is not None and r.tpv is not None
                          and (r.quality or 0.0) >= threshold else None)
        best = report.cost_at_q.get(first.group)
        matrix.append((first.display, first.info.tier, *values,
                       "never" if best is None else f"{best:.0f}"))
    tables = [Table(f"Pareto frontier ({len(front)} of {len(report.cells)} cells), by TPV",
                    ("model", "strategy/method", "TPV", "S_total", "S_final"),
                    tuple(front), (None, None, 0, 4, 4)),
              Table(f"Frontier distance off the frontier ({len(fds)} cells): closest and "
                    "farthest", ("model", "strategy/method", "FD", ""), tuple(fd_rows),
                    (None, None, 4, None)),
              Table("Top five by Q/kTPV", ("model", "strategy/method", "Q/kTPV", "S_total",
                                          "TPV"),
                    tuple((*name(a.point.label), a.q_per_ktpv, a.point.quality, a.point.cost)
                          for a in eff), (None, None, 2, 4, 0)),
              Table(f"Cost@Q={threshold:g}: TPV of each cell reaching S_total ≥ {threshold:g}",
                    ("model", "tier", *(STRATEGY_ABBREV[s] for s in STRATEGIES), "best"),
                    tuple(matrix), (None, None, 0, 0, 0, 0, None))]
    notes = [f"median FD off the frontier: {statistics.median(fds):.4f}" if fds else
             "every cell is on the frontier"]
    if report.excluded:
        notes.append(f"unknown cost, left out: {', '.join(report.excluded)}")
    data = {"frontier": [{"model": m, "condition": c, "tpv": t, "s_total": q, "s_final": f}
                         for m, c, t, q, f in front],
            "median_fd": statistics.median(fds) if fds else None,
            "fd": {a.point.label: a.frontier_distance for a in report.cells},
            "cost_at_q": dict(report.cost_at_q)}
    return AnalysisResult("frontier", "F6: Pareto frontier, frontier distance, Cost@Q",
                          tuple(tables), tuple(notes), data)


def analyze(request: AnalysisRequest) -> AnalysisOutput:
    """``analyze frontier``: :func:`frontier`."""
    return AnalysisOutput(render(frontier(request.runs()), request.options.format))
