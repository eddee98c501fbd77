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
  pattern move together between runs, so they are resampled together and the noise they share
  is part of the standard error.  Without clusters each instruction is its own.

  - The estimate is the plain mean of the per-instruction differences ``d_i``.
  - Its standard error models ``d_i = μ + u_g + e_i``: ``e_i`` the instruction's own run-to-run
    noise, ``u_g`` noise shared by the instructions of template ``g`` in a run (a provider's
    drift, a sampling temperature), taken to be in proportion to the template's own noise,
    ``Var(u_g) = ρ·σ²_g`` (a model that always passes or always fails a template moves it
    neither way).  Then ``Var(d̄) = W·(1 + ρ·m)`` with ``W = Σ_g n_g s²_g / n²`` (``s²_g`` the
    template's within variance, the level's pooled one for a template of one instruction;
    Satterthwaite degrees of freedom ``f``) and ``m = Σ_g n_g² s²_g / (n² W)`` (about the
    template size).  ``ρ`` is a property of the model and the run, not of a level, so it is
    estimated from every template of every level of the comparison at once (71 templates in
    our suite, 115 in the official one, where a level has 4 to 36):

    1. Each template's mean ``ȳ_g`` gets the weight ``w_g = n_g / σ̂²_g`` (its own within
       variance from :data:`OWN_VARIANCE_FROM` instructions on, corrected by ``(ν − 2)/ν``;
       else the level's) and ``y_g = w_g (ȳ_g − ȳ_w)² / a_g``, ``a_g = 1 − w_g/Σw``, which is
       about ``(1 + n_g ρ)·χ²₁``.
    2. The pooled ``ρ`` solves ``Σ_g a_g (min(y_g, CAP·(1 + n_g ρ)) − κ) = κ·ρ·Σ_g a_g n_g``
       over all templates (DerSimonian–Laird moments, each template capped at χ²₁'s 99 %
       quantile so that one template that really changed cannot pass for shared noise;
       ``κ = E min(χ²₁, CAP)``), the smallest root ``≥ 0``; its variance is the quadratic-form
       variance ``Σ_l 2·tr(AΣAΣ) / (Σ a n)²`` at that ``ρ``.
    3. The levels' own one-step estimates of ``ρ`` may differ by more than their noise
       (DerSimonian–Laird between-level variance ``τ²_ρ``); each level's ratio is then the
       empirical Bayes mix ``B·ρ_l + (1 − B)·ρ`` (``B = τ²_ρ / (τ²_ρ + v_l)``) with error
       variance ``B·v_l + (1 − B)²·var(ρ)`` (a level that cannot estimate its own: the pooled
       ``ρ`` with ``var(ρ) + τ²_ρ``).

    ``se² = W·(1 + r·m)`` for the level's ratio ``r`` and error variance ``v``, with a Student
    t reference of ``df = 1 / (1/f + m²·v / (2·(1 + r·m)²))`` (Satterthwaite).  The interval is
    ``d̄ ± t_{df, 1−α/2}·se`` (clipped to ``[−1, 1]``) and ``p_drop = F_t(d̄/se; df)`` is the
    one-sided p-value of "no drop" (the interval's upper end is below 0 exactly when ``p_drop
    < α/2``), ``p_rise = F_t(−d̄/se; df)`` that of "no rise".  Special cases: every
    instruction its own template (no clusters): the one-sample t (``se² = s²/n``, ``n − 1``
    df); no within-template spread at all (differences constant
    within each template): the cluster-robust CR2 error with Bell–McCaffrey df (:func:`bm_df`);
    one instruction, or no level of the comparison to estimate ``ρ`` from: nothing measured,
    the interval is ``[−1, 1]`` and ``p_drop`` 1.
  - ``share_ge0``/``share_le0`` are the shares of ``B`` cluster resamples (clusters drawn with
    replacement, one draw serving both runs, each resample's mean over the instructions of the
    clusters drawn) whose mean difference is ``≥ 0``/``≤ 0``.
  - ``S_total``: ``Σ v_l·d̄_l`` with ``se² = Σ v_l²·se_l²`` and Welch–Satterthwaite degrees of
    freedom, unnormalized and renormalized over the levels present.

  Why this procedure: measured by ``bench/gate_calibration.py`` (docs/PLUGIN.md, "How much the
  gate can see").  A percentile bootstrap over 4–5 clusters is far too narrow; CR2 with
  Bell–McCaffrey degrees of freedom (the gate until 2026-12) holds 5 % but measures each
  level's spread from its own few templates (3 degrees of freedom at L0) and cannot tell a drop
  in one template from noise; the pooled test holds 5 % in every configuration measured,
  heavier shared noise included, and sees far more at levels with few templates.
* Regression rules: :func:`is_regression` (one level on its own: the mean dropped by more than
  ``delta`` and the interval's upper end is below 0) and, for a gated run,
  :func:`pytest_graphinstruct.score.regression.multiple.regressions` (Holm over every level of
  every cell).

Determinism: each level draws its resamples from its own generator seeded with ``(seed,
level)``, so a level's shares do not change when other levels are added or removed (its
standard error does, through the pooled shared-noise ratio), and results are identical on every
call for a given numpy version.  Resampling is vectorized (count matrices of
``chunk × n``, chunked to bound memory); there is no Python loop over single resamples.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from pytest_graphinstruct.options import DEFAULT_MAX_REGRESSION as _DEFAULT_MAX_REGRESSION
from pytest_graphinstruct.score.levels import LEVEL_WEIGHTS_V
from pytest_graphinstruct.score.regression.counts import PassChange
from pytest_graphinstruct.vocab import LEVELS

__all__ = [
    "CONFIDENCE",
    "DEFAULT_B",
    "DEFAULT_SEED",
    "BootstrapResult",
    "Interval",
    "PairedDiff",
    "PairedResult",
    "WeightedSum",
    "bm_df",
    "bootstrap_levels",
    "is_regression",
    "mean_interval",
    "paired_bootstrap",
    "paired_diff",
    "paired_levels",
    "t_interval",
    "t_p_drop",
    "weighted_sum",
]

Measure = Literal["level score", "pass rate"]
"""What a paired change is a change of (:attr:`PairedDiff.measure`)."""

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

    ``p_drop`` is small when the drop is real (``paired_bootstrap``: the pooled shared-noise t
    with ``df`` degrees of freedom and standard error ``se``; see the module docstring; the
    fixed-suite test, :func:`~.paired.suite_paired`: the level-score test and the pass-count
    test combined).  ``clusters`` is how many clusters the level's instructions fall into
    (``n`` when each instruction is its own).  ``measure`` says what ``mean_diff`` and its
    interval are a change of: ``level score``, or ``pass rate`` (where level scores are not
    comparable: other sample counts per instruction, or the adaptive mode's paired samples).
    ``p_score`` is the level-score test's own p-value and ``passes`` the pass-count test's
    change and p-values (:mod:`.counts`), where they were run (``None``: not).  ``p_rise`` is
    the one-sided p-value of "no rise" from the same test(s), the other tail (what the gate's
    "improved" is judged on, as "regressed" is on ``p_drop``).
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
    measure: Measure = "level score"
    p_score: float | None = None
    passes: PassChange | None = None
    p_rise: float = 1.0

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high


@dataclass(frozen=True)
class PairedResult:
    """Paired differences per level and for ``S_total``; ids found in only one run are listed.
    ``shared_ratio`` is the pooled ratio of template-shared to instruction noise ``ρ`` (module
    docstring; 0 when no level could estimate it)."""

    levels: dict[int, PairedDiff]
    total: PairedDiff
    total_renormalized: PairedDiff | None
    only_baseline: tuple[str, ...]
    only_candidate: tuple[str, ...]
    b: int
    seed: int
    confidence: float
    shared_ratio: float = 0.0


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


def mean_interval(
    xs: Sequence[float],
    *,
    stream: int,
    b: int = DEFAULT_B,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> Interval:
    """The mean of ``xs`` with its percentile bootstrap interval, the instructions resampled
    with replacement from the generator seeded with ``(seed, stream)`` — for ``stream`` a
    level, the interval :func:`bootstrap_levels` gives that level.  Two sequences of one
    length resampled with one ``stream`` draw the same resamples.

    Raises:
        ValueError: ``xs`` is empty or not finite, or ``b`` / ``confidence`` are out of range.
    """
    _check(b, confidence)
    x = _array(xs, "mean_interval")
    if not x.size:
        raise ValueError("mean_interval: no values")
    boot = _resample_means(x, b, _rng(seed, stream))
    return Interval(float(x.mean()), *_bounds(boot, confidence), n=int(x.size))


def _paired(boot: np.ndarray, estimate: float, n: int, confidence: float) -> PairedDiff:
    lo, hi = _bounds(boot, confidence)
    ge0 = float(np.mean(boot >= 0))
    le0 = float(np.mean(boot <= 0))
    return PairedDiff(n, estimate, lo, hi, ge0, le0, p_drop=ge0, clusters=n,
                      se=float(boot.std()), df=float(max(n - 1, 0)), p_rise=le0)


def paired_diff(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    b: int = DEFAULT_B,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> PairedDiff:
    """Percentile bootstrap of ``mean(candidate − baseline)`` over aligned sequences (same
    order), each element resampled on its own; ``p_drop`` is ``share_ge0`` here, ``p_rise``
    ``share_le0``."""
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
    df: float  # 0.0: nothing measured


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


def _cr2(sums: np.ndarray, sizes: np.ndarray, mean: float) -> tuple[float, float]:
    """CR2 standard error and Bell–McCaffrey df of a mean over clusters (0, 0 below two)."""
    if sizes.size < 2:
        return 0.0, 0.0
    n = float(sizes.sum())
    resid = sums - sizes * mean
    var = float(np.sum(resid * resid / (1.0 - sizes / n))) / (n * n)
    return math.sqrt(max(var, 0.0)), bm_df(sizes)


# -- the pooled shared-noise test --------------------------------------------------------------

OWN_VARIANCE_FROM = 5
"""A template weighs its between-template deviation by its own within variance from this many
instructions on (4 degrees of freedom); smaller ones take their level's pooled within
variance."""
CAP = 6.6348966010212145
"""A template's standardized squared deviation counts at most this much (χ²₁'s 99 % quantile,
``scipy.stats.chi2.ppf(0.99, 1)``, times its expected inflation ``1 + n_g·ρ``) in the pooled
shared-noise ratio.  Written as a number so that importing this module does not import
scipy.stats (0.3–1 s, paid by every process of a run before its first item); a test holds it
equal to scipy's value."""
KAPPA = 0.9818573063891706
"""``E min(χ²₁, CAP)`` = ``chi2.cdf(CAP, 3) + CAP · chi2.sf(CAP, 1)``: what a capped deviation
counts on average with no shared noise (a number, as :data:`CAP`; a test holds it to scipy)."""


@dataclass(frozen=True)
class _Split:
    """One level's differences by template: what the pooled test needs of it."""

    d: np.ndarray
    sums: np.ndarray  # per template: Σ d_i
    sizes: np.ndarray  # per template: n_g
    squares: np.ndarray  # per template: Σ (d_i − ȳ_g)²

    @property
    def n(self) -> int:
        return int(self.d.size)

    @property
    def g(self) -> int:
        return int(self.sizes.size)

    @property
    def mean(self) -> float:
        return float(self.d.mean())

    @property
    def pooled_within(self) -> float:
        """The level's within-template variance (``Σ squares / (n − G)``; 0 when ``n = G``)."""
        return float(self.squares.sum()) / (self.n - self.g) if self.n > self.g else 0.0


def _rounding(s: _Split) -> float:
    """A within variance of the mean this small is rounding error, not spread (differences
    that are constant within each template)."""
    scale = float(np.max(np.abs(s.d))) if s.d.size else 0.0
    return (1e-9 * scale) ** 2 / max(s.n, 1)


def _split(d: np.ndarray, codes: np.ndarray, g: int) -> _Split:
    sums = np.bincount(codes, weights=d, minlength=g)
    sizes = np.bincount(codes, minlength=g).astype(float)
    means = sums / sizes
    dev = d - means[codes]
    return _Split(d, sums, sizes, np.bincount(codes, weights=dev * dev, minlength=g))


@dataclass(frozen=True)
class _Within:
    """The within-template part of a level mean's variance: ``W = Σ_g n_g s²_g / n²`` (a
    template's own ``s²_g`` from two instructions on, else the pooled one), its Satterthwaite
    degrees of freedom, and ``design = Σ n_g² s²_g / (n² W)`` (the factor that turns the
    shared-noise ratio into variance)."""

    variance: float
    df: float
    design: float


def _within(s: _Split) -> _Within:
    pooled = s.pooled_within
    multi = s.sizes >= 2
    own = np.where(multi, s.squares / np.maximum(s.sizes - 1.0, 1.0), pooled)
    terms = s.sizes * own
    n = float(s.n)
    variance = float(terms.sum()) / (n * n)
    if variance <= _rounding(s):
        return _Within(0.0, 0.0, 0.0)
    unit = terms / float(terms.max())  # scale-free (no underflow for tiny differences)
    denom = float(np.sum(unit[multi] ** 2 / (s.sizes[multi] - 1.0)))
    single = float(unit[~multi].sum())
    if single > 0:
        denom += single * single / (s.n - s.g)
    df = float(unit.sum()) ** 2 / denom
    design = float(np.sum(s.sizes * unit)) / float(unit.sum())
    return _Within(variance, df, design)


@dataclass(frozen=True)
class _Terms:
    """One level's templates as the pooled shared-noise ratio reads them: weights ``w_g``
    (inverse variance of the template mean with no shared noise), the variances they come
    from, ``a_g = 1 − w_g/Σw`` and the standardized squared deviations ``y_g`` from the
    weighted mean (``≈ (1 + n_g·ρ)·χ²₁``)."""

    sizes: np.ndarray
    variances: np.ndarray
    weights: np.ndarray
    a: np.ndarray
    y: np.ndarray

    @property
    def info(self) -> float:
        """``Σ a_g n_g``: how much the level tells about the ratio."""
        return float(np.sum(self.a * self.sizes))

    def spread(self, rho: float) -> float:
        """Variance of ``Σ_g a_g y_g`` (a quadratic form in the template means) when the ratio
        is ``rho``: ``2·tr(AΣAΣ)`` with ``A = diag(w) − w wᵀ/Σw``, ``Σ = diag(v_g (1/n_g +
        rho))`` (O(G))."""
        w = self.weights
        total = float(w.sum())
        s = self.variances * (1.0 / self.sizes + rho)
        return 2.0 * float(np.sum(w * w * s * s) - 2.0 * np.sum(w ** 3 * s * s) / total
                           + np.sum(w * w * s) ** 2 / (total * total))


def _terms(s: _Split) -> _Terms | None:
    """The level's templates for the pooled ratio; ``None`` when it has fewer than two
    templates or no within-template spread to scale the shared noise by."""
    pooled = s.pooled_within
    if s.g < 2 or pooled <= _rounding(s) * s.n:
        return None
    own = s.sizes >= OWN_VARIANCE_FROM
    nu = np.where(own, s.sizes - 1.0, float(s.n - s.g))
    # in units of the pooled within variance: everything below is scale-free
    variances = np.where(own, s.squares / np.maximum(s.sizes - 1.0, 1.0) / pooled, 1.0)
    variances = np.maximum(variances, 1e-9)  # a template with no spread at all
    unbiased = np.where(nu > 2, (nu - 2.0) / nu, 1.0)  # E[1/s²] = ν/(ν − 2)/σ²
    weights = s.sizes * unbiased / variances
    total = float(weights.sum())
    means = s.sums / s.sizes / math.sqrt(pooled)
    centre = float(np.sum(weights * means)) / total
    a = np.maximum(1.0 - weights / total, 1e-12)
    y = weights * (means - centre) ** 2 / a
    return _Terms(s.sizes, variances, weights, a, y)


def _shared_ratio(terms: Sequence[_Terms]) -> tuple[float, float]:
    """The pooled shared-noise ratio ``ρ`` and the variance of its estimate.

    ``ρ`` solves ``Σ_g a_g (min(y_g, CAP·(1 + n_g ρ)) − κ) = κ·ρ·Σ_g a_g n_g`` over every
    template of every level given (``κ = E min(χ²₁, CAP)``), the smallest root ``≥ 0`` (0 when
    the left side is not positive at 0).  Without the cap this is the DerSimonian–Laird moment
    estimator pooled over levels; the cap keeps one template that really changed from passing
    for shared noise.  The equation is piecewise linear in ``ρ``: solved exactly, interval by
    interval between the templates' capping points.  The variance is the quadratic-form
    variance of the uncapped estimator at ``ρ`` (the cap only lowers it).
    """
    if not terms:
        return 0.0, math.inf
    a = np.concatenate([t.a for t in terms])
    n = np.concatenate([t.sizes for t in terms])
    y = np.concatenate([t.y for t in terms])
    info = float(np.sum(a * n))

    def excess(rho: float) -> float:
        return float(np.sum(a * (np.minimum(y, CAP * (1.0 + n * rho)) - KAPPA))) \
            - KAPPA * rho * info

    rho = 0.0
    if excess(0.0) > 0:
        breaks = np.sort(np.unique((y / CAP - 1.0) / n))
        lo, at = 0.0, excess(0.0)
        for hi in [*breaks[breaks > 0].tolist(), math.inf]:
            inside = 2.0 * lo + 1.0 if math.isinf(hi) else (lo + hi) / 2  # past every break
            capped = y > CAP * (1.0 + n * inside)
            slope = CAP * float(np.sum(a[capped] * n[capped])) - KAPPA * info
            end = at + slope * (hi - lo) if not math.isinf(hi) else -math.inf
            if slope < 0 and end <= 0:
                rho = lo - at / slope
                break
            lo, at = hi, end
    variance = sum(t.spread(rho) for t in terms) / (info * info)
    return rho, variance


def _own(t: _Terms, rho: float) -> float:
    """The level's own ratio, one step from the pooled ``rho`` (its capping points fixed
    there): ``Σ a_g (min(y_g, CAP·(1 + n_g ρ)) − κ) / (κ·Σ a_g n_g)``, unbounded below."""
    capped = np.minimum(t.y, CAP * (1.0 + t.sizes * rho))
    return float(np.sum(t.a * (capped - KAPPA))) / (KAPPA * t.info)


@dataclass(frozen=True)
class _Ratios:
    """The shared-noise ratio of a comparison: pooled, how much the levels' own ratios differ
    beyond their noise, and each level's ratio and the variance of its error."""

    pooled: float
    pooled_var: float
    between: float  # τ²_ρ: the variance of the levels' ratios around the pooled one
    levels: tuple[tuple[float, float], ...]  # per level: (ratio, error variance)


def _ratios(terms: Sequence[_Terms | None]) -> _Ratios | None:
    """Each level's shared-noise ratio (module docstring): the pooled ratio over every level
    with two templates and within-template spread, and the level's own one-step estimate,
    combined by their precision once the levels are seen to differ (DerSimonian–Laird over the
    levels' own estimates, an empirical Bayes ratio per level).  ``None``: no level to pool."""
    pool = [t for t in terms if t is not None]
    if not pool:
        return None
    rho, rho_var = _shared_ratio(pool)
    own = [_own(t, rho) for t in pool]
    var = [t.spread(rho) / (t.info * t.info) for t in pool]
    between = 0.0
    if len(pool) >= 2 and all(v > 0 for v in var):
        inv = np.array([1.0 / v for v in var])
        est = np.array(own)
        centre = float(np.sum(inv * est)) / float(inv.sum())
        q = float(np.sum(inv * (est - centre) ** 2))
        between = max(0.0, (q - (len(pool) - 1)) / (float(inv.sum())
                                                     - float(np.sum(inv * inv)) / float(inv.sum())))
    out = []
    k = 0
    for t in terms:
        if t is None:  # the level's own ratio is unknown: the pooled one, give or take τ_ρ
            out.append((rho, rho_var + between))
            continue
        weight = between / (between + var[k]) if between > 0 else 0.0
        out.append((max(0.0, weight * own[k] + (1.0 - weight) * rho),
                    weight * var[k] + (1.0 - weight) ** 2 * rho_var))
        k += 1
    return _Ratios(rho, rho_var, between, tuple(out))


def _pooled(s: _Split, ratio: tuple[float, float] | None) -> tuple[float, float]:
    """The level's standard error and degrees of freedom (module docstring); ``(0, 0)``:
    nothing measured.  ``ratio``: the level's shared-noise ratio and its error variance."""
    if s.n < 2:
        return 0.0, 0.0
    if s.n == s.g:  # every instruction its own template: the one-sample t
        return math.sqrt(float(np.var(s.d, ddof=1)) / s.n), float(s.n - 1)
    within = _within(s)
    if within.variance <= 0:  # no within-template spread to scale shared noise by
        return _cr2(s.sums, s.sizes, s.mean)
    if ratio is None:
        return 0.0, 0.0
    rho, rho_var = ratio
    inflation = 1.0 + rho * within.design
    spread = within.design * within.design * rho_var / (2.0 * inflation * inflation)
    return math.sqrt(within.variance * inflation), 1.0 / (1.0 / within.df + spread)


def t_p_drop(mean: float, se: float, df: float) -> float:
    """One-sided p-value of "no drop" (``P(T ≤ mean/se)``, ``T ~ t_df``); 1 when nothing was
    measured (``df ≤ 0``), 0 or 1 by the sign of ``mean`` when there is no spread at all.
    With ``−mean``: the p-value of "no rise"."""
    if df <= 0:
        return 1.0
    if se <= 0:  # no spread at all: a drop is certain, anything else is not one
        return 0.0 if mean < 0 else 1.0
    from scipy.stats import t as student_t

    return float(student_t.cdf(mean / se, df))


def t_interval(mean: float, se: float, df: float, confidence: float,
               bound: float = 1.0) -> tuple[float, float]:
    """``mean ± t_{df, (1+confidence)/2}·se`` clipped to ``[−bound, bound]``; the whole range
    when nothing was measured (``df ≤ 0``)."""
    from scipy.stats import t as student_t

    if df <= 0:
        return -bound, bound
    half = float(student_t.ppf(0.5 + confidence / 2, df)) * se if se > 0 else 0.0
    return max(mean - half, -bound), min(mean + half, bound)


@dataclass(frozen=True)
class WeightedSum:
    """``Σ w_l·d̄_l`` of levels' mean changes with its t interval, standard error,
    Welch–Satterthwaite degrees of freedom and one-sided p-values of "no drop" and "no
    rise"."""

    estimate: float
    low: float
    high: float
    se: float
    df: float
    p_drop: float
    p_rise: float = 1.0


def weighted_sum(parts: Sequence[tuple[float, float, float]], weights: np.ndarray,
                 confidence: float, scale: float = 1.0) -> WeightedSum:
    """``Σ w_l·d̄_l / scale`` over ``parts`` (per level: mean change, standard error, degrees
    of freedom): ``se² = Σ w_l² se_l²``, Welch–Satterthwaite df; a level without a measured
    spread (df ≤ 0) makes the whole sum unmeasured (interval: the whole range)."""
    w = weights / scale
    est = float(sum(wl * mean for wl, (mean, _, _) in zip(w, parts, strict=True)))
    bound = float(np.abs(w).sum())
    if not parts or any(df <= 0 for _, _, df in parts):
        df, se = 0.0, 0.0
    else:
        terms = np.array([(wl * part_se) ** 2
                          for wl, (_, part_se, _) in zip(w, parts, strict=True)])
        var = float(terms.sum())
        se = math.sqrt(var)
        dfs = np.array([part_df for _, _, part_df in parts])
        denom = float(np.sum(terms * terms / dfs))
        df = var * var / denom if denom > 0 else float(dfs.sum())
    lo, hi = t_interval(est, se, df, confidence, bound=bound)
    return WeightedSum(est, lo, hi, se, df, t_p_drop(est, se, df), t_p_drop(-est, se, df))


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
    lo, hi = t_interval(c.mean, c.se, c.df, confidence)
    return PairedDiff(n, c.mean, lo, hi, float(np.mean(boot >= 0)), float(np.mean(boot <= 0)),
                      p_drop=t_p_drop(c.mean, c.se, c.df), clusters=int(c.sizes.size),
                      se=c.se, df=c.df, p_rise=t_p_drop(-c.mean, c.se, c.df))


def _combined(parts: Sequence[_Clustered], weights: np.ndarray, boot: np.ndarray, n: int,
              confidence: float, scale: float = 1.0) -> PairedDiff:
    """The levels' :func:`weighted_sum`, with the shares of its cluster resamples."""
    total = weighted_sum([(p.mean, p.se, p.df) for p in parts], weights, confidence, scale)
    scaled = boot / scale
    return PairedDiff(n, total.estimate, total.low, total.high, float(np.mean(scaled >= 0)),
                      float(np.mean(scaled <= 0)), p_drop=total.p_drop,
                      clusters=int(sum(p.sizes.size for p in parts)), se=total.se, df=total.df,
                      p_rise=total.p_rise)


def paired_levels(baseline: Mapping[str, tuple[int, float]],
                  candidate: Mapping[str, tuple[int, float]]
                  ) -> tuple[list[str], dict[int, list[str]]]:
    """The ids both runs scored, sorted, and those ids by level (each in sorted order).

    Raises:
        ValueError: an id on different levels in the two runs, or a level outside 0..5.
    """
    common = sorted(set(baseline) & set(candidate))
    by_level: dict[int, list[str]] = {}
    for i in common:
        lb, lc = baseline[i][0], candidate[i][0]
        if lb != lc:
            raise ValueError(f"{i}: level {lb} in the baseline but {lc} in the candidate")
        if lb not in LEVELS:
            raise ValueError(f"{i}: unknown level {lb!r} (levels are 0..5)")
        by_level.setdefault(lb, []).append(i)
    return common, by_level


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
    common, by_level = paired_levels(baseline, candidate)
    levels = sorted(by_level)
    v, vsum = _weights(levels)
    splits = []
    for lv in levels:
        ids = by_level[lv]
        a = _array([baseline[i][1] for i in ids], f"baseline L{lv}")
        c = _array([candidate[i][1] for i in ids], f"candidate L{lv}")
        codes = _cluster_codes(ids, clusters)
        splits.append(_split(c - a, codes, int(codes.max()) + 1))
    ratios = _ratios([_terms(split) for split in splits])
    out: dict[int, PairedDiff] = {}
    parts: list[_Clustered] = []
    boots = np.zeros((len(levels), b))
    for k, (lv, split) in enumerate(zip(levels, splits, strict=True)):
        se, df = _pooled(split, None if ratios is None else ratios.levels[k])
        part = _Clustered(split.sums, split.sizes, split.mean, se, df)
        boots[k] = _cluster_means(part, b, _rng(seed, lv))
        parts.append(part)
        out[lv] = _diff(part, boots[k], split.n, confidence)
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
        shared_ratio=0.0 if ratios is None else ratios.pooled,
    )


# The default DELTA of the regression rule (``--gi-max-regression``, ``compare``).
DEFAULT_MAX_REGRESSION = _DEFAULT_MAX_REGRESSION


def is_regression(diff: PairedDiff, delta: float) -> bool:
    """True when the mean dropped by more than ``delta`` and the whole interval is below 0.

    One level on its own (a two-sided 95 % interval: a one-sided test at 2.5 %).  A gated run
    decides over all its levels and cells together with
    :func:`pytest_graphinstruct.score.regression.multiple.regressions`, which keeps the chance of
    any false
    alarm at ``alpha`` however many levels are tested.
    """
    if delta < 0:
        raise ValueError(f"delta must be >= 0, got {delta}")
    return diff.mean_diff < -delta and diff.high < 0
