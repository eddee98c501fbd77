"""Choosing cells for an analysis: each model's baseline cells by strategy, complete models."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.run_set import Run
from pytest_graphinstruct.vocab import STRATEGIES


def baseline_by_model(runs: Sequence[Run]) -> dict[str, dict[str, Run]]:
    """``{model group: {strategy: run}}`` over the plain prompting cells (with an S_total), in
    first-seen model order.

    Raises:
        GraphInstructError: two cells of one model and strategy (say which to keep by passing
            one of them).
    """
    out: dict[str, dict[str, Run]] = {}
    for r in runs:
        if not r.is_baseline or r.quality is None:
            continue
        cells = out.setdefault(r.group, {})
        if r.condition in cells:
            raise GraphInstructError(f"two {r.condition} cells of {r.group}: "
                                     f"{cells[r.condition].label} and {r.label}; pass one")
        cells[r.condition] = r
    return out


def complete_models(runs: Sequence[Run]) -> dict[str, dict[str, Run]]:
    """The models of :func:`baseline_by_model` that ran all four strategies (the paper's
    "fully-evaluated models")."""
    return {m: cells for m, cells in baseline_by_model(runs).items()
            if all(s in cells for s in STRATEGIES)}
