"""Gate calibration: the whole regression gate's false-alarm rate and power, by simulation from
real scores, without a model call.

1. **Real scores, once.**  Every instruction of a suite gets two answers scored with the
   project's own evaluation path (``run.evaluate.check`` + ``score``, the default pools): a
   correct one (the oracle's: a reference that passes, a refusal for an infeasible
   instruction) and a wrong one (the first reference of another instruction of the same level,
   half the level away, that fails this instruction).  So each instruction has a realistic
   level score for a passing and for a failing sample.
2. **Simulated runs.**  Each instruction passes a sample with probability ``expit(μ_L + u_T +
   v_i)``: ``u_T ~ N(0, 0.75²)`` per template (cluster), ``v_i ~ N(0, 1)`` per instruction, both
   drawn afresh for each pair (a new "model" every time), ``μ_L`` set so that the level's mean
   pass rate is that of a mid-tier model (:data:`PASS_RATES`).  A run draws ``k`` samples per
   instruction; an instruction's level score is the mean of its samples' scores.
   *Template-shared noise* adds ``w_{run,T} ~ N(0, 0.2²)`` to the logits of every instruction of
   template ``T`` in that run (:data:`SHARED_NOISE`; why 0.2: docs/PLUGIN.md).  *Lowered
   quality* shifts the candidate's logits in one level by the amount that lowers the level's
   expected score by 0.02, 0.05 or 0.10 ("n/a" where even a level that always fails cannot
   drop that far); a *concentrated* drop shifts only the level's largest template, as far as
   lowers the whole level by 0.05 or 0.10; the *hiding* scenario lowers L2 by 0.05 while one
   template of L0 falls by 0.10 of the level (does a drop in one level hide another?).
3. **The gate, as the driver calls it.**  For every (baseline, candidate) pair:
   :func:`~pytest_graphinstruct.score.bootstrap.paired_bootstrap` with the suite's clusters
   (:func:`~pytest_graphinstruct.suite.clusters.cluster_of`), then
   :func:`~pytest_graphinstruct.score.multiple.regressions` over the run's six levels at
   ``alpha = 0.05`` with ``delta = 0.02``.  Beside it, the rule before issue 19 ("today's
   rule"): per level, a percentile bootstrap over instructions (B = 2000), a level flagged when
   its mean dropped by more than 0.02 and the 97.5 % quantile is below 0, no correction for six
   levels.
4. **The procedures compared** (vectorized over pairs, on the same pairs, written apart from
   the package's code so that they check it): cluster percentile bootstrap, two-stage bootstrap
   (clusters, then instructions within), cluster t with ``G − 1`` degrees of freedom (CR1), CR2
   with Bell–McCaffrey degrees of freedom (the gate until 2026-12), the larger of the
   instruction-level and CR2 variances, the instruction-level t (clusters ignored), and the
   pooled shared-noise tests: the ratio of shared to within-template variance estimated once
   from every template of every level (DerSimonian–Laird moments on template means weighted by
   their within variances), the same leaving the tested level out, the same with each
   template's standardized deviation capped (robust to a template that really changed), and the
   capped one with the levels' own ratios allowed to differ (random effects across levels,
   empirical Bayes per level: the gate).  All with Holm over the six levels and delta 0.02.
   Their false alarms are also measured with heavier shared noise (logit sd 0.4 and 0.6,
   k = 5): a procedure honest with few clusters must not depend on the shared noise being
   small.  A *ceiling* row tests with the true variance of each level's mean (independent
   noise): no test that holds 5 % over six levels can see more.
5. **The plan's prediction** (:func:`~pytest_graphinstruct.score.power.gate_power` from one
   simulated baseline run, averaged over 20 such runs) beside the measured power.

Prints the tables docs/PLUGIN.md quotes, and the wall time.  False alarms are "any level of the
run flagged" with nothing changed, with a 95 % Wilson interval; power is "the lowered level
flagged".  The official suite is read from ``../shared/official-suite/instructions`` (skipped
with a message when absent).

Usage::

    python bench/gate_calibration.py [--pairs 1000] [--power-pairs 200] [--quick] [--jobs 2]
                                     [--seed 0] [--scores FILE]
"""

from __future__ import annotations

import argparse
import math
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.special import expit
from scipy.stats import chi2, norm
from scipy.stats import t as student_t
from tabulate import tabulate

ROOT = Path(__file__).resolve().parents[1]
OUR_SUITE = ROOT / "instructions"
OFFICIAL_SUITE = ROOT.parent / "shared/official-suite/instructions"

