"""How much the regression gate can see: its power at a level, from a baseline's scores.

The gate (:func:`~pytest_graphinstruct.score.bootstrap.paired_bootstrap` and
:func:`~pytest_graphinstruct.score.multiple.regressions`) flags a level when Holm rejects
"no drop" at family-wise ``alpha`` over ``tests`` level tests and the mean drop exceeds
``delta``.  For a level whose quality drops by ``D`` and no other change, that level has the
smallest p-value, so it is flagged when

    d̄ < −max(delta, c·se),   c = t⁻¹_df(1 − alpha/tests),

with ``d̄ ~ N(−D, V)`` and ``se² ≈ V·χ²_df/df + D²·h`` (the cluster-robust CR2 variance with
its Bell–McCaffrey degrees of freedom ``df``, a function of the cluster sizes only).  The power
is the average of ``Φ((D − max(delta, c·√(V·q + D²·h)))/√V)`` over the ``χ²_df/df``
distribution of ``q``.  Measured on a baseline (:class:`LevelNoise`):

* ``V = 2·σ²/(k·n)`` is the variance of the level's mean change between two runs of ``k``
  samples per instruction over ``n`` instructions; ``σ²`` is the run-to-run variance of one
  sample's level score averaged over the level's instructions.  With ``k ≥ 2`` samples and each
  instruction's share of passing samples ``p̂_i``: the level's pass/fail score gap ``ĝ`` is the
  least-squares slope of the level scores on ``p̂_i``, and ``σ² = mean_i ĝ²·p̂_i(1 −
  p̂_i)·k/(k − 1)`` (a sample's score is about the failing score plus ``ĝ`` when it passes).
  With one sample (or no per-sample outcomes): ``σ²`` is ``k`` times the variance of the level
  scores across the level's instructions — an upper bound (the run-to-run part of that spread
  is at most all of it), so the figures are conservative.
* ``h`` is how unevenly a drop falls on the clusters.  A model that gets worse moves the
  instructions it sometimes passes, not the ones it always passes or always fails: the drop of
  instruction ``i`` is taken as proportional to ``p_i(1 − p_i)`` (a shift of the pass
  probability on the logit scale), estimated per cluster from the pass shares (``p̂_g(1 − p̂_g)``
  of the cluster's mean pass share with one sample).  The cluster-robust variance cannot tell
  such a spread between clusters from noise, and with few clusters it costs most of the power.
  ``h = Σ_g (n_g(w̄_g/w̄ − 1))² / (1 − n_g/n) / n²`` with ``w̄_g`` the cluster means of
  ``p(1 − p)``; 0 without pass shares.

What a baseline cannot show: noise shared by the instructions of a template between runs, and a
drop concentrated in a few templates, both of which lower the power below these figures.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from scipy.stats import chi2, norm
from scipy.stats import t as student_t

from pytest_graphinstruct.score.bootstrap import bm_df
from pytest_graphinstruct.score.multiple import FAMILY_ALPHA

__all__ = [
    "POWER",
    "ItemScore",
    "LevelNoise",
    "bm_df",
    "detectable_drop",
    "detectable_drops",
    "gate_power",
    "instructions_needed",
    "level_noise",
    "noise_by_level",
    "samples_needed",
]

POWER = 0.8
"""The power at which a drop counts as detectable."""

_GRID = 256  # quantiles of χ²_df/df averaged over
_MAX_DROP = 1.0  # level scores lie in [0, 1]
_STEPS = 1000  # drops tried from 0 to 1 before refining


class ItemScore(NamedTuple):
    """One instruction of a baseline: its level, cluster, level score and the share of its
    samples that passed (``None``: unknown)."""

    level: int
    cluster: str
    score: float
    pass_share: float | None = None


@dataclass(frozen=True)
class LevelNoise:
    """What the gate's power at one level depends on, measured on a baseline.

    ``sample_variance`` is the run-to-run variance of one sample's level score, averaged over
    the level's instructions; ``samples`` the samples per instruction the baseline ran;
    ``conservative`` says ``sample_variance`` is the upper bound from the spread of level
    scores (one sample, or no per-sample outcomes); ``uneven`` is ``h``, the cluster-robust
    variance a drop of 1 adds by falling unevenly on the clusters (module docstring).
    """

    instructions: int
    cluster_sizes: tuple[int, ...]
    sample_variance: float
    samples: int
    conservative: bool
    uneven: float = 0.0

    @property
    def clusters(self) -> int:
        return len(self.cluster_sizes)

    @property
    def df(self) -> float:
        """The Bell–McCaffrey degrees of freedom of the level's test (0: fewer than two
        clusters, nothing can be detected)."""
        return bm_df(self.cluster_sizes)

    def mean_variance(self, samples: int | None = None, instructions: int | None = None) -> float:
        """``V``: the variance of the level's mean change between two runs of ``samples`` per
        instruction (default: the baseline's) over ``instructions`` (default: the level's)."""
        k = self.samples if samples is None else samples
        n = self.instructions if instructions is None else instructions
        if k < 1 or n < 1:
            raise ValueError(f"need at least one sample and one instruction, got {k} and {n}")
        return 2.0 * self.sample_variance / (k * n)


def _uneven(sizes: np.ndarray, weight: np.ndarray) -> float:
    """``h`` from per-cluster mean weights ``w̄_g`` (module docstring)."""
    n = float(sizes.sum())
    mean = float((weight * sizes).sum() / n)
    if sizes.size < 2 or mean <= 0:
        return 0.0
    resid = sizes * (weight / mean - 1.0)
    return float(np.sum(resid * resid / (1.0 - sizes / n)) / (n * n))


def level_noise(scores: Sequence[float], clusters: Sequence[str], *, samples: int,
                pass_shares: Sequence[float | None] | None = None) -> LevelNoise:
    """A level's :class:`LevelNoise` from its instructions' level scores and clusters (same
    order) and, when every one is known, their shares of passing samples.

    Raises:
        ValueError: no scores, lengths differ, ``samples < 1``, or a score or share that is not
            a finite number (shares: in [0, 1]).
    """
    x = np.asarray(scores, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError("need the level scores of at least one instruction")
    if len(clusters) != x.size:
        raise ValueError(f"{len(clusters)} clusters for {x.size} scores")
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    if not np.all(np.isfinite(x)):
        raise ValueError("level scores must be finite numbers")
    names: dict[str, int] = {}
    codes = np.array([names.setdefault(c, len(names)) for c in clusters], dtype=np.intp)
    sizes = np.bincount(codes, minlength=len(names)).astype(float)
    shares = None
    if pass_shares is not None and all(p is not None for p in pass_shares):
        shares = np.asarray(pass_shares, dtype=float)
        if shares.shape != x.shape or not np.all((shares >= 0) & (shares <= 1)):
            raise ValueError("pass shares must be one number in [0, 1] per score")
    uneven = 0.0
    if shares is not None and samples == 1:
        p = np.bincount(codes, weights=shares, minlength=sizes.size) / sizes
        uneven = _uneven(sizes, p * (1.0 - p))
    if shares is not None and samples >= 2:
        within = shares * (1.0 - shares) * samples / (samples - 1)
        uneven = _uneven(sizes,
                         np.bincount(codes, weights=within, minlength=sizes.size) / sizes)
    if shares is not None and samples >= 2 and x.size >= 2 and float(np.var(shares)) > 0:
        slope = float(np.cov(shares, x, ddof=0)[0, 1] / np.var(shares))
        gap = min(max(slope, 0.0), 1.0)
        variance, conservative = gap * gap * float(within.mean()), False
    else:  # all of the spread of k-sample means taken as run-to-run noise: ≤ k·spread
        variance = samples * float(np.var(x, ddof=1)) if x.size >= 2 else 0.0
        conservative = True
    return LevelNoise(int(x.size), tuple(int(s) for s in sizes), variance, samples,
                      conservative, uneven)


def noise_by_level(items: Iterable[ItemScore], *, samples: int) -> dict[int, LevelNoise]:
    """:func:`level_noise` of every level of a baseline (scored instructions only)."""
    by_level: dict[int, list[ItemScore]] = {}
    for item in items:
        by_level.setdefault(item.level, []).append(item)
    return {lv: level_noise([r.score for r in rows], [r.cluster for r in rows],
                            samples=samples, pass_shares=[r.pass_share for r in rows])
            for lv, rows in sorted(by_level.items())}


def _check(delta: float, alpha: float, tests: int, power: float) -> None:
    if delta < 0:
        raise ValueError(f"delta must be >= 0, got {delta}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if tests < 1:
        raise ValueError(f"tests must be >= 1, got {tests}")
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power}")


@lru_cache(maxsize=256)
def _quantiles(df: float) -> np.ndarray:
    """Evenly spaced quantiles of ``χ²_df/df`` (the spread of a variance estimate)."""
    return np.asarray(chi2.ppf((np.arange(_GRID) + 0.5) / _GRID, df) / df)


def _curve(noise: LevelNoise, drops: np.ndarray, v: np.ndarray, delta: float, alpha: float,
           tests: int) -> np.ndarray:
    """The power for each (drop, V) pair (broadcast): the module docstring's average over the
    ``χ²_df/df`` quantiles."""
    drops, v = np.broadcast_arrays(np.asarray(drops, dtype=float), np.asarray(v, dtype=float))
    df = noise.df
    if df <= 0:
        return np.zeros(drops.shape)
    c = float(student_t.ppf(1.0 - alpha / tests, df))
    q = _quantiles(df)
    extra = (drops * drops * noise.uneven)[..., None]
    threshold = np.maximum(delta, c * np.sqrt(v[..., None] * q + extra))
    sd = np.sqrt(np.maximum(v, 1e-30))[..., None]
    return np.asarray(norm.cdf((drops[..., None] - threshold) / sd).mean(axis=-1))


def _power(drop: float, noise: LevelNoise, v: float, delta: float, alpha: float,
           tests: int) -> float:
    return float(_curve(noise, np.array(drop), np.array(v), delta, alpha, tests))


def gate_power(noise: LevelNoise, drop: float, *, delta: float, alpha: float = FAMILY_ALPHA,
               tests: int = 6, samples: int | None = None,
               instructions: int | None = None) -> float:
    """The chance the gate flags this level when its quality drops by ``drop`` (and nothing
    else changes), comparing runs of ``samples`` per instruction over ``instructions`` (default:
    the baseline's; more instructions keep the clusters' relative sizes)."""
    _check(delta, alpha, tests, 0.5)
    v = noise.mean_variance(samples, instructions)
    return _power(drop, noise, v, delta, alpha, tests)


def detectable_drop(noise: LevelNoise, *, delta: float, alpha: float = FAMILY_ALPHA,
                    tests: int = 6, power: float = POWER, samples: int | None = None,
                    instructions: int | None = None) -> float:
    """The smallest drop of the level's quality the gate flags with probability ``power``
    (``math.inf``: none up to the whole score range, e.g. fewer than two clusters, or a drop
    so uneven between few clusters that the cluster-robust t never gets large enough)."""
    _check(delta, alpha, tests, power)
    v = noise.mean_variance(samples, instructions)
    grid = np.linspace(0.0, _MAX_DROP, _STEPS + 1)
    ok = np.flatnonzero(_curve(noise, grid, np.array(v), delta, alpha, tests) >= power)
    if not ok.size:
        return math.inf
    hi = float(grid[ok[0]])
    lo = float(grid[ok[0] - 1]) if ok[0] > 0 else 0.0
    for _ in range(20):  # refine between the grid points around the first crossing
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _power(mid, noise, v, delta, alpha, tests) >= power else (mid, hi)
    return hi


def detectable_drops(items: Iterable[ItemScore], *, samples: int, delta: float,
                     alpha: float = FAMILY_ALPHA, tests: int = 6,
                     power: float = POWER) -> dict[int, float]:
    """Level → :func:`detectable_drop` for a baseline's scored instructions (what a gated run
    compares its levels with)."""
    return {lv: detectable_drop(n, delta=delta, alpha=alpha, tests=tests, power=power)
            for lv, n in noise_by_level(items, samples=samples).items()}


def samples_needed(noise: LevelNoise, drop: float, *, delta: float,
                   alpha: float = FAMILY_ALPHA, tests: int = 6, power: float = POWER,
                   limit: int = 1000) -> int | None:
    """The fewest samples per instruction at which the gate flags a drop of ``drop`` with
    probability ``power`` over the level's instructions (``None``: not within ``limit``)."""
    _check(delta, alpha, tests, power)
    ks = np.arange(1, max(limit, 0) + 1)
    v = 2.0 * noise.sample_variance / (ks * noise.instructions)
    ok = np.flatnonzero(_curve(noise, np.array(drop), v, delta, alpha, tests) >= power)
    return int(ks[ok[0]]) if ok.size else None


def instructions_needed(noise: LevelNoise, drop: float, *, delta: float,
                        alpha: float = FAMILY_ALPHA, tests: int = 6, power: float = POWER,
                        samples: int | None = None, limit: int = 100_000) -> int | None:
    """The fewest instructions (more of the same clusters, in the same proportions) at which
    the gate flags a drop of ``drop`` with probability ``power`` (``None``: not within
    ``limit``, e.g. fewer than two clusters)."""
    _check(delta, alpha, tests, power)
    if limit < 1:
        return None
    k = noise.samples if samples is None else samples

    def first(ns: np.ndarray) -> int | None:
        v = 2.0 * noise.sample_variance / (k * ns)
        ok = np.flatnonzero(_curve(noise, np.array(drop), v, delta, alpha, tests) >= power)
        return int(ok[0]) if ok.size else None

    coarse = np.unique(np.round(np.geomspace(1, limit, 2000)).astype(np.int64))
    at = first(coarse)
    if at is None:
        return None
    start = int(coarse[at - 1]) + 1 if at > 0 else 1
    fine = np.arange(start, int(coarse[at]) + 1)
    found = first(fine)
    return int(fine[found]) if found is not None else int(coarse[at])
