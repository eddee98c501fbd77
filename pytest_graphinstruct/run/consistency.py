"""Consistency over samples of one cell: its pass@1 / pass@k / pass^k rows per level and for the
whole cell, and its flaky items, from each item's recorded per-sample verdicts (nothing is
verified again; :mod:`pytest_graphinstruct.score.consistency` holds the estimators).

Only items with samples to count — scored items (passed or failed) — are measured; items with
no answer (errors) or skipped are left out of every figure and counted beside it (``left_out``),
as the level scores leave them out: a harness fault is never the model's inconsistency.  The
whole cell is measured at one ``k``, the fewest samples any of its measured items has, and so
is each of its levels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_graphinstruct.run.records.results import ConsistencyRow, FlakyItem, ItemResult
from pytest_graphinstruct.score.consistency import Consistency, Tally, common_k, consistency
from pytest_graphinstruct.score.regression.bootstrap import Interval
from pytest_graphinstruct.vocab import LEVELS, Level

__all__ = ["CELL_STREAM", "CellConsistency", "measure", "tally"]

CELL_STREAM = len(LEVELS)
"""The bootstrap stream of the cell-wide figures (a level's figures use the level's number)."""


def tally(item: ItemResult) -> Tally | None:
    """The item's samples and how many passed; ``None`` when it has none to count (an error,
    skipped, or no sample)."""
    passing = item.passing
    if not item.scored or passing is None:
        return None
    return Tally(len(item.samples), passing)


@dataclass(frozen=True)
class CellConsistency:
    """One cell's consistency: the rows per level (only levels with a measured item), the
    cell-wide row, its ``k``, and its flaky items in the order given."""

    k: int
    levels: dict[Level, ConsistencyRow]
    cell: ConsistencyRow
    flaky: tuple[FlakyItem, ...]


def _ci(x: Interval) -> tuple[float, float]:
    return (x.low, x.high)


def _row(figures: Consistency, left_out: int) -> ConsistencyRow:
    return ConsistencyRow(
        k=figures.k, items=figures.items, left_out=left_out, flaky=figures.flaky,
        pass_at_1=figures.pass_at_1.estimate, pass_at_1_ci95=_ci(figures.pass_at_1),
        pass_at_k=figures.pass_at_k.estimate, pass_at_k_ci95=_ci(figures.pass_at_k),
        pass_all_k=figures.pass_all_k.estimate, pass_all_k_ci95=_ci(figures.pass_all_k))


def measure(items: Sequence[ItemResult]) -> CellConsistency | None:
    """The consistency of a cell's ``items`` at the cell's ``k`` (any ``k``, 1 included: the
    caller decides whether one sample is worth showing); ``None`` when no item has samples to
    count."""
    counted = [(r, t) for r in items if (t := tally(r)) is not None]
    if not counted:
        return None
    k = common_k([t for _, t in counted])
    levels = {}
    for lv in LEVELS:
        mine = [t for r, t in counted if r.level == lv]
        if mine:
            left_out = sum(1 for r in items if r.level == lv) - len(mine)
            levels[lv] = _row(consistency(mine, k=k, stream=lv), left_out)
    cell = _row(consistency([t for _, t in counted], k=k, stream=CELL_STREAM),
                len(items) - len(counted))
    flaky = tuple(FlakyItem(r.instruction_id, r.level, t.c, t.n) for r, t in counted if t.flaky)
    return CellConsistency(k, levels, cell, flaky)
