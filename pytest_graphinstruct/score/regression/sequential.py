"""``--gi-samples=auto``: ask more only where it matters — the group-sequential sign test on
paired samples.

A baseline of ``k`` samples per instruction is compared with a run that asks one sample per
instruction first and more only while a level's verdict is open.  Sample ``j`` of the run is
paired with sample ``j`` of the baseline; a pair's outcome is its two pass/fail verdicts.  With
nothing changed the two samples of a pair are exchangeable, so the *unordered* pair ({pass,
fail}, {pass, pass}, {fail, fail}) carries no information about the direction of a change, and
given every unordered pair seen, which side of each discordant pair failed is a fair coin,
independent across pairs.  Everything this module decides *between* looks — which instructions
are asked again — reads only unordered pairs, so under the null the discordant pairs' signs stay
fair coins and the drops among ``D`` discordant pairs are ``Binomial(D, 1/2)`` at every look:
an exact test, however the asking adapted.

**Looks.**  Look ``t`` adds the ``t``-th pair of every instruction still asked.  After it, per
level: ``D`` discordant pairs so far, ``x`` of them newly failing (drops).

* *Regressed* (stop): ``x`` reaches the look's boundary — the smallest count whose probability,
  among the null paths that crossed no earlier boundary, fits in the error spent so far:
  ``α_d · (t / T)^ρ`` cumulative (``α_d = α / tests``, Holm's smallest threshold, so a stop
  here is a rejection whatever the other levels do; ``T`` the cap; ``ρ`` :attr:`spending`).
* *Not worse* (stop, the level passes): no pair differs yet, or the discordant pairs lean
  toward the run, ``(D − 2x) / √D > z_f`` (:attr:`futility_z`).  Stopping never rejects, so
  it costs no error: the level's p-value is 1.
* *Settled*: nothing left to ask (every instruction at its cap, or settled: its first
  :attr:`settle` pairs all passed on both sides — it is not asked again).
* Otherwise the next look asks every instruction of the level that is neither at its cap nor
  settled.  (Re-asking only the discordant instructions is also exact, but in the calibration
  simulation it lost a third of the power: most of a level's later evidence comes from
  instructions that agreed at their first pair.)

**The p-value** is the stage-wise ordering one: the null probability of crossing a boundary at
an earlier look, plus that of reaching this look uncrossed with at least ``x`` drops — valid for
every threshold, so Holm over the gate's family applies to it as to the fixed-sample test's.

**The p-value of "no rise"** (what the gate's "improved" is judged on, issue 48 §6) is the
stage-wise one of the other direction, over the paths the design really stops: given the
unordered pairs, the looks, their discordant counts and the boundaries are fixed, and a level
that ends at look ``t`` with ``x`` drops (not past the boundary) is at least as extreme as every
path that stopped *not worse* at an earlier look and every path that ends at look ``t`` with at
most ``x`` drops.  These sets are nested, so ``P₀(p ≤ a) ≤ a``: exact, as the drop's.  A level
that regressed, or is still asking, gets 1.

The estimate beside it is the level's mean change of pass rate on paired samples (per
instruction, newly passing minus newly failing pairs over its pairs; the mean over
instructions): ``--gi-max-regression`` is read against it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from pytest_graphinstruct.score.levels import LEVEL_WEIGHTS_V
from pytest_graphinstruct.score.regression.bootstrap import (
    CONFIDENCE,
    PairedDiff,
    PairedResult,
    t_interval,
    weighted_sum,
)

__all__ = ["LevelLooks", "SequentialResult", "SequentialSettings", "State", "sequential_paired",
           "sequential_test"]

State = Literal["asking", "regressed", "not worse", "settled"]
"""A level's state: still asking, or why it stopped."""


@dataclass(frozen=True)
class SequentialSettings:
    """The design: at most ``cap`` samples per instruction (and never more than the
    baseline's), family-wise ``alpha`` over ``tests`` level tests, the error spending exponent
    ``spending`` (ρ), the futility bound ``futility_z`` and ``settle`` (module docstring)."""

    cap: int = 5
    alpha: float = 0.05
    tests: int = 6
    spending: float = 2.0
    futility_z: float = 0.0
    settle: int = 3

    def __post_init__(self) -> None:
        if self.cap < 1:
            raise ValueError(f"cap must be >= 1, got {self.cap}")
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha}")
        if self.tests < 1:
            raise ValueError(f"tests must be >= 1, got {self.tests}")
        if self.spending <= 0 or self.settle < 1:
            raise ValueError("spending must be > 0 and settle >= 1")

    @property
    def design_alpha(self) -> float:
        """The error a level spends over its looks: Holm's smallest threshold."""
        return self.alpha / self.tests


