"""Bootstrap confidence intervals for level scores, S_total, and differences between runs.

* Per level: resample the level's instructions with replacement (as many as it has), take the
  mean; ``B`` resamples give the percentile interval ``[q_{α/2}, q_{1−α/2}]`` (``α = 1 −
  confidence``, numpy's default linear quantile).  The estimate is the plain mean.
* ``S_total``: in each resample every level is resampled within itself (stratified by level,
  so each level keeps its instruction count) and ``Σ v_l·S_l`` is recomputed, both unnormalized
  (absent levels count 0) and renormalized over the levels present.
* Paired difference of two runs on the same instructions (:func:`paired_bootstrap`,
  ``candidate − baseline``, positive = better), per level, over the instructions scored in both
  runs (the others are left out and listed).  Instructions belong to *clusters* (their
  template, :func:`pytest_graphinstruct.suite.clusters.cluster_of`): instructions made from one
  pattern move together between runs, so they are resampled together and the uncertainty is
  measured between clusters, not between instructions.  Without clusters each instruction is
  its own.

  - The estimate is the plain mean of the per-instruction differences ``d_i``.
  - Its standard error is the cluster-robust CR2 estimate (Bell and McCaffrey 2002):
    ``se² = Σ_g (Σ_{i∈g} (d_i − d̄))² / (1 − n_g/n) / n²`` over the ``G`` clusters of sizes
    ``n_g``, with a Student t reference whose degrees of freedom are Bell and McCaffrey's
    Satterthwaite approximation: ``G − 1`` for clusters of equal size, fewer when one cluster
    dominates.  The interval is ``d̄ ± t_{df, 1−α/2}·se`` (clipped to ``[−1, 1]``) and
    ``p_drop = F_t(d̄/se; df)`` is the one-sided p-value of "no drop" (the interval's upper end
    is below 0 exactly when ``p_drop < α/2``).  With fewer than two clusters no spread can be
    measured: the interval is the whole range ``[−1, 1]`` and ``p_drop`` is 1.
  - ``share_ge0``/``share_le0`` are the shares of ``B`` cluster resamples (clusters drawn with
    replacement, one draw serving both runs, each resample's mean over the instructions of the
    clusters drawn) whose mean difference is ``≥ 0``/``≤ 0``.
  - ``S_total``: ``Σ v_l·d̄_l`` with ``se² = Σ v_l²·se_l²`` and Welch–Satterthwaite degrees of
    freedom, unnormalized and renormalized over the levels present.

  Why this procedure and not the percentile bootstrap: measured by ``bench/gate_calibration.py``
  (docs/PLUGIN.md, "How much the gate can see").  A percentile bootstrap over 4–5 clusters is
  far too narrow, the plain cluster t with ``G − 1`` degrees of freedom breaks down when one
  cluster holds most of a level, and CR2 with Bell–McCaffrey degrees of freedom keeps the
  family-wise false-alarm rate below 5 % in every configuration measured.
* Regression rules: :func:`is_regression` (one level on its own: the mean dropped by more than
  ``delta`` and the interval's upper end is below 0) and, for a gated run,
  :func:`pytest_graphinstruct.score.multiple.regressions` (Holm over every level of every cell).

Determinism: each level draws from its own generator seeded with ``(seed, level)``, so a level's
result does not change when other levels are added or removed, and results are identical on
every call for a given numpy version.  Resampling is vectorized (count matrices of
``chunk × n``, chunked to bound memory); there is no Python loop over single resamples.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t

from pytest_graphinstruct.score.levels import LEVEL_WEIGHTS_V
from pytest_graphinstruct.vocab import LEVELS

__all__ = [
    "CONFIDENCE",
    "DEFAULT_B",
    "DEFAULT_SEED",
    "BootstrapResult",
    "Interval",
    "PairedDiff",
    "PairedResult",
    "bm_df",
    "bootstrap_levels",
    "is_regression",
    "paired_bootstrap",
    "paired_diff",
]

DEFAULT_B = 2000
DEFAULT_SEED = 0
CONFIDENCE = 0.95
_MAX_CELLS = 4_000_000  # index-matrix elements per chunk


@dataclass(frozen=True)
class Interval:
    """A point estimate with its percentile bootstrap interval over ``n`` instructions."""

    estimate: float
    low: float
    high: float
    n: int

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high


@dataclass(frozen=True)
class BootstrapResult:
    """Intervals per level and for ``S_total`` (``total_renormalized`` over present levels)."""

    levels: dict[int, Interval]
    total: Interval
    total_renormalized: Interval | None
    b: int
    seed: int
    confidence: float


@dataclass(frozen=True)
class PairedDiff:
    """``candidate − baseline``: mean difference, its interval, the resample shares, and the
    one-sided p-value of "no drop".

    ``p_drop`` is small when the drop is real (``paired_bootstrap``: studentized over
    ``clusters`` clusters with ``df`` degrees of freedom, standard error ``se``; see the module
    docstring).  ``clusters`` is how many clusters the level's instructions fall into (``n``
    when each instruction is its own).
    """

    n: int
    mean_diff: float
    low: float
    high: float
    share_ge0: float
    share_le0: float
    p_drop: float = 1.0
    clusters: int = 0
    se: float = 0.0
    df: float = 0.0

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high


@dataclass(frozen=True)
class PairedResult:
    """Paired differences per level and for ``S_total``; ids found in only one run are listed."""

    levels: dict[int, PairedDiff]
    total: PairedDiff
    total_renormalized: PairedDiff | None
    only_baseline: tuple[str, ...]
    only_candidate: tuple[str, ...]
    b: int
    seed: int
    confidence: float


def _check(b: int, confidence: float) -> None:
    if b < 1:
        raise ValueError(f"need at least one resample, got B={b}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def _array(xs: Sequence[float], what: str) -> np.ndarray:
    a = np.asarray(xs, dtype=float)
    if a.ndim != 1:
        raise ValueError(f"{what}: expected a flat sequence of numbers")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: scores must be finite numbers (filter out absent scores)")
    return a


def _resample_means(x: np.ndarray, b: int, rng: np.random.Generator) -> np.ndarray:
    """``b`` bootstrap means of ``x`` (vectorized, chunked by rows)."""
    n = x.size
    out = np.empty(b)
    rows = max(1, _MAX_CELLS // n)
    for start in range(0, b, rows):
        stop = min(b, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = x[idx].mean(axis=1)
    return out


def _rng(seed: int, level: int) -> np.random.Generator:
    return np.random.default_rng([seed, level])


def _bounds(boot: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = 1.0 - confidence
    lo, hi = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def _weights(levels: Sequence[int]) -> tuple[np.ndarray, float]:
    for lv in levels:
        if lv not in LEVELS:
            raise ValueError(f"unknown level {lv!r} (levels are 0..5)")
    v = np.array([LEVEL_WEIGHTS_V[lv] for lv in levels])
    return v, float(v.sum())


def bootstrap_levels(
    scores: Mapping[int, Sequence[float]],
    *,
    b: int = DEFAULT_B,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> BootstrapResult:
    """Percentile intervals per level and for ``S_total`` from per-instruction level scores.

    ``scores`` maps a level to its instructions' level scores; empty levels count as absent.
    """
    _check(b, confidence)
    data = {lv: _array(xs, f"L{lv}") for lv, xs in sorted(scores.items())}
    data = {lv: x for lv, x in data.items() if x.size}
    levels = sorted(data)
    v, vsum = _weights(levels)
    out: dict[int, Interval] = {}
    boots = np.zeros((len(levels), b))
    means = np.zeros(len(levels))
    for i, lv in enumerate(levels):
        x = data[lv]
        boots[i] = _resample_means(x, b, _rng(seed, lv))
        means[i] = x.mean()
        out[lv] = Interval(float(means[i]), *_bounds(boots[i], confidence), n=int(x.size))
    n_all = sum(int(x.size) for x in data.values())
    total_boot = v @ boots if levels else np.zeros(b)
    total = Interval(float(v @ means) if levels else 0.0, *_bounds(total_boot, confidence),
                     n=n_all)
    renorm = None
    if levels:
        renorm = Interval(float(v @ means) / vsum, *_bounds(total_boot / vsum, confidence),
                          n=n_all)
    return BootstrapResult(out, total, renorm, b, seed, confidence)


def _paired(boot: np.ndarray, estimate: float, n: int, confidence: float) -> PairedDiff:
    lo, hi = _bounds(boot, confidence)
    ge0 = float(np.mean(boot >= 0))
    return PairedDiff(n, estimate, lo, hi, ge0, float(np.mean(boot <= 0)), p_drop=ge0,
                      clusters=n, se=float(boot.std()), df=float(max(n - 1, 0)))


def paired_diff(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    b: int = DEFAULT_B,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> PairedDiff:
    """Percentile bootstrap of ``mean(candidate − baseline)`` over aligned sequences (same
    order), each element resampled on its own; ``p_drop`` is ``share_ge0`` here."""
    _check(b, confidence)
    a = _array(baseline, "baseline")
    c = _array(candidate, "candidate")
    if a.size != c.size or a.size == 0:
        raise ValueError("paired sequences must be non-empty and of equal length")
    d = c - a
    boot = _resample_means(d, b, np.random.default_rng(seed))
    return _paired(boot, float(d.mean()), int(d.size), confidence)


@dataclass(frozen=True)
class _Clustered:
    """One level's differences summed per cluster, with the studentized statistics."""

    sums: np.ndarray  # per cluster: Σ d_i
    sizes: np.ndarray  # per cluster: n_g
    mean: float
    se: float
    df: float  # 0.0: fewer than two clusters, nothing measured


