"""How much the regression gate can see: its power at a level, from a baseline's scores.

**The fixed-suite test** (the default, :mod:`.paired`; ``test="suite"``).  Where the baseline
keeps every sample's verdict and shows at least two passing counts at a level, the figures are
those of :mod:`.suite_power`: the gate's two tests combined, from the level's own nonlinear
scores (and, across sample counts, :func:`detectable_pass_drops`: the pass-count test alone, in
pass rate).  Otherwise the closed form here.  For a level of ``n``
paired instructions whose quality drops by ``D``, one instruction's change ``d_i`` has mean
``−D`` and variance ``v = (2·σ² + ĝ·D − D²)/k`` (``σ²`` as below; ``ĝD − D²`` the drop's own
spread when a share ``D/ĝ`` of answers flips from passing to failing, ``ĝ`` the measured
pass/fail gap, 1 when unknown).
The sign-flip test is close to the self-normalized ``Σ d_i / √(Σ d_i²)`` against the normal
quantile ``c = Φ⁻¹(1 − alpha/tests)`` (the dropped level comes first in Holm's order), and
``Σ d_i² ≈ n·(v + D²)``, so the level is flagged when ``d̄ < −max(delta, c·√((v + D²)/n))``
with ``d̄ ~ N(−D, v/n)``; none can be flagged when ``2^−n`` (the smallest p-value of ``n``
signs) is above ``alpha/tests``.  Measured against the gate itself by
``bench/gate_calibration.py`` (docs/PLUGIN.md).  With one sample per instruction ``σ²`` is the
conservative bound below, so the prediction errs towards larger drops.

**The template-clustered test** (``test="templates"``, :func:`~.bootstrap.paired_bootstrap`):

The gate (:func:`~pytest_graphinstruct.score.regression.bootstrap.paired_bootstrap` and
:func:`~pytest_graphinstruct.score.regression.multiple.regressions`) flags a level when Holm rejects
"no drop" at family-wise ``alpha`` over ``tests`` level tests and the mean drop exceeds
``delta``.  For a level whose quality drops by ``D`` and no other change, that level has the
smallest p-value, so it is flagged when

    d̄ < −max(delta, c·se),   c = t⁻¹_df(1 − alpha/tests),

with ``d̄ ~ N(−D, V)``.  The gate's test (docs/SCORING.md) estimates ``se² = W·(1 + r·m)``: ``W``
the within-template variance of the mean (``≈ V·χ²_f/f`` with ``f`` its Satterthwaite degrees
of freedom), ``m`` the level's *design* factor (``Σ n_g² σ²_g / Σ n_g σ²_g``: about the
template size), and ``r`` the level's shared-noise ratio, estimated from the templates of every
level of the comparison; its error variance sets the test's degrees of freedom ``df = 1 / (1/f
+ m²·var(r) / (2·(1 + r·m)²))``.  The power is the average of ``Φ((D − max(delta, c·se))/√V)``
over the spread of those estimates when nothing is shared between the instructions of a
template (``ρ = 0``): a fixed set of draws (the same on every call) of ``χ²_f/f``, of each
pooled level's own ratio estimate (normal, variance ``2·(G_k − 1)/I_k²`` with ``I_k = Σ_g a_g
n_g``, the weights the test gives its templates), and of what the test makes of them (the
pooled ratio, truncated at 0; the spread between the levels' own estimates; the level's
empirical Bayes ratio and its error variance).  Measured on a baseline (:class:`LevelNoise`):

* ``V = (2·σ² + D·(1 − D))/(k·n)`` is the variance of the level's mean change between two runs
  of ``k`` samples per instruction over ``n`` instructions, the second one ``D`` worse (the
  drop's own spread, at most ``D·(1 − D)`` per sample when answers flip from passing to
  failing, so a baseline without run-to-run noise does not promise to see any drop above
  ``delta``; a drop larger than the level's mean score cannot happen: none is detectable);
  ``σ²`` is the run-to-run variance of one sample's level score averaged over the level's
  instructions.  With ``k ≥ 2`` samples and each
  instruction's share of passing samples ``p̂_i``: the level's pass/fail score gap ``ĝ`` is the
  least-squares slope of the level scores on ``p̂_i``, and ``σ² = mean_i ĝ²·p̂_i(1 −
  p̂_i)·k/(k − 1)`` (a sample's score is about the failing score plus ``ĝ`` when it passes).
  With one sample and known outcomes: ``σ² = ĝ²·p̄(1 − p̄)`` with ``p̄`` the level's pass
  rate, an upper bound of ``mean_i ĝ²·p_i(1 − p_i)``.  Without per-sample outcomes: ``σ²`` is
  ``k`` times the variance of the level scores across the level's instructions — an upper
  bound too (the run-to-run part of that spread is at most all of it), so the figures are
  conservative.
* The templates' relative run-to-run variances ``σ²_g`` (the template mean of ``p̂_i(1 −
  p̂_i)``, with ``k ≥ 2`` samples and pass shares; equal otherwise) give ``m``, ``f`` and the
  weights.

What a baseline cannot show: noise shared by the instructions of a template between runs (the
test then estimates a larger ratio and sees less), and a drop so concentrated in one template
that it raises the level's own ratio estimate; both lower the power below these figures.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import NamedTuple

import numpy as np

from pytest_graphinstruct.score.regression.bootstrap import CAP, KAPPA, OWN_VARIANCE_FROM, bm_df
from pytest_graphinstruct.score.regression.multiple import FAMILY_ALPHA
from pytest_graphinstruct.score.regression.suite_power import (
    LevelSamples,
    combined_powers,
    count_power,
    level_samples,
)
from pytest_graphinstruct.vocab import GateTest

__all__ = [
    "POWER",
    "ItemScore",
    "LevelNoise",
    "bm_df",
    "detectable_drop",
    "detectable_drops",
    "detectable_pass_drops",
    "gate_power",
    "instructions_needed",
    "level_noise",
    "noise_by_level",
    "samples_needed",
]

POWER = 0.8
"""The power at which a drop counts as detectable."""

_DRAWS = 400  # draws of the test's estimates averaged over
_SEED = 20261202  # the draws are the same on every call
_MAX_DROP = 1.0  # level scores lie in [0, 1]
_STEPS = 200  # drops tried from 0 to 1 before refining


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
    scores (one sample, or no per-sample outcomes); ``cluster_variances`` the clusters'
    relative run-to-run variances (``None``: equal); ``pool`` what each level of the comparison
    that informs the shared-noise ratio tells about it, ``(I_k, G_k, mean, variance)`` of its own
    estimate (module docstring), and
    ``own`` this level's place in it (−1: not in it); ``uneven`` how much a drop of 1 raises
    the level's own ratio estimate by falling unevenly on the clusters, per cluster with the most
    that cluster can add (the test caps it), at the baseline's samples and instructions (module
    docstring).  :func:`level_noise` fills ``pool`` from
    the level alone, :func:`noise_by_level` from every level of the baseline.
    """

    instructions: int
    cluster_sizes: tuple[int, ...]
    sample_variance: float
    samples: int
    conservative: bool
    cluster_variances: tuple[float, ...] | None = None
    pool: tuple[tuple[float, int, float, float], ...] | None = None
    own: int = -1
    uneven: tuple[tuple[float, float], ...] = ()
    mean: float | None = None  #: the level's mean score (a drop larger cannot happen)
    #: the level score a sample gains by passing (``ĝ``; ``None``: unknown, taken as 1)
    gap: float | None = None
    #: the instructions' pass probabilities and nonlinear score curve (:mod:`.suite_power`),
    #: where every instruction's passing samples are known: the fixed-suite test then combines
    #: the level-score and pass-count tests, and its power is that model's
    scored: LevelSamples | None = None

    @property
    def clusters(self) -> int:
        return len(self.cluster_sizes)

    @cached_property
    def pooled(self) -> tuple[tuple[float, int, float, float], ...]:
        """``pool``, or this level alone when none was given."""
        if self.pool is not None:
            return self.pool
        entry = _pool_entry(self._sizes, self._variances)
        return () if entry is None else (entry,)

    @property
    def place(self) -> int:
        """This level's index in :attr:`pooled` (−1: not in it)."""
        if self.pool is not None:
            return self.own
        return 0 if self.pooled else -1

    @property
    def _sizes(self) -> np.ndarray:
        return np.asarray(self.cluster_sizes, dtype=float)

    @property
    def _variances(self) -> np.ndarray:
        if self.cluster_variances is None:
            return np.ones(self.clusters)
        return np.asarray(self.cluster_variances, dtype=float)

    def design(self, instructions: int | None = None) -> float:
        """``m = Σ n_g² σ²_g / Σ n_g σ²_g`` over ``instructions`` (default: the level's; more
        keep the clusters' relative sizes)."""
        sizes = self._sizes * self._scale(instructions)
        terms = sizes * self._variances
        return float(np.sum(sizes * terms) / terms.sum()) if terms.sum() > 0 else 0.0

    def within_df(self, instructions: int | None = None) -> float:
        """The Satterthwaite degrees of freedom of the within-template variance (0: no
        instruction shares a template with another)."""
        sizes = self._sizes * self._scale(instructions)
        n, g = float(sizes.sum()), sizes.size
        if n <= g:
            return 0.0
        terms = sizes * self._variances
        multi = sizes >= 2
        denom = float(np.sum(terms[multi] ** 2 / (sizes[multi] - 1.0)))
        single = float(terms[~multi].sum())
        if single > 0:
            denom += single * single / (n - g)
        return float(terms.sum()) ** 2 / denom if denom > 0 else 0.0

    @property
    def df(self) -> float:
        """The degrees of freedom of the level's test at its typical estimates (the median over
        the draws; 0: nothing can be detected)."""
        spread = _spread(self, np.zeros(1), np.array(self.samples),
                         np.array(self.instructions))
        return 0.0 if spread is None else float(np.median(spread[1]))

    def _scale(self, instructions: int | None) -> float:
        return 1.0 if instructions is None else instructions / self.instructions

    def mean_variance(self, samples: int | None = None, instructions: int | None = None) -> float:
        """``V``: the variance of the level's mean change between two runs of ``samples`` per
        instruction (default: the baseline's) over ``instructions`` (default: the level's)."""
        k = self.samples if samples is None else samples
        n = self.instructions if instructions is None else instructions
        if k < 1 or n < 1:
            raise ValueError(f"need at least one sample and one instruction, got {k} and {n}")
        return 2.0 * self.sample_variance / (k * n)


