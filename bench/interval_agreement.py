"""How often the gate's verdict and the interval beside it read differently (issue 48 §6).

A simulated gated run: six levels of ``--instructions`` instructions each, a baseline and a run
of ``k`` samples per instruction drawn from the same per-instruction pass probabilities
(``expit(logit(0.7) + N(0, 1.2))``), except that the run's L2 logits are shifted down by
``shift``; an instruction's level score is its share of passing samples.  The gate is the
project's own: :func:`~pytest_graphinstruct.score.regression.paired.suite_paired` with both
runs' pass counts, Holm over the six levels.  Per row it counts, for L2:

* *real, interval reaches 0*: Holm rejects "no drop", yet the interval's upper end is ≥ 0;
* *not significant, interval below 0*: Holm does not reject, yet the whole interval is below 0;

for the unadjusted 95 % paired t interval the views print, and for a Bonferroni-adjusted one
(two-sided at ``1 − 2α/m``: each tail at Holm's smallest threshold).  docs/PLUGIN.md ("What was
compared") quotes it: adjusting the interval does not make the two read alike, so the views say
why they differ instead.

    python bench/interval_agreement.py --runs 200   # about 80 s on one core
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.special import expit, logit
from scipy.stats import t as student

from pytest_graphinstruct.score.regression.counts import PassCount
from pytest_graphinstruct.score.regression.multiple import FAMILY_ALPHA, holm_adjusted
from pytest_graphinstruct.score.regression.paired import suite_paired

LEVELS = 6
TESTED = 2  # the level that may drop


def one_run(rng: np.random.Generator, n: int, k: int,
            shift: float) -> tuple[bool, float, float, float]:
    """One simulated gated run: whether Holm rejects L2's "no drop", the upper ends of its
    unadjusted and Bonferroni-adjusted intervals, and its mean change."""
    base: dict[str, tuple[int, float]] = {}
    cand: dict[str, tuple[int, float]] = {}
    base_passes: dict[str, PassCount] = {}
    cand_passes: dict[str, PassCount] = {}
    for lv in range(LEVELS):
        mu = logit(0.7) + rng.normal(0.0, 1.2, n)
        for i in range(n):
            iid = f"L{lv}-{i:03d}"
            xb = int(rng.binomial(k, expit(mu[i])))
            xc = int(rng.binomial(k, expit(mu[i] - (shift if lv == TESTED else 0.0))))
            base[iid], cand[iid] = (lv, xb / k), (lv, xc / k)
            base_passes[iid], cand_passes[iid] = PassCount(xb, k), PassCount(xc, k)
    result = suite_paired(base, cand, baseline_passes=base_passes,
                          candidate_passes=cand_passes)
    adjusted = holm_adjusted({lv: d.p_drop for lv, d in result.levels.items()})
    d = result.levels[TESTED]
    q = float(student.ppf(1 - FAMILY_ALPHA / LEVELS, d.df))
    return adjusted[TESTED] <= FAMILY_ALPHA, d.high, d.mean_diff + q * d.se, d.mean_diff


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="simulated runs per row")
    parser.add_argument("--instructions", type=int, default=30, help="per level")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print("| k | L2 logit shift | mean change | real drops | unadjusted: real, reaches 0 | "
          "unadjusted: not significant, below 0 | Bonferroni: real, reaches 0 | "
          "Bonferroni: not significant, below 0 |")
    print("|---|---|---|---|---|---|---|---|")
    for k in (1, 5):
        for shift in (0.0, 0.4, 0.8, 1.2):
            rows = [one_run(rng, args.instructions, k, shift) for _ in range(args.runs)]
            real = [r for r in rows if r[0]]
            kept = [r for r in rows if not r[0]]
            counts = (len(real), sum(r[1] >= 0 for r in real), sum(r[1] < 0 for r in kept),
                      sum(r[2] >= 0 for r in real), sum(r[2] < 0 for r in kept))
            shares = " | ".join(f"{100 * c / len(rows):.1f} %" for c in counts)
            mean = float(np.mean([r[3] for r in rows]))
            print(f"| {k} | {shift} | {mean:+.3f} | {shares} |", flush=True)


if __name__ == "__main__":
    main()
