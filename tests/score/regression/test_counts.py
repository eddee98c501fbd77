"""The pass-count test: exact for any sample counts (checked by enumerating every outcome of
small designs), McNemar's test at one sample each, and what it sees (issue 48 §2)."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binom

from pytest_graphinstruct.score.regression.counts import (
    PassCount,
    count_p_value,
    count_p_values,
    pass_changes,
)


def counts(*pairs: tuple[int, int]) -> list[PassCount]:
    return [PassCount(x, k) for x, k in pairs]


def test_one_sample_each_is_the_sign_test_on_the_instructions_that_disagree() -> None:
    base = counts((1, 1), (1, 1), (1, 1), (0, 1), (1, 1), (0, 1))
    run = counts((0, 1), (0, 1), (1, 1), (1, 1), (0, 1), (0, 1))
    # discordant: 3 newly failing, 1 newly passing: P(Binomial(4, 1/2) <= 1)
    assert count_p_value(base, run) == pytest.approx(binom.cdf(1, 4, 0.5))


def test_three_instructions_whose_five_samples_all_turned_are_seen() -> None:
    # issue 48 §2: 3 of 30 L2 instructions now always wrong, the others unchanged
    base = counts(*[(5, 5)] * 30)
    run = counts(*[(0, 5)] * 3, *[(5, 5)] * 27)
    assert count_p_value(base, run) == pytest.approx((1 / math.comb(10, 5)) ** 3)


def test_nothing_to_learn_gives_one() -> None:
    assert count_p_value(counts((3, 3), (0, 2)), counts((1, 1), (0, 1))) == 1.0
    assert count_p_value([], []) == 1.0


def test_the_sides_must_pair() -> None:
    with pytest.raises(ValueError, match="2 baseline instructions for 1"):
        count_p_value(counts((1, 1), (0, 1)), counts((1, 1)))
    with pytest.raises(ValueError, match="0 <= passed <= samples"):
        PassCount(3, 2)


@pytest.mark.parametrize(("kb", "kr", "rates"), [
    (1, 1, (0.3, 0.8, 0.5)), (5, 1, (0.2, 0.9)), (2, 3, (0.5, 0.6)), (3, 3, (0.1, 0.7)),
])
def test_exact_every_outcome_enumerated(kb: int, kr: int, rates: tuple[float, ...]) -> None:
    """With nothing changed, P(p <= a) <= a at every level a, summed over every outcome."""
    sides = [list(itertools.product(range(kb + 1), range(kr + 1))) for _ in rates]
    law: list[tuple[float, float]] = []
    for outcome in itertools.product(*sides):
        prob = math.prod(binom.pmf(xb, kb, q) * binom.pmf(xr, kr, q)
                         for (xb, xr), q in zip(outcome, rates, strict=True))
        p = count_p_value([PassCount(xb, kb) for xb, _ in outcome],
                          [PassCount(xr, kr) for _, xr in outcome])
        law.append((p, prob))
    for a in sorted({p for p, _ in law}):
        assert sum(prob for p, prob in law if p <= a) <= a + 1e-9


_SIDE = st.lists(st.tuples(st.integers(1, 6), st.integers(1, 6), st.floats(0, 1),
                           st.floats(0, 1)), min_size=1, max_size=12)


def _sides(rows: list[tuple[int, int, float, float]]) -> tuple[list[PassCount], list[PassCount]]:
    base = [PassCount(round(fb * kb), kb) for kb, _, fb, _ in rows]
    run = [PassCount(round(fr * kr), kr) for _, kr, _, fr in rows]
    return base, run


@given(_SIDE)
def test_a_run_that_passes_more_of_one_instruction_never_looks_worse(
        rows: list[tuple[int, int, float, float]]) -> None:
    base, run = _sides(rows)
    p = count_p_value(base, run)
    assert 0.0 < p <= 1.0
    for i, r in enumerate(run):
        if r.passed < r.samples:
            better = [*run[:i], PassCount(r.passed + 1, r.samples), *run[i + 1:]]
            assert count_p_value(base, better) >= p - 1e-12


@given(_SIDE)
def test_the_change_is_the_mean_pass_share_change_inside_its_interval(
        rows: list[tuple[int, int, float, float]]) -> None:
    base, run = _sides(rows)
    change = pass_changes(base, run)
    shares = [r.share - b.share for b, r in zip(base, run, strict=True)]
    assert change.change == pytest.approx(sum(shares) / len(shares))
    assert change.low <= change.change + 1e-12 <= change.high + 2e-12
    assert change.p_value == count_p_value(base, run)


def test_the_two_tails_come_from_one_law() -> None:
    """"No rise" is the other tail of the same exact law: swapping the sides swaps the tails,
    and the two tails overlap by the observed count's own probability (issue 48 §6)."""
    base = counts((5, 5), (2, 5), (3, 5), (1, 5))
    run = counts((3, 5), (4, 5), (5, 5), (0, 5))
    drop, rise = count_p_values(base, run)
    assert drop == count_p_value(base, run)
    assert count_p_values(run, base) == pytest.approx((rise, drop))
    assert drop + rise > 1.0
    # three instructions that all turned from failing to passing: the rise is seen
    up = count_p_values(counts(*[(0, 5)] * 3), counts(*[(5, 5)] * 3))
    assert up[1] == pytest.approx((1 / math.comb(10, 5)) ** 3) and up[0] == 1.0
    assert count_p_values([], []) == (1.0, 1.0)