def _unbiased(nu: np.ndarray) -> np.ndarray:
    """The weights' correction ``(ν − 2)/ν`` for a variance of ``ν`` degrees of freedom."""
    return np.where(nu > 2, (nu - 2.0) / np.maximum(nu, 1.0), 1.0)


@lru_cache(maxsize=1024)
def _capped(nu: float) -> tuple[float, float]:
    """Mean and variance of ``min(c·F(1, ν), CAP)`` (``c = (ν − 2)/ν``): what one template
    counts in the ratio's equation when nothing is shared and its weight comes from a variance
    of ``ν`` degrees of freedom (``χ²₁`` from 1000 on)."""
    from scipy.integrate import quad
    from scipy.stats import chi2
    from scipy.stats import f as f_dist

    if nu >= 1000:
        first = float(chi2.cdf(CAP, 3) + CAP * chi2.sf(CAP, 1))
        second = float(3.0 * chi2.cdf(CAP, 5) + CAP * CAP * chi2.sf(CAP, 1))
        return first, second - first * first
    c = float(_unbiased(np.array(nu)))
    top = CAP / c
    dist = f_dist(1, nu)
    first = c * quad(lambda x: x * dist.pdf(x), 0.0, top, limit=200)[0] \
        + CAP * float(dist.sf(top))
    second = c * c * quad(lambda x: x * x * dist.pdf(x), 0.0, top, limit=200)[0] \
        + CAP * CAP * float(dist.sf(top))
    return first, max(second - first * first, 0.0)


