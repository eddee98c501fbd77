"""Across cells: the Pareto view, S_final, Q/kTPV, Cost@Q, Frontier Distance and σ_strat.

A cell is one (model, strategy, method) run, placed as a point with ``quality`` = its
``S_total`` (quality-only by default, whatever the caller passes) and ``cost`` = its TPV, total
tokens of the cell / total valid outputs of the cell (:func:`pytest_graphinstruct.score.d5.
cell_cost`).  ``cost=None`` (unknown usage) keeps a cell out of every cost-based number: it is
not compared, its bonus, S_final, Q/kTPV and Frontier Distance are ``None``.

* Dominance: ``a`` dominates ``b`` iff ``a.quality ≥ b.quality`` and ``a.cost ≤ b.cost`` with at
  least one strict.  The frontier is the set of non-dominated cells (exact duplicates are both on
  it), ordered by ascending cost.
* ``ParetoBonus`` (paper Eq. 3) is binary: 1 iff the cell is on the frontier of the compared set,
  else 0.  ``S_final = S_total·(1 + λ·bonus)`` with ``λ = 0.15``.  A cell compared with nothing
  but itself is its own frontier and gets bonus 1; :attr:`CellAnalysis.pareto_compared_cells`
  says how many cells the bonus was decided among, so a report can show that ``1`` is not a
  comparison.
* ``Q/kTPV = S_total / (TPV/1000)`` (``None`` when TPV is 0 or unknown).
* ``Cost@Q`` = the smallest TPV among cells with ``S_total ≥ Q`` (default ``Q = 0.8``), else
  ``None``; the report gives it per model, as the paper does.
* Frontier Distance ``FD(c) = max(0, q*(c.cost) − c.quality)`` where ``q*`` is the frontier's
  piecewise-linear interpolation in ``(log TPV, S_total)`` space (paper §3.3; the costs are
  clamped at 1 token before the log), held at the nearest endpoint's quality outside the
  frontier's cost range.  ``log_cost=False`` interpolates in linear TPV instead (the reference
  library's variant).  FD is 0 on the frontier; with ties it may also be 0 off it.
* ``σ_strat`` per model = population standard deviation (``ddof = 0``, as the paper's
  ``np.std``) of ``S_total`` across the model's baseline cells, one per prompting strategy;
  ``None`` for a model with fewer than two strategies (or, in :func:`analyze`, with two baseline
  cells of one strategy).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

__all__ = [
    "COST_AT_Q_THRESHOLD",
    "LAMBDA",
    "CellAnalysis",
    "CellPoint",
    "ParetoReport",
    "analyze",
    "cost_at_quality",
    "dominates",
    "frontier_distance",
    "frontier_quality",
    "pareto_bonus",
    "pareto_frontier",
    "q_per_ktpv",
    "s_final",
    "sigma_strat",
]

LAMBDA = 0.15
COST_AT_Q_THRESHOLD = 0.8
BASELINE = "baseline"


@dataclass(frozen=True)
class CellPoint:
    """A cell as a point: ``quality`` = S_total, ``cost`` = TPV (``None`` = unknown)."""

    label: str
    model: str
    strategy: str
    quality: float
    cost: float | None
    method: str = BASELINE

    def __post_init__(self) -> None:
        if not math.isfinite(self.quality):
            raise ValueError(f"{self.label}: quality must be finite, got {self.quality!r}")
        if self.cost is not None and (math.isnan(self.cost) or self.cost < 0):
            raise ValueError(f"{self.label}: cost must be >= 0 or None, got {self.cost!r}")


def dominates(a: CellPoint, b: CellPoint) -> bool:
    """``a`` dominates ``b``: no worse on both axes, strictly better on one (known costs only)."""
    if a.cost is None or b.cost is None:
        return False
    return (a.quality >= b.quality and a.cost <= b.cost
            and (a.quality > b.quality or a.cost < b.cost))


def _sort_key(p: CellPoint) -> tuple[float, float, str]:
    assert p.cost is not None
    return (p.cost, -p.quality, p.label)


def pareto_frontier(points: Iterable[CellPoint]) -> tuple[CellPoint, ...]:
    """The non-dominated points with known cost, by ascending cost (then quality, label).

    Sort-and-sweep, ``O(n log n)``: after sorting by cost and descending quality, a point is on
    the frontier iff its quality is at least the best quality seen at a strictly lower cost and it
    is not beaten at its own cost.
    """
    pts = sorted((p for p in points if p.cost is not None), key=_sort_key)
    out: list[CellPoint] = []
    best = -math.inf  # best quality among strictly cheaper points
    i = 0
    while i < len(pts):
        cost = pts[i].cost
        j = i
        while j < len(pts) and pts[j].cost == cost:
            j += 1
        group = pts[i:j]  # same cost, descending quality
        top = group[0].quality
        if top > best:
            out.extend(p for p in group if p.quality == top)
        best = max(best, top)
        i = j
    return tuple(out)


def pareto_bonus(point: CellPoint, points: Iterable[CellPoint]) -> int | None:
    """Eq. 3's binary bonus of ``point`` among ``points`` (which should include it): 1 when no
    point dominates it, else 0; ``None`` when its cost is unknown."""
    if point.cost is None:
        return None
    return 0 if any(dominates(o, point) for o in points) else 1


def s_final(s_total: float, bonus: int, lam: float = LAMBDA) -> float:
    """Eq. 3: ``S_total·(1 + λ·bonus)``."""
    if bonus not in (0, 1):
        raise ValueError(f"the Pareto bonus is 0 or 1, got {bonus!r}")
    return s_total * (1.0 + lam * bonus)


def q_per_ktpv(quality: float, tpv: float | None) -> float | None:
    """``Q / (TPV/1000)``; ``None`` when TPV is unknown or 0, 0 when TPV is infinite."""
    if tpv is None or tpv <= 0:
        return None
    return quality / (tpv / 1000.0)


def cost_at_quality(
    points: Iterable[CellPoint], threshold: float = COST_AT_Q_THRESHOLD
) -> float | None:
    """The smallest known cost among points with ``quality ≥ threshold``, else ``None``."""
    costs = [p.cost for p in points if p.cost is not None and p.quality >= threshold]
    return min(costs) if costs else None


def _x(cost: float, log_cost: bool) -> float:
    return math.log(max(cost, 1.0)) if log_cost else cost


def frontier_quality(cost: float, frontier: Sequence[CellPoint], log_cost: bool = True) -> float:
    """``q*(cost)``: the frontier's piecewise-linear interpolation at ``cost`` (see module)."""
    pts = sorted({(p.cost, p.quality) for p in frontier if p.cost is not None})
    if not pts:
        raise ValueError("an empty frontier has no quality")
    x = _x(cost, log_cost)
    xs = [_x(c, log_cost) for c, _ in pts]
    if x <= xs[0]:
        return pts[0][1]
    if x >= xs[-1]:
        return pts[-1][1]
    for (x0, (_, q0)), (x1, (_, q1)) in pairwise(zip(xs, pts, strict=True)):
        if x0 <= x <= x1:
            if x1 == x0:
                return max(q0, q1)
            if math.isinf(x1):
                return q0
            return q0 + (q1 - q0) * (x - x0) / (x1 - x0)
    raise AssertionError("unreachable: x lies within the frontier's range")