@dataclass(frozen=True)
class LevelLooks:
    """One level after the looks taken so far: how many, the samples of the run it used (each
    paired with the baseline's sample of the same number), the discordant pairs and the drops
    (newly failing) among them, the stage-wise p-value of "no drop", the mean change of pass
    rate on paired samples, its state and why, in words; ``p_rise``: the stage-wise p-value of
    "no rise" (module docstring)."""

    level: int
    instructions: int
    looks: int
    samples: int
    discordant: int
    drops: int
    p_value: float
    change: float
    state: State
    reason: str
    #: per instruction with a pair: its newly passing minus newly failing pairs over its pairs
    #: (their mean is ``change``; their spread gives the interval the gate shows)
    diffs: tuple[float, ...] = field(default=(), repr=False)
    p_rise: float = 1.0

    @property
    def decided(self) -> bool:
        return self.state != "asking"


@dataclass(frozen=True)
class SequentialResult:
    """Every level's looks, and the samples each instruction must have before the next look
    (instruction id → total samples; only those that need more).  ``done``: nothing to ask."""

    levels: Mapping[int, LevelLooks]
    asks: Mapping[str, int] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return not self.asks


class _Walk:
    """The null paths of the drops count over the looks: its distribution among paths that
    crossed no boundary yet, and the probability spent on earlier crossings."""

    def __init__(self) -> None:
        self.dist = np.array([1.0])
        self.spent = 0.0

    def step(self, new: int, budget: float) -> tuple[np.ndarray, int]:
        """Add ``new`` discordant pairs; returns (the tail ``P(drops ≥ x, uncrossed)`` by
        ``x``, the boundary ``r``: the smallest count whose tail fits in ``budget``)."""
        from scipy.stats import binom  # not at import: the plugin's entry point avoids it

        dist = self.dist
        if new:
            dist = np.convolve(dist, binom.pmf(np.arange(new + 1), new, 0.5))
        tail = np.cumsum(dist[::-1])[::-1]
        fits = np.flatnonzero(tail <= budget * (1 + 1e-12))
        r = int(fits[0]) if fits.size else dist.size
        self.dist = dist
        return tail, r

    def cross(self, r: int, tail: np.ndarray) -> None:
        """Paths at or over ``r`` stop here: their mass is spent, the rest go on."""
        if r < self.dist.size:
            self.spent += float(tail[r])
            self.dist = self.dist.copy()
            self.dist[r:] = 0.0


class _Running:
    """The null paths of the drops count that the design has not stopped yet (not past a
    boundary, not stopped *not worse*), and the probability of the *not worse* stops at earlier
    looks: what the p-value of "no rise" reads (module docstring)."""

    def __init__(self) -> None:
        self.dist = np.array([1.0])
        self.before = 0.0

    def step(self, new: int) -> None:
        from scipy.stats import binom

        if new:
            self.dist = np.convolve(self.dist, binom.pmf(np.arange(new + 1), new, 0.5))

    def p_rise(self, x: int) -> float:
        """At most ``x`` drops at this look, or a *not worse* stop before it."""
        return min(1.0, self.before + float(self.dist[: x + 1].sum()))

    def stop(self, boundary: int, futile: np.ndarray) -> None:
        """Paths past ``boundary`` or in ``futile`` (a mask by drops) stop at this look."""
        self.before += float(self.dist[futile].sum())
        self.dist = np.where(futile, 0.0, self.dist)
        self.dist[boundary:] = 0.0


def _level(ids: Sequence[str], base: Mapping[str, Sequence[bool]],
           cand: Mapping[str, Sequence[bool]], level: int,
           s: SequentialSettings) -> tuple[LevelLooks, dict[str, int]]:
    caps = {i: min(s.cap, len(base[i])) for i in ids}
    top = max(caps.values())
    used = dict.fromkeys(ids, 0)
    diff = dict.fromkeys(ids, 0)
    both_passed = dict.fromkeys(ids, True)
    active = [i for i in ids if caps[i] >= 1]
    walk = _Walk()
    running = _Running()
    d = x = 0
    t = 0
    rise = 1.0

    def result(p: float, state: State, reason: str) -> LevelLooks:
        diffs = tuple(diff[i] / used[i] for i in ids if used[i])
        change = float(np.mean(diffs)) if diffs else 0.0
        return LevelLooks(level, len(ids), t, sum(used.values()), d, x,
                          min(1.0, max(p, 0.0)), change, state, reason, diffs,
                          p_rise=1.0 if state in ("asking", "regressed") else rise)

    while True:
        missing = [i for i in active if len(cand[i]) <= t]
        if missing:
            return (result(1.0, "asking", f"look {t + 1}: asking {len(missing)} instruction(s)"),
                    {i: t + 1 for i in missing})
        t += 1
        new = 0
        for i in active:
            b, c = bool(base[i][t - 1]), bool(cand[i][t - 1])
            used[i] += 1
            diff[i] += int(c) - int(b)
            both_passed[i] = both_passed[i] and b and c
            if b != c:
                new += 1
                x += int(b)
        d += new
        budget = s.design_alpha * (t / top) ** s.spending - walk.spent
        tail, r = walk.step(new, max(budget, 0.0))
        p = walk.spent + float(tail[x])
        running.step(new)
        rise = running.p_rise(x)
        if x >= r and d:
            return result(p, "regressed", f"{x} of {d} discordant pairs newly failing at "
                          f"look {t}: past the boundary ({r})"), {}
        if t >= top:
            return result(p, "settled", f"cap of {top} sample(s) reached"), {}
        if not d:
            return result(1.0, "not worse", f"look {t}: no pair differs from the baseline's"), {}
        if (d - 2 * x) / math.sqrt(d) > s.futility_z:
            return result(1.0, "not worse", f"look {t}: {d - x} newly passing vs {x} newly "
                          "failing pairs: the run is not worse"), {}
        walk.cross(r, tail)
        drops = np.arange(running.dist.size)
        running.stop(r, (d - 2 * drops) / math.sqrt(d) > s.futility_z)
        active = [i for i in active if used[i] < caps[i]
                  and not (both_passed[i] and used[i] >= s.settle)]
        if not active:
            return result(p, "settled", "no instruction left to ask (each passed "
                          f"{s.settle} pair(s) on both sides or is at its cap)"), {}