def _pool_entry(sizes: np.ndarray, variances: np.ndarray) -> tuple[float, int, float, float] | None:
    """What a level tells about the shared-noise ratio with nothing shared: ``(I, G, mean,
    variance)`` of its own estimate (``I = Σ a_g n_g`` with the test's weights, a cluster of
    fewer than :data:`OWN_VARIANCE_FROM` instructions weighed by the level's mean variance);
    ``None`` when the level cannot inform the ratio (fewer than two clusters, or none with two
    instructions)."""
    n, g = float(sizes.sum()), sizes.size
    if g < 2 or n <= g:
        return None
    mean = float(np.sum(sizes * variances) / n)
    if mean <= 0:
        return None
    big = sizes >= OWN_VARIANCE_FROM
    own = np.where(big, variances, mean)
    nu = np.where(big, sizes - 1.0, n - g)
    weights = sizes * _unbiased(nu) / np.maximum(own, 1e-9 * mean)
    a = np.maximum(1.0 - weights / weights.sum(), 1e-12)
    info = float(np.sum(a * sizes))
    moments = np.array([_capped(float(v)) for v in nu])
    scale = KAPPA * info
    return (info, g, float(np.sum(a * (moments[:, 0] - KAPPA))) / scale,
            float(np.sum(a * a * moments[:, 1])) / (scale * scale))


class _Draws(NamedTuple):
    z: np.ndarray  # (draws, levels): standard normal
    q: np.ndarray  # (draws,): uniform in (0, 1), for χ²_f/f


_DRAW_CACHE: dict[int, _Draws] = {}


