"""The leaderboard over any set of runs: one row per cell (model, strategy or method).

Every number comes from where it is defined, nothing is recomputed here: S_total, TPV and the
per-level scores are the cell's own (the reader's, for the reference release's files), and the
cross-cell numbers — the Pareto frontier and bonus, S_final, Q/kTPV, Frontier Distance and
Cost@Q — are :func:`pytest_graphinstruct.score.pareto.analyze` over all the rows together
(``scope="all"``, the paper's 45-cell comparison).  A cell whose token usage is unknown has no
cost: it is ranked by S_total, has no S_final (so no S_final rank) and is listed as such.

* ``S_total`` is the cell's quality over the levels it ran (renormalized when levels are
  missing; equal to the paper's Eq. 2 for a full run).
* Ranks are 1-based, by descending score, ties broken by label (a stable, reproducible order).
* A dimension's value is the mean over the cell's scored items where the dimension is present
  (an inactive dimension the release records as 0 counts as 0, as it does there).
* Cost@Q (Q = 0.8) is per model: the lowest TPV among the model's rows with S_total ≥ Q.
* A cell of a partial run (its report's coverage is not complete: interrupted, budget spent)
  is ranked like any other but marked in every format (:data:`PARTIAL_MEANS`).

Formats: Markdown (the tables of :func:`tables`, written by :mod:`.table` as every analysis's),
CSV (one row per cell, every column), JSON (the same, typed) and a self-contained HTML page (a
template of the one Jinja2 environment, :mod:`..render.jinja`, autoescaped).  Model names and
labels come from files and are escaped for the format they are written in.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.registry import AnalysisOutput, AnalysisRequest
from pytest_graphinstruct.report.analyses.run_set import STRATEGY_ABBREV, Run
from pytest_graphinstruct.report.analyses.table import Cell, Table, csv_rows, markdown_table
from pytest_graphinstruct.report.untrusted import escape_markdown
from pytest_graphinstruct.score import pareto
from pytest_graphinstruct.score.levels import mean_present
from pytest_graphinstruct.score.pareto import COST_AT_Q_THRESHOLD, LAMBDA
from pytest_graphinstruct.vocab import DIMENSIONS, LEVELS

FORMATS = ("markdown", "csv", "json", "html")
SCHEMA = "graphinstruct-leaderboard/1"
PARTIAL_MEANS = ("partial = the run stopped before every selected item had a result "
                 "(interrupted, budget spent, stopped by an error): its scores cover only the "
                 "items that finished, so its rank is not comparable with a complete run's")
"""The one line every format says about partial rows."""


@dataclass(frozen=True)
class LeaderboardRow:
    """One cell on the leaderboard."""

    label: str
    model: str
    family: str | None
    tier: str | None
    condition: str
    variant: str | None
    s_total: float
    rank_total: int
    s_final: float | None
    rank_final: int | None
    pareto_optimal: bool | None
    tpv: float | None
    q_per_ktpv: float | None
    frontier_distance: float | None
    levels: Mapping[int, float | None]
    dimensions: Mapping[str, float | None]
    items: int
    partial: str | None = None  #: the coverage line of a partial run (:data:`PARTIAL_MEANS`)

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label, "model": self.model, "family": self.family, "tier": self.tier,
            "condition": self.condition, "variant": self.variant,
            "rank_total": self.rank_total, "s_total": self.s_total,
            "rank_final": self.rank_final, "s_final": self.s_final,
            "pareto_optimal": self.pareto_optimal, "tpv": self.tpv,
            "q_per_ktpv": self.q_per_ktpv, "frontier_distance": self.frontier_distance,
            "levels": {str(lv): v for lv, v in sorted(self.levels.items())},
            "dimensions": dict(self.dimensions), "items": self.items,
            "partial": self.partial,
        }


@dataclass(frozen=True)
class CostRow:
    """Cost@Q of one model: the cheapest of its rows reaching S_total ≥ Q (``None``: never)."""

    model: str
    cost: float | None
    cell: str | None


@dataclass(frozen=True)
class Leaderboard:
    """The rows (by S_total rank), Cost@Q per model, and the cells left without a cost or a
    score."""

    rows: tuple[LeaderboardRow, ...]
    cost_at_q: tuple[CostRow, ...]
    threshold: float
    lam: float
    unknown_cost: tuple[str, ...]
    unscored: tuple[str, ...]

    def by_final(self) -> tuple[LeaderboardRow, ...]:
        """The rows that have an S_final, by S_final rank."""
        ranked = [r for r in self.rows if r.rank_final is not None]
        return tuple(sorted(ranked, key=lambda r: r.rank_final or 0))

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA, "threshold": self.threshold, "lambda": self.lam,
            "rows": [r.to_json() for r in self.rows],
            "cost_at_q": [{"model": c.model, "cost": c.cost, "cell": c.cell}
                          for c in self.cost_at_q],
            "unknown_cost": list(self.unknown_cost), "unscored": list(self.unscored),
        }


def _ranks(values: Mapping[str, float]) -> dict[str, int]:
    order = sorted(values, key=lambda label: (-values[label], label))
    return {label: i + 1 for i, label in enumerate(order)}


def build_leaderboard(runs: Sequence[Run], *, threshold: float = COST_AT_Q_THRESHOLD,
                      lam: float = LAMBDA) -> Leaderboard:
    """The leaderboard of ``runs`` (see the module docstring for every rule)."""
    scored = [r for r in runs if r.quality is not None]
    unscored = tuple(sorted(r.label for r in runs if r.quality is None))
    analysis = pareto.analyze([r.point() for r in scored], lam=lam, threshold=threshold)
    by_label = {a.point.label: a for a in analysis.cells}
    rank_total = _ranks({r.label: r.quality for r in scored if r.quality is not None})
    finals = {label: a.s_final for label, a in by_label.items() if a.s_final is not None}
    rank_final = _ranks(finals)
    rows = []
    for run in scored:
        a = by_label[run.label]
        items = [i for i in run.cell.per_instruction if i.scored]
        rows.append(LeaderboardRow(
            label=run.label, model=run.display, family=run.info.family, tier=run.info.tier,
            condition=run.condition, variant=run.variant, s_total=a.point.quality,
            rank_total=rank_total[run.label], s_final=a.s_final,
            rank_final=rank_final.get(run.label), pareto_optimal=a.on_frontier,
            tpv=a.point.cost, q_per_ktpv=a.q_per_ktpv, frontier_distance=a.frontier_distance,
            levels={lv: run.level_score(lv) for lv in LEVELS if lv in run.cell.per_level},
            dimensions={d: mean_present(i.dimension_scores.get(d) for i in items)
                        for d in DIMENSIONS},
            items=len(items), partial=run.partial))
    rows.sort(key=lambda r: r.rank_total)
    display = {r.group: r.display for r in scored}
    costs = tuple(CostRow(display[g], analysis.cost_at_q[g], analysis.cheapest_at_q[g])
                  for g in sorted(analysis.cost_at_q, key=lambda g: display[g]))
    return Leaderboard(tuple(rows), costs, threshold, lam, tuple(analysis.excluded), unscored)


# -- rendering ---------------------------------------------------------------------------------

def _value(x: float | None) -> Cell:
    """A number as a table cell: infinite shown ``∞`` (the table shows absent and NaN as ``—``)."""
    if x is None:
        return None
    return "∞" if math.isinf(x) else float(x)


def _model(row: LeaderboardRow) -> str:
    """The row's model, `` (partial)`` added for a partial run's cell."""
    return row.model + (" (partial)" if row.partial else "")


def _md(text: str | None) -> str:
    """Untrusted text for Markdown prose: one line, controls and Markdown escaped."""
    return "—" if text is None else escape_markdown(text)


def _partial_note(board: Leaderboard) -> list[str]:
    """What ``partial`` means and each partial row's coverage line (Markdown)."""
    rows = [r for r in board.rows if r.partial]
    if not rows:
        return []
    return ["", f"Partial: {PARTIAL_MEANS}. "
            + "; ".join(f"{_md(r.label)}: {_md(r.partial)}" for r in rows)]