def sequential_test(
    baseline: Mapping[str, tuple[int, Sequence[bool]]],
    candidate: Mapping[str, tuple[int, Sequence[bool]]],
    settings: SequentialSettings | None = None,
) -> SequentialResult:
    """Replay the design's looks over the samples so far (module docstring): per level its
    :class:`LevelLooks`, and what to ask before the next look.

    Both map an instruction id to ``(level, per-sample pass outcomes in sample order)``; ids
    in both are paired (sorted), others ignored; an instruction of the run with no sample yet
    is asked its first.  A candidate sample the design did not ask (a run with more samples)
    is not used.  The result is a function of the outcomes alone, so the gate can replay a
    saved run's decisions.

    Raises:
        ValueError: an id on different levels, or a baseline instruction without samples.
    """
    s = settings or SequentialSettings()
    by_level: dict[int, list[str]] = {}
    for i in sorted(set(baseline) & set(candidate)):
        lb, lc = baseline[i][0], candidate[i][0]
        if lb != lc:
            raise ValueError(f"{i}: level {lb} in the baseline, {lc} in the run")
        if not baseline[i][1]:
            raise ValueError(f"{i}: the baseline has no sample to pair with")
        by_level.setdefault(lb, []).append(i)
    base = {i: tuple(baseline[i][1]) for ids in by_level.values() for i in ids}
    cand = {i: tuple(candidate[i][1]) for ids in by_level.values() for i in ids}
    levels: dict[int, LevelLooks] = {}
    asks: dict[str, int] = {}
    for lv in sorted(by_level):
        looks, more = _level(by_level[lv], base, cand, lv, s)
        levels[lv] = looks
        asks.update(more)
    return SequentialResult(levels, asks)


def sequential_paired(
    baseline: Mapping[str, tuple[int, Sequence[bool]]],
    candidate: Mapping[str, tuple[int, Sequence[bool]]],
    settings: SequentialSettings, *, confidence: float = CONFIDENCE,
) -> tuple[PairedResult, SequentialResult]:
    """The gate's view of an adaptive run: per level the mean change of pass rate on paired
    samples, its paired t interval over the instructions and the stage-wise p-values of "no
    drop" and "no rise" (:func:`sequential_test`'s replay), and ``S_total``'s weighted sum of
    them (shown, never gated on); with the looks themselves.

    Raises:
        ValueError: as :func:`sequential_test`, or ``confidence`` outside (0, 1).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    looks = sequential_test(baseline, candidate, settings)
    out: dict[int, PairedDiff] = {}
    for lv, look in looks.levels.items():
        d = np.array(look.diffs, dtype=float)
        n = int(d.size)
        if not n:
            continue
        sd = float(np.std(d, ddof=1)) if n >= 2 else 0.0
        se, df = sd / math.sqrt(n), float(max(n - 1, 0))
        lo, hi = t_interval(look.change, se, df, confidence)
        out[lv] = PairedDiff(n, look.change, lo, hi, float(np.mean(d >= 0)),
                             float(np.mean(d <= 0)), p_drop=look.p_value, clusters=n, se=se,
                             df=df, measure="pass rate", p_rise=look.p_rise)
    v = np.array([LEVEL_WEIGHTS_V[lv] for lv in sorted(out)], dtype=float)
    parts = [(out[lv].mean_diff, out[lv].se, out[lv].df) for lv in sorted(out)]
    n_all = sum(p.n for p in out.values())

    def total(scale: float) -> PairedDiff:
        t = weighted_sum(parts, v, confidence, scale)
        return PairedDiff(n_all, t.estimate, t.low, t.high, float(t.estimate >= 0),
                          float(t.estimate <= 0), p_drop=t.p_drop, clusters=n_all, se=t.se,
                          df=t.df, measure="pass rate", p_rise=t.p_rise)

    ids_b, ids_c = set(baseline), set(candidate)
    result = PairedResult(
        levels=out, total=total(1.0),
        total_renormalized=total(float(v.sum())) if out else None,
        only_baseline=tuple(sorted(ids_b - ids_c)), only_candidate=tuple(sorted(ids_c - ids_b)),
        b=0, seed=0, confidence=confidence)
    return result, looks
