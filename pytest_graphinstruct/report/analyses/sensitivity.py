"""F2: prompt sensitivity against capability (paper §5.1, Fig. 6; App. H.5).

For every model that ran all four strategies: ``σ_strat`` (population standard deviation of
S_total over the four, :func:`pytest_graphinstruct.score.pareto.sigma_strat`), mean S_total
and the S_total range.  Then the OLS regression of σ_strat on mean S_total (slope β,
intercept, R², two-sided p of the slope's t-test), a bootstrap of β over models (resampled
with replacement, ``B`` times, seeded; a resample whose mean qualities are all equal has no
slope and is drawn again), the share of resamples with β < 0, and leave-one-out fits (the
range of β and R²).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.registry import AnalysisOutput, AnalysisRequest
from pytest_graphinstruct.report.analyses.run_set import Run
from pytest_graphinstruct.report.analyses.select import complete_models
from pytest_graphinstruct.report.analyses.table import AnalysisResult, Table, render
from pytest_graphinstruct.score.pareto import sigma_strat

DEFAULT_RESAMPLES = 10_000


@dataclass(frozen=True)
class Fit:
    """An OLS fit ``y = intercept + slope·x`` with R² and the slope's two-sided p-value."""

    slope: float
    intercept: float
    r2: float
    p: float | None
    n: int


def ols(x: Sequence[float], y: Sequence[float]) -> Fit:
    """Least squares of ``y`` on ``x`` (at least three points, ``x`` not constant).

    Raises:
        ValueError: fewer than three points or a constant ``x``.
    """
    from scipy import stats

    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.size < 3 or float(np.ptp(xa)) == 0.0:
        raise ValueError("a regression needs three points with different x")
    res = stats.linregress(xa, ya)
    p = float(res.pvalue)
    return Fit(float(res.slope), float(res.intercept), float(res.rvalue) ** 2,
               None if math.isnan(p) else p, int(xa.size))


def bootstrap_slopes(x: Sequence[float], y: Sequence[float], *, b: int, seed: int
                     ) -> np.ndarray:
    """``b`` OLS slopes of resamples of the ``(x, y)`` pairs (degenerate draws redrawn)."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = xa.size
    rng = np.random.default_rng(seed)
    out = np.empty(b)
    filled = 0
    while filled < b:
        idx = rng.integers(0, n, size=(b - filled, n))
        xs, ys = xa[idx], ya[idx]
        xc = xs - xs.mean(axis=1, keepdims=True)
        sxx = (xc * xc).sum(axis=1)
        ok = sxx > 1e-15
        slopes = (xc * (ys - ys.mean(axis=1, keepdims=True))).sum(axis=1)[ok] / sxx[ok]
        out[filled:filled + slopes.size] = slopes
        filled += slopes.size
    return out


def sensitivity(runs: Sequence[Run], *, resamples: int = DEFAULT_RESAMPLES,
                seed: int = 0) -> AnalysisResult:
    """σ_strat per model and its regression on mean quality (see the module docstring).

    Raises:
        GraphInstructError: fewer than three models with all four strategies.
    """
    models = complete_models(runs)
    if len(models) < 3:
        raise GraphInstructError(f"sensitivity needs three or more models with all four "
                                 f"strategies; found {len(models)}")
    if resamples < 1:
        raise GraphInstructError("--resamples must be at least 1")
    points = [r.point() for cells in models.values() for r in cells.values()]
    sigma = sigma_strat(points)
    rows = []
    xs, ys = [], []
    for group, cells in models.items():
        qs = [r.quality or 0.0 for r in cells.values()]
        mean_q = float(np.mean(qs))
        s = sigma[group]
        assert s is not None  # four strategies
        first = next(iter(cells.values()))
        rows.append((first.display, first.info.tier, mean_q, s, max(qs) - min(qs)))
        xs.append(mean_q)
        ys.append(s)
    fit = ols(xs, ys)
    slopes = bootstrap_slopes(xs, ys, b=resamples, seed=seed)
    lo, hi = (float(v) for v in np.quantile(slopes, [0.025, 0.975]))
    share_neg = float(np.mean(slopes < 0))
    loo = [ols([x for j, x in enumerate(xs) if j != i], [y for j, y in enumerate(ys) if j != i])
           for i in range(len(xs))] if len(xs) >= 4 else []
    summary = [("slope β", fit.slope), ("intercept", fit.intercept), ("R²", fit.r2),
               ("p (two-sided, slope)", fit.p), ("models", fit.n),
               (f"bootstrap 95% CI of β, low ({resamples} resamples)", lo),
               ("bootstrap 95% CI of β, high", hi), ("P(β < 0) over resamples", share_neg)]
    if loo:
        summary += [("leave-one-out β, min", min(f.slope for f in loo)),
                    ("leave-one-out β, max", max(f.slope for f in loo)),
                    ("leave-one-out R², min", min(f.r2 for f in loo)),
                    ("leave-one-out R², max", max(f.r2 for f in loo)),
                    ("leave-one-out fits with β < 0", sum(f.slope < 0 for f in loo))]
    rows.sort(key=lambda r: -r[2])
    tables = (Table("σ_strat per model (population std of S_total over the four strategies)",
                    ("model", "tier", "mean S_total", "σ_strat", "range"), tuple(rows),
                    (None, None, 4, 4, 4)),
              Table("OLS of σ_strat on mean S_total", ("statistic", "value"),
                    tuple(summary), (None, 4)))
    data = {"models": [{"model": r[0], "tier": r[1], "mean_q": r[2], "sigma_strat": r[3],
                        "range": r[4]} for r in rows],
            "fit": {"slope": fit.slope, "intercept": fit.intercept, "r2": fit.r2, "p": fit.p,
                    "n": fit.n},
            "bootstrap": {"resamples": resamples, "seed": seed, "low": lo, "high": hi,
                          "share_negative": share_neg},
            "loo": [{"slope": f.slope, "r2": f.r2} for f in loo]}
    return AnalysisResult("sensitivity", "F2: prompt sensitivity vs capability", tables,
                          (f"bootstrap seed {seed}",), data)


def analyze(request: AnalysisRequest) -> AnalysisOutput:
    """``analyze sensitivity``: :func:`sensitivity` with ``--resamples`` and ``--seed``."""
    o = request.options
    result = sensitivity(request.runs(), resamples=o.resamples or DEFAULT_RESAMPLES,
                         seed=0 if o.seed is None else o.seed)
    return AnalysisOutput(render(result, o.format))