def _strategy(row: LeaderboardRow) -> str:
    return STRATEGY_ABBREV.get(row.condition, row.condition)


def tables(board: Leaderboard) -> tuple[Table, ...]:
    """The leaderboard's tables: by S_total, by S_final, per level, per dimension, Cost@Q."""
    ranked = ("#", "model", "strategy/method")
    return (
        Table("By S_total", (*ranked, "S_total", "S_final", "TPV", "Q/kTPV", "FD", "Pareto"),
              tuple((r.rank_total, _model(r), _strategy(r), _value(r.s_total),
                     _value(r.s_final), _value(r.tpv), _value(r.q_per_ktpv),
                     _value(r.frontier_distance), "✓" if r.pareto_optimal else "")
                    for r in board.rows), (None, None, None, 4, 4, 0, 3, 4)),
        Table(f"By S_final (λ = {board.lam:g})",
              ("S_final #", "S_total #", "Δ", "model", "strategy/method", "S_total", "TPV",
               "Q/kTPV", "S_final", "Pareto"),
              tuple((r.rank_final, r.rank_total, f"{r.rank_total - (r.rank_final or 0):+d}",
                     _model(r), _strategy(r), _value(r.s_total), _value(r.tpv),
                     _value(r.q_per_ktpv), _value(r.s_final), "✓" if r.pareto_optimal else "")
                    for r in board.by_final()), (None,) * 5 + (4, 0, 3, 4)),
        Table("Per level", (*ranked, "S_total", *(f"L{lv}" for lv in LEVELS)),
              tuple((r.rank_total, _model(r), _strategy(r), _value(r.s_total),
                     *(_value(r.levels.get(lv)) for lv in LEVELS)) for r in board.rows),
              (None, None, None, *(4,) * (1 + len(LEVELS)))),
        Table("Per dimension (mean over scored items)", (*ranked, *DIMENSIONS, "items"),
              tuple((r.rank_total, _model(r), _strategy(r),
                     *(_value(r.dimensions.get(d)) for d in DIMENSIONS), r.items)
                    for r in board.rows), (None, None, None, *(4,) * len(DIMENSIONS))),
        Table(f"Cost@Q={board.threshold:g} per model",
              ("model", f"Cost@Q={board.threshold:g} (TPV)", "cell"),
              tuple((c.model, "never" if c.cost is None else _value(c.cost), c.cell)
                    for c in board.cost_at_q), (None, 0)),
    )


