"""Gate calibration: the regression gate's false alarms (over runs, and per committed
baseline), power and collapse detection, by simulation from real scores, without a model call.

1. **Real scores, once.**  Every instruction of a suite is scored by the project's own
   evaluation path (``run.evaluate.check`` + ``score``, the default pools) with ``j`` of ``k``
   samples correct, for every ``j`` and ``k`` of :data:`SAMPLES`, as ``score`` would score a
   run: correct samples are the instruction's passing references in turn (the oracle's refusal
   for an infeasible one), wrong ones the references of other instructions of the same level,
   from half the level away, that fail it.  A level score is a nonlinear function of the
   passing samples (D4 averages the *valid* samples: our L1 scores 0.20, 0.85, …, 0.99 with 0,
   1, …, 5 of 5 correct), so the tables, not a pass/fail gap, give every simulated score.
2. **Simulated runs.**  Each instruction passes a sample with probability ``expit(μ_L + u_T +
   v_i)``: ``u_T ~ N(0, 0.75²)`` per template, ``v_i ~ N(0, 1)`` per instruction, both drawn
   afresh for each pair (a new "model" every time), ``μ_L`` set so that the level's mean pass
   rate is that of a mid-tier model (:data:`PASS_RATES`).  A run draws ``k`` samples per
   instruction; its level score is the table's at the number that passed.  *Nothing changed*:
   the two runs are independent draws of the same model.  *Lowered quality*: the candidate's
   logits at one level shift so that the level's *expected* score (over the run's ``k``
   samples, through the tables) falls by a given drop.  *Collapse*: every answer of a level is
   wrong; *half*: a random half of the level's instructions are.  *Per baseline*: one model, one
   committed baseline run, then many unchanged runs against it: the share of them that fail,
   for each baseline (the README's CI line commits one baseline and lives with it).
3. **The gate, as the driver calls it.**  Per level the fixed-suite test of
   :func:`~pytest_graphinstruct.score.regression.paired.suite_paired`: the level-score
   sign-flip (its draws, seed and streams) and the exact pass-count test
   (:mod:`~pytest_graphinstruct.score.regression.counts`), combined as
   ``min(1, 2·min(p_score, p_count))``; runs of other sample counts (the README's design: a
   baseline of :data:`README_BASE` samples, runs of one) on pass counts alone with the drop
   rule on pass rate.  Holm over the run's six levels at ``alpha = 0.05``, ``delta = 0.02``
   (``--gi-max-regression``).  Beside it, *today's* test (before issue 48: the level-score
   sign-flip alone) for comparison.  A sample of pairs is also decided through the API
   (``suite_paired`` with both runs' pass counts, then ``regressions``) and must agree
   exactly.  The template-clustered test (``gi_gate_test=templates``) runs through the API on
   the collapse rows, to show its blind spot.
4. **MDE80**: the smallest drop seen with 80 % power, interpolated on a grid of drops, and the
   plan's prediction (:func:`~pytest_graphinstruct.score.regression.power.detectable_drop`,
   ``test="suite"``: the combined test's model, :mod:`~pytest_graphinstruct.score.regression.\
suite_power`) from one simulated baseline run, the median over 10 such runs, with its ratio to
   the measured figure.

Prints the tables docs/PLUGIN.md quotes ("How much the gate can see"), and the wall time.  False
alarms are "any level of the run flagged" with nothing changed, with a 95 % Wilson interval.
The official suite is read from ``../shared/official-suite/instructions`` (skipped with a
message when absent).

Usage::

    python bench/gate_calibration.py [--pairs 1000] [--power-pairs 200] [--baselines 200]
                                     [--runs 100] [--quick] [--seed 0] [--scores FILE]
                                     [--auto] [--auto-pairs 500] [--suite ours|official]
"""

from __future__ import annotations

import argparse
import math
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import expit
from scipy.stats import binom, hypergeom
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
README_BASE = 5  #: gi_baseline_samples: the samples of the baseline the README's line writes
CHUNK = 250  #: pairs simulated at once