def _draws(levels: int) -> _Draws:
    if levels not in _DRAW_CACHE:
        rng = np.random.default_rng([_SEED, levels])
        q = (rng.permutation(_DRAWS) + 0.5) / _DRAWS  # stratified
        _DRAW_CACHE[levels] = _Draws(rng.standard_normal((_DRAWS, levels)), q)
    return _DRAW_CACHE[levels]


def _ratios(noise: LevelNoise, rise: np.ndarray, grow: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray] | None:
    """Per case (leading axis: how much the drop raises the level's own estimate, ``rise``, and
    how many times the level's instructions it has, ``grow``) and draw: the level's ratio and
    its error variance as the test computes them when nothing is shared (``None``: no level
    informs the ratio)."""
    pool = noise.pooled
    if not pool:
        return None
    cases = rise.size
    info = np.tile(np.array([e[0] for e in pool]), (cases, 1))
    groups = np.array([e[1] for e in pool], dtype=float)
    mean = np.tile(np.array([e[2] for e in pool]), (cases, 1))
    sd = np.tile(np.sqrt([e[3] for e in pool]), (cases, 1))
    at = noise.place
    if at >= 0:  # more of the same clusters: the level tells proportionally more
        info[:, at] *= grow
        mean[:, at] /= grow
        sd[:, at] /= grow
    var = 2.0 * (groups - 1.0) / (info * info)  # as the test reports it
    d = _draws(len(pool))
    own = mean[:, None, :] + d.z[None, :, :] * sd[:, None, :]
    if at >= 0:
        own[:, :, at] += rise[:, None]
    total = info.sum(axis=1)
    rho = np.maximum(0.0, np.einsum("cdk,ck->cd", own, info) / total[:, None])
    rho_var = (np.sum(var * info * info, axis=1) / (total * total))[:, None]
    between = np.zeros(rho.shape)
    if len(pool) >= 2:
        inv = 1.0 / var
        s1 = inv.sum(axis=1)
        centre = np.einsum("cdk,ck->cd", own, inv) / s1[:, None]
        q = np.einsum("cdk,ck->cd", (own - centre[..., None]) ** 2, inv)
        between = np.maximum(0.0, (q - (len(pool) - 1))
                             / (s1 - np.sum(inv * inv, axis=1) / s1)[:, None])
    if at < 0:
        return rho, rho_var + between
    mine = var[:, at][:, None]
    weight = between / (between + mine)
    return (np.maximum(0.0, weight * own[..., at] + (1.0 - weight) * rho),
            weight * mine + (1.0 - weight) ** 2 * rho_var)