def to_markdown(board: Leaderboard) -> str:
    """The leaderboard as Markdown: its :func:`tables` under their headings, then notes."""
    partial = [r for r in board.rows if set(r.levels) != set(LEVELS)]
    caveat = ([f"S_total is over the levels each cell ran: {len(partial)} cell(s) did not run "
               "every level, and their S_total is renormalized to those levels (a full run's "
               "S_total counts a missing level as 0).", ""] if partial else [])
    parts = [f"# Leaderboard ({len(board.rows)} cells)", "", *caveat]
    for n, t in enumerate(tables(board)):
        parts += ([] if n == 0 else [""]) + [f"## {t.title}", "", markdown_table(t)]
    parts += _partial_note(board)
    if board.unknown_cost:
        parts += ["", "Unknown cost (no token usage; no S_final, not on the frontier): "
                  + ", ".join(_md(x) for x in board.unknown_cost)]
    if board.unscored:
        parts += ["", "Left out (no level score): " + ", ".join(_md(x) for x in board.unscored)]
    return "\n".join(parts) + "\n"


CSV_COLUMNS = ("rank_total", "rank_final", "label", "model", "family", "tier", "condition",
               "variant", "s_total", "s_final", "pareto_optimal", "tpv", "q_per_ktpv",
               "frontier_distance", *(f"L{lv}" for lv in LEVELS), *DIMENSIONS, "items",
               "partial")


def _raw(x: float | None) -> Cell:
    """A number for CSV: full precision, non-finite written as Python writes it."""
    return str(x) if x is not None and not math.isfinite(x) else x


def to_csv(board: Leaderboard) -> str:
    """One row per cell, every column (:data:`CSV_COLUMNS`), by S_total rank; absent: empty
    (``partial``: a partial run's coverage line, empty for a complete run)."""
    table = Table("leaderboard", CSV_COLUMNS, tuple(
        (r.rank_total, r.rank_final, r.label, r.model, r.family, r.tier, r.condition,
         r.variant, _raw(r.s_total), _raw(r.s_final), r.pareto_optimal, _raw(r.tpv),
         _raw(r.q_per_ktpv), _raw(r.frontier_distance),
         *(_raw(r.levels.get(lv)) for lv in LEVELS),
         *(_raw(r.dimensions.get(d)) for d in DIMENSIONS), r.items, r.partial)
        for r in board.rows))
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(csv_rows(table))
    return out.getvalue()


def to_json_text(board: Leaderboard) -> str:
    return json.dumps(board.to_json(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def to_html(board: Leaderboard) -> str:
    """A self-contained HTML page (no script, no external resource) of the same tables."""
    from pytest_graphinstruct.report.render.jinja import environment

    return environment().get_template("leaderboard.html.j2").render(
        board=board, levels=LEVELS, dimensions=DIMENSIONS, abbrev=STRATEGY_ABBREV,
        partial_means=PARTIAL_MEANS)


def render(board: Leaderboard, fmt: str) -> str:
    """``board`` in ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "markdown":
        return to_markdown(board)
    if fmt == "csv":
        return to_csv(board)
    if fmt == "json":
        return to_json_text(board)
    if fmt == "html":
        return to_html(board)
    raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")


def analyze(request: AnalysisRequest) -> AnalysisOutput:
    """The ``leaderboard`` command: the runs (only the plain prompting cells with
    ``--strategies-only``), ranked and written in ``--format``.

    Raises:
        GraphInstructError: no cell to rank, or as :meth:`AnalysisRequest.runs`.
    """
    runs = request.runs()
    if request.options.strategies_only:
        runs = [r for r in runs if r.is_baseline]
    if not runs:
        raise GraphInstructError("no cells to rank")
    return AnalysisOutput(render(build_leaderboard(runs), request.options.format))
