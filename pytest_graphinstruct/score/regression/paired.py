"""The gate's default test: is this run worse than the baseline *on this suite*?

The instructions are fixed.  With nothing changed, each answer is a fresh draw from the same
model, so for every instruction the baseline's and the candidate's samples are exchangeable
and the paired difference ``d_i = c_i − b_i`` of the two runs' level scores (each the mean over
the instruction's samples) is symmetric about 0 — whatever the instruction's own pass rate, and
whatever its template.  What moves a whole template between two runs (a new snapshot, a changed
prompt, provider drift) is a change this test exists to report, not noise.

**The test** (per level): the paired randomization (sign-flip) test of ``Σ d_i``.  Under the
null, flipping the sign of any subset ``F`` of the differences is as likely as the observed
signs, so the one-sided p-value of "no drop" is the share of subsets with ``Σ_{i∈F} d_i ≥ 0``
(flipping ``F`` does not raise the sum above what was observed).  It is computed over
:func:`draws` random subsets (fixed by ``(seed, level, n)``), counting the observed one:
``p = (1 + #{F: Σ_F d ≥ 0}) / (1 + B)`` — a valid p-value for any ``B``.  The p-value of "no
rise" (what the gate's "improved" is judged on, issue 48 §6) is the same test of ``−d``, over
the same subsets: exact alike.

* Exact in finite samples under the fixed-suite null; no distributional assumption, no
  variance to estimate, so a uniform collapse (every difference equal) is as visible as it
  should be: ``p = 1/(1 + B)`` once the level has more than ``log₂ B`` instructions.
* At one sample per instruction the evidence is the discordant items (newly failing vs newly
  passing: large ``|d_i|``); an item whose answer did not change has ``d_i = 0`` and weighs
  nothing.  At ``k > 1`` it is the per-instruction changes of pass fraction and level score.
* Monotone: a candidate that is no better on any instruction than another (``d' ≤ d``
  elementwise) never gets a larger p-value, on every draw (``Σ_F d' ≤ Σ_F d``); scaling all
  differences by a positive factor leaves p unchanged.  More evidence never reads as less.
* Identical answers give ``d = 0``: ``p = 1`` and the interval ``[0, 0]``.

**Pass counts too** (issue 48).  Where both runs keep every sample's verdict and either asks
two or more samples per instruction, the level is also judged by the exact pass-count test
(:mod:`.counts`: the run's passing samples given each instruction's pooled samples), and its
p-value is :func:`combined_p`, ``min(1, 2·min(p_score, p_count))`` — valid whatever the two
tests' dependence.  With one sample on each side a score change is the pass change times the
instruction's pass/fail gap: the count test adds nothing there (measured: its factor 2 only
cost power), so the score test stands alone, as before issue 48.  A level score is a nonlinear,
unequally scaled function of the passing samples (D4 averages the *valid* samples: with 0, 1,
…, 5 of 5 correct our L1 scores 0.20, 0.85, …, 0.99), so its differences are dominated by rare
large jumps; the count test sees every sample that turned, and sees a change concentrated on a
few instructions that the sign-flip over instructions cannot (three instructions: ``p ≥ 2⁻³``).
Measured by ``bench/gate_calibration.py`` (docs/PLUGIN.md, "How much the gate can see").  Two
runs of other sample counts have level scores that differ for the same answers (D1's
uniqueness term needs two samples): they are judged on pass counts alone
(``scores_comparable=False``; the change shown is then of pass rate, and
``--gi-max-regression`` reads as a pass-rate drop).

Beside the test, the level's mean change ``d̄`` and its 95 % paired t interval ``d̄ ±
t_{n−1}·s/√n`` (``s`` the differences' standard deviation) say how large the change is; the
gate's decision is the test's (Holm over every compared (cell, level) at family-wise α, and a
mean drop larger than ``--gi-max-regression``), never the interval's.

**What it does not claim**: that the model would be worse on *other* instructions of the same
templates.  That is the template-clustered test's question
(:func:`~pytest_graphinstruct.score.regression.bootstrap.paired_bootstrap`,
``gi_gate_test=templates``).

``B`` grows with the family so that Holm's smallest threshold can be reached:
:func:`draws_for` (at least :data:`MIN_DRAWS`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import replace

import numpy as np

from pytest_graphinstruct.score.levels import LEVEL_WEIGHTS_V
from pytest_graphinstruct.score.regression.bootstrap import (
    CONFIDENCE,
    DEFAULT_SEED,
    PairedDiff,
    PairedResult,
    paired_levels,
    t_interval,
    weighted_sum,
)
from pytest_graphinstruct.score.regression.counts import PassCount, pass_changes

__all__ = ["MIN_DRAWS", "combined_p", "draws_for", "flip_p_values", "suite_paired"]

MIN_DRAWS = 10_000
"""Random subsets a level's p-value is computed over, at least."""
_RESOLUTION = 20  # the smallest Holm threshold is reached with this many draws to spare
_MAX_CELLS = 4_000_000  # subset-matrix elements per chunk