# -- 1. real scores ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SuiteScores:
    """Per instruction: id, level, cluster, and per sample count ``k`` of :data:`SAMPLES` the
    level score of ``j`` of ``k`` samples correct (``tables[k][i, j]``)."""

    name: str
    ids: tuple[str, ...]
    levels: np.ndarray
    clusters: tuple[str, ...]
    tables: dict[int, np.ndarray]
    oracle_failed: int  # instructions whose correct answer did not pass (suite defects)

    @property
    def cluster_codes(self) -> np.ndarray:
        names = {c: j for j, c in enumerate(dict.fromkeys(self.clusters))}
        return np.array([names[c] for c in self.clusters])

    @property
    def s_pass(self) -> np.ndarray:
        """One passing sample's level score."""
        return self.tables[1][:, 1]

    @property
    def s_fail(self) -> np.ndarray:
        """One failing sample's level score."""
        return self.tables[1][:, 0]

    def scores(self, k: int, passed: np.ndarray) -> np.ndarray:
        """The level scores of runs whose instructions passed ``passed`` (…, n) of ``k``."""
        table = self.tables[k]
        return table[np.arange(table.shape[0]), passed]


def score_suite(name: str, root: str) -> SuiteScores:
    """Score every instruction with ``j`` of ``k`` samples correct (module docstring)."""
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
    most = max(SAMPLES)
    checked, ids, failed = [], [], 0
    for level in sorted({i.level for i in suite}):
        insts = suite.level(level)
        n = len(insts)
        for j, inst in enumerate(insts):
            goods = [r for r in inst.references if verifier.verify(inst, r).passed]
            if not goods:
                oracle_text = oracle.complete(Request(model="oracle", messages=(),
                                                      instruction_id=inst.id)).text or ""
                goods = [oracle_text]
                failed += int(not verifier.verify(inst, oracle_text).passed)
            bads: list[str] = []
            for step in range(n - 1):
                other = insts[(j + n // 2 + step) % n]
                bads += [r for r in other.references if other.id != inst.id and r not in bads
                         and not verifier.verify(inst, r).passed]
                if len(bads) >= most:
                    break
            bads = bads or [""]
            ids.append(inst.id)
            for k in SAMPLES:
                for c in range(k + 1):
                    texts = ([goods[i % len(goods)] for i in range(c)]
                             + [bads[i % len(bads)] for i in range(k - c)])
                    checked.append(check(inst, [Answer(text=t, calls=1) for t in texts],
                                         cell=cell, verifier=verifier))
    results = score(checked, pools)
    per = sum(k + 1 for k in SAMPLES)
    rows = np.array([r.level_score or 0.0 for r in results]).reshape(len(ids), per)
    tables, at = {}, 0
    for k in SAMPLES:
        tables[k] = rows[:, at:at + k + 1].copy()
        at += k + 1
    return SuiteScores(
        name=name, ids=tuple(ids), levels=np.array([suite[i].level for i in ids]),
        clusters=tuple(cluster_of(suite[i]) for i in ids), tables=tables,
        oracle_failed=failed)


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
    pass_rate: bool = False  #: sized on the level's expected pass rate, not its score


def expected_scores(table: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """Each instruction's expected level score over ``k`` samples (``table``: (n, k + 1)) at
    pass logits ``eta`` (…, n)."""
    k = table.shape[1] - 1
    w = binom.pmf(np.arange(k + 1), k, expit(eta)[..., None])
    return np.asarray(np.einsum("...nj,nj->...n", w, table))


def _lower(data: SuiteScores, eta: np.ndarray, cand: np.ndarray, drop: Drop,
           k: int) -> np.ndarray:
    """Shift ``cand``'s logits so that the level's expected score over ``k`` samples falls by
    ``drop.size``; returns which pairs could."""
    m = data.levels == drop.level
    moved = m.copy()
    if not drop.whole:
        codes = data.cluster_codes
        moved = m & (codes == np.bincount(codes[m]).argmax())
    table, e = data.tables[k][moved], eta[:, moved]

    def level(x: np.ndarray) -> np.ndarray:
        return (expit(x).sum(-1) if drop.pass_rate else expected_scores(table, x).sum(-1))

    start = level(e)
    goal = start - drop.size * int(m.sum())
    ok = goal > (0.0 if drop.pass_rate else table[:, 0].sum()) + 1e-9
    shift = _bisect(lambda x: level(e - x[:, None]) - goal, 0.0, 40.0, eta.shape[0], iters=40)
    cand[:, moved] -= shift[:, None]
    return np.asarray(ok)


def _logits(data: SuiteScores, pairs: int, rng: np.random.Generator,
            drops: Sequence[Drop] = (), k: int = 1
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair and instruction the baseline's and the candidate's pass logits (a new model
    per pair, the candidate lowered by ``drops`` as runs of ``k`` samples score), and which
    pairs could drop as asked."""
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
        ok &= _lower(data, eta, cand, drop, k)
    return eta, cand, ok


@dataclass(frozen=True)
class Runs:
    """(baseline, candidate) runs of ``kb`` and ``kc`` samples per instruction: each side's
    passing samples ``(P, n)``, its level scores where the two are comparable (``kb == kc``),
    and which pairs could drop as asked."""

    kb: int
    kc: int
    xb: np.ndarray
    xc: np.ndarray
    ok: np.ndarray
    sb: np.ndarray | None = field(default=None)
    sc: np.ndarray | None = field(default=None)

    def where(self, rows: np.ndarray) -> Runs:
        return Runs(self.kb, self.kc, self.xb[rows], self.xc[rows], self.ok[rows],
                    None if self.sb is None else self.sb[rows],
                    None if self.sc is None else self.sc[rows])


def draw_runs(data: SuiteScores, eta_b: np.ndarray, eta_c: np.ndarray, ok: np.ndarray,
              kb: int, kc: int, rng: np.random.Generator) -> Runs:
    """Runs of ``kb`` and ``kc`` samples drawn at the given logits (scores through the
    tables)."""
    xb, xc = rng.binomial(kb, expit(eta_b)), rng.binomial(kc, expit(eta_c))
    if kb != kc:
        return Runs(kb, kc, xb, xc, ok)
    return Runs(kb, kc, xb, xc, ok, data.scores(kb, xb), data.scores(kc, xc))


def simulate(data: SuiteScores, pairs: int, kb: int, kc: int, rng: np.random.Generator,
             drops: Sequence[Drop] = ()) -> Runs:
    """``pairs`` (baseline, candidate) runs (module docstring), the drops sized on the
    candidate's sample count."""
    eta, cand, ok = _logits(data, pairs, rng, drops, kc)
    return draw_runs(data, eta, cand, ok, kb, kc, rng)


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


@lru_cache(maxsize=64)
def _subsets(n: int, draws: int, seed: int, stream: int) -> np.ndarray:
    """The sign-flip test's random subsets for ``n`` differences, exactly those
    ``flip_p_values`` makes (kept: every call of a level draws the same ones)."""
    from pytest_graphinstruct.score.regression.paired import _subset_blocks

    return np.concatenate(list(_subset_blocks(n, draws, seed, stream)))


def flip_p(d: np.ndarray, draws: int, seed: int, stream: int) -> np.ndarray:
    """``flip_p_values(d, draws=draws, seed=seed, stream=stream)``, row by row, its subsets
    kept (the same arithmetic: equal results)."""
    g = d + 1e-9 * np.abs(d)
    counts = np.sum(g @ _subsets(d.shape[1], draws, seed, stream).T >= 0.0, axis=1)
    return np.asarray((1.0 + counts) / (1.0 + draws))


def count_p(xb: np.ndarray, xc: np.ndarray, kb: int, kc: int) -> np.ndarray:
    """``counts.count_p_value`` of every row (a run: (P, n) passing samples of ``kb`` and
    ``kc``), vectorized: the exact law of the candidate's passing samples given each
    instruction's pooled ones, built instruction by instruction."""
    rows, n = xb.shape
    total = kb + kc
    good = xb + xc
    law = np.zeros((rows, n * kc + 1))
    law[:, 0] = 1.0
    js = np.arange(kc + 1)
    top = 0
    for i in range(n):
        h = hypergeom.pmf(js[None, :], total, good[:, i:i + 1], kc)
        nxt = np.zeros_like(law)
        for j in range(kc + 1):
            nxt[:, j:top + 1 + j] += law[:, :top + 1] * h[:, j:j + 1]
        law, top = nxt, min(n * kc, top + kc)
    tail = np.cumsum(law, axis=1)[np.arange(rows), xc.sum(axis=1)]
    return np.minimum(1.0, tail * (1.0 + 1e-9))


TESTS = ("combined", "score")
"""The gate's test (issue 48), and today's (before it: the level-score sign-flip alone)."""


def gate(data: SuiteScores, runs: Runs, test: str = "combined"
         ) -> tuple[np.ndarray, np.ndarray]:
    """Per pair and level: flagged by the gate, and the p-value — the fixed-suite test with
    exactly the draws, seed and streams ``suite_paired`` uses for a six-level family (runs of
    other sample counts: the pass-count test alone, the drop rule on pass rate)."""
    from pytest_graphinstruct.score.regression.bootstrap import DEFAULT_SEED
    from pytest_graphinstruct.score.regression.paired import draws_for

    order = sorted({int(x) for x in data.levels})
    draws = draws_for(len(order), ALPHA)
    p = np.ones((runs.xb.shape[0], len(order)))
    means = np.zeros_like(p)
    for j, lv in enumerate(order):
        m = data.levels == lv
        if runs.sb is None or runs.sc is None:  # other sample counts: pass counts alone
            p[:, j] = count_p(runs.xb[:, m], runs.xc[:, m], runs.kb, runs.kc)
            means[:, j] = (runs.xc[:, m] / runs.kc - runs.xb[:, m] / runs.kb).mean(axis=1)
            continue
        d = runs.sc[:, m] - runs.sb[:, m]
        p_score = flip_p(d, draws, DEFAULT_SEED, lv)
        # one sample each: the score test alone (suite_paired: the count test adds nothing)
        single = runs.kb == runs.kc == 1
        p[:, j] = p_score if test == "score" or single else np.minimum(1.0, 2.0 * np.minimum(
            p_score, count_p(runs.xb[:, m], runs.xc[:, m], runs.kb, runs.kc)))
        means[:, j] = d.mean(axis=1)
    return _holm(p) & (means < -DELTA), p


def api_gate(data: SuiteScores, runs: Runs, test: str = "suite") -> np.ndarray:
    """Per pair and level: flagged, through the package's API (``suite_paired`` with both
    runs' pass counts, or ``paired_bootstrap`` with the suite's templates, then
    ``regressions``)."""
    from pytest_graphinstruct.score.regression.bootstrap import paired_bootstrap
    from pytest_graphinstruct.score.regression.counts import PassCount
    from pytest_graphinstruct.score.regression.multiple import regressions
    from pytest_graphinstruct.score.regression.paired import suite_paired

    clusters = dict(zip(data.ids, data.clusters, strict=True))
    levels = [int(x) for x in data.levels]
    order = sorted(set(levels))
    flags = np.zeros((runs.xb.shape[0], len(order)), dtype=bool)
    for row in range(runs.xb.shape[0]):
        sb = runs.sb[row] if runs.sb is not None else np.zeros(len(levels))
        sc = runs.sc[row] if runs.sc is not None else np.zeros(len(levels))
        b = dict(zip(data.ids, zip(levels, sb.tolist(), strict=True), strict=True))
        c = dict(zip(data.ids, zip(levels, sc.tolist(), strict=True), strict=True))
        pb = {i: PassCount(int(x), runs.kb) for i, x in zip(data.ids, runs.xb[row],
                                                           strict=True)}
        pc = {i: PassCount(int(x), runs.kc) for i, x in zip(data.ids, runs.xc[row],
                                                           strict=True)}
        diffs = (suite_paired(b, c, baseline_passes=pb, candidate_passes=pc,
                              scores_comparable=runs.sb is not None).levels
                 if test == "suite" else paired_bootstrap(b, c, clusters=clusters).levels)
        down = regressions(diffs, delta=DELTA, alpha=ALPHA)
        flags[row] = [lv in down for lv in order]
    return flags


# -- 4. the rows --------------------------------------------------------------------------------

def _wrong(data: SuiteScores, runs: Runs, level: int, share: float,
           rng: np.random.Generator) -> Runs:
    """``runs`` with every candidate sample of ``share`` of the level's instructions wrong (a
    random choice per pair)."""
    xc = runs.xc.copy()
    idx = np.flatnonzero(data.levels == level)
    take = round(share * idx.size)
    for row in range(xc.shape[0]):
        xc[row, rng.choice(idx, size=take, replace=False)] = 0
    sc = None if runs.sc is None else data.scores(runs.kc, xc)
    return Runs(runs.kb, runs.kc, runs.xb, xc, runs.ok, runs.sb, sc)


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


def null_rate(data: SuiteScores, kb: int, kc: int, pairs: int, rng: np.random.Generator,
              test: str = "combined") -> Tally:
    tally = Tally()
    for start in range(0, pairs, CHUNK):
        runs = simulate(data, min(CHUNK, pairs - start), kb, kc, rng)
        tally.add(gate(data, runs, test)[0])
    return tally


def per_baseline(data: SuiteScores, kb: int, kc: int, baselines: int, runs_each: int,
                 rng: np.random.Generator, test: str = "combined") -> np.ndarray:
    """For each of ``baselines`` committed baselines (a model, then one baseline run of it):
    the share of ``runs_each`` unchanged runs of that model against it that fail."""
    rates = np.empty(baselines)
    for b in range(baselines):
        eta, _, _ = _logits(data, 1, rng)
        xb = np.repeat(rng.binomial(kb, expit(eta)), runs_each, axis=0)
        xc = rng.binomial(kc, expit(np.repeat(eta, runs_each, axis=0)))
        ok = np.ones(runs_each, dtype=bool)
        runs = (Runs(kb, kc, xb, xc, ok) if kb != kc else
                Runs(kb, kc, xb, xc, ok, data.scores(kb, xb), data.scores(kc, xc)))
        rates[b] = gate(data, runs, test)[0].any(axis=1).mean()
    return rates


def collapse(data: SuiteScores, k: int, level: int, share: float, pairs: int,
             rng: np.random.Generator, test: str = "suite", correct: bool = False) -> Tally:
    """How often the run fails when ``share`` of ``level``'s answers are all wrong; the
    baseline is a run of the simulated model, or (``correct``) every answer right (the
    oracle's, as in the issue's probe) with the candidate right elsewhere too."""
    runs = simulate(data, pairs, k, k, rng)
    if correct:
        right = np.full(runs.xb.shape, k)
        runs = Runs(k, k, right, right.copy(), runs.ok, data.scores(k, right),
                    data.scores(k, right))
    runs = _wrong(data, runs, level, share, rng)
    tally = Tally()
    tally.add(gate(data, runs)[0] if test == "suite" else api_gate(data, runs, test))
    return tally


def power_curve(data: SuiteScores, kb: int, kc: int, level: int, pairs: int,
                rng: np.random.Generator, tests: Sequence[str] = TESTS,
                pass_rate: bool = False) -> dict[str, dict[float, float]]:
    """Test → drop → the share of pairs whose lowered level is flagged (pairs that can drop so
    far); each drop's runs are judged by every test.  ``pass_rate``: drops of the level's
    expected pass rate, not its score."""
    order = sorted({int(x) for x in data.levels})
    out: dict[str, dict[float, float]] = {t: {} for t in tests}
    for drop in GRID:
        runs = simulate(data, pairs, kb, kc, rng, (Drop(level, drop, pass_rate=pass_rate),))
        if runs.ok.sum() < 0.9 * pairs:
            break
        kept = runs.where(runs.ok)
        for t in tests:
            out[t][drop] = float(gate(data, kept, t)[0][:, order.index(level)].mean())
        if min(c.get(drop, 0.0) for c in out.values()) >= 0.95:
            break
    return out


def mde80(curve: dict[float, float]) -> float:
    """The drop where the curve first reaches 0.8, interpolated linearly (inf: never)."""
    prev_d, prev_p = 0.0, 0.0
    for d, p in sorted(curve.items()):
        if p >= 0.8:
            return prev_d + (d - prev_d) * (0.8 - prev_p) / max(p - prev_p, 1e-12)
        prev_d, prev_p = d, p
    return math.inf


def _median_figures(data: SuiteScores, k: int, rng: np.random.Generator, runs_n: int,
                    figures: Callable[[list[Any]], dict[int, float]]) -> dict[int, float]:
    """Level → the median over ``runs_n`` simulated baseline runs of ``k`` samples of what
    ``figures`` predicts from one run's items (its scores and passing samples)."""
    from pytest_graphinstruct.score.regression.power import ItemScore

    runs = simulate(data, runs_n, k, k, rng)
    assert runs.sb is not None
    out: dict[int, list[float]] = {}
    for row in range(runs_n):
        items = [ItemScore(int(lv), c, float(s), float(x) / k)
                 for lv, c, s, x in zip(data.levels, data.clusters, runs.sb[row],
                                        runs.xb[row], strict=True)]
        for lv, d in figures(items).items():
            out.setdefault(lv, []).append(d)
    return {lv: float(np.median(v)) for lv, v in out.items()}


def predicted(data: SuiteScores, k: int, rng: np.random.Generator, runs_n: int = 10
              ) -> dict[int, float]:
    """Level → the plan's MDE80 (score.regression.power.detectable_drop, test="suite") from one
    simulated baseline run of ``k`` samples, the median over ``runs_n`` runs."""
    from pytest_graphinstruct.score.regression.power import detectable_drop, noise_by_level

    return _median_figures(data, k, rng, runs_n, lambda items: {
        lv: detectable_drop(noise, delta=DELTA, alpha=ALPHA, tests=6, test="suite")
        for lv, noise in noise_by_level(items, samples=k).items()})


def predicted_across(data: SuiteScores, kb: int, kc: int, rng: np.random.Generator,
                     runs_n: int = 10) -> dict[int, float]:
    """Level → the compared line's figure for runs of ``kc`` against a baseline of ``kb``
    (:func:`~pytest_graphinstruct.score.regression.power.detectable_pass_drops`: a pass-rate
    drop) from one simulated baseline run, the median over ``runs_n`` runs."""
    from pytest_graphinstruct.score.regression.power import detectable_pass_drops

    return _median_figures(data, kb, rng, runs_n, lambda items: detectable_pass_drops(
        items, baseline_samples=kb, samples=kc, delta=DELTA, alpha=ALPHA, tests=6))


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
    beyond ``DELTA``), ``flags_score`` by a level-score rule (each instruction's pass-rate
    change times its gap between one passing and one failing sample, which a run cannot know;
    for comparing power with the fixed-count gate), the samples asked and the stage-wise
    p-values.  Both rules judge the same looks: the drop rule comes after them."""

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
    eta, cand, ok = _logits(data, pairs, rng, drops, AUTO_CAP)
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


def _spread(rates: np.ndarray) -> list[str]:
    """A distribution of per-baseline false-alarm rates, as the table shows it."""
    lo, hi = wilson(int((rates > 0.10).sum()), rates.size)
    return [f"{rates.mean():.1%}", f"{np.median(rates):.1%}",
            f"{(rates > 0.10).mean():.1%} [{lo:.1%}, {hi:.1%}]",
            f"{np.quantile(rates, 0.95):.1%}", f"{rates.max():.1%}"]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1000, help="null pairs per configuration "
                    "(default 1000)")
    ap.add_argument("--power-pairs", type=int, default=200, help="pairs per drop and level "
                    "(default 200)")
    ap.add_argument("--baselines", type=int, default=200, help="committed baselines of the "
                    "per-baseline rows (default 200)")
    ap.add_argument("--runs", type=int, default=100, help="unchanged runs against each of "
                    "them (default 100)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 200 null pairs, 60 per "
                    "power configuration, 40 baselines of 50 runs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scores", default=None, metavar="FILE", help="keep the scored answers "
                    "here and reuse them on the next run (delete it when the suite or the "
                    "scoring changes)")
    ap.add_argument("--auto", action="store_true", help="also the adaptive mode "
                    "(--gi-samples=auto): its false alarms, collapse rows, MDE80 and calls")
    ap.add_argument("--auto-pairs", type=int, default=500, help="null pairs of the adaptive "
                    "mode (default 500)")
    ap.add_argument("--suite", action="append", choices=("ours", "official"), default=None,
                    help="only this suite (repeat for both; default: both)")
    args = ap.parse_args(argv)
    if args.quick:
        args.pairs, args.power_pairs = min(args.pairs, 200), min(args.power_pairs, 60)
        args.baselines, args.runs = min(args.baselines, 40), min(args.runs, 50)
    if min(args.pairs, args.power_pairs, args.baselines, args.runs) < 1:
        ap.error("--pairs, --power-pairs, --baselines and --runs must be >= 1")
    t0 = time.perf_counter()
    roots = {"ours": OUR_SUITE}
    if OFFICIAL_SUITE.is_dir():
        roots["official"] = OFFICIAL_SUITE
    else:
        print(f"official suite not found at {OFFICIAL_SUITE}: skipped")
    if args.suite:
        roots = {k: v for k, v in roots.items() if k in args.suite}
    cache = Path(args.scores) if args.scores else None
    suites: dict[str, SuiteScores] = {}
    if cache is not None and cache.is_file():
        with cache.open("rb") as fh:
            kept = pickle.load(fh)
        suites = {k: v for k, v in kept.items()
                  if k in roots and getattr(v, "tables", None) is not None
                  and set(v.tables) == set(SAMPLES)}
        print(f"scores read from {cache}" if suites else f"{cache} holds older scores: "
              "scoring again")
    if not suites:
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
        levels = [f"L{lv}" for lv in order]
        print(f"\n## {name} suite ({len(data.ids)} instructions; {data.oracle_failed} correct "
              "answers that do not pass)")
        print("level score by correct samples (level means): " + "; ".join(
            f"L{lv} " + ", ".join(f"{x:.2f}" for x in data.tables[max(SAMPLES)][
                data.levels == lv].mean(axis=0)) for lv in order))
        rows = []
        for kb, kc in ((1, 1), (5, 5), (README_BASE, 1)):
            # one sample each the gate is today's test (the score test alone)
            for test in (TESTS if kb == kc > 1 else ("combined",)):
                what = ("the gate" if test == "combined" else "today's test (score only)")
                if kb != kc:
                    what = "the gate (pass counts)"
                null = null_rate(data, kb, kc, args.pairs, rng, test)
                rows.append([f"baseline k={kb}, runs k={kc}: {what}", _rate(null), null.pairs])
        print(tabulate(rows, headers=["family-wise false alarms", "rate [95% CI]", "pairs"],
                       disable_numparse=True))
        rows = []
        for kb, kc, test, what in ((1, 1, "score", "one-sample baseline (as before issue 48)"),
                                   (README_BASE, 1, "combined",
                                    f"{README_BASE}-sample baseline (the default), the gate")):
            rates = per_baseline(data, kb, kc, args.baselines, args.runs, rng, test)
            rows.append([what, *_spread(rates)])
        print(f"\nthe README's CI line: false alarms of {args.runs} unchanged one-sample runs "
              f"against each of {args.baselines} committed baselines")
        print(tabulate(rows, headers=["baseline", "mean", "median", "baselines above 10% "
                                      "[95% CI]", "95th percentile", "worst"],
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
        print(tabulate(rows, headers=["the run fails when", *levels], disable_numparse=True))
        rows = []
        fixed5: list[str] = []
        for k in SAMPLES:
            tests = TESTS if k > 1 else ("combined",)  # one sample each: the same test
            curves = [power_curve(data, k, k, lv, args.power_pairs, rng, tests) for lv in order]
            plan = predicted(data, k, rng)
            gate_mde = [mde80(c["combined"]) for c in curves]
            if k > 1:
                rows.append([f"k={k} today's test (score only)",
                             *[_mde(mde80(c["score"])) for c in curves]])
            rows.append([f"k={k} the gate" + (" (score and pass counts)" if k > 1 else
                                             " (= today's: the score test alone)"),
                         *map(_mde, gate_mde)])
            rows.append([f"k={k} plan predicts (predicted / measured)",
                         *[f"{_mde(plan.get(lv, math.inf))} ({plan.get(lv, math.inf) / m:.2f})"
                           if math.isfinite(m) else _mde(plan.get(lv, math.inf))
                           for lv, m in zip(order, gate_mde, strict=True)]])
            if k == max(SAMPLES):
                fixed5 = rows[-2]
        readme = [power_curve(data, README_BASE, 1, lv, args.power_pairs, rng, ("combined",))
                  for lv in order]
        rows.append([f"baseline k={README_BASE}, runs k=1 (pass counts; drop in one-sample "
                     "level score)", *[_mde(mde80(c["combined"])) for c in readme]])
        across = [mde80(power_curve(data, README_BASE, 1, lv, args.power_pairs, rng,
                                    ("combined",), pass_rate=True)["combined"])
                  for lv in order]
        rows.append([f"baseline k={README_BASE}, runs k=1: drop in pass rate (the gate's rule)",
                     *map(_mde, across)])
        plan = predicted_across(data, README_BASE, 1, rng)
        rows.append(["  the compared line predicts (predicted / measured)",
                     *[f"{_mde(plan.get(lv, math.inf))} ({plan.get(lv, math.inf) / m:.2f})"
                       if math.isfinite(m) else _mde(plan.get(lv, math.inf))
                       for lv, m in zip(order, across, strict=True)]])
        print()
        print(tabulate(rows, headers=["MDE80 (drop seen 80% of the time)", *levels],
                       disable_numparse=True))
        if args.auto:
            auto, auto_mde = auto_rows(data, args.auto_pairs, args.power_pairs, rng)
            print(f"\n--gi-samples=auto against a baseline of {AUTO_CAP} samples (fixed k=5: "
                  "5.00 calls per instruction)")
            print(tabulate(auto, headers=["auto: the run", "family-wise false alarms / fails",
                                          "calls per instruction",
                                          "per level (" + ", ".join(levels) + ")"],
                           disable_numparse=True))
            print(tabulate([fixed5, *auto_mde], headers=["MDE80", *levels],
                           disable_numparse=True))
        for kb, kc in ((5, 5), (1, 1), (README_BASE, 1)):
            runs = simulate(data, 10, kb, kc, rng, (Drop(order[len(order) // 2], 0.05),))
            mine = gate(data, runs)[0]
            theirs = api_gate(data, runs)
            agree += int((mine == theirs).all(axis=1).sum())
            checked += mine.shape[0]
    print(f"\nthe vectorized gate and the API (suite_paired with pass counts + regressions) "
          f"flag the same levels in {agree} of {checked} pairs")
    print(f"wall time {time.perf_counter() - t0:.0f} s (scoring {t_scored - t0:.0f} s)")
    return 0 if agree == checked else 1


if __name__ == "__main__":
    sys.exit(main())
