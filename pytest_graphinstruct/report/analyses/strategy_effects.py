"""F3: signed strategy × level effects against zero-shot (paper §5.2, Tab. 13; App. H.5,
Tab. 36).

Over the models that ran all four strategies: per level and per strategy, the mean of
``S_level(strategy) − S_level(zero-shot)``, and how many models lie above ``+band``, below
``−band`` and within (``band`` = 0.005, the paper's stability band).  The dominant sign is
``POS k/n`` or ``NEG k/n`` for the larger count, ``MIXED`` when the two counts differ by at most
one, and ``robust`` is added when all but at most one model agree.  The best strategy of a
level is the one with the largest mean effect (zero-shot's is 0).

The released score files give App. H.5's Tab. 36 exactly (means and every count); Tab. 13
prints the same quantity with up to 0.0018 difference in ten of its eighteen cells (see
docs/ANALYSES.md).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.registry import AnalysisOutput, AnalysisRequest
from pytest_graphinstruct.report.analyses.run_set import STRATEGY_ABBREV, Run
from pytest_graphinstruct.report.analyses.select import complete_models
from pytest_graphinstruct.report.analyses.table import AnalysisResult, Table, render, signed
from pytest_graphinstruct.vocab import LEVELS, STRATEGIES

BAND = 0.005
"""The paper's ±0.005 stability band."""

ZERO_SHOT = "zero-shot"


def dominant(pos: int, neg: int, n: int) -> str:
    """The dominant sign label of Tab. 36 (see the module docstring)."""
    if abs(pos - neg) <= 1:
        return "MIXED"
    sign, k = ("POS", pos) if pos > neg else ("NEG", neg)
    return f"{sign} {k}/{n}" + (" (robust)" if k >= n - 1 else "")


def effects(runs: Sequence[Run], band: float = BAND
            ) -> dict[int, dict[str, tuple[float, int, int, int]]]:
    """``{level: {strategy: (mean Δ, #pos, #neg, #tie)}}`` over the complete models.

    Raises:
        GraphInstructError: no model ran all four strategies.
    """
    models = complete_models(runs)
    if not models:
        raise GraphInstructError("strategy effects need a model that ran all four strategies")
    out: dict[int, dict[str, tuple[float, int, int, int]]] = {}
    for lv in LEVELS:
        row: dict[str, tuple[float, int, int, int]] = {}
        for s in STRATEGIES:
            if s == ZERO_SHOT:
                continue
            deltas = []
            for cells in models.values():
                a, z = cells[s].level_score(lv), cells[ZERO_SHOT].level_score(lv)
                if a is not None and z is not None:
                    deltas.append(a - z)
            if not deltas:
                continue
            pos = sum(d > band for d in deltas)
            neg = sum(d < -band for d in deltas)
            row[s] = (statistics.fmean(deltas), pos, neg, len(deltas) - pos - neg)
        if row:
            out[lv] = row
    return out


def strategy_effects(runs: Sequence[Run], band: float = BAND) -> AnalysisResult:
    eff = effects(runs, band)
    others = [s for s in STRATEGIES if s != ZERO_SHOT]
    n = len(complete_models(runs))
    wide = []
    for lv, row in eff.items():
        best = max([(0.0, ZERO_SHOT)] + [(row[s][0], s) for s in others if s in row])[1]
        wide.append((f"L{lv}", *(row[s][0] if s in row else None for s in others), best))
    counts = []
    for lv, row in eff.items():
        for s in others:
            if s in row:
                mean, pos, neg, tie = row[s]
                counts.append((f"L{lv}", f"{STRATEGY_ABBREV[s]} − ZS", mean, pos, neg, tie,
                               dominant(pos, neg, pos + neg + tie)))
    tables = (Table(f"Mean Δ vs zero-shot over {n} models with all four strategies",
                    ("level", *(f"{STRATEGY_ABBREV[s]} − ZS" for s in others),
                     "best strategy"), tuple(wide), (None, signed(3), signed(3), signed(3),
                                                     None)),
              Table(f"Sign counts (band ±{band:g})",
                    ("level", "effect", "mean Δ", "# pos", "# neg", "# tie", "dominant"),
                    tuple(counts), (None, None, signed(4), None, None, None, None)))
    data = {"band": band, "models": n,
            "effects": {str(lv): {s: {"mean": v[0], "pos": v[1], "neg": v[2], "tie": v[3]}
                                  for s, v in row.items()} for lv, row in eff.items()}}
    return AnalysisResult("strategy-effects", "F3: signed strategy × level effects", tables,
                          (), data)


def analyze(request: AnalysisRequest) -> AnalysisOutput:
    """``analyze strategy-effects``: :func:`strategy_effects`."""
    return AnalysisOutput(render(strategy_effects(request.runs()), request.options.format))