def bm_df(cluster_sizes: Sequence[float] | np.ndarray) -> float:
    """Bell–McCaffrey degrees of freedom of the CR2 variance of a mean over clusters of these
    sizes (intercept-only model, independent equal-variance working model): ``(tr M)² /
    tr(M²)`` for ``M = D − u uᵀ`` with ``D = diag(c_g n_g)``, ``u_g = n_g √(c_g / n)``, ``c_g =
    1 / (1 − n_g/n)`` (O(G), no ``G × G`` matrix).  ``G − 1`` for clusters of equal size, fewer
    when one cluster dominates; 0 below two clusters (empty ones do not count)."""
    sizes = np.asarray(cluster_sizes, dtype=float)
    sizes = sizes[sizes > 0]
    if sizes.size < 2:
        return 0.0
    n = float(sizes.sum())
    c = 1.0 / (1.0 - sizes / n)
    diag = c * sizes
    uu = c * sizes * sizes / n  # u_g²
    trace = float(diag.sum() - uu.sum())
    square = float(np.sum(diag * diag) - 2.0 * np.sum(uu * diag) + uu.sum() ** 2)
    return trace * trace / square


def _clustered(d: np.ndarray, codes: np.ndarray, g: int) -> _Clustered:
    sums = np.bincount(codes, weights=d, minlength=g)
    sizes = np.bincount(codes, minlength=g).astype(float)
    mean = float(d.mean())
    if g < 2:
        return _Clustered(sums, sizes, mean, 0.0, 0.0)
    n = float(d.size)
    resid = sums - sizes * mean
    var = float(np.sum(resid * resid / (1.0 - sizes / n))) / (n * n)
    return _Clustered(sums, sizes, mean, math.sqrt(max(var, 0.0)), bm_df(sizes))


