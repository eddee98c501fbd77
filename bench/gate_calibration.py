"""Gate calibration: the regression gate's false alarms, power and collapse detection, by
simulation from real scores, without a model call.

1. **Real scores, once.**  Every instruction of a suite gets two answers scored with the
   project's own evaluation path (``run.evaluate.check`` + ``score``, the default pools): a
   correct one (the oracle's: a reference that passes, a refusal for an infeasible
   instruction) and a wrong one (the first reference of another instruction of the same level,
   half the level away, that fails this instruction).  So each instruction has a realistic
   level score for a passing and for a failing sample.
2. **Simulated runs.**  Each instruction passes a sample with probability ``expit(μ_L + u_T +
   v_i)``: ``u_T ~ N(0, 0.75²)`` per template, ``v_i ~ N(0, 1)`` per instruction, both drawn
   afresh for each pair (a new "model" every time), ``μ_L`` set so that the level's mean pass
   rate is that of a mid-tier model (:data:`PASS_RATES`).  A run draws ``k`` samples per
   instruction; an instruction's level score is the mean of its samples' scores.  *Nothing
   changed*: the two runs are independent draws of the same model (the gate's null: the
   fixed suite, each answer a fresh draw).  *Lowered quality*: the candidate's logits at one
   level shift so that the level's expected score falls by a given drop.  *Collapse*: every
   answer of a level is wrong; *half*: a random half of the level's instructions are.
3. **The gate, as the driver calls it.**  Per level the fixed-suite sign-flip test
   (:func:`~pytest_graphinstruct.score.regression.paired.flip_p_values` with the draws, seed and
   stream
   :func:`~pytest_graphinstruct.score.regression.paired.suite_paired` uses), vectorized over pairs;
   Holm
   over the run's six levels at ``alpha = 0.05`` and ``delta = 0.02`` (``--gi-max-regression``).
   A sample of pairs is also decided through the API (``suite_paired`` + ``regressions``) and
   must agree exactly.  The template-clustered test (``--override-ini=gi_gate_test=templates``,
   ``paired_bootstrap``) is run through the API on the collapse rows, to show its blind spot.
4. **MDE80**: the smallest drop seen with 80 % power, interpolated on a grid of drops; beside
   it the *ceiling* (a z-test that knows each level's true variance of the mean change, Holm
   and delta as the gate: no test that holds its false alarms sees more) and the plan's
   prediction (:func:`~pytest_graphinstruct.score.regression.power.detectable_drop`,
   ``test="suite"``, from one simulated baseline run, the median over 10 such runs).

Prints the tables docs/PLUGIN.md quotes ("How much the gate can see"), and the wall time.  False
alarms are "any level of the run flagged" with nothing changed, with a 95 % Wilson interval.
The official suite is read from ``../shared/official-suite/instructions`` (skipped with a
message when absent).

Usage::

    python bench/gate_calibration.py [--pairs 1000] [--power-pairs 200] [--quick]
                                     [--seed 0] [--scores FILE]
"""

from __future__ import annotations

import argparse
import math
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import expit
from tabulate import tabulate

ROOT = Path(__file__).resolve().parents[1]
OUR_SUITE = ROOT / "instructions"
OFFICIAL_SUITE = ROOT.parent / "shared/official-suite/instructions"

PASS_RATES = {0: 0.85, 1: 0.85, 2: 0.50, 3: 0.60, 4: 0.70, 5: 0.50}
"""Mean pass probability per level of the simulated mid-tier model."""
TEMPLATE_SD = 0.75  #: logit sd of a template's (cluster's) fixed effect
INSTRUCTION_SD = 1.0  #: logit sd of an instruction's fixed effect
DELTA = 0.02  #: --gi-max-regression
ALPHA = 0.05  #: the family-wise alpha of the gate
GRID = (0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.10, 0.12, 0.15, 0.20)
SAMPLES = (1, 5)
CHUNK = 250  #: pairs simulated at once


