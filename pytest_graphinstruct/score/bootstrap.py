"""Bootstrap confidence intervals for level scores, S_total, and differences between runs.

* Per level: resample the level's instructions with replacement (as many as it has), take the
  mean; ``B`` resamples give the percentile interval ``[q_{α/2}, q_{1−α/2}]`` (``α = 1 −
  confidence``, numpy's default linear quantile).  The estimate is the plain mean.
* ``S_total``: in each resample every level is resampled within itself (stratified by level,
  so each level keeps its instruction count) and ``Σ v_l·S_l`` is recomputed, both unnormalized
  (absent levels count 0) and renormalized over the levels present.
* Paired difference of two runs on the same instructions (``candidate − baseline``, positive =
  better): per-instruction differences are resampled jointly (one index draw serves both runs),
  per level and for ``S_total``.  Instructions present in only one run are left out and listed.
  ``share_ge0``/``share_le0`` are the shares of resamples whose difference is ``≥ 0``/``≤ 0``:
  for a drop, ``share_ge0`` reads like a one-sided p-value of "no drop".
* Regression gate (:func:`is_regression`): a level regressed when its mean difference is below
  ``−delta`` *and* the interval's upper end is below 0 (the drop is real, not resampling noise).

Determinism: each level draws from its own generator seeded with ``(seed, level)``, so a level's
interval does not change when other levels are added or removed, and results are identical on
every call for a given numpy version.  Resampling is vectorized (index matrices of
``chunk × n``, chunked to bound memory); there is no Python loop over single resamples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

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
    """``candidate − baseline``: mean difference, its interval, and the resample shares."""

    n: int
    mean_diff: float
    low: float
    high: float
    share_ge0: float
    share_le0: float

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
    return PairedDiff(n, estimate, lo, hi, float(np.mean(boot >= 0)), float(np.mean(boot <= 0)))


def paired_diff(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    b: int = DEFAULT_B,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> PairedDiff:
    """Paired bootstrap of ``mean(candidate − baseline)`` over aligned sequences (same order)."""
    _check(b, confidence)
    a = _array(baseline, "baseline")
    c = _array(candidate, "candidate")
    if a.size != c.size or a.size == 0:
        raise ValueError("paired sequences must be non-empty and of equal length")
    d = c - a
    boot = _resample_means(d, b, np.random.default_rng(seed))
    return _paired(boot, float(d.mean()), int(d.size), confidence)


def paired_bootstrap(
    baseline: Mapping[str, tuple[int, float]],
    candidate: Mapping[str, tuple[int, float]],
    *,
    b: int = DEFAULT_B,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> PairedResult:
    """Paired bootstrap of ``candidate − baseline`` per level and for ``S_total``.

    Both runs map an instruction id to ``(level, level_score)``.  Ids are paired by name and
    sorted, so the result does not depend on mapping order; an id whose level differs between
    the runs raises ``ValueError``.  ``S_total`` differences are taken over the levels present in
    the pairing (unnormalized and renormalized).
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
    boots = np.zeros((len(levels), b))
    means = np.zeros(len(levels))
    for k, lv in enumerate(levels):
        ids = by_level[lv]
        a = _array([baseline[i][1] for i in ids], f"baseline L{lv}")
        c = _array([candidate[i][1] for i in ids], f"candidate L{lv}")
        d = c - a
        boots[k] = _resample_means(d, b, _rng(seed, lv))
        means[k] = d.mean()
        out[lv] = _paired(boots[k], float(means[k]), len(ids), confidence)
    total_boot = v @ boots if levels else np.zeros(b)
    est = float(v @ means) if levels else 0.0
    total = _paired(total_boot, est, len(common), confidence)
    renorm = (_paired(total_boot / vsum, est / vsum, len(common), confidence)
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
    """True when the mean dropped by more than ``delta`` and the whole interval is below 0."""
    if delta < 0:
        raise ValueError(f"delta must be >= 0, got {delta}")
    return diff.mean_diff < -delta and diff.high < 0