def frontier_distance(
    point: CellPoint, frontier: Sequence[CellPoint], log_cost: bool = True
) -> float | None:
    """``max(0, q*(point.cost) − point.quality)``; ``None`` when the cost is unknown."""
    if point.cost is None:
        return None
    return max(0.0, frontier_quality(point.cost, frontier, log_cost) - point.quality)


def sigma_strat(points: Iterable[CellPoint], strict: bool = True) -> dict[str, float | None]:
    """Population std of ``quality`` across each model's baseline strategies (sorted by model).

    Only cells with ``method == "baseline"`` count; fewer than two strategies gives ``None``.
    A model with two baseline cells of the same strategy is ambiguous: ``ValueError`` when
    ``strict``, else ``None`` for that model.
    """
    by_model: dict[str, dict[str, float]] = {}
    ambiguous: set[str] = set()
    for p in points:
        if p.method != BASELINE:
            continue
        strategies = by_model.setdefault(p.model, {})
        if p.strategy in strategies:
            if strict:
                raise ValueError(f"two baseline cells for {p.model} / {p.strategy}")
            ambiguous.add(p.model)
        strategies[p.strategy] = p.quality
    return {m: (statistics.pstdev(v.values()) if len(v) >= 2 and m not in ambiguous else None)
            for m, v in sorted(by_model.items())}