def _spread(noise: LevelNoise, drops: np.ndarray, samples: np.ndarray,
            instructions: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Per case (``drops``, ``samples`` and ``instructions`` broadcast to one axis) and draw:
    ``se²/V`` and the test's degrees of freedom; ``None``: the test cannot measure anything."""
    from scipy.stats import chi2

    drops, ks, ns = (a.astype(float).ravel() for a in np.broadcast_arrays(
        np.atleast_1d(drops), np.atleast_1d(samples), np.atleast_1d(instructions)))
    d = _draws(max(len(noise.pooled), 1))
    if noise.instructions == noise.clusters:  # every instruction its own: the one-sample t
        df = ns - 1.0
        if np.all(df <= 0):
            return None
        safe = np.maximum(df, 1.0)[:, None]
        q = chi2.ppf(d.q[None, :], safe) / safe
        return q, np.broadcast_to(df[:, None], q.shape)
    scale = (ks / noise.samples) * (ns / noise.instructions)
    rise = np.zeros(drops.size)
    for per, cap in noise.uneven:
        rise += np.minimum(drops * drops * scale * per, cap)
    ratios = _ratios(noise, rise, ns / noise.instructions)
    if ratios is None:
        return None
    rho, var = ratios
    sizes = {n: (noise.design(round(n)), noise.within_df(round(n))) for n in np.unique(ns)}
    m = np.array([sizes[n][0] for n in ns])[:, None]
    f = np.array([sizes[n][1] for n in ns])[:, None]
    if np.all(f <= 0):
        return None
    inflation = 1.0 + rho * m
    df = 1.0 / (1.0 / f + m * m * var / (2.0 * inflation * inflation))
    quantiles = {x: chi2.ppf(d.q, x) / x for x in np.unique(f)}
    q = np.stack([quantiles[x] for x in f[:, 0]])
    return q * inflation, df


def _check(delta: float, alpha: float, tests: int, power: float) -> None:
    if delta < 0:
        raise ValueError(f"delta must be >= 0, got {delta}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if tests < 1:
        raise ValueError(f"tests must be >= 1, got {tests}")
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1), got {power}")


def _combined_curve(scored: LevelSamples, drops: np.ndarray, ks: np.ndarray, ns: np.ndarray,
                    delta: float, alpha: float, tests: int) -> np.ndarray:
    """The power of the fixed-suite test combining its two tests, for each case
    (:func:`.suite_power.combined_powers`, read at each drop; 0 past the largest drop a shift
    of the pass logits can make).  Each sample count's moments are read once, its instruction
    counts in blocks (bounded memory)."""
    out = np.zeros(drops.shape)
    for k in np.unique(ks):
        at_k = ks == k
        # the smallest p-value the level can reach: the sign-flip's 2^-n, and with pass counts
        # the count test's C(k_b + k, k)^-n, doubled by the combination; counts that cannot
        # reach Holm's first share see nothing (power 0) and are not computed
        if k == 1 and scored.samples == 1:  # the score test alone (paired.suite_paired)
            floor, doubling = math.log(2.0), 0.0
        else:
            floor = max(math.log(2.0), math.log(math.comb(int(k) + scored.samples, int(k))))
            doubling = math.log(2.0)
        counts = np.unique(ns[at_k])
        counts = counts[counts * floor - doubling > math.log(tests / alpha)]
        for lo in range(0, counts.size, _COUNTS_BLOCK):
            block = counts[lo:lo + _COUNTS_BLOCK]
            grid, power = combined_powers(scored, samples=int(k),
                                          instructions=block.astype(np.int64), delta=delta,
                                          alpha_level=alpha / tests)
            for n, row in zip(block, power, strict=True):
                at = at_k & (ns == n)
                out[at] = np.interp(drops[at], grid, row, right=0.0)
    return out


_COUNTS_BLOCK = 32  # instruction counts whose power is computed together


def _suite_curve(noise: LevelNoise, drops: np.ndarray, ks: np.ndarray, ns: np.ndarray,
                 delta: float, alpha: float, tests: int) -> np.ndarray:
    """The power of the fixed-suite test (:mod:`.paired`) for each case: module docstring,
    "The fixed-suite test"; with every instruction's passing samples known, the two tests
    combined (:mod:`.suite_power`)."""
    from scipy.stats import norm

    if noise.scored is not None:
        return _combined_curve(noise.scored, drops, ks, ns, delta, alpha, tests)

    c = float(norm.ppf(1.0 - alpha / tests))
    d = np.clip(drops, 0.0, 1.0)
    # the drop's own spread: a share D/ĝ of answers flipping from passing to failing adds
    # ĝ·D − D² to one sample's variance (a uniform shift adds nothing)
    gap = 1.0 if noise.gap is None else max(noise.gap, 1e-9)
    v = (2.0 * noise.sample_variance + np.maximum(gap * d - d * d, 0.0)) / ks
    threshold = np.maximum(delta, c * np.sqrt((v + d * d) / ns))
    out = norm.cdf((d - threshold) / np.sqrt(np.maximum(v / ns, 1e-30)))
    # the sign-flip test's smallest p-value with n instructions is 2^-n
    reachable = ns * math.log(2.0) > math.log(tests / alpha)
    return np.asarray(np.where(reachable, out, 0.0))


def _curve(noise: LevelNoise, drops: np.ndarray, samples: np.ndarray,
           instructions: np.ndarray, delta: float, alpha: float, tests: int,
           test: GateTest = "templates") -> np.ndarray:
    """The power for each case (``drops``, ``samples``, ``instructions`` broadcast to one
    axis): the module docstring's average over the draws (0 where nothing can be measured)."""
    from scipy.special import stdtrit
    from scipy.stats import norm

    drops, ks, ns = (a.astype(float).ravel() for a in np.broadcast_arrays(
        np.atleast_1d(drops), np.atleast_1d(samples), np.atleast_1d(instructions)))
    if test == "suite":
        return _suite_curve(noise, drops, ks, ns, delta, alpha, tests)
    same = not noise.uneven and np.all(ns == ns[0])  # the estimates do not depend on the case
    spread = _spread(noise, drops[:1] if same else drops, ks[:1] if same else ks,
                     ns[:1] if same else ns)
    if spread is None:
        return np.zeros(drops.shape)
    ratio, df = spread
    c = stdtrit(np.maximum(df, 1e-9), 1.0 - alpha / tests)
    # the drop's own spread: answers that flip from passing to failing add up to D·(1 − D) to
    # one sample's variance in the changed run (a uniform shift adds nothing): never promise
    # more than a baseline without run-to-run noise (the oracle, greedy decoding) can show
    alt = np.clip(drops, 0.0, 1.0) * (1.0 - np.clip(drops, 0.0, 1.0))
    v = ((2.0 * noise.sample_variance + alt) / (ks * ns))[:, None]
    threshold = np.maximum(delta, c * np.sqrt(v * ratio))
    sd = np.sqrt(np.maximum(v, 1e-30))
    out = norm.cdf((drops[:, None] - threshold) / sd)
    return np.asarray(np.where(df > 0, out, 0.0).mean(axis=-1))


def _defaults(noise: LevelNoise, samples: int | None, instructions: int | None
              ) -> tuple[int, int]:
    k = noise.samples if samples is None else samples
    n = noise.instructions if instructions is None else instructions
    if k < 1 or n < 1:
        raise ValueError(f"need at least one sample and one instruction, got {k} and {n}")
    return k, n


def gate_power(noise: LevelNoise, drop: float, *, delta: float, alpha: float = FAMILY_ALPHA,
               tests: int = 6, samples: int | None = None,
               instructions: int | None = None, test: GateTest = "templates") -> float:
    """The chance the gate flags this level when its quality drops by ``drop`` (and nothing
    else changes), comparing runs of ``samples`` per instruction over ``instructions`` (default:
    the baseline's; more instructions keep the clusters' relative sizes)."""
    _check(delta, alpha, tests, 0.5)
    k, n = _defaults(noise, samples, instructions)
    return float(_curve(noise, np.array(drop), np.array(k), np.array(n), delta, alpha,
                        tests, test)[0])


def detectable_drop(noise: LevelNoise, *, delta: float, alpha: float = FAMILY_ALPHA,
                    tests: int = 6, power: float = POWER, samples: int | None = None,
                    instructions: int | None = None, test: GateTest = "templates") -> float:
    """The smallest drop of the level's quality the gate flags with probability ``power``
    (``math.inf``: none up to the whole score range, e.g. a level with one cluster and no other
    level to estimate the shared noise from)."""
    _check(delta, alpha, tests, power)
    k, n = _defaults(noise, samples, instructions)
    grid = np.linspace(0.0, _MAX_DROP, _STEPS + 1)
    ok = np.flatnonzero(_curve(noise, grid, np.array(k), np.array(n), delta, alpha,
                               tests, test) >= power)
    if not ok.size or (noise.mean is not None and float(grid[ok[0]]) > noise.mean + 1e-12):
        return math.inf  # nothing up to the level's whole score can be seen
    hi = float(grid[ok[0]])
    lo = float(grid[ok[0] - 1]) if ok[0] > 0 else 0.0
    for _ in range(16):  # refine between the grid points around the first crossing
        mid = (lo + hi) / 2
        at = float(_curve(noise, np.array(mid), np.array(k), np.array(n), delta, alpha,
                          tests, test)[0])
        lo, hi = (lo, mid) if at >= power else (mid, hi)
    return hi


def samples_needed(noise: LevelNoise, drop: float, *, delta: float,
                   alpha: float = FAMILY_ALPHA, tests: int = 6, power: float = POWER,
                   limit: int = 1000, test: GateTest = "templates") -> int | None:
    """The fewest samples per instruction at which the gate flags a drop of ``drop`` with
    probability ``power`` over the level's instructions (``None``: not within ``limit``)."""
    _check(delta, alpha, tests, power)
    if limit < 1:
        return None
    if test == "suite" and noise.scored is not None:
        if drop <= delta:
            return None  # the rule wants a mean drop beyond delta: more samples only pin it
        # the combined model reads k + 1 scores per instruction and shift: searched, not swept
        def reaches(k: int) -> bool:
            return bool(_curve(noise, np.array(drop), np.array(k),
                               np.array(noise.instructions), delta, alpha, tests,
                               test)[0] >= power)

        return _fewest(reaches, limit)
    ks = np.arange(1, limit + 1)
    ok = np.flatnonzero(_curve(noise, np.array(drop), ks, np.array(noise.instructions), delta,
                               alpha, tests, test) >= power)
    return int(ks[ok[0]]) if ok.size else None


def _fewest(reaches: Callable[[int], bool], limit: int) -> int | None:
    """The fewest ``k`` in ``1..limit`` that ``reaches``, by doubling and then bisection: the
    power rises with the samples per instruction, so once reached it stays reached."""
    below, k = 0, 1
    while not reaches(k):
        if k >= limit:
            return None
        below, k = k, min(2 * k, limit)
    while k - below > 1:
        mid = (below + k) // 2
        below, k = (below, mid) if reaches(mid) else (mid, k)
    return k


def instructions_needed(noise: LevelNoise, drop: float, *, delta: float,
                        alpha: float = FAMILY_ALPHA, tests: int = 6, power: float = POWER,
                        samples: int | None = None, limit: int = 100_000,
                        test: GateTest = "templates") -> int | None:
    """The fewest instructions (more of the same clusters, in the same proportions) at which
    the gate flags a drop of ``drop`` with probability ``power`` (``None``: not within
    ``limit``).  More instructions in the same clusters make the shared-noise part of the
    variance weigh more, so the power need not keep rising with them."""
    _check(delta, alpha, tests, power)
    k = noise.samples if samples is None else samples
    low = 2 if test == "suite" else noise.clusters + 1
    if limit < low:
        return None

    def first(ns: np.ndarray) -> int | None:
        ok = np.flatnonzero(_curve(noise, np.array(drop), np.array(k), ns, delta, alpha,
                                   tests, test) >= power)
        return int(ok[0]) if ok.size else None

    coarse = np.unique(np.round(np.geomspace(low, limit, 400)).astype(np.int64))
    at = first(coarse)
    if at is None:
        return None
    start = int(coarse[at - 1]) + 1 if at > 0 else low
    fine = np.arange(start, int(coarse[at]) + 1)
    found = first(fine) if fine.size <= 2000 else None
    return int(fine[found]) if found is not None else int(coarse[at])


def _uneven(sizes: np.ndarray, variances: np.ndarray, weight: np.ndarray | None,
            sample_variance: float, samples: int) -> tuple[tuple[float, float], ...]:
    """Per cluster: how much a drop of 1 raises the level's own ratio estimate through it
    (``w_g (δ_g − δ̄_w)² / (κ·I)``) and the most it can (``a_g·CAP / (κ·I)``): ``δ_g`` is the
    cluster's share of the drop (its mean ``p(1 − p)`` over the level's), ``w_g`` the weight of
    its mean (``n_g`` over the run-to-run variance of an instruction's change).  Empty without
    pass shares or run-to-run noise."""
    entry = _pool_entry(sizes, variances)
    if weight is None or entry is None or sample_variance <= 0:
        return ()
    n = float(sizes.sum())
    mean_weight = float(np.sum(sizes * weight)) / n
    mean_variance = float(np.sum(sizes * variances)) / n
    if mean_weight <= 0 or mean_variance <= 0:
        return ()
    share = weight / mean_weight
    change = 2.0 * sample_variance * variances / mean_variance / samples
    w = sizes / np.maximum(change, 1e-12 * float(change.max()))
    centre = float(np.sum(w * share)) / float(w.sum())
    a = np.maximum(1.0 - w / w.sum(), 1e-12)
    scale = KAPPA * entry[0]
    return tuple((float(x) / scale, float(ag) * CAP / scale)
                 for x, ag in zip(w * (share - centre) ** 2, a, strict=True))


def level_noise(scores: Sequence[float], clusters: Sequence[str], *, samples: int,
                pass_shares: Sequence[float | None] | None = None) -> LevelNoise:
    """A level's :class:`LevelNoise` from its instructions' level scores and clusters (same
    order) and, when every one is known, their shares of passing samples; the shared-noise
    ratio is taken as estimated from this level alone (:func:`noise_by_level` pools every
    level).

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
    relative = None
    drop_weight = None  # per instruction: how much of a drop it takes, ∝ p(1 − p)
    if shares is not None and samples >= 2:
        within = shares * (1.0 - shares) * samples / (samples - 1)
        per = np.bincount(codes, weights=within, minlength=sizes.size) / sizes
        if float(per.max()) > 0:
            relative = tuple(float(v) for v in np.maximum(per, 1e-6 * float(per.max())))
        drop_weight = per
    elif shares is not None:
        p = np.bincount(codes, weights=shares, minlength=sizes.size) / sizes
        drop_weight = p * (1.0 - p)
    gap = None  # the pass/fail gap: the slope of the scores on the pass shares
    if shares is not None and x.size >= 2 and float(np.var(shares)) > 0:
        slope = float(np.cov(shares, x, ddof=0)[0, 1] / np.var(shares))
        gap = min(max(slope, 0.0), 1.0)
    if gap is not None and samples >= 2:
        variance, conservative = gap * gap * float(within.mean()), False
    elif gap is not None:
        # one sample each: the level's pass rate p̄ bounds the instructions' mean p_i(1 − p_i)
        # by p̄(1 − p̄) (their spread only lowers it) — tighter than the spread of the scores,
        # which also holds the instructions' own differences
        assert shares is not None
        rate = float(shares.mean())
        variance, conservative = gap * gap * rate * (1.0 - rate), True
    else:  # all of the spread of k-sample means taken as run-to-run noise: ≤ k·spread
        variance = samples * float(np.var(x, ddof=1)) if x.size >= 2 else 0.0
        conservative = True
    uneven = _uneven(sizes, np.ones(sizes.size) if relative is None else np.array(relative),
                     drop_weight, variance, samples)
    counts = None if shares is None else np.rint(shares * samples).astype(int)
    # the score curve needs two passing counts to show what a passing sample is worth against
    # a failing one; with one (every instruction all right, say) the closed form's gap reads it
    scored = (None if counts is None or np.unique(counts).size < 2 else
              level_samples(x.tolist(), counts.tolist(), samples))
    return LevelNoise(int(x.size), tuple(int(s) for s in sizes), variance, samples,
                      conservative, relative, uneven=uneven, mean=float(x.mean()), gap=gap,
                      scored=scored)


def noise_by_level(items: Iterable[ItemScore], *, samples: int) -> dict[int, LevelNoise]:
    """:func:`level_noise` of every level of a baseline (scored instructions only), with the
    shared-noise ratio pooled over all of them as the gate pools it."""
    by_level: dict[int, list[ItemScore]] = {}
    for item in items:
        by_level.setdefault(item.level, []).append(item)
    alone = {lv: level_noise([r.score for r in rows], [r.cluster for r in rows],
                             samples=samples, pass_shares=[r.pass_share for r in rows])
             for lv, rows in sorted(by_level.items())}
    pool: list[tuple[float, int, float, float]] = []
    place: dict[int, int] = {}
    for lv, noise in alone.items():
        entry = _pool_entry(noise._sizes, noise._variances)
        if entry is not None:
            place[lv] = len(pool)
            pool.append(entry)
    out = {}
    for lv, noise in alone.items():
        if noise.pooled == tuple(pool) and noise.place == place.get(lv, -1):
            out[lv] = noise  # the level alone is the whole pool: as level_noise says
        else:
            out[lv] = dataclasses.replace(noise, pool=tuple(pool), own=place.get(lv, -1))
    return out


def detectable_drops(items: Iterable[ItemScore], *, samples: int, delta: float,
                     alpha: float = FAMILY_ALPHA, tests: int = 6,
                     power: float = POWER, test: GateTest = "templates") -> dict[int, float]:
    """Level → :func:`detectable_drop` for a baseline's scored instructions (what a gated run
    compares its levels with: pass the instructions it paired)."""
    return {lv: detectable_drop(n, delta=delta, alpha=alpha, tests=tests, power=power,
                                test=test)
            for lv, n in noise_by_level(items, samples=samples).items()}


def detectable_pass_drops(items: Iterable[ItemScore], *, baseline_samples: int, samples: int,
                          delta: float, alpha: float = FAMILY_ALPHA, tests: int = 6,
                          power: float = POWER) -> dict[int, float]:
    """Level → the smallest drop in **pass rate** the gate flags with probability ``power``
    when it compares runs of ``samples`` per instruction with a baseline of
    ``baseline_samples`` (another count: the gate's rule across sample counts, the pass-count
    test alone and ``delta`` read on pass rate; :func:`.suite_power.count_power`);
    ``math.inf`` where no shift of the pass logits reaches it.  Levels whose items carry no
    share of passing samples have no figure (absent, never a weaker one)."""
    _check(delta, alpha, tests, power)
    if samples < 1 or baseline_samples < 1:
        raise ValueError("samples per instruction must be >= 1")
    out: dict[int, float] = {}
    for lv, noise in noise_by_level(items, samples=baseline_samples).items():
        if noise.scored is None:
            continue
        drops, chance = count_power(noise.scored, samples=samples,
                                    instructions=noise.instructions, delta=delta,
                                    alpha_level=alpha / tests)
        out[lv] = _first_crossing(drops, chance, power)
    return out


def _first_crossing(drops: np.ndarray, chance: np.ndarray, power: float) -> float:
    """The drop at which ``chance`` (over rising ``drops``) first reaches ``power``, linear
    between the two points around it; ``math.inf`` when it never does."""
    ok = np.flatnonzero(chance >= power)
    if not ok.size:
        return math.inf
    i = int(ok[0])
    if i == 0:
        return float(drops[0])
    d0, d1, c0, c1 = (float(drops[i - 1]), float(drops[i]), float(chance[i - 1]),
                      float(chance[i]))
    return d1 if c1 == c0 else d0 + (power - c0) * (d1 - d0) / (c1 - c0)