# -- 1. real scores ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SuiteScores:
    """Per instruction: id, level, cluster, level score of a passing and a failing sample."""

    name: str
    ids: tuple[str, ...]
    levels: np.ndarray
    clusters: tuple[str, ...]
    s_pass: np.ndarray
    s_fail: np.ndarray
    oracle_failed: int  # instructions whose correct answer did not pass (suite defects)

    @property
    def cluster_codes(self) -> np.ndarray:
        names = {c: j for j, c in enumerate(dict.fromkeys(self.clusters))}
        return np.array([names[c] for c in self.clusters])


def score_suite(name: str, root: str) -> SuiteScores:
    """Score one correct and one wrong answer per instruction (see the module docstring)."""
    from pytest_graphinstruct.answers import Answer
    from pytest_graphinstruct.models.base import Request
    from pytest_graphinstruct.pools import ReferencePools
    from pytest_graphinstruct.pools.cache import default_cache_dir
    from pytest_graphinstruct.run.config import Cell
    from pytest_graphinstruct.run.evaluate import check, score
    from pytest_graphinstruct.run.oracle import OracleBackend
    from pytest_graphinstruct.suite.clusters import cluster_of
    from pytest_graphinstruct.suite.loader import load_suite
    from pytest_graphinstruct.verify.verifier import Verifier

    suite = load_suite(root)
    verifier = Verifier()
    oracle = OracleBackend(suite, verifier)
    pools_dir = ROOT / "references" / "pools"
    pools = (ReferencePools.load(pools_dir, cache_dir=default_cache_dir())
             if pools_dir.is_dir() else None)
    cell = Cell("calibration", "zero-shot")
    checked = []
    for level in sorted({i.level for i in suite}):
        insts = suite.level(level)
        n = len(insts)
        for j, inst in enumerate(insts):
            good = oracle.complete(Request(model="oracle", messages=(), instruction_id=inst.id))
            bad = ""
            for step in range(n - 1):
                other = insts[(j + n // 2 + step) % n]
                bad = next((r for r in other.references
                            if other.id != inst.id and not verifier.verify(inst, r).passed), "")
                if bad:
                    break
            checked.append(check(inst, [good], cell=cell, verifier=verifier))
            checked.append(check(inst, [Answer(text=bad, calls=1)], cell=cell,
                                 verifier=verifier))
    results = score(checked, pools)
    good_r, bad_r = results[0::2], results[1::2]
    return SuiteScores(
        name=name, ids=tuple(r.instruction_id for r in good_r),
        levels=np.array([r.level for r in good_r]),
        clusters=tuple(cluster_of(suite[r.instruction_id]) for r in good_r),
        s_pass=np.array([r.level_score or 0.0 for r in good_r]),
        s_fail=np.array([r.level_score or 0.0 for r in bad_r]),
        oracle_failed=sum(1 for r in good_r if not r.passed))


# -- 2. simulated runs ------------------------------------------------------------------------

def _bisect(f: Callable[[np.ndarray], np.ndarray], lo: float, hi: float, size: int,
            iters: int = 50) -> np.ndarray:
    """Per row, the root of ``f`` (decreasing in x, one residual per row) between lo and hi."""
    a, b = np.full(size, lo), np.full(size, hi)
    for _ in range(iters):
        mid = (a + b) / 2
        above = f(mid) > 0
        a, b = np.where(above, mid, a), np.where(above, b, mid)
    return (a + b) / 2


@dataclass(frozen=True)
class Drop:
    """The candidate's quality lowered: ``level`` by ``size`` (its expected score), over the
    whole level or only its largest template (``whole=False``)."""

    level: int
    size: float
    whole: bool = True


@dataclass(frozen=True)
class Runs:
    """``pairs`` simulated (baseline, candidate) runs: per-instruction level scores ``(P, n)``,
    the baseline's passing samples, which pairs could drop as asked, and the variance of each
    level's mean difference given the pair's model and shared noise ``(P, levels)``."""

    base: np.ndarray
    cand: np.ndarray
    passes: np.ndarray
    ok: np.ndarray
    true_var: np.ndarray


def _lower(data: SuiteScores, eta: np.ndarray, cand: np.ndarray, drop: Drop) -> np.ndarray:
    """Shift ``cand``'s logits so that the level's expected score falls by ``drop.size``;
    returns which pairs could."""
    m = data.levels == drop.level
    moved = m.copy()
    if not drop.whole:
        codes = data.cluster_codes
        moved = m & (codes == np.bincount(codes[m]).argmax())
    sp, sf, e = data.s_pass[moved], data.s_fail[moved], eta[:, moved]
    start = (expit(e) * (sp - sf) + sf).sum(1)
    goal = start - drop.size * int(m.sum())
    ok = goal > sf.sum() + 1e-9
    shift = _bisect(lambda x: (expit(e - x[:, None]) * (sp - sf) + sf).sum(1) - goal,
                    0.0, 40.0, eta.shape[0])
    cand[:, moved] -= shift[:, None]
    return np.asarray(ok)


def _logits(data: SuiteScores, pairs: int, rng: np.random.Generator,
            drops: Sequence[Drop] = ()) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair and instruction the baseline's and the candidate's pass logits (a new model
    per pair, the candidate lowered by ``drops``), and which pairs could drop as asked."""
    codes, levels = data.cluster_codes, data.levels
    n, t = levels.size, int(codes.max()) + 1
    eff = rng.normal(0, TEMPLATE_SD, (pairs, t))[:, codes] + rng.normal(0, INSTRUCTION_SD,
                                                                       (pairs, n))
    eta = np.empty((pairs, n))
    for lv in np.unique(levels):
        m = levels == lv
        e = eff[:, m]
        mu = _bisect(lambda x, e=e, lv=lv: PASS_RATES[int(lv)] - expit(x[:, None] + e).mean(1),
                     -20.0, 20.0, pairs)
        eta[:, m] = mu[:, None] + e
    cand = eta.copy()
    ok = np.ones(pairs, dtype=bool)
    for drop in drops:
        ok &= _lower(data, eta, cand, drop)
    return eta, cand, ok


def simulate(data: SuiteScores, pairs: int, k: int, shared: float, rng: np.random.Generator,
             drops: Sequence[Drop] = ()) -> Runs:
    """``pairs`` (baseline, candidate) runs of ``k`` samples per instruction (module
    docstring)."""
    codes, levels = data.cluster_codes, data.levels
    t = int(codes.max()) + 1
    eta, cand, ok = _logits(data, pairs, rng, drops)
    noise_b = rng.normal(0, shared, (pairs, t))[:, codes] if shared else 0.0
    noise_c = rng.normal(0, shared, (pairs, t))[:, codes] if shared else 0.0
    pb, pc = expit(eta + noise_b), expit(cand + noise_c)
    xb = rng.binomial(k, pb)
    xc = rng.binomial(k, pc)
    gap = data.s_pass - data.s_fail
    each = gap * gap * (pb * (1 - pb) + pc * (1 - pc)) / k
    order = sorted({int(x) for x in levels})
    true_var = np.stack([each[:, levels == lv].sum(1) / float((levels == lv).sum()) ** 2
                         for lv in order], axis=1)
    return Runs(data.s_fail + xb / k * gap, data.s_fail + xc / k * gap, xb, ok, true_var)


def wilson(x: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95 % Wilson score interval of ``x`` successes in ``n``."""
    if n == 0:
        return 0.0, 1.0
    p = x / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


# -- 3. the gate ------------------------------------------------------------------------------

def _holm(p: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """Per row (a run): which columns (levels) Holm rejects at family-wise ``alpha``."""
    m = p.shape[1]
    order = np.argsort(p, axis=1, kind="stable")
    ranked = np.take_along_axis(p, order, 1)
    keep = np.cumprod(ranked <= alpha / (m - np.arange(m)), axis=1).astype(bool)
    out = np.zeros_like(keep)
    np.put_along_axis(out, order, keep, 1)
    return out


def gate(data: SuiteScores, base: np.ndarray, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair and level: flagged by the gate, and the p-value — the fixed-suite test with
    exactly the draws, seed and streams ``suite_paired`` uses for a six-level family."""
    from pytest_graphinstruct.score.regression.bootstrap import DEFAULT_SEED
    from pytest_graphinstruct.score.regression.paired import draws_for, flip_p_values

    order = sorted({int(x) for x in data.levels})
    draws = draws_for(len(order), ALPHA)
    p = np.ones((base.shape[0], len(order)))
    means = np.zeros_like(p)
    for j, lv in enumerate(order):
        m = data.levels == lv
        d = cand[:, m] - base[:, m]
        p[:, j] = flip_p_values(d, draws=draws, seed=DEFAULT_SEED, stream=lv)
        means[:, j] = d.mean(axis=1)
    return _holm(p) & (means < -DELTA), p


def api_gate(data: SuiteScores, base: np.ndarray, cand: np.ndarray,
             test: str = "suite") -> np.ndarray:
    """Per pair and level: flagged, through the package's API (``suite_paired`` or
    ``paired_bootstrap`` with the suite's templates, then ``regressions``)."""
    from pytest_graphinstruct.score.regression.bootstrap import paired_bootstrap
    from pytest_graphinstruct.score.regression.multiple import regressions
    from pytest_graphinstruct.score.regression.paired import suite_paired

    clusters = dict(zip(data.ids, data.clusters, strict=True))
    levels = [int(x) for x in data.levels]
    order = sorted(set(levels))
    flags = np.zeros((base.shape[0], len(order)), dtype=bool)
    for row in range(base.shape[0]):
        b = dict(zip(data.ids, zip(levels, base[row].tolist(), strict=True), strict=True))
        c = dict(zip(data.ids, zip(levels, cand[row].tolist(), strict=True), strict=True))
        diffs = (suite_paired(b, c).levels if test == "suite"
                 else paired_bootstrap(b, c, clusters=clusters).levels)
        down = regressions(diffs, delta=DELTA, alpha=ALPHA)
        flags[row] = [lv in down for lv in order]
    return flags


# -- 4. the rows --------------------------------------------------------------------------------

def _wrong(data: SuiteScores, cand: np.ndarray, level: int, share: float,
           rng: np.random.Generator) -> np.ndarray:
    """``cand`` with every sample of ``share`` of the level's instructions wrong (a random
    choice per pair)."""
    out = cand.copy()
    idx = np.flatnonzero(data.levels == level)
    take = round(share * idx.size)
    for row in range(out.shape[0]):
        chosen = rng.choice(idx, size=take, replace=False)
        out[row, chosen] = data.s_fail[chosen]
    return out


@dataclass
class Tally:
    """Pairs run and pairs flagged: any level, and per level."""

    pairs: int = 0
    any_level: int = 0
    levels: np.ndarray | None = None

    def add(self, flags: np.ndarray) -> None:
        self.pairs += flags.shape[0]
        self.any_level += int(flags.any(axis=1).sum())
        per = flags.sum(axis=0)
        self.levels = per if self.levels is None else self.levels + per


def null_rate(data: SuiteScores, k: int, pairs: int, rng: np.random.Generator) -> Tally:
    tally = Tally()
    for start in range(0, pairs, CHUNK):
        runs = simulate(data, min(CHUNK, pairs - start), k, 0.0, rng)
        tally.add(gate(data, runs.base, runs.cand)[0])
    return tally


def collapse(data: SuiteScores, k: int, level: int, share: float, pairs: int,
             rng: np.random.Generator, test: str = "suite", correct: bool = False) -> Tally:
    """How often the run fails when ``share`` of ``level``'s answers are all wrong; the
    baseline is a run of the simulated model, or (``correct``) every answer right (the
    oracle's, as in the issue's probe) with the candidate right elsewhere too."""
    runs = simulate(data, pairs, k, 0.0, rng)
    if correct:
        right = np.broadcast_to(data.s_pass, runs.base.shape)
        runs = Runs(right.copy(), right.copy(), runs.passes, runs.ok, runs.true_var)
    cand = _wrong(data, runs.cand, level, share, rng)
    tally = Tally()
    tally.add(gate(data, runs.base, cand)[0] if test == "suite"
              else api_gate(data, runs.base, cand, test))
    return tally


def ceiling(data: SuiteScores, diff: np.ndarray, true_var: np.ndarray) -> np.ndarray:
    """Per pair and level: flagged by the one-sided z-test with each level's *true* variance
    of its mean change (which no test knows), Holm and delta as the gate: what no test that
    holds its false alarms can beat."""
    from scipy.stats import norm

    order = sorted({int(x) for x in data.levels})
    means = np.stack([diff[:, data.levels == lv].mean(axis=1) for lv in order], axis=1)
    p = norm.cdf(means / np.sqrt(np.maximum(true_var, 1e-30)))
    return _holm(p) & (means < -DELTA)


def power_curve(data: SuiteScores, k: int, level: int, pairs: int,
                rng: np.random.Generator) -> tuple[dict[float, float], dict[float, float]]:
    """Drop → the share of pairs whose lowered level is flagged (pairs that can drop so far),
    by the gate and by the known-variance ceiling."""
    order = sorted({int(x) for x in data.levels})
    out, top = {}, {}
    for drop in GRID:
        runs = simulate(data, pairs, k, 0.0, rng, (Drop(level, drop),))
        if runs.ok.sum() < 0.9 * pairs:
            break
        base, cand = runs.base[runs.ok], runs.cand[runs.ok]
        flags = gate(data, base, cand)[0]
        out[drop] = float(flags[:, order.index(level)].mean())
        best = ceiling(data, cand - base, runs.true_var[runs.ok])
        top[drop] = float(best[:, order.index(level)].mean())
    return out, top


def mde80(curve: dict[float, float]) -> float:
    """The drop where the curve first reaches 0.8, interpolated linearly (inf: never)."""
    prev_d, prev_p = 0.0, 0.0
    for d, p in sorted(curve.items()):
        if p >= 0.8:
            return prev_d + (d - prev_d) * (0.8 - prev_p) / max(p - prev_p, 1e-12)
        prev_d, prev_p = d, p
    return math.inf


def predicted(data: SuiteScores, k: int, rng: np.random.Generator, runs_n: int = 10
              ) -> dict[int, float]:
    """Level → the plan's MDE80 (score.regression.power.detectable_drop, test="suite") from one
    simulated
    baseline run, the median over ``runs_n`` runs."""
    from pytest_graphinstruct.score.regression.power import (
        ItemScore,
        detectable_drop,
        noise_by_level,
    )

    runs = simulate(data, runs_n, k, 0.0, rng)
    out: dict[int, list[float]] = {}
    for row in range(runs_n):
        items = [ItemScore(int(lv), c, float(s), float(x) / k)
                 for lv, c, s, x in zip(data.levels, data.clusters, runs.base[row],
                                        runs.passes[row], strict=True)]
        for lv, noise in noise_by_level(items, samples=k).items():
            out.setdefault(lv, []).append(detectable_drop(noise, delta=DELTA, alpha=ALPHA,
                                                          tests=6, test="suite"))
    return {lv: float(np.median(v)) for lv, v in out.items()}


# -- 5. --gi-samples=auto ------------------------------------------------------------------------

AUTO_CAP = 5  #: the baseline's samples per instruction, and the run's most


@dataclass
class AutoTally:
    """Adaptive runs: pairs, flags per level, calls (samples asked) in all, per level."""

    pairs: int = 0
    flags: np.ndarray | None = None
    calls: int = 0
    level_calls: np.ndarray | None = None

    def add(self, flags: np.ndarray, level_calls: np.ndarray) -> None:
        self.pairs += 1
        self.flags = flags if self.flags is None else self.flags + flags
        self.level_calls = (level_calls if self.level_calls is None
                            else self.level_calls + level_calls)
        self.calls += int(level_calls.sum())


@dataclass(frozen=True)
class AutoRun:
    """One adaptive run's verdict per level: ``flags`` by the run's rule (a pass-rate drop
    beyond ``DELTA``), ``flags_score`` by the fixed-k gate's rule (a level-score drop beyond
    it: each instruction's pass-rate change times its true gap between a passing and a failing
    sample, which a run cannot know; for comparing power), the samples asked and the
    stage-wise p-values.  Both rules judge the same looks: the drop rule comes after them."""

    flags: np.ndarray
    flags_score: np.ndarray
    calls: np.ndarray
    p: np.ndarray


def auto_run(data: SuiteScores, base: np.ndarray, cand: np.ndarray) -> AutoRun:
    """One adaptive run against a baseline of :data:`AUTO_CAP` samples: ``base`` and ``cand``
    are ``(n, AUTO_CAP)`` pass outcomes (the candidate's are revealed only as the design asks
    for them, through :func:`~pytest_graphinstruct.score.regression.sequential.sequential_test`,
    exactly
    as the run asks); Holm over the levels at ``ALPHA`` on the stage-wise p-values."""
    from pytest_graphinstruct.score.regression.sequential import SequentialSettings, sequential_test

    order = sorted({int(x) for x in data.levels})
    lv_of = [int(x) for x in data.levels]
    b_rows, c_rows = base.tolist(), cand.tolist()
    baseline = {i: (lv_of[j], b_rows[j]) for j, i in enumerate(data.ids)}
    run: dict[str, tuple[int, list[bool]]] = {i: (lv_of[j], []) for j, i in enumerate(data.ids)}
    index = {i: j for j, i in enumerate(data.ids)}
    settings = SequentialSettings(cap=AUTO_CAP, alpha=ALPHA, tests=len(order))
    while True:
        res = sequential_test(baseline, run, settings)
        if res.done:
            break
        for i, k in res.asks.items():
            run[i] = (run[i][0], c_rows[index[i]][:k])
    p = np.array([[res.levels[lv].p_value for lv in order]])
    holm = _holm(p)[0]
    change = np.array([res.levels[lv].change for lv in order])
    gap = data.s_pass - data.s_fail
    # a level's diffs are its instructions' in sorted id order (sequential_test pairs them so)
    score_change = np.array([np.mean(np.array(res.levels[lv].diffs) * np.array(
        [gap[index[i]] for i in sorted(i for i in data.ids if lv_of[index[i]] == lv)]))
        for lv in order])
    calls = np.array([sum(len(run[i][1]) for i in data.ids if lv_of[index[i]] == lv)
                      for lv in order])
    return AutoRun(holm & (change < -DELTA), holm & (score_change < -DELTA), calls, p[0])


def _outcomes(data: SuiteScores, pairs: int, rng: np.random.Generator,
              drops: Sequence[Drop] = ()) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(pairs, n, AUTO_CAP)`` pass outcomes of a baseline and a candidate of one model per
    pair (``drops`` lowering the candidate), and which pairs could drop as asked."""
    eta, cand, ok = _logits(data, pairs, rng, drops)
    shape = (*eta.shape, AUTO_CAP)
    return (rng.random(shape) < expit(eta)[..., None],
            rng.random(shape) < expit(cand)[..., None], ok)


def auto_rows(data: SuiteScores, pairs: int, power_pairs: int, rng: np.random.Generator
              ) -> tuple[list[list[str]], list[list[str]]]:
    """The adaptive mode's rows: false alarms and calls with nothing changed, collapse rows,
    and per level the MDE80 and the calls at that drop."""
    order = sorted({int(x) for x in data.levels})
    n_level = np.array([(data.levels == lv).sum() for lv in order])
    rows: list[list[str]] = []
    null = AutoTally()
    fa = 0
    small = 0  # level tests whose p-value is at most Holm's smallest threshold
    base, cand, _ = _outcomes(data, pairs, rng)
    for r in range(pairs):
        one = auto_run(data, base[r], cand[r])
        null.add(one.flags, one.calls)
        fa += int(one.flags.any())
        small += int((one.p <= ALPHA / len(order)).sum())
    lo, hi = wilson(fa, pairs)
    assert null.level_calls is not None
    per = null.level_calls / null.pairs / n_level
    rows.append(["nothing changed", f"{fa / pairs:.1%} [{lo:.1%}, {hi:.1%}]",
                 f"{null.calls / pairs / len(data.ids):.2f}",
                 " / ".join(f"{x:.1f}" for x in per)])
    slo, shi = wilson(small, pairs * len(order))
    rows.append([f"nothing changed: a level's p <= {ALPHA}/{len(order)}",
                 f"{small / pairs / len(order):.2%} [{slo:.2%}, {shi:.2%}] of level tests",
                 "", ""])
    for share, what in ((1.0, "all"), (0.5, "half")):
        for lv in order:
            t = AutoTally()
            hits = 0
            b, c, _ = _outcomes(data, max(10, power_pairs // 10), rng)
            idx = np.flatnonzero(data.levels == lv)
            for r in range(b.shape[0]):
                bb = np.ones_like(b[r])  # a correct baseline (the probe)
                cc = np.ones_like(c[r])
                chosen = rng.choice(idx, size=round(share * idx.size), replace=False)
                cc[chosen] = False
                one = auto_run(data, bb, cc)
                t.add(one.flags, one.calls)
                hits += int(one.flags.any())
            rows.append([f"correct baseline: {what} of L{lv} wrong",
                         f"fails {hits / t.pairs:.0%}", f"{t.calls / t.pairs / len(data.ids):.2f}",
                         ""])
    mde: list[list[str]] = [[], [], []]
    for j, lv in enumerate(order):
        curve: dict[float, float] = {}
        same: dict[float, float] = {}
        calls_at: dict[float, float] = {}
        for drop in GRID:
            b, c, ok = _outcomes(data, power_pairs, rng, (Drop(lv, drop),))
            if ok.sum() < 0.9 * power_pairs:
                break
            hits, hits_same, spent = 0, 0, 0
            for r in np.flatnonzero(ok):
                one = auto_run(data, b[r], c[r])
                hits += int(one.flags[j])
                hits_same += int(one.flags_score[j])
                spent += int(one.calls.sum())
            curve[drop] = hits / int(ok.sum())
            same[drop] = hits_same / int(ok.sum())
            calls_at[drop] = spent / int(ok.sum()) / len(data.ids)
            if min(curve[drop], same[drop]) >= 0.9:
                break
        m = mde80(curve)
        near = min(calls_at, key=lambda d: abs(d - m)) if calls_at else math.nan
        mde[0].append(_mde(m))
        mde[1].append(_mde(mde80(same)))
        mde[2].append(f"{calls_at.get(near, math.nan):.2f}")
    return rows, [["auto measured (the run's rule: --gi-max-regression on pass rate)", *mde[0]],
                  ["auto measured, delta on level score as fixed k (true gaps)", *mde[1]],
                  ["auto calls per instruction at the first row's drop", *mde[2]]]


def _rate(t: Tally) -> str:
    lo, hi = wilson(t.any_level, t.pairs)
    return f"{t.any_level / t.pairs:.1%} [{lo:.1%}, {hi:.1%}]"


def _mde(x: float) -> str:
    return "none ≤ 0.20" if math.isinf(x) else f"{x:.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1000, help="null pairs per configuration "
                    "(default 1000)")
    ap.add_argument("--power-pairs", type=int, default=200, help="pairs per drop and level "
                    "(default 200)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 200 null pairs, 60 per "
                    "power configuration")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scores", default=None, metavar="FILE", help="keep the scored answers "
                    "here and reuse them on the next run (delete it when the suite or the "
                    "scoring changes)")
    ap.add_argument("--auto", action="store_true", help="also the adaptive mode "
                    "(--gi-samples=auto): its false alarms, collapse rows, MDE80 and calls")
    ap.add_argument("--auto-pairs", type=int, default=500, help="null pairs of the adaptive "
                    "mode (default 500)")
    args = ap.parse_args(argv)
    if args.quick:
        args.pairs, args.power_pairs = min(args.pairs, 200), min(args.power_pairs, 60)
    if args.pairs < 1 or args.power_pairs < 1:
        ap.error("--pairs and --power-pairs must be >= 1")
    t0 = time.perf_counter()
    roots = {"ours": OUR_SUITE}
    if OFFICIAL_SUITE.is_dir():
        roots["official"] = OFFICIAL_SUITE
    else:
        print(f"official suite not found at {OFFICIAL_SUITE}: skipped")
    cache = Path(args.scores) if args.scores else None
    if cache is not None and cache.is_file():
        with cache.open("rb") as fh:
            suites = {k: v for k, v in pickle.load(fh).items() if k in roots}
        print(f"scores read from {cache}")
    else:
        suites = {name: score_suite(name, str(root)) for name, root in roots.items()}
        if cache is not None:
            with cache.open("wb") as fh:
                pickle.dump(suites, fh)
    t_scored = time.perf_counter()
    print(f"noise model: pass rate per level {PASS_RATES}; logit sd: template {TEMPLATE_SD}, "
          f"instruction {INSTRUCTION_SD}; runs independent given the model; delta {DELTA}, "
          f"family alpha {ALPHA}")
    rng = np.random.default_rng(args.seed)
    agree = checked = 0
    for name, data in suites.items():
        order = sorted({int(x) for x in data.levels})
        print(f"\n## {name} suite ({len(data.ids)} instructions; {data.oracle_failed} correct "
              "answers that do not pass)")
        rows = []
        for k in SAMPLES:
            null = null_rate(data, k, args.pairs, rng)
            rows.append([f"nothing changed, k={k}", _rate(null), null.pairs])
        print(tabulate(rows, headers=["family-wise false alarms", "rate [95% CI]", "pairs"],
                       disable_numparse=True))
        rows = []
        for correct, who in ((True, "correct baseline"), (False, "mid-tier baseline")):
            for k in SAMPLES:
                for share, what in ((1.0, "all"), (0.5, "half")):
                    fails = []
                    for lv in order:
                        t = collapse(data, k, lv, share, max(20, args.power_pairs // 4), rng,
                                     correct=correct)
                        fails.append(f"{t.any_level / t.pairs:.0%}")
                    rows.append([f"{who}: {what} of a level wrong, k={k}", *fails])
        for k in SAMPLES:
            fails = []
            for lv in order:
                t = collapse(data, k, lv, 1.0, 20, rng, test="templates")
                fails.append(f"{t.any_level / t.pairs:.0%}")
            rows.append([f"mid-tier baseline: all of a level wrong, k={k}, "
                         "--override-ini=gi_gate_test=templates", *fails])
        print()
        print(tabulate(rows, headers=["the run fails when", *[f"L{lv}" for lv in order]],
                       disable_numparse=True))
        rows = []
        for k in SAMPLES:
            curves = [power_curve(data, k, lv, args.power_pairs, rng) for lv in order]
            plan = predicted(data, k, rng)
            rows.append([f"k={k} measured", *[_mde(mde80(c[0])) for c in curves]])
            rows.append([f"k={k} known-variance ceiling", *[_mde(mde80(c[1])) for c in curves]])
            rows.append([f"k={k} plan predicts", *[_mde(plan.get(lv, math.inf)) for lv in order]])
        print()
        print(tabulate(rows, headers=["MDE80 (drop seen 80% of the time)",
                                      *[f"L{lv}" for lv in order]], disable_numparse=True))
        if args.auto:
            auto, auto_mde = auto_rows(data, args.auto_pairs, args.power_pairs, rng)
            print(f"\n--gi-samples=auto against a baseline of {AUTO_CAP} samples (fixed k=5: "
                  "5.00 calls per instruction)")
            print(tabulate(auto, headers=["auto: the run", "family-wise false alarms / fails",
                                          "calls per instruction",
                                          "per level (" + ", ".join(f"L{lv}" for lv in order)
                                          + ")"], disable_numparse=True))
            print(tabulate([*rows[3:4], *auto_mde], headers=["MDE80",
                                                            *[f"L{lv}" for lv in order]],
                           disable_numparse=True))
        runs = simulate(data, 20, 1, 0.0, rng, (Drop(order[len(order) // 2], 0.05),))
        mine = gate(data, runs.base, runs.cand)[0]
        theirs = api_gate(data, runs.base, runs.cand)
        agree += int((mine == theirs).all(axis=1).sum())
        checked += mine.shape[0]
    print(f"\nthe vectorized gate and the API (suite_paired + regressions) flag the same levels "
          f"in {agree} of {checked} pairs")
    print(f"wall time {time.perf_counter() - t0:.0f} s (scoring {t_scored - t0:.0f} s)")
    return 0 if agree == checked else 1


if __name__ == "__main__":
    sys.exit(main())