PASS_RATES = {0: 0.85, 1: 0.85, 2: 0.50, 3: 0.60, 4: 0.70, 5: 0.50}
"""Mean pass probability per level of the simulated mid-tier model."""
TEMPLATE_SD = 0.75  #: logit sd of a template's (cluster's) fixed effect
INSTRUCTION_SD = 1.0  #: logit sd of an instruction's fixed effect
SHARED_NOISE = 0.2  #: logit sd of a template's shift in one run ("template-shared noise")
HEAVIER = (0.4, 0.6)  #: shared noise for the robustness rows (k = 5, nothing changed)
DELTA = 0.02  #: --gi-max-regression
ALPHA = 0.05  #: the family-wise alpha of the gate
DROPS = (0.02, 0.05, 0.10)
CONCENTRATED = (0.05, 0.10)  #: drops of the whole level that fall on its largest template
SAMPLES = (1, 5)
TODAY_B = 2000  #: resamples of today's rule (its default)
ALT_B = 1000  #: resamples of the compared bootstrap procedures
CHUNK = 250  #: pairs simulated at once
CHOSEN = "pooled, capped, random effects (the gate)"
PROCEDURES = ("cluster percentile", "two-stage", "cluster t (G-1)", "CR2 + BM df",
              "max(instr, CR2)", "instruction t", "pooled ratio", "pooled, level left out",
              "pooled, capped", CHOSEN, "known variance (ceiling)")
OWN_FROM = 5  #: a template weighs by its own within variance from this many instructions on
CAP = float(chi2.ppf(0.99, 1))
KAPPA = float(chi2.cdf(CAP, 3) + CAP * chi2.sf(CAP, 1))


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


def simulate(data: SuiteScores, pairs: int, k: int, shared: float, rng: np.random.Generator,
             drops: Sequence[Drop] = ()) -> Runs:
    """``pairs`` (baseline, candidate) runs of ``k`` samples per instruction (module
    docstring)."""
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


# -- 3. the gate as the driver calls it -------------------------------------------------------

