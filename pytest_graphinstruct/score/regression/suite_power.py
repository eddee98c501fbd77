"""The power of the fixed-suite gate at one level where it combines its two tests (the
level-score sign-flip and the exact pass-count test, :func:`~.paired.combined_p`), predicted
from a baseline's own instructions and their nonlinear scores.

A level score is not linear in an instruction's passing samples (D4 averages the *valid*
samples: with 0, 1, …, 5 of 5 correct our L1 scores 0.20, 0.85, …, 0.99), so a power figure that
assumes it is (a pass/fail gap per sample) is off by up to 2.5× where it matters (issue 48 §4).
The model here (:class:`LevelSamples`, from the baseline's items):

* **Each instruction's pass probability**: with ``k ≥ 2`` samples, its passing share shrunk
  towards the level's by a beta prior fitted to the level's shares (method of moments: the
  spread of the shares beyond binomial noise); with one sample the level's pass rate for every
  instruction (one sample shows no instruction's own rate; equal rates make the most run-to-run
  noise, so the figure errs towards larger drops).
* **The level's score curve** ``g(j)``: the mean level score of its instructions with ``j`` of
  ``k`` samples passing (a ``j`` no instruction shows is interpolated between its neighbours),
  and each instruction's offset from it (its score minus ``g`` at its own count).  For runs of
  another sample count the curve is read at the same passing share.
* **A drop** is a shift of every instruction's pass logit by the same amount (what a worse model
  does), sized so that the level's expected score falls by it.

For a drop, the two tests' statistics — the sum of the instructions' score changes and of their
passing-count changes — are taken as bivariate normal with the means, variances and covariance
the model gives; the level is flagged when either falls below its threshold at half of Holm's
first share (``alpha/tests/2``: the combined p-value doubles the smaller; with one sample on
each side the gate runs the score test alone, at the whole share), the score test
self-normalized (its threshold scales with the square root of the summed squared changes, as the
sign-flip's null spread does), the count test at its conditional null variance; and when the
mean drop exceeds ``delta`` (``--gi-max-regression``), taken as independent.  Measured against
the gate by ``bench/gate_calibration.py``: within ±25 % of the measured MDE80 at every level, one
and five samples (docs/PLUGIN.md, "How much the gate can see").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

__all__ = ["LevelSamples", "combined_power", "combined_powers", "count_power",
           "level_samples"]

_SHIFTS = np.linspace(0.0, 12.0, 481)  # the pass-logit shifts a drop is looked for among
_NODES = 64  # quadrature nodes of the bivariate normal CDF
_EDGE = 1e-4  # pass probabilities kept inside (edge, 1 − edge)


@dataclass(frozen=True)
class LevelSamples:
    """A level of a baseline as the combined test's power model reads it (module docstring):
    per instruction its estimated pass probability and its offset from the level's score curve
    ``curve`` (``curve[j]``: the mean score of ``j`` of ``samples`` passing)."""

    probs: tuple[float, ...]
    offsets: tuple[float, ...]
    curve: tuple[float, ...]
    samples: int

    @property
    def instructions(self) -> int:
        return len(self.probs)

    def curve_at(self, samples: int) -> np.ndarray:
        """The score curve for runs of ``samples`` per instruction: the baseline's, read at the
        same passing share (linear between its points)."""
        base = np.asarray(self.curve, dtype=float)
        if samples == self.samples:
            return base
        return np.interp(np.arange(samples + 1) / samples,
                         np.arange(self.samples + 1) / self.samples, base)

    @cached_property
    def _logits(self) -> np.ndarray:
        p = np.clip(np.asarray(self.probs, dtype=float), _EDGE, 1.0 - _EDGE)
        return np.log(p / (1.0 - p))


def level_samples(scores: Sequence[float], passes: Sequence[int], samples: int
                  ) -> LevelSamples:
    """A level's :class:`LevelSamples` from its instructions' level scores and passing samples
    (same order) of ``samples`` each.

    Raises:
        ValueError: no instructions, lengths differ, or a count outside ``0..samples``.
    """
    s = np.asarray(scores, dtype=float)
    x = np.asarray(passes, dtype=np.int64)
    if s.size == 0 or s.shape != x.shape:
        raise ValueError("need one passing count per level score, and at least one")
    if samples < 1 or np.any(x < 0) or np.any(x > samples):
        raise ValueError(f"passing counts must lie in 0..{samples}")
    share = x / samples
    mean = float(share.mean())
    probs = np.full(s.size, mean)
    if samples >= 2 and s.size >= 2 and 0.0 < mean < 1.0:
        # the shares' spread beyond binomial noise: var = m(1 − m)/k·(1 + (k − 1)·ρ)
        rho = (float(share.var(ddof=1)) * samples / (mean * (1.0 - mean)) - 1.0) / (samples - 1)
        rho = min(max(rho, 1e-3), 0.999)
        prior = 1.0 / rho - 1.0  # a + b of the beta prior
        probs = (x + mean * prior) / (samples + prior)
    curve = np.full(samples + 1, np.nan)
    for j in np.unique(x):
        curve[j] = float(s[x == j].mean())
    seen = np.flatnonzero(~np.isnan(curve))
    curve = np.interp(np.arange(samples + 1), seen, curve[seen])
    return LevelSamples(tuple(float(p) for p in probs), tuple(float(o) for o in s - curve[x]),
                        tuple(float(c) for c in curve), samples)


_CHUNK = 1 << 21  # elements of one (shifts, instructions, k + 1) block of the moments


def _moments(logits: np.ndarray, curve: np.ndarray, offsets: np.ndarray, k: int
             ) -> tuple[np.ndarray, ...]:
    """Per shift (rows) and instruction: the mean and variance of its score and of its passing
    count over ``k`` samples, and their covariance (computed in blocks of rows, so that memory
    stays bounded for any ``k``)."""
    from scipy.special import gammaln

    p = 1.0 / (1.0 + np.exp(-logits))  # (shifts, n)
    js = np.arange(k + 1, dtype=float)
    log_comb = gammaln(k + 1.0) - gammaln(js + 1.0) - gammaln(k - js + 1.0)
    score = curve[None, :] + offsets[:, None]  # (n, k + 1)
    ms, vs, cov = (np.empty(p.shape) for _ in range(3))
    rows = max(1, _CHUNK // max(1, p.shape[1] * (k + 1)))
    for lo in range(0, p.shape[0], rows):
        q = np.clip(p[lo:lo + rows], 1e-300, 1.0 - 1e-16)[..., None]
        w = np.exp(log_comb + js * np.log(q) + (k - js) * np.log1p(-q))  # binomial pmf
        m = np.einsum("snj,nj->sn", w, score)
        ms[lo:lo + rows] = m
        vs[lo:lo + rows] = np.maximum(np.einsum("snj,nj->sn", w, score * score) - m * m, 0.0)
        cov[lo:lo + rows] = np.einsum("snj,nj,j->sn", w, score, js) - m * (k * q[..., 0])
    mc, vc = k * p, k * p * (1.0 - p)
    return ms, vs, mc, vc, cov, p


@dataclass(frozen=True)
class _Sums:
    """Per shift of :data:`_SHIFTS`, the level's sums over its own instructions (one copy of
    each): what every instruction count scales (module docstring)."""

    drops: np.ndarray  # the level's mean score drop
    change: np.ndarray  # Σ score change
    var_s: np.ndarray  # Σ score variances, both runs
    square: np.ndarray  # Σ squared score changes
    mu_c: np.ndarray  # Σ passing-count change
    var_c: np.ndarray  # Σ passing-count variances, both runs
    both: np.ndarray  # Σ score–count covariances, both runs
    null_c: np.ndarray  # Σ the count test's null variances


@lru_cache(maxsize=64)
def _sums(level: LevelSamples, k: int) -> _Sums:
    """:class:`_Sums` of ``level`` for runs of ``k`` per instruction (cached: the moments do not
    depend on the instruction count, so a search over counts reads them once)."""
    curve = level.curve_at(k)
    offsets = np.asarray(level.offsets, dtype=float)
    base = level._logits
    ms0, vs0, mc0, vc0, cov0, p0 = (m[0] for m in _moments(base[None, :], curve, offsets, k))
    ms, vs, mc, vc, cov, p = _moments(base[None, :] - _SHIFTS[:, None], curve, offsets, k)
    change = ms - ms0
    pooled = (p + p0) / 2.0
    return _Sums(drops=ms0.mean() - ms.mean(axis=1), change=change.sum(axis=1),
                 var_s=(vs + vs0).sum(axis=1), square=(change * change).sum(axis=1),
                 mu_c=(mc - mc0).sum(axis=1), var_c=(vc + vc0).sum(axis=1),
                 both=(cov + cov0).sum(axis=1),
                 null_c=(2.0 * k * pooled * (1.0 - pooled)).sum(axis=1))


def _normal2(a: np.ndarray, b: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """``P(X ≤ a, Y ≤ b)`` for standard normals of correlation ``rho`` (elementwise), by
    Gauss–Legendre quadrature of ``∫_{−∞}^{a} φ(x)·Φ((b − ρx)/√(1 − ρ²)) dx``."""
    from scipy.special import ndtr

    nodes, weights = np.polynomial.legendre.leggauss(_NODES)
    low = -9.0
    top = np.maximum(np.minimum(a, 9.0), low)
    half = (top - low) / 2.0
    x = low + half[..., None] * (nodes + 1.0)
    r = np.clip(rho, -0.999, 0.999)[..., None]
    inner = ndtr((b[..., None] - r * x) / np.sqrt(1.0 - r * r))
    dens = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    return np.asarray(half * np.sum(weights * dens * inner, axis=-1))


@lru_cache(maxsize=256)
def combined_power(level: LevelSamples, *, samples: int, instructions: int, delta: float,
                   alpha_level: float) -> tuple[np.ndarray, np.ndarray]:
    """``(drops, power)``: the level-score drops the shifts of :data:`_SHIFTS` make (rising)
    and the chance the gate flags each, comparing runs of ``samples`` per instruction over
    ``instructions`` (more keep the level's instructions in proportion), the level's test at
    Holm's first share ``alpha_level`` (module docstring).  Cached: a search for the
    detectable drop asks the same case again and again (the arrays returned are shared: read
    them, never write)."""
    drops, power = combined_powers(level, samples=samples,
                                   instructions=np.array([instructions]), delta=delta,
                                   alpha_level=alpha_level)
    out = power[0].copy()
    out.setflags(write=False)
    return drops, out


def combined_powers(level: LevelSamples, *, samples: int, instructions: np.ndarray,
                    delta: float, alpha_level: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`combined_power` for several instruction counts at once: ``(drops, power)`` with
    one row of ``power`` per count (the level's moments are read once)."""
    from scipy.special import ndtr, ndtri

    k = samples
    sums = _sums(level, k)
    ns = np.asarray(instructions, dtype=float).reshape(-1, 1)
    scale = ns / level.instructions
    mu_s, var_s = scale * sums.change, scale * sums.var_s
    mu_c, var_c = scale * sums.mu_c, scale * sums.var_c
    single = k == 1 and level.samples == 1  # the score test alone (paired.suite_paired)
    c = float(ndtri(1.0 - alpha_level / (1.0 if single else 2.0)))
    t_s = -c * np.sqrt(var_s + scale * sums.square)
    t_c = -c * np.sqrt(scale * sums.null_c)
    sd_s, sd_c = np.sqrt(np.maximum(var_s, 1e-30)), np.sqrt(np.maximum(var_c, 1e-30))
    a, b = (t_s - mu_s) / sd_s, (t_c - mu_c) / sd_c
    if single:
        flagged = ndtr(a)
    else:
        rho = scale * sums.both / (sd_s * sd_c)
        neither = 1.0 - ndtr(a) - ndtr(b) + _normal2(a, b, rho)
        flagged = np.clip(1.0 - neither, 0.0, 1.0)
    beyond = ndtr((sums.drops - delta) / (sd_s / ns))
    drops = sums.drops.copy()
    drops.setflags(write=False)
    return drops, flagged * beyond


@lru_cache(maxsize=256)
def count_power(level: LevelSamples, *, samples: int, instructions: int, delta: float,
                alpha_level: float) -> tuple[np.ndarray, np.ndarray]:
    """``(drops, power)`` of the pass-count test alone, judging runs of ``samples`` per
    instruction against the baseline's own count (:attr:`LevelSamples.samples`, another: the
    gate's rule across sample counts), drops in **pass rate** (what the gate's rule then reads
    ``delta`` as): the run's passing samples against their conditional null spread
    ``Σ k_r·k_b/(k_r + k_b)·p̄(1 − p̄)``, normal, at Holm's first share; the drop rule on the
    mean pass-share change, taken as independent.  Cached as :func:`combined_power`."""
    from scipy.special import ndtr, ndtri

    kb, kr = level.samples, samples
    scale = instructions / level.instructions
    p = 1.0 / (1.0 + np.exp(-level._logits))
    q = 1.0 / (1.0 + np.exp(-(level._logits[None, :] - _SHIFTS[:, None])))
    total = kb + kr
    drops = (p[None, :] - q).mean(axis=1)
    mean = scale * (kb * kr * (q - p[None, :])).sum(axis=1) / total
    var1 = scale * (kb * kb * kr * q * (1 - q) + kr * kr * kb * (p * (1 - p))[None, :]
                    ).sum(axis=1) / (total * total)
    pooled = (kb * p[None, :] + kr * q) / total
    var0 = scale * (kr * kb / total * pooled * (1 - pooled)).sum(axis=1)
    c = float(ndtri(1.0 - alpha_level))
    flagged = ndtr((-c * np.sqrt(var0) - mean) / np.sqrt(np.maximum(var1, 1e-30)))
    spread = np.sqrt(scale * (q * (1 - q) / kr + (p * (1 - p) / kb)[None, :]).sum(axis=1)
                     ) / instructions
    power = flagged * ndtr((drops - delta) / np.maximum(spread, 1e-30))
    drops.setflags(write=False)
    power.setflags(write=False)
    return drops, power
