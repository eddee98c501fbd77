"""F5: same-family scaling per level with a paired bootstrap (paper §5.2, Tab. 15, Fig. 9;
App. H.5, Tab. 35).

For a pair of models (``A − B``) and each prompting strategy both ran: per level the paired
mean difference of the level scores over the instructions both scored, its paired bootstrap 95%
interval (:func:`pytest_graphinstruct.score.regression.bootstrap.paired_diff`: one index draw
serves both
models) and, for comparison only, the unpaired interval (each model's instructions resampled on
their own).  The pairs are ``--pair A B`` or, by default, every two models of one family that
both have a scale in the models table, as ``larger − smaller``.  "Crosses zero" reads the paired
interval.  The bootstrap is seeded; its intervals match the paper's to the width of resampling
noise, not digit for digit (the paper used other draws).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.models_table import ModelsTable
from pytest_graphinstruct.report.analyses.registry import AnalysisOutput, AnalysisRequest
from pytest_graphinstruct.report.analyses.run_set import STRATEGY_ABBREV, Run
from pytest_graphinstruct.report.analyses.select import baseline_by_model
from pytest_graphinstruct.report.analyses.table import AnalysisResult, Table, render, signed
from pytest_graphinstruct.score.regression.bootstrap import paired_diff
from pytest_graphinstruct.vocab import LEVELS, STRATEGIES

DEFAULT_RESAMPLES = 1000


def unpaired_interval(a: Sequence[float], b: Sequence[float], *, resamples: int, seed: int,
                      confidence: float = 0.95) -> tuple[float, float]:
    """Percentile interval of ``mean(a) − mean(b)`` with ``a`` and ``b`` resampled apart."""
    rng = np.random.default_rng([seed, 1])
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ma = xa[rng.integers(0, xa.size, size=(resamples, xa.size))].mean(axis=1)
    mb = xb[rng.integers(0, xb.size, size=(resamples, xb.size))].mean(axis=1)
    alpha = 1.0 - confidence
    lo, hi = np.quantile(ma - mb, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def _pairs(by_model: dict[str, dict[str, Run]], pair: Sequence[str] | None,
           table: ModelsTable | None) -> list[tuple[str, str]]:
    if pair is not None:
        found = []
        for name in pair:
            key = table.info(name).key if table is not None else name
            group = next((g for g in by_model if g in (name, key)), None)
            if group is None:
                raise GraphInstructError(f"scaling: no plain cells of model {name!r} (have: "
                                         f"{', '.join(by_model) or 'none'})")
            found.append(group)
        return [(found[0], found[1])]
    families: dict[str, list[tuple[float, str]]] = {}
    for group, cells in by_model.items():
        info = next(iter(cells.values())).info
        if info.family is not None and info.scale is not None:
            families.setdefault(info.family, []).append((info.scale, group))
    out = []
    for members in families.values():
        for (_, small), (_, large) in combinations(sorted(members), 2):
            out.append((large, small))
    return out


def scaling(runs: Sequence[Run], *, pair: Sequence[str] | None = None,
            strategies: Sequence[str] = (), resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
            table: ModelsTable | None = None) -> AnalysisResult:
    """Per-level scaling deltas with paired and unpaired intervals (see the module docstring).

    Raises:
        GraphInstructError: an unknown strategy, a pair naming a model without plain cells,
            or no pair at all.
    """
    bad = [s for s in strategies if s not in STRATEGIES]
    if bad:
        raise GraphInstructError(f"unknown strategy {bad[0]!r} (one of {', '.join(STRATEGIES)})")
    if resamples < 1:
        raise GraphInstructError("--resamples must be at least 1")
    by_model = baseline_by_model(runs)
    pairs = _pairs(by_model, pair, table)
    if not pairs:
        raise GraphInstructError("scaling: no two models of one family with a scale in the "
                                 "models table; name a pair with --pair A B")
    rows = []
    for a, b in pairs:
        for s in strategies or STRATEGIES:
            if s not in by_model[a] or s not in by_model[b]:
                continue
            ra, rb = by_model[a][s], by_model[b][s]
            for lv in LEVELS:
                ia, ib = ra.level_items(lv), rb.level_items(lv)
                common = sorted(set(ia) & set(ib))
                if not common:
                    continue
                d = paired_diff([ib[i] for i in common], [ia[i] for i in common],
                                b=resamples, seed=seed)
                ulo, uhi = unpaired_interval(list(ia.values()), list(ib.values()),
                                             resamples=resamples, seed=seed)
                rows.append((ra.display, rb.display, STRATEGY_ABBREV[s], f"L{lv}", d.n,
                             d.mean_diff, d.low, d.high, ulo, uhi, d.low <= 0 <= d.high))
    if not rows:
        raise GraphInstructError("scaling: the pairs share no strategy with scored items")
    tables = (Table("A − B per level: paired and unpaired bootstrap 95% intervals",
                    ("A", "B", "strategy", "level", "n", "Δ", "paired low", "paired high",
                     "unpaired low", "unpaired high", "paired crosses 0"),
                    tuple(rows), (None, None, None, None, None, signed(3), signed(3),
                                  signed(3), signed(3), signed(3), None)),)
    notes = (f"{resamples} resamples, seed {seed}; paired over the instructions both scored",)
    data = {"resamples": resamples, "seed": seed,
            "rows": [dict(zip(("a", "b", "strategy", "level", "n", "delta", "paired_low",
                               "paired_high", "unpaired_low", "unpaired_high",
                               "paired_crosses_zero"), r, strict=True)) for r in rows]}
    return AnalysisResult("scaling", "F5: same-family scaling per level", tables, notes, data)


def analyze(request: AnalysisRequest) -> AnalysisOutput:
    """``analyze scaling``: :func:`scaling` with ``--pair``, ``--strategy``, ``--resamples``,
    ``--seed`` and the models table of ``--models-table``."""
    from pytest_graphinstruct.report.analyses.models_table import load_models_table

    o = request.options
    result = scaling(request.runs(), pair=o.pair, strategies=o.strategies,
                     resamples=o.resamples or DEFAULT_RESAMPLES,
                     seed=0 if o.seed is None else o.seed,
                     table=load_models_table(o.models_tables))
    return AnalysisOutput(render(result, o.format))
