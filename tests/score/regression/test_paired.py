"""The fixed-suite paired test (score/regression/paired.py): exact under the null, monotone, and
blind to
nothing a uniform collapse shows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.score.regression.multiple import regressions
from pytest_graphinstruct.score.regression.paired import (
    MIN_DRAWS,
    draws_for,
    flip_p_values,
    suite_paired,
)


def _runs(base: list[float], cand: list[float], level: int = 2
          ) -> tuple[dict[str, tuple[int, float]], dict[str, tuple[int, float]]]:
    ids = [f"L{level}-{i:03d}" for i in range(len(base))]
    return ({i: (level, b) for i, b in zip(ids, base, strict=True)},
            {i: (level, c) for i, c in zip(ids, cand, strict=True)})


def test_a_collapsed_level_has_the_smallest_p_value_and_regresses() -> None:
    rng = np.random.default_rng(3)
    base = rng.uniform(0.6, 1.0, 200).tolist()
    b, c = _runs(base, [x - 0.36 for x in base])
    d = suite_paired(b, c).levels[2]
    assert d.p_drop == pytest.approx(1 / (1 + MIN_DRAWS))
    assert d.mean_diff == pytest.approx(-0.36)
    assert d.high < 0
    assert regressions({2: d}, delta=0.02) == {2}


def test_half_a_level_wrong_regresses() -> None:
    rng = np.random.default_rng(4)
    base = rng.uniform(0.6, 1.0, 100).tolist()
    b, c = _runs(base, [x - (0.4 if i % 2 else 0.0) for i, x in enumerate(base)])
    d = suite_paired(b, c).levels[2]
    assert d.p_drop < 0.001 and d.mean_diff == pytest.approx(-0.2)


def test_identical_answers_are_no_change_with_an_interval_of_width_zero() -> None:
    b, c = _runs([0.9, 0.5, 0.7], [0.9, 0.5, 0.7])
    d = suite_paired(b, c).levels[2]
    assert (d.mean_diff, d.low, d.high, d.p_drop) == (0.0, 0.0, 0.0, 1.0)


def test_a_drop_on_few_instructions_can_only_reach_two_to_the_minus_n() -> None:
    b, c = _runs([0.9] * 3, [0.5] * 3)
    # 3 instructions, all worse: 1 of the 8 sign patterns is as bad (exact p = 1/8)
    assert suite_paired(b, c).levels[2].p_drop == pytest.approx(0.125, abs=0.01)


def test_the_order_of_the_mappings_does_not_matter() -> None:
    rng = np.random.default_rng(5)
    b, c = _runs(rng.uniform(0, 1, 50).tolist(), rng.uniform(0, 1, 50).tolist())
    flipped = dict(reversed(list(c.items())))
    assert suite_paired(b, c) == suite_paired(b, flipped)


def test_ids_in_one_run_only_are_listed_and_levels_must_agree() -> None:
    b, c = _runs([0.5, 0.6], [0.5, 0.6])
    c["L2-999"] = (2, 0.3)
    r = suite_paired(b, c)
    assert r.only_candidate == ("L2-999",) and r.levels[2].n == 2
    c["L2-000"] = (3, 0.5)
    with pytest.raises(ValueError, match="level 2 in the baseline but 3"):
        suite_paired(b, c)


def test_the_draws_reach_holms_smallest_threshold() -> None:
    assert draws_for(6) == MIN_DRAWS
    assert 1 / (1 + draws_for(600)) < 0.05 / 600 / 10
    with pytest.raises(ValueError):
        draws_for(0)


def test_under_the_null_the_test_holds_its_level() -> None:
    """Symmetric differences (nothing changed): P(p ≤ a) ≤ a, and close to it."""
    rng = np.random.default_rng(6)
    rows = rng.choice([-0.4, 0.0, 0.0, 0.4], size=(4000, 40)) + rng.normal(0, 0.02, (4000, 40))
    p = flip_p_values(rows, draws=2000, seed=1)
    for a in (0.01, 0.05, 0.2):
        share = float(np.mean(p <= a))
        assert share <= a + 3 * np.sqrt(a * (1 - a) / 4000)
        assert share >= a / 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=1, max_size=60),
       st.lists(st.floats(0, 1), min_size=60, max_size=60))
# found by Hypothesis: a slack of the whole row's Σ|d| forgave the larger row's -2⁻⁵² subset
@example(d=[-2.220446049250313e-16, 0.0], worse=[0.0, 1.0] + [0.0] * 58)
def test_a_candidate_worse_on_every_instruction_never_gets_a_larger_p(
        d: list[float], worse: list[float]) -> None:
    x = np.array(d)
    y = x - np.array(worse[:x.size])
    p = flip_p_values(np.stack([x, y]), draws=2000)
    assert p[1] <= p[0]


@settings(max_examples=40, deadline=None)
# no subnormals: halving -5e-324 underflows to 0, which no test can tell from a drop (found by
# Hypothesis: d=[0.0, -5e-324], factor=0.5)
@given(st.lists(st.floats(-1, 1, allow_subnormal=False), min_size=2, max_size=40),
       st.floats(0.01, 100))
def test_scaling_the_differences_leaves_p_unchanged(d: list[float], factor: float) -> None:
    x = np.array(d)
    p = flip_p_values(np.stack([x, x * factor]), draws=2000)
    assert p[0] == p[1]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=5, max_size=80), st.integers(0, 2**31))
def test_scaling_a_drop_up_never_lowers_its_rejection(base: list[float], seed: int) -> None:
    """More evidence never reads as less: the candidate's drop ``s·δ`` (δ ≥ 0 per instruction
    plus sampling noise), for growing ``s``, is flagged at least as often."""
    rng = np.random.default_rng(seed)
    b = np.array(base)
    noise = rng.normal(0, 0.1, b.size)
    delta = rng.uniform(0, 0.5, b.size)
    flagged = []
    for s in (0.0, 0.5, 1.0, 2.0):
        runs = _runs(b.tolist(), (b + noise - s * delta).tolist())
        d = suite_paired(*runs).levels[2]
        flagged.append(d.p_drop)
    assert flagged == sorted(flagged, reverse=True)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="finite"):
        flip_p_values(np.array([0.1, float("nan")]))
    with pytest.raises(ValueError, match="at least one"):
        flip_p_values(np.zeros((2, 0)))
    b, c = _runs([0.5], [0.5])
    with pytest.raises(ValueError, match="confidence"):
        suite_paired(b, c, confidence=1.0)


def test_a_rows_p_value_does_not_depend_on_the_rows_beside_it() -> None:
    """The subsets are made block by block from (seed, stream, n) alone: one row asked alone
    or among others gets the same p-value, and more draws than one block hold."""
    rng = np.random.default_rng(8)
    rows = rng.normal(-0.05, 0.3, (5, 30))
    together = flip_p_values(rows, draws=200_000)
    alone = [float(flip_p_values(r, draws=200_000)) for r in rows]
    assert together.tolist() == alone


def test_a_rise_is_the_same_test_of_the_other_tail() -> None:
    """The p-value of "no rise" is the sign-flip test of ``−d`` over the same subsets, and, with
    pass counts, combined with the count test's other tail alike (issue 48 §6)."""
    from pytest_graphinstruct.score.regression.counts import PassCount, count_p_values
    from pytest_graphinstruct.score.regression.paired import combined_p

    rng = np.random.default_rng(9)
    base = rng.uniform(0.5, 0.9, 30)
    b, c = _runs(base.tolist(), (base + rng.normal(0.1, 0.05, 30)).tolist())
    up = suite_paired(b, c).levels[2]
    d = np.array([c[i][1] - b[i][1] for i in sorted(b)])
    assert up.p_rise == float(flip_p_values(-d, draws=draws_for(1), stream=2))
    assert up.p_drop == float(flip_p_values(d, draws=draws_for(1), stream=2))
    assert up.p_rise < 0.01 < 0.99 < up.p_drop
    # swapping the two runs swaps the two tails exactly
    down = suite_paired(c, b).levels[2]
    assert (down.p_drop, down.p_rise) == (up.p_rise, up.p_drop)
    bp = {i: PassCount(4, 5) for i in b}
    cp = {i: PassCount(5, 5) if k % 3 else PassCount(4, 5) for k, i in enumerate(sorted(c))}
    both = suite_paired(b, c, baseline_passes=bp, candidate_passes=cp).levels[2]
    ids = sorted(b)
    drop, rise = count_p_values([bp[i] for i in ids], [cp[i] for i in ids])
    assert both.passes is not None and both.passes.p_rise == rise
    assert both.p_rise == combined_p(up.p_rise, rise)
    assert both.p_drop == combined_p(up.p_drop, drop)


def test_identical_answers_give_one_both_ways() -> None:
    b, c = _runs([0.9, 0.5, 0.7], [0.9, 0.5, 0.7])
    d = suite_paired(b, c).levels[2]
    assert (d.p_drop, d.p_rise) == (1.0, 1.0)