@dataclass(frozen=True)
class CellAnalysis:
    """The cross-cell numbers of one cell (``None`` where its cost is unknown)."""

    point: CellPoint
    on_frontier: bool | None
    bonus: int | None
    s_final: float | None
    q_per_ktpv: float | None
    frontier_distance: float | None
    pareto_compared_cells: int


@dataclass(frozen=True)
class ParetoReport:
    """Everything :func:`analyze` computes.

    ``frontiers`` maps the comparison group (``"*"`` for all cells, else the model) to its
    frontier; ``excluded`` lists the labels of cells without a known cost.  ``cost_at_q`` and
    ``cheapest_at_q`` give, per model, Cost@Q and the label of the cell achieving it.
    """

    cells: tuple[CellAnalysis, ...]
    frontiers: dict[str, tuple[CellPoint, ...]]
    scope: Literal["all", "model"]
    lam: float
    threshold: float
    log_cost: bool
    excluded: tuple[str, ...]
    cost_at_q: dict[str, float | None]
    cheapest_at_q: dict[str, str | None]
    sigma_strat: dict[str, float | None]


def analyze(
    points: Sequence[CellPoint],
    *,
    lam: float = LAMBDA,
    threshold: float = COST_AT_Q_THRESHOLD,
    scope: Literal["all", "model"] = "all",
    log_cost: bool = True,
) -> ParetoReport:
    """Compare cells: frontier(s), bonus, S_final, Q/kTPV, FD, Cost@Q per model, σ_strat.

    ``scope="all"`` compares every cell with every other (the paper's 45-cell frontier);
    ``scope="model"`` compares each model's cells among themselves (the paper's within-model
    bonus of its method tables).  Labels must be unique.  Cells keep their input order.
    """
    labels = [p.label for p in points]
    if len(set(labels)) != len(labels):
        raise ValueError("cell labels must be unique")
    if scope not in ("all", "model"):
        raise ValueError(f"scope must be 'all' or 'model', got {scope!r}")

    def group(p: CellPoint) -> str:
        return "*" if scope == "all" else p.model

    members: dict[str, list[CellPoint]] = {}
    for p in points:
        if p.cost is not None:
            members.setdefault(group(p), []).append(p)
    frontiers = {g: pareto_frontier(ms) for g, ms in sorted(members.items())}
    on_front = {p.label for f in frontiers.values() for p in f}

    cells: list[CellAnalysis] = []
    for p in points:
        g = group(p)
        compared = len(members.get(g, ()))
        if p.cost is None:
            cells.append(CellAnalysis(p, None, None, None, None, None, compared))
            continue
        on = p.label in on_front
        bonus = 1 if on else 0
        cells.append(CellAnalysis(
            point=p,
            on_frontier=on,
            bonus=bonus,
            s_final=s_final(p.quality, bonus, lam),
            q_per_ktpv=q_per_ktpv(p.quality, p.cost),
            frontier_distance=0.0 if on else frontier_distance(p, frontiers[g], log_cost),
            pareto_compared_cells=compared,
        ))

    cost_at_q: dict[str, float | None] = {}
    cheapest: dict[str, str | None] = {}
    for model in sorted({p.model for p in points}):
        reach = sorted((p for p in points if p.model == model and p.cost is not None
                        and p.quality >= threshold), key=_sort_key)
        cost_at_q[model] = reach[0].cost if reach else None
        cheapest[model] = reach[0].label if reach else None

    return ParetoReport(
        cells=tuple(cells),
        frontiers=frontiers,
        scope=scope,
        lam=lam,
        threshold=threshold,
        log_cost=log_cost,
        excluded=tuple(p.label for p in points if p.cost is None),
        cost_at_q=cost_at_q,
        cheapest_at_q=cheapest,
        sigma_strat=sigma_strat(points, strict=False),
    )