def draws_for(tests: int, alpha: float = 0.05) -> int:
    """Random subsets per level for a family of ``tests`` tests at family-wise ``alpha``:
    enough that the smallest p-value, ``1/(1 + B)``, lies well below Holm's smallest
    threshold ``alpha/tests`` (at least :data:`MIN_DRAWS`)."""
    if tests < 1:
        raise ValueError(f"need at least one test, got {tests}")
    # x2: the level's p-value may be the smaller of two tests', doubled (combined_p)
    return max(MIN_DRAWS, math.ceil(2 * _RESOLUTION * tests / alpha))


def _subset_blocks(n: int, draws: int, seed: int, stream: int) -> Iterator[np.ndarray]:
    """``draws`` random subsets of ``n`` items as 0/1 rows (float), in blocks of at most
    ``_MAX_CELLS`` elements, fixed by ``(seed, stream, n)``: the block size depends on ``n``
    alone, so the same rows come out whatever asks (made as they are used: no ``draws × n``
    matrix is ever held)."""
    rng = np.random.default_rng([seed, stream, n])
    rows = max(1, _MAX_CELLS // n)
    for start in range(0, draws, rows):
        block = rng.integers(0, 2, size=(rows, n), dtype=np.uint8)
        yield block[:min(rows, draws - start)].astype(np.float64)


def flip_p_values(d: np.ndarray, *, draws: int = MIN_DRAWS, seed: int = DEFAULT_SEED,
                  stream: int = 0) -> np.ndarray:
    """One-sided sign-flip p-values of "no drop" for each row of ``d`` (rows × n paired
    differences, or one row as a flat array): ``(1 + #{F: Σ_{i∈F} d_i ≥ 0}) / (1 + B)`` over
    ``B = draws`` random subsets fixed by ``(seed, stream, n)`` (module docstring).  Rows of
    one call share the subsets, so two rows with ``d' ≤ d`` get ``p' ≤ p``.

    Raises:
        ValueError: ``d`` is empty, not finite, or ``draws`` < 1.
    """
    x = np.asarray(d, dtype=np.float64)
    flat = x.ndim == 1
    x = np.atleast_2d(x)
    if x.ndim != 2 or x.shape[1] == 0:
        raise ValueError("flip_p_values: need rows of at least one difference")
    if not np.all(np.isfinite(x)):
        raise ValueError("flip_p_values: differences must be finite")
    if draws < 1:
        raise ValueError(f"flip_p_values: need at least one draw, got {draws}")
    n = x.shape[1]
    # Σ_F d_i ≥ 0 tested as Σ_F g(d_i) ≥ 0 with g(t) = t + 1e-9·|t|: a sum that is 0 in exact
    # arithmetic counts as ≥ 0 whatever its rounding (it errs by ≪ 1e-9·Σ_F |d_i|), and g is
    # increasing, so d' ≤ d still gives p' ≤ p (a slack of the whole row's Σ|d| did not: a
    # row of larger differences forgave its subsets more)
    g = x + 1e-9 * np.abs(x)
    counts = np.zeros(x.shape[0])
    for block in _subset_blocks(n, draws, seed, stream):
        counts += np.sum(g @ block.T >= 0.0, axis=1)
    p = (1.0 + counts) / (1.0 + draws)
    return p[0:1].reshape(()) if flat else p


def _diff(d: np.ndarray, p: float, confidence: float, p_rise: float = 1.0) -> PairedDiff:
    """The level's :class:`PairedDiff`: mean change, paired t interval, the test's p-values
    of "no drop" and "no rise"; the shares are of its instructions (no resamples here)."""
    n = int(d.size)
    sd = float(np.std(d, ddof=1)) if n >= 2 else 0.0
    se, df = sd / math.sqrt(n), float(max(n - 1, 0))
    mean = float(d.mean())
    lo, hi = t_interval(mean, se, df, confidence)
    return PairedDiff(n, mean, lo, hi, float(np.mean(d >= 0)), float(np.mean(d <= 0)),
                      p_drop=p, clusters=n, se=se, df=df, p_rise=p_rise)


def _passes(ids: list[str], baseline: Mapping[str, PassCount] | None,
            candidate: Mapping[str, PassCount] | None
            ) -> tuple[list[PassCount], list[PassCount]] | None:
    """Both sides' pass counts of ``ids`` in order, or ``None`` when either side lacks one."""
    if baseline is None or candidate is None or any(
            i not in baseline or i not in candidate for i in ids):
        return None
    return [baseline[i] for i in ids], [candidate[i] for i in ids]


def _single(passes: tuple[list[PassCount], list[PassCount]] | None) -> bool:
    """Every instruction has one sample on each side."""
    return passes is not None and all(c.samples == 1 for side in passes for c in side)


def _pass_diff(passes: tuple[list[PassCount], list[PassCount]],
               confidence: float) -> PairedDiff:
    """A level judged on pass counts alone: the change of pass rate, its paired t interval and
    the count test's p-values."""
    base, run = passes
    d = np.array([r.share - b.share for b, r in zip(base, run, strict=True)])
    change = pass_changes(base, run, confidence=confidence)
    return replace(_diff(d, change.p_value, confidence, change.p_rise), measure="pass rate",
                   passes=change)


def _combined(parts: list[PairedDiff], weights: np.ndarray, n: int, confidence: float,
              scale: float = 1.0) -> PairedDiff:
    """The levels' :func:`~.bootstrap.weighted_sum` (shown, never gated on)."""
    total = weighted_sum([(p.mean_diff, p.se, p.df) for p in parts], weights, confidence,
                         scale)
    return PairedDiff(n, total.estimate, total.low, total.high, float(total.estimate >= 0),
                      float(total.estimate <= 0), p_drop=total.p_drop, clusters=n,
                      se=total.se, df=total.df, p_rise=total.p_rise)


def combined_p(p_score: float | None, p_count: float | None) -> float:
    """A level's p-value of "no drop" from its two tests: ``min(1, 2·min(p_score, p_count))``
    (Bonferroni over the two: valid whatever their dependence), or the one that was run.  The
    same combination of the two tests' "no rise" p-values gives the level's ``p_rise``.

    Raises:
        ValueError: neither was run.
    """
    if p_score is None and p_count is None:
        raise ValueError("neither test was run")
    if p_score is None or p_count is None:
        return float(p_count if p_score is None else p_score)  # type: ignore[arg-type]
    return min(1.0, 2.0 * min(p_score, p_count))


def suite_paired(
    baseline: Mapping[str, tuple[int, float]],
    candidate: Mapping[str, tuple[int, float]],
    *,
    tests: int | None = None,
    alpha: float = 0.05,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
    baseline_passes: Mapping[str, PassCount] | None = None,
    candidate_passes: Mapping[str, PassCount] | None = None,
    scores_comparable: bool = True,
) -> PairedResult:
    """``candidate − baseline`` per level on the fixed suite (module docstring), and for
    ``S_total`` over the levels paired.

    Both runs map an instruction id to ``(level, level_score)``; ids are paired by name and
    sorted (the result does not depend on mapping order); ids in one run only are listed.
    ``tests`` is the size of the family the p-values are judged in (it sets the draws:
    :func:`draws_for`; default: the levels paired here).  With both runs' passing samples per
    instruction (``baseline_passes``, ``candidate_passes``: every paired instruction of a
    level in both), the level is also judged by the pass-count test (:mod:`.counts`) and its
    ``p_drop`` combines the two (:func:`combined_p`).  ``scores_comparable=False`` (the two
    runs asked other sample counts, so their level scores differ for the same answers): the
    pass-count test alone, and the change shown is of pass rate.

    Raises:
        ValueError: an id on different levels in the two runs, a level outside 0..5, a score
            that is not finite, ``confidence`` outside (0, 1), or scores not comparable and a
            level without pass counts.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    common, by_level = paired_levels(baseline, candidate)
    levels = sorted(by_level)
    draws = draws_for(tests if tests is not None else max(len(levels), 1), alpha)
    out: dict[int, PairedDiff] = {}
    for lv in levels:
        ids = by_level[lv]
        passes = _passes(ids, baseline_passes, candidate_passes)
        if not scores_comparable:
            if passes is None:
                raise ValueError(f"L{lv}: the level scores are not comparable and the pass "
                                 "counts are not known")
            out[lv] = _pass_diff(passes, confidence)
            continue
        d = (np.array([candidate[i][1] for i in ids], dtype=float)
             - np.array([baseline[i][1] for i in ids], dtype=float))
        if not np.all(np.isfinite(d)):
            raise ValueError(f"L{lv}: scores must be finite numbers")
        # one call, shared subsets: the drop's row is what it is alone (rows do not interact)
        p_score, rise_score = (float(x) for x in
                               flip_p_values(np.vstack([d, -d]), draws=draws, seed=seed,
                                             stream=lv))
        change = None if passes is None else pass_changes(*passes, confidence=confidence)
        # one sample on each side: a score change is the pass change times the instruction's
        # pass/fail gap, so the count test adds nothing and its factor 2 would only cost power
        counted = None if _single(passes) else change
        p = combined_p(p_score, None if counted is None else counted.p_value)
        rise = combined_p(rise_score, None if counted is None else counted.p_rise)
        out[lv] = replace(_diff(d, p, confidence, rise), p_score=p_score, passes=change)
    parts = [out[lv] for lv in levels]
    v = np.array([LEVEL_WEIGHTS_V[lv] for lv in levels], dtype=float)
    total = _combined(parts, v, len(common), confidence)
    renorm = (_combined(parts, v, len(common), confidence, scale=float(v.sum()))
              if levels else None)
    return PairedResult(
        levels=out, total=total, total_renormalized=renorm,
        only_baseline=tuple(sorted(set(baseline) - set(candidate))),
        only_candidate=tuple(sorted(set(candidate) - set(baseline))),
        b=draws, seed=seed, confidence=confidence)