@pytest.mark.parametrize(("kb", "kr", "rates"), [(1, 1, (0.3, 0.8, 0.5)), (2, 3, (0.5, 0.6))])
def test_no_rise_is_exact_every_outcome_enumerated(kb: int, kr: int,
                                                   rates: tuple[float, ...]) -> None:
    sides = [list(itertools.product(range(kb + 1), range(kr + 1))) for _ in rates]
    law: list[tuple[float, float]] = []
    for outcome in itertools.product(*sides):
        prob = math.prod(binom.pmf(xb, kb, q) * binom.pmf(xr, kr, q)
                         for (xb, xr), q in zip(outcome, rates, strict=True))
        _, p = count_p_values([PassCount(xb, kb) for xb, _ in outcome],
                              [PassCount(xr, kr) for _, xr in outcome])
        law.append((p, prob))
    for a in sorted({p for p, _ in law}):
        assert sum(prob for p, prob in law if p <= a) <= a + 1e-9


@given(_SIDE)
def test_the_change_carries_both_tails(rows: list[tuple[int, int, float, float]]) -> None:
    base, run = _sides(rows)
    change = pass_changes(base, run)
    assert (change.p_value, change.p_rise) == count_p_values(base, run)


def test_the_gate_combines_the_tests_unless_each_side_has_one_sample() -> None:
    from pytest_graphinstruct.score.regression.paired import suite_paired

    ids = [f"L2-{i:03d}" for i in range(12)]
    base = {i: (2, 0.9) for i in ids}
    run = {i: (2, 0.4 if n < 4 else 0.9) for n, i in enumerate(ids)}
    for k in (1, 5):
        passes_b = {i: PassCount(k, k) for i in ids}
        passes_r = {i: PassCount(0 if n < 4 else k, k) for n, i in enumerate(ids)}
        d = suite_paired(base, run, baseline_passes=passes_b, candidate_passes=passes_r,
                         tests=1).levels[2]
        assert d.p_score is not None and d.passes is not None
        if k == 1:  # a score change is the pass change times the gap: the score test alone
            assert d.p_drop == d.p_score
        else:
            assert d.p_drop == min(1.0, 2 * min(d.p_score, d.passes.p_value))
            assert d.passes.p_value < d.p_score  # 20 samples turned, 4 instructions