def api_gate(data: SuiteScores, base: np.ndarray, cand: np.ndarray,
             delta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair and level: flagged by the gate (``delta``), flagged with ``delta = 0`` (the
    test alone), and p_drop — through paired_bootstrap + regressions."""
    from pytest_graphinstruct.score.bootstrap import paired_bootstrap
    from pytest_graphinstruct.score.multiple import regressions

    clusters = dict(zip(data.ids, data.clusters, strict=True))
    levels = [int(x) for x in data.levels]
    order = sorted(set(levels))
    flags = np.zeros((base.shape[0], len(order)), dtype=bool)
    bare = np.zeros_like(flags)
    p = np.zeros(flags.shape)
    for row in range(base.shape[0]):
        b = dict(zip(data.ids, zip(levels, base[row].tolist(), strict=True), strict=True))
        c = dict(zip(data.ids, zip(levels, cand[row].tolist(), strict=True), strict=True))
        diffs = paired_bootstrap(b, c, clusters=clusters).levels
        down = regressions(diffs, delta=delta, alpha=ALPHA)
        down0 = regressions(diffs, delta=0.0, alpha=ALPHA)
        for j, lv in enumerate(order):
            flags[row, j] = lv in down
            bare[row, j] = lv in down0
            p[row, j] = diffs[lv].p_drop
    return flags, bare, p


# -- 4. today's rule and the compared procedures (vectorized over pairs) ----------------------

def _holm(p: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    m = p.shape[1]
    order = np.argsort(p, axis=1, kind="stable")
    ranked = np.take_along_axis(p, order, 1)
    keep = np.cumprod(ranked <= alpha / (m - np.arange(m)), axis=1).astype(bool)
    out = np.zeros_like(keep)
    np.put_along_axis(out, order, keep, 1)
    return out


def _t_p(mean: np.ndarray, var: np.ndarray, df: float | np.ndarray) -> np.ndarray:
    se = np.sqrt(np.maximum(var, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, mean / np.where(se > 0, se, 1.0),
                     np.where(mean < 0, -np.inf, np.inf))
    out = student_t.cdf(t, np.maximum(df, 1e-300))
    return np.where(np.asarray(df) > 0, out, 1.0)


@dataclass
class _Level:
    """One level over all pairs: what the pooled procedures need (vectorized)."""

    n: int
    sizes: np.ndarray  # (G,)
    mean: np.ndarray  # (P,)
    within: np.ndarray  # W: Σ n_g s²_g / n²
    within_df: np.ndarray
    design: np.ndarray  # Σ n_g² s²_g / (n² W)
    usable: bool  # two templates and within-template spread: pools
    w: np.ndarray = field(default_factory=lambda: np.zeros(0))  # template weights (P, G)
    v: np.ndarray = field(default_factory=lambda: np.zeros(0))  # their variances (P, G)
    a: np.ndarray = field(default_factory=lambda: np.zeros(0))  # 1 − w/Σw
    y: np.ndarray = field(default_factory=lambda: np.zeros(0))  # standardized deviations²

    @property
    def g(self) -> int:
        return int(self.sizes.size)

    def info(self) -> np.ndarray:
        return (self.a * self.sizes).sum(1)

    def spread(self, rho: np.ndarray) -> np.ndarray:
        """Variance of Σ a_g y_g at ratio ``rho`` (quadratic form in the template means)."""
        w = self.w
        tot = w.sum(1)
        s = self.v * (1.0 / self.sizes + rho[:, None])
        return 2 * ((w * w * s * s).sum(1) - 2 * (w ** 3 * s * s).sum(1) / tot
                    + ((w * w * s).sum(1) / tot) ** 2)


def _level(d: np.ndarray, codes: np.ndarray) -> _Level:
    pairs, n = d.shape
    g = int(codes.max()) + 1
    sizes = np.bincount(codes, minlength=g).astype(float)
    member = np.zeros((n, g))
    member[np.arange(n), codes] = 1.0
    sums = d @ member
    squares = np.maximum((d * d) @ member - sums * sums / sizes, 0.0)
    mean = d.mean(axis=1)
    pooled = squares.sum(1) / (n - g) if n > g else np.zeros(pairs)
    multi = sizes >= 2
    own = np.where(multi, squares / np.maximum(sizes - 1, 1), pooled[:, None])
    terms = sizes * own
    within = terms.sum(1) / n ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        den = (terms[:, multi] ** 2 / (sizes[multi] - 1)).sum(1)
        if (~multi).any() and n > g:
            den = den + terms[:, ~multi].sum(1) ** 2 / (n - g)
        within_df = np.where(den > 0, terms.sum(1) ** 2 / den, 0.0)
        design = np.where(terms.sum(1) > 0, (sizes * terms).sum(1) / terms.sum(1), 0.0)
    lvl = _Level(n, sizes, mean, within, within_df, design, usable=g >= 2 and n > g)
    if lvl.usable:
        big = sizes >= OWN_FROM
        nu = np.where(big, sizes - 1, n - g)
        v = np.where(big, squares / np.maximum(sizes - 1, 1), pooled[:, None])
        v = np.maximum(v, 1e-9 * pooled[:, None])
        w = sizes * np.where(nu > 2, (nu - 2) / nu, 1.0) / np.where(v > 0, v, 1.0)
        centre = (w * sums / sizes).sum(1, keepdims=True) / w.sum(1, keepdims=True)
        a = np.maximum(1 - w / w.sum(1, keepdims=True), 1e-12)
        lvl.w, lvl.v, lvl.a = w, v, a
        lvl.y = w * (sums / sizes - centre) ** 2 / a
    return lvl


def _pool(levels: Sequence[_Level], capped: bool) -> tuple[np.ndarray, np.ndarray]:
    """Pooled ratio per pair (capped: the fixed point, iterated from 0) and its variance.
    Pairs whose levels have no within spread (``pooled = 0``) give ratio 0."""
    y = np.concatenate([lv.y for lv in levels], 1)
    a = np.concatenate([lv.a for lv in levels], 1)
    n = np.concatenate([np.broadcast_to(lv.sizes, lv.y.shape) for lv in levels], 1)
    info = (a * n).sum(1)
    if not capped:
        rho = np.maximum((a * (y - 1)).sum(1) / info, 0.0)
    else:
        rho = np.zeros(y.shape[0])
        for _ in range(500):
            new = np.maximum((a * (np.minimum(y, CAP * (1 + n * rho[:, None])) - KAPPA)).sum(1)
                             / (KAPPA * info), 0.0)
            done = np.all(np.abs(new - rho) <= 1e-13 * np.maximum(rho, 1e-12))
            rho = new
            if done:
                break
    var = sum(lv.spread(rho) for lv in levels) / info ** 2
    return rho, var


def _ratio_test(lv: _Level, rho: np.ndarray, var: np.ndarray) -> np.ndarray:
    inflation = 1 + rho * lv.design
    df = 1 / (1 / np.where(lv.within_df > 0, lv.within_df, np.inf)
              + lv.design ** 2 * var / (2 * inflation ** 2))
    return _t_p(lv.mean, lv.within * inflation, df)


def pooled_p(levels: Sequence[_Level], d: Sequence[np.ndarray], cr2: np.ndarray,
             variant: str) -> np.ndarray:
    """p-values (pairs, levels) of a pooled shared-noise procedure."""
    pairs = levels[0].mean.size
    p = np.ones((pairs, len(levels)))
    pool = [lv for lv in levels if lv.usable]
    rho = var = np.zeros(pairs)
    own: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    between = np.zeros(pairs)
    if pool and variant != "left out":
        rho, var = _pool(pool, capped=variant != "mean")
    if pool and variant == "random effects":
        for j, lv in enumerate(levels):
            if lv.usable:
                est = (lv.a * (np.minimum(lv.y, CAP * (1 + lv.sizes * rho[:, None])) - KAPPA)
                       ).sum(1) / (KAPPA * lv.info())
                own[j] = (est, lv.spread(rho) / lv.info() ** 2)
        if len(own) >= 2:
            inv = np.stack([1 / v for _, v in own.values()], 1)
            est = np.stack([e for e, _ in own.values()], 1)
            centre = (inv * est).sum(1, keepdims=True) / inv.sum(1, keepdims=True)
            q = (inv * (est - centre) ** 2).sum(1)
            s1, s2 = inv.sum(1), (inv * inv).sum(1)
            between = np.maximum(0.0, (q - (len(own) - 1)) / (s1 - s2 / s1))
    for j, lv in enumerate(levels):
        if lv.n < 2:
            continue
        if lv.n == lv.g:  # every instruction its own template: the one-sample t
            p[:, j] = _t_p(lv.mean, d[j].var(axis=1, ddof=1) / lv.n, lv.n - 1)
            continue
        r, v = rho, var
        if variant == "left out":
            others = [x for x in pool if x is not lv] or ([lv] if lv.usable else [])
            if not others:
                continue
            r, v = _pool(others, capped=False)
        elif not pool:
            p[:, j] = np.where(lv.within > 0, 1.0, cr2[:, j])
            continue
        elif variant == "random effects":
            if j in own:
                est, ov = own[j]
                with np.errstate(divide="ignore", invalid="ignore"):
                    weight = np.where(between > 0, between / (between + ov), 0.0)
                r = np.maximum(0.0, weight * est + (1 - weight) * rho)
                v = weight * ov + (1 - weight) ** 2 * var
            else:
                v = var + between
        test = _ratio_test(lv, r, v)
        p[:, j] = np.where(lv.within > 0, test, cr2[:, j])
    return p


def vector_rules(data: SuiteScores, diff: np.ndarray, true_var: np.ndarray,
                 rng: np.random.Generator, delta: float) -> dict[str, np.ndarray]:
    """Per pair and level, the flags of today's rule and of each compared procedure."""
    from pytest_graphinstruct.score.bootstrap import bm_df

    pairs = diff.shape[0]
    order = sorted({int(x) for x in data.levels})
    means = np.zeros((pairs, len(order)))
    today = np.zeros((pairs, len(order)), dtype=bool)
    pv = {name: np.ones((pairs, len(order))) for name in PROCEDURES}
    codes_all = data.cluster_codes
    levels: list[_Level] = []
    parts: list[np.ndarray] = []
    for j, lv in enumerate(order):
        m = data.levels == lv
        d = diff[:, m]
        _, codes = np.unique(codes_all[m], return_inverse=True)
        n, g = d.shape[1], int(codes.max()) + 1
        sizes = np.bincount(codes, minlength=g).astype(float)
        member = np.zeros((n, g))
        member[np.arange(n), codes] = 1.0
        sums = d @ member
        mean = d.mean(axis=1)
        means[:, j] = mean
        # today: instruction percentile bootstrap, one level at 2.5 %
        counts = rng.multinomial(n, np.full(n, 1.0 / n), size=TODAY_B).astype(float)
        high = np.quantile(d @ counts.T / n, 0.975, axis=1)
        today[:, j] = (mean < -delta) & (high < 0)
        # cluster percentile
        cc = rng.multinomial(g, np.full(g, 1.0 / g), size=ALT_B).astype(float)
        boot = (sums @ cc.T) / (cc @ sizes)[None, :]
        pv["cluster percentile"][:, j] = (boot >= 0).mean(axis=1)
        # two-stage: clusters, then instructions within each drawn cluster
        w2 = np.zeros((ALT_B, n))
        for c in range(g):
            idx = np.flatnonzero(codes == c)
            w2[:, idx] = rng.multinomial((cc[:, c] * idx.size).astype(np.int64),
                                         np.full(idx.size, 1.0 / idx.size))
        boot2 = d @ w2.T / w2.sum(axis=1)[None, :]
        pv["two-stage"][:, j] = (boot2 >= 0).mean(axis=1)
        resid = sums - sizes * mean[:, None]
        v_instr = d.var(axis=1, ddof=1) / n if n > 1 else np.zeros(pairs)
        pv["instruction t"][:, j] = _t_p(mean, v_instr, max(n - 1, 0))
        pv["known variance (ceiling)"][:, j] = norm.cdf(mean / np.sqrt(true_var[:, j]))
        if g >= 2:
            v_cr1 = g / (g - 1) * (resid ** 2).sum(axis=1) / n ** 2
            v_cr2 = (resid ** 2 / (1 - sizes / n)).sum(axis=1) / n ** 2
            df = bm_df(sizes)
            pv["cluster t (G-1)"][:, j] = _t_p(mean, v_cr1, g - 1)
            pv["CR2 + BM df"][:, j] = _t_p(mean, v_cr2, df)
            wider = v_cr2 > v_instr
            pv["max(instr, CR2)"][:, j] = np.where(
                wider, _t_p(mean, v_cr2, df), _t_p(mean, v_instr, max(n - 1, 1)))
        levels.append(_level(d, codes))
        parts.append(d)
    for name, variant in (("pooled ratio", "mean"), ("pooled, level left out", "left out"),
                          ("pooled, capped", "capped"), (CHOSEN, "random effects")):
        pv[name] = pooled_p(levels, parts, pv["CR2 + BM df"], variant)
    out = {"today": today}
    for name, p in pv.items():
        out[name] = _holm(p) & (means < -delta)
    return out


# -- tasks ------------------------------------------------------------------------------------

_DATA: dict[str, SuiteScores] = {}


def _init(data: dict[str, SuiteScores]) -> None:
    _DATA.update(data)


@dataclass(frozen=True)
class Task:
    suite: str
    k: int
    shared: float
    pairs: int
    seed: int
    drops: tuple[Drop, ...] = ()

    @property
    def kind(self) -> str:
        """``null``, ``level`` (one whole level lowered), ``template`` (one template) or
        ``hiding`` (two levels)."""
        if not self.drops:
            return "null"
        if len(self.drops) > 1:
            return "hiding"
        return "level" if self.drops[0].whole else "template"


@dataclass(frozen=True)
class Outcome:
    task: Task
    pairs: int  # pairs that could drop as asked (all of them with nothing changed)
    gate_any: int  # pairs with any level flagged by the gate
    bare_any: int  # ... by the test alone (delta 0)
    gate_levels: tuple[int, ...]  # per level: pairs with it flagged by the gate
    rules_any: dict[str, int]
    rules_levels: dict[str, tuple[int, ...]]
    agree: int  # pairs where the API and the vectorized chosen procedure flag the same levels
    seconds: float

    def level(self, lv: int, name: str | None = None) -> int:
        levels = self.gate_levels if name is None else self.rules_levels[name]
        return levels[lv]


def _seed(task: Task) -> list[int]:
    key = [task.seed, list(_DATA).index(task.suite), task.k, round(task.shared * 100)]
    if not task.drops:
        return [*key, 99, 0]
    first = task.drops[0]
    key += [first.level, round(first.size * 1000)]
    for drop in task.drops[1:]:
        key += [drop.level, round(drop.size * 1000), int(drop.whole)]
    return key if first.whole and len(task.drops) == 1 else [*key, 7]


def run_task(task: Task) -> Outcome:
    t0 = time.perf_counter()
    data = _DATA[task.suite]
    rng = np.random.default_rng(_seed(task))
    order = sorted({int(x) for x in data.levels})
    used = gate_any = bare_any = agree = 0
    gate_levels = np.zeros(len(order), dtype=int)
    rules_any: dict[str, int] = {}
    rules_levels: dict[str, np.ndarray] = {}
    left = task.pairs
    while left > 0:
        size = min(CHUNK, left)
        left -= size
        runs = simulate(data, size, task.k, task.shared, rng, task.drops)
        base, cand = runs.base[runs.ok], runs.cand[runs.ok]
        if not len(base):
            continue
        flags, bare, _ = api_gate(data, base, cand, DELTA)
        rules = vector_rules(data, cand - base, runs.true_var[runs.ok], rng, DELTA)
        used += len(base)
        gate_any += int(flags.any(axis=1).sum())
        bare_any += int(bare.any(axis=1).sum())
        gate_levels += flags.sum(axis=0)
        agree += int((rules[CHOSEN] == flags).all(axis=1).sum())
        for name, f in rules.items():
            rules_any[name] = rules_any.get(name, 0) + int(f.any(axis=1).sum())
            rules_levels[name] = rules_levels.get(name, np.zeros(len(order), dtype=int)) \
                + f.sum(axis=0)
    return Outcome(task, used, gate_any, bare_any, tuple(int(x) for x in gate_levels),
                   rules_any, {k: tuple(int(x) for x in v) for k, v in rules_levels.items()},
                   agree, time.perf_counter() - t0)


def predicted_power(data: SuiteScores, k: int, seed: int, draws: int = 20
                    ) -> dict[tuple[int, float], float]:
    """(level, drop) → the plan's power (score.power.gate_power) from one simulated baseline
    run, averaged over ``draws`` runs."""
    from pytest_graphinstruct.score.power import ItemScore, gate_power, noise_by_level

    rng = np.random.default_rng([seed, 99, k])
    runs = simulate(data, draws, k, 0.0, rng)
    out: dict[tuple[int, float], list[float]] = {}
    for row in range(draws):
        items = [ItemScore(int(lv), c, float(s), float(x) / k)
                 for lv, c, s, x in zip(data.levels, data.clusters, runs.base[row],
                                        runs.passes[row], strict=True)]
        for lv, noise in noise_by_level(items, samples=k).items():
            for drop in DROPS:
                out.setdefault((lv, drop), []).append(
                    gate_power(noise, drop, delta=DELTA, alpha=ALPHA, tests=6))
    return {key: float(np.mean(v)) for key, v in out.items()}


# -- report -----------------------------------------------------------------------------------

def wilson(x: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95 % Wilson score interval of ``x`` successes in ``n``."""
    if n == 0:
        return 0.0, 1.0
    p = x / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def _rate(x: int, n: int) -> str:
    lo, hi = wilson(x, n)
    return f"{x / n:5.1%} [{lo:.1%}, {hi:.1%}]" if n else "n/a"


def _pct(x: int, n: int) -> str:
    return f"{x / n:.0%}" if n else "n/a"


def _noise(shared: float) -> str:
    return f"shared {shared:g}" if shared else "independent"


def _find(outcomes: Sequence[Outcome], suite: str, k: int, shared: float,
          drops: tuple[Drop, ...]) -> Outcome | None:
    o = next((x for x in outcomes if (x.task.suite, x.task.k, x.task.shared, x.task.drops)
              == (suite, k, shared, drops)), None)
    return None if o is None or o.pairs < 0.9 * o.task.pairs else o


def report(outcomes: Sequence[Outcome], predictions: dict[tuple[str, int], dict[
        tuple[int, float], float]], suites: dict[str, SuiteScores]) -> None:
    nulls = [o for o in outcomes if o.task.kind == "null" and o.task.shared not in HEAVIER]
    heavier = [o for o in outcomes if o.task.kind == "null" and o.task.shared in HEAVIER]
    rows = [[o.task.suite, o.task.k, _noise(o.task.shared), o.pairs,
             _rate(o.gate_any, o.pairs), _rate(o.bare_any, o.pairs),
             _rate(o.rules_any["CR2 + BM df"], o.pairs), _rate(o.rules_any["today"], o.pairs)]
            for o in nulls]
    print("\nFalse alarms with nothing changed (any level of the run flagged; 95% Wilson "
          "interval):")
    print(tabulate(rows, headers=["suite", "k", "noise", "pairs", "gate (Holm, delta 0.02)",
                                  "test alone (delta 0)", "CR2 (until 2026-12)",
                                  "today's rule"], disable_numparse=True))
    powers = [o for o in outcomes if o.task.kind == "level"]
    print("\nPower: the lowered level flagged (gate / CR2 / today's rule; n/a: the level "
          "cannot drop that far):")
    keys = sorted({(o.task.suite, o.task.k, o.task.shared, o.task.drops[0].size)
                   for o in powers},
                  key=lambda x: (list(suites).index(x[0]), x[1], x[2], x[3]))
    levels = sorted({o.task.drops[0].level for o in powers})
    rows = []
    for suite, k, shared, size in keys:
        row: list[object] = [suite, k, _noise(shared), f"{size:g}"]
        for lv in levels:
            o = _find(powers, suite, k, shared, (Drop(lv, size),))
            row.append("n/a" if o is None else
                       f"{_pct(o.level(lv), o.pairs)} / "
                       f"{_pct(o.level(lv, 'CR2 + BM df'), o.pairs)} / "
                       f"{_pct(o.level(lv, 'today'), o.pairs)}")
        rows.append(row)
    print(tabulate(rows, headers=["suite", "k", "noise", "drop", *[f"L{lv}" for lv in levels]],
                   disable_numparse=True))
    print("\nProcedures compared on the same pairs (Holm over six levels, delta 0.02): false "
          "alarms, then power at a 0.05 drop with k=5 per level (L0..L5):")
    rows = []
    for name in ("today", *PROCEDURES):
        row = [name]
        for o in nulls:
            row.append("-" if name.startswith("known") and o.task.shared
                       else f"{o.rules_any[name] / o.pairs:.1%}")
        for suite in suites:
            for shared in sorted({o.task.shared for o in powers}):
                cells = []
                for lv in levels:
                    o = _find(powers, suite, 5, shared, (Drop(lv, 0.05),))
                    cells.append("-" if o is None or (name.startswith("known") and shared)
                                 else f"{o.level(lv, name) / o.pairs:.0%}")
                row.append(" ".join(cells))
        rows.append(row)
    headers = ["procedure", *[f"FA {o.task.suite} k{o.task.k} {_noise(o.task.shared)}"
                              for o in nulls]]
    headers += [f"power {s} {_noise(sh)}" for s in suites
                for sh in sorted({o.task.shared for o in powers})]
    print(tabulate(rows, headers=headers, disable_numparse=True))
    if heavier:
        print("\nRobustness: false alarms with heavier shared noise (k=5, nothing changed; "
              "95% Wilson interval for the gate, the gate's test alone in brackets):")
        rows = [[name, *[f"{o.rules_any[name] / o.pairs:.1%}" for o in heavier]]
                for name in ("today", *PROCEDURES) if not name.startswith("known")]
        rows.append(["gate (API)", *[f"{_rate(o.gate_any, o.pairs)} "
                                     f"({o.bare_any / o.pairs:.1%})" for o in heavier]])
        print(tabulate(rows, headers=["procedure", *[f"{o.task.suite} {_noise(o.task.shared)}"
                                                     for o in heavier]],
                       disable_numparse=True))
    concentrated = [o for o in outcomes if o.task.kind in ("template", "hiding")]
    if concentrated:
        print("\nConcentrated drops (k=5): the largest template of L0 carries the whole drop "
              "of the level; hiding: L2 lowered by 0.05 while one L0 template falls by 0.10 "
              "of the level (L2 flagged; any level flagged):")
        names = ("CR2 + BM df", "pooled ratio", "pooled, level left out", "pooled, capped",
                 CHOSEN)
        rows = []
        for o in concentrated:
            first = o.task.drops[0]
            what = (f"L{first.level} one template {first.size:g}" if o.task.kind == "template"
                    else "hiding: L2 0.05 + L0 template 0.10")
            lv = first.level
            cells = [f"{_pct(o.level(lv, n), o.pairs)}" + (
                f" ({_pct(o.rules_any[n], o.pairs)})" if o.task.kind == "hiding" else "")
                for n in names]
            rows.append([o.task.suite, _noise(o.task.shared), what, o.pairs, *cells])
        print(tabulate(rows, headers=["suite", "noise", "drop", "pairs", *names],
                       disable_numparse=True))
    total = sum(o.pairs for o in outcomes)
    agree = sum(o.agree for o in outcomes)
    print(f"\nthe API (paired_bootstrap + regressions) and the bench's vectorized "
          f"'{CHOSEN}' flag the same levels in {agree} of {total} pairs")
    if predictions:
        print("\nThe plan's predicted power (score.power.gate_power, from one baseline run, "
              "mean of 20) vs measured, independent noise (predicted / measured):")
        rows = []
        for (suite, k), pred in predictions.items():
            for size in DROPS:
                row = [suite, k, f"{size:g}"]
                for lv in levels:
                    o = _find(powers, suite, k, 0.0, (Drop(lv, size),))
                    measured = "n/a" if o is None else _pct(o.level(lv), o.pairs)
                    row.append(f"{pred.get((lv, size), float('nan')):.0%} / {measured}")
                rows.append(row)
        print(tabulate(rows, headers=["suite", "k", "drop", *[f"L{lv}" for lv in levels]],
                       disable_numparse=True))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1000, help="null pairs per configuration "
                    "(default 1000)")
    ap.add_argument("--power-pairs", type=int, default=200, help="pairs per power "
                    "configuration (default 200)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 100 null pairs, 40 per "
                    "power configuration, k=5 and independent noise only for power")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scores", default=None, metavar="FILE", help="keep the scored answers "
                    "here and reuse them on the next run (delete it when the suite or the "
                    "scoring changes)")
    args = ap.parse_args(argv)
    if args.quick:
        args.pairs, args.power_pairs = min(args.pairs, 100), min(args.power_pairs, 40)
    if args.pairs < 1 or args.power_pairs < 1 or args.jobs < 1:
        ap.error("--pairs, --power-pairs and --jobs must be >= 1")
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
        with ProcessPoolExecutor(min(args.jobs, len(roots))) as pool:
            futures = {name: pool.submit(score_suite, name, str(root))
                       for name, root in roots.items()}
            suites = {name: f.result() for name, f in futures.items()}
        if cache is not None:
            with cache.open("wb") as fh:
                pickle.dump(suites, fh)
    t_scored = time.perf_counter()
    print(f"scored one correct and one wrong answer per instruction in {t_scored - t0:.0f} s")
    print(f"noise model: pass rate per level {PASS_RATES}; logit sd: template "
          f"{TEMPLATE_SD}, instruction {INSTRUCTION_SD}, template-shared run noise "
          f"{SHARED_NOISE}; delta {DELTA}, family alpha {ALPHA}")
    for data in suites.values():
        rows = []
        for lv in sorted(set(data.levels.tolist())):
            m = data.levels == lv
            rows.append([f"L{lv}", int(m.sum()), len(set(np.array(data.clusters)[m])),
                         f"{data.s_pass[m].mean():.3f}", f"{data.s_fail[m].mean():.3f}"])
        print(f"\n{data.name}: level score of a passing / failing sample "
              f"({data.oracle_failed} correct answers that do not pass)")
        print(tabulate(rows, headers=["level", "instructions", "clusters", "passing",
                                      "failing"], disable_numparse=True))
    tasks = [Task(s, k, sh, args.pairs, args.seed) for s in suites for k in SAMPLES
             for sh in (0.0, SHARED_NOISE)]
    tasks += [Task(s, 5, sh, args.pairs, args.seed) for s in suites for sh in HEAVIER]
    power_k = (5,) if args.quick else SAMPLES
    power_noise = (0.0,) if args.quick else (0.0, SHARED_NOISE)
    for s, data in suites.items():
        for k in power_k:
            for sh in power_noise:
                for size in DROPS:
                    for lv in sorted(set(data.levels.tolist())):
                        tasks.append(Task(s, k, sh, args.power_pairs, args.seed,
                                          (Drop(lv, size),)))
        for sh in power_noise:
            tasks += [Task(s, 5, sh, args.power_pairs, args.seed, (Drop(0, size, False),))
                      for size in CONCENTRATED]
            tasks.append(Task(s, 5, sh, args.power_pairs, args.seed,
                              (Drop(2, 0.05), Drop(0, 0.10, False))))
    tasks.sort(key=lambda t: -t.pairs)  # the long ones first
    with ProcessPoolExecutor(args.jobs, initializer=_init, initargs=(suites,)) as pool:
        outcomes = list(pool.map(run_task, tasks))
    predictions = {(s, k): predicted_power(data, k, args.seed) for s, data in suites.items()
                   for k in power_k}
    order = {"null": 0, "level": 1, "template": 2, "hiding": 3}
    report(sorted(outcomes, key=lambda o: (order[o.task.kind], list(suites).index(o.task.suite),
                                           o.task.k, o.task.shared,
                                           [(d.level, d.size) for d in o.task.drops])),
           predictions, suites)
    busy = sum(o.seconds for o in outcomes)
    print(f"\nwall time {time.perf_counter() - t0:.0f} s (scoring {t_scored - t0:.0f} s, "
          f"simulation {busy:.0f} s of work on {args.jobs} process(es))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