def _p_drop(mean: float, se: float, df: float) -> float:
    """One-sided p-value of "no drop" (``P(T ≤ mean/se)``, ``T ~ t_df``)."""
    if df <= 0:
        return 1.0
    if se <= 0:  # no spread at all: a drop is certain, anything else is not one
        return 0.0 if mean < 0 else 1.0
    return float(student_t.cdf(mean / se, df))


def _interval(mean: float, se: float, df: float, confidence: float,
              bound: float = 1.0) -> tuple[float, float]:
    if df <= 0:
        return -bound, bound
    half = float(student_t.ppf(0.5 + confidence / 2, df)) * se if se > 0 else 0.0
    return max(mean - half, -bound), min(mean + half, bound)


def _cluster_means(c: _Clustered, b: int, rng: np.random.Generator) -> np.ndarray:
    """``b`` cluster-bootstrap means: ``G`` clusters drawn with replacement (an index matrix),
    each resample's mean over the instructions of the clusters drawn (vectorized, chunked by
    rows)."""
    g = c.sizes.size
    out = np.empty(b)
    rows = max(1, _MAX_CELLS // g)
    for start in range(0, b, rows):
        stop = min(b, start + rows)
        idx = rng.integers(0, g, size=(stop - start, g))
        out[start:stop] = c.sums[idx].sum(axis=1) / c.sizes[idx].sum(axis=1)
    return out


def _cluster_codes(ids: Sequence[str], clusters: Mapping[str, str] | None) -> np.ndarray:
    """Cluster numbers of ``ids`` in order of first appearance; an id without a cluster is its
    own (never merged with a named cluster of the same name)."""
    seen: dict[tuple[int, str], int] = {}
    out = np.empty(len(ids), dtype=np.intp)
    for k, i in enumerate(ids):
        name = None if clusters is None else clusters.get(i)
        key = (1, i) if name is None else (0, name)
        out[k] = seen.setdefault(key, len(seen))
    return out


def _diff(c: _Clustered, boot: np.ndarray, n: int, confidence: float) -> PairedDiff:
    lo, hi = _interval(c.mean, c.se, c.df, confidence)
    return PairedDiff(n, c.mean, lo, hi, float(np.mean(boot >= 0)), float(np.mean(boot <= 0)),
                      p_drop=_p_drop(c.mean, c.se, c.df), clusters=int(c.sizes.size),
                      se=c.se, df=c.df)


def _combined(parts: Sequence[_Clustered], weights: np.ndarray, boot: np.ndarray, n: int,
              confidence: float, scale: float = 1.0) -> PairedDiff:
    """``Σ w_l·d̄_l / scale``: ``se² = Σ w_l² se_l²``, Welch–Satterthwaite df; a level without
    a measured spread makes the whole sum unmeasured (interval: the whole range)."""
    w = weights / scale
    est = float(sum(wl * p.mean for wl, p in zip(w, parts, strict=True)))
    bound = float(np.abs(w).sum())
    if not parts or any(p.df <= 0 for p in parts):
        df, se = 0.0, 0.0
    else:
        terms = np.array([(wl * p.se) ** 2 for wl, p in zip(w, parts, strict=True)])
        var = float(terms.sum())
        se = math.sqrt(var)
        dfs = np.array([p.df for p in parts])
        denom = float(np.sum(terms * terms / dfs))
        df = var * var / denom if denom > 0 else float(dfs.sum())
    lo, hi = _interval(est, se, df, confidence, bound=bound)
    scaled = boot / scale
    return PairedDiff(n, est, lo, hi, float(np.mean(scaled >= 0)), float(np.mean(scaled <= 0)),
                      p_drop=_p_drop(est, se, df),
                      clusters=int(sum(p.sizes.size for p in parts)), se=se, df=df)


def paired_bootstrap(
    baseline: Mapping[str, tuple[int, float]],
    candidate: Mapping[str, tuple[int, float]],
    *,
    clusters: Mapping[str, str] | None = None,
    b: int = DEFAULT_B,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> PairedResult:
    """Paired, cluster-resampled comparison of ``candidate − baseline`` per level and for
    ``S_total`` (the module docstring gives the statistics).

    Both runs map an instruction id to ``(level, level_score)``; ``clusters`` maps an id to its
    cluster (an id it does not name, or every id when it is ``None``, is its own cluster).  Ids
    are paired by name and sorted, so the result does not depend on mapping order; an id whose
    level differs between the runs raises ``ValueError``.  ``S_total`` differences are taken
    over the levels present in the pairing (unnormalized and renormalized).
    """
    _check(b, confidence)
    common = sorted(set(baseline) & set(candidate))
    by_level: dict[int, list[str]] = {}
    for i in common:
        lb, lc = baseline[i][0], candidate[i][0]
        if lb != lc:
            raise ValueError(f"{i}: level {lb} in the baseline but {lc} in the candidate")
        by_level.setdefault(lb, []).append(i)
    levels = sorted(by_level)
    v, vsum = _weights(levels)
    out: dict[int, PairedDiff] = {}
    parts: list[_Clustered] = []
    boots = np.zeros((len(levels), b))
    for k, lv in enumerate(levels):
        ids = by_level[lv]
        a = _array([baseline[i][1] for i in ids], f"baseline L{lv}")
        c = _array([candidate[i][1] for i in ids], f"candidate L{lv}")
        codes = _cluster_codes(ids, clusters)
        part = _clustered(c - a, codes, int(codes.max()) + 1)
        boots[k] = _cluster_means(part, b, _rng(seed, lv))
        parts.append(part)
        out[lv] = _diff(part, boots[k], len(ids), confidence)
    total_boot = v @ boots if levels else np.zeros(b)
    total = _combined(parts, v, total_boot, len(common), confidence)
    renorm = (_combined(parts, v, total_boot, len(common), confidence, scale=vsum)
              if levels else None)
    return PairedResult(
        levels=out,
        total=total,
        total_renormalized=renorm,
        only_baseline=tuple(sorted(set(baseline) - set(candidate))),
        only_candidate=tuple(sorted(set(candidate) - set(baseline))),
        b=b,
        seed=seed,
        confidence=confidence,
    )


DEFAULT_MAX_REGRESSION = 0.02
"""The default DELTA of the regression rule (``--gi-max-regression``, ``compare``)."""


def is_regression(diff: PairedDiff, delta: float) -> bool:
    """True when the mean dropped by more than ``delta`` and the whole interval is below 0.

    One level on its own (a two-sided 95 % interval: a one-sided test at 2.5 %).  A gated run
    decides over all its levels and cells together with
    :func:`pytest_graphinstruct.score.multiple.regressions`, which keeps the chance of any false
    alarm at ``alpha`` however many levels are tested.
    """
    if delta < 0:
        raise ValueError(f"delta must be >= 0, got {delta}")
    return diff.mean_diff < -delta and diff.high < 0
