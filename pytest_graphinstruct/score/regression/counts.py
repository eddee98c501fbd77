"""The pass-count test: does the run pass fewer of its samples than the baseline, instruction by
instruction?

With nothing changed, every sample of an instruction — the baseline's ``k_b`` and the run's
``k_r`` — is an independent draw of the same model, so the ``k_b + k_r`` samples are
exchangeable.  Given how many of them passed (``s_i``), the run's count ``x_i`` is
hypergeometric (``k_b + k_r`` samples, ``s_i`` passing, ``k_r`` drawn), independently of the
other instructions and whatever the instruction's own pass probability.  The statistic is the
run's passing samples ``Σ x_i``; its null distribution is the convolution of those
hypergeometric laws, computed exactly; the one-sided p-value of "no drop" is ``P₀(Σ x ≤
observed)``, and that of "no rise" (the gate's "improved", issue 48 §6) the other tail, ``P₀(Σ x
≥ observed)``: the same law, so exact alike.

* **Exact** for any sample counts, equal or not (a baseline of five samples per instruction
  against runs of one), in finite samples: no draws, no approximation.
* **Sees a change concentrated on a few instructions**: three of thirty instructions whose five
  samples all turned from passing to failing give ``p = (1/252)³``, where a test that flips the
  signs of whole instructions' differences cannot go below ``2⁻³``.  Every sample that turned
  counts, which is what the adaptive mode's paired samples see too.
* One sample on each side: the sign test on the instructions whose two samples disagree
  (McNemar's exact test).
* An instruction whose pooled samples all passed, or all failed, says nothing and weighs
  nothing; so does a level where every instruction is such: ``p = 1``.

:func:`pass_changes` gives the size beside the test: the mean change of the instructions' pass
shares with its paired t interval (shown, never tested on).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["PassChange", "PassCount", "count_p_value", "count_p_values", "pass_changes"]

_TOLERANCE = 1e-9  # a tail sum that is p in exact arithmetic may round a little below it


@dataclass(frozen=True)
class PassCount:
    """One instruction's samples on one side: how many passed of how many."""

    passed: int
    samples: int

    def __post_init__(self) -> None:
        if self.samples < 1 or not 0 <= self.passed <= self.samples:
            raise ValueError(f"need 0 <= passed <= samples and samples >= 1, got "
                             f"{self.passed} of {self.samples}")

    @property
    def share(self) -> float:
        return self.passed / self.samples


def _hypergeometric(total: int, good: int, drawn: int) -> tuple[int, np.ndarray]:
    """The law of the passing samples among ``drawn`` of ``total`` of which ``good`` pass: its
    smallest value and the probabilities from there (exact ratios of binomials, as floats)."""
    lo, hi = max(0, drawn - (total - good)), min(drawn, good)
    ks = np.arange(lo, hi + 1)
    log = (_log_comb(good, ks) + _log_comb(total - good, drawn - ks)
           - float(_log_comb(total, np.array(drawn))))
    probs = np.exp(log)
    return lo, probs / probs.sum()


def _log_comb(n: int, k: np.ndarray) -> np.ndarray:
    from scipy.special import gammaln

    k = np.asarray(k, dtype=float)
    return np.asarray(gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0))


def count_p_value(baseline: Sequence[PassCount], run: Sequence[PassCount]) -> float:
    """The one-sided exact p-value of "the run passes no fewer samples than the baseline" over
    instructions paired in order (module docstring): ``P₀(Σ x ≤ observed)`` given each
    instruction's pooled passing samples.

    Raises:
        ValueError: the two sides pair a different number of instructions.
    """
    return count_p_values(baseline, run)[0]


def count_p_values(baseline: Sequence[PassCount],
                   run: Sequence[PassCount]) -> tuple[float, float]:
    """Both one-sided exact p-values over instructions paired in order, from one null law
    (module docstring): of "no drop", ``P₀(Σ x ≤ observed)``, and of "no rise", ``P₀(Σ x ≥
    observed)``.  A level where no instruction's pooled samples are mixed gets ``(1, 1)``.

    Raises:
        ValueError: the two sides pair a different number of instructions.
    """
    if len(baseline) != len(run):
        raise ValueError(f"{len(baseline)} baseline instructions for {len(run)} of the run")
    pmf = np.ones(1)
    offset = observed = 0
    for b, r in zip(baseline, run, strict=True):
        total, good = b.samples + r.samples, b.passed + r.passed
        if good in (0, total):
            continue  # every pooled sample passed, or none: the run's count is fixed
        lo, law = _hypergeometric(total, good, r.samples)
        pmf = np.convolve(pmf, law)
        offset += lo
        observed += r.passed
    if pmf.size == 1:
        return 1.0, 1.0
    at = observed - offset
    lower, upper = float(pmf[: at + 1].sum()), float(pmf[at:].sum())
    return min(1.0, lower * (1.0 + _TOLERANCE)), min(1.0, upper * (1.0 + _TOLERANCE))


@dataclass(frozen=True)
class PassChange:
    """The mean change of the instructions' pass shares (``run − baseline``) with its paired t
    interval, over ``n`` instructions, and the count test's p-values: ``p_value`` of "no drop",
    ``p_rise`` of "no rise" (:func:`count_p_values`)."""

    n: int
    change: float
    low: float
    high: float
    p_value: float
    p_rise: float


def pass_changes(baseline: Sequence[PassCount], run: Sequence[PassCount], *,
                 confidence: float = 0.95) -> PassChange:
    """The pass-share change of instructions paired in order, its paired t interval (shown
    beside the test, never tested on) and :func:`count_p_values`.

    Raises:
        ValueError: no instructions, or the sides pair different numbers of them.
    """
    from scipy.stats import t as student

    if not baseline:
        raise ValueError("need at least one paired instruction")
    p, rise = count_p_values(baseline, run)
    d = np.array([r.share - b.share for b, r in zip(baseline, run, strict=True)])
    n = int(d.size)
    mean = float(d.mean())
    if n < 2:
        return PassChange(n, mean, mean, mean, p, rise)
    se = float(np.std(d, ddof=1)) / math.sqrt(n)
    half = float(student.ppf(0.5 + confidence / 2, n - 1)) * se
    return PassChange(n, mean, mean - half, mean + half, p, rise)
