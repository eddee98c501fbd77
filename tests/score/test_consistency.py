"""The consistency estimators: pass@k and pass^k by hand, their order, the common k, and the
bootstrap intervals (deterministic, ordered like the estimates)."""

from __future__ import annotations

from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.score.consistency import (
    Tally,
    common_k,
    consistency,
    pass_all_k,
    pass_at_k,
)
from pytest_graphinstruct.score.regression.bootstrap import bootstrap_levels, mean_interval


@pytest.mark.parametrize(("n", "c", "k", "at_k", "all_k"), [
    (3, 0, 3, 0.0, 0.0),
    (3, 3, 3, 1.0, 1.0),
    (3, 1, 3, 1.0, 0.0),  # k = n: at least one passes / every one passes
    (3, 2, 3, 1.0, 0.0),
    (5, 2, 2, 1 - 3 / 10, 1 / 10),  # C(3,2)=3, C(5,2)=10, C(2,2)=1
    (4, 3, 2, 1.0, 3 / 6),  # C(1,2)=0; C(3,2)=3 of C(4,2)=6
    (4, 1, 1, 0.25, 0.25),  # k = 1: both are c / n
])
def test_the_estimators_by_hand(n: int, c: int, k: int, at_k: float, all_k: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(at_k)
    assert pass_all_k(n, c, k) == pytest.approx(all_k)


@pytest.mark.parametrize(("n", "c", "k"), [(3, 1, 0), (3, 1, 4), (3, 4, 2), (2, -1, 1)])
def test_an_impossible_k_or_count_is_refused(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="need 1 <= k <= n"):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError, match="need 1 <= k <= n"):
        pass_all_k(n, c, k)


def test_a_tally_checks_its_counts_and_says_when_it_is_flaky() -> None:
    with pytest.raises(ValueError, match="0 <= c <= n"):
        Tally(2, 3)
    with pytest.raises(ValueError, match="n >= 1"):
        Tally(0, 0)
    assert [Tally(3, c).flaky for c in range(4)] == [False, True, True, False]


def test_the_common_k_is_the_fewest_samples() -> None:
    assert common_k([Tally(5, 1), Tally(3, 3), Tally(4, 0)]) == 3
    with pytest.raises(ValueError, match="no items"):
        common_k([])


def test_a_cells_figures_by_hand() -> None:
    got = consistency([Tally(3, 3), Tally(3, 1), Tally(3, 0), Tally(3, 2)])
    assert (got.k, got.items, got.flaky) == (3, 4, 2)
    assert got.pass_at_1.estimate == pytest.approx((1 + 1 / 3 + 0 + 2 / 3) / 4)
    assert got.pass_at_k.estimate == pytest.approx(3 / 4)
    assert got.pass_all_k.estimate == pytest.approx(1 / 4)
    assert got.pass_all_k.n == 4


def test_items_of_more_samples_are_measured_at_the_common_k() -> None:
    got = consistency([Tally(2, 1), Tally(4, 2)])
    assert got.k == 2
    assert got.pass_at_k.estimate == pytest.approx((1.0 + (1 - comb(2, 2) / comb(4, 2))) / 2)
    assert got.pass_all_k.estimate == pytest.approx((0.0 + comb(2, 2) / comb(4, 2)) / 2)


def test_a_level_stream_gives_the_levels_own_bootstrap_interval() -> None:
    xs = [0.0, 1.0, 1.0, 0.5, 0.25, 1.0]
    level = bootstrap_levels({2: xs}).levels[2]
    assert mean_interval(xs, stream=2) == level
    assert mean_interval(xs, stream=2) == mean_interval(xs, stream=2)  # seeded
    with pytest.raises(ValueError, match="no values"):
        mean_interval([], stream=0)


_TALLIES = st.lists(st.integers(1, 8).flatmap(
    lambda n: st.builds(Tally, st.just(n), st.integers(0, n))), min_size=1, max_size=30)


@settings(max_examples=80, deadline=None)
@given(_TALLIES)
def test_pass_all_k_le_pass_at_1_le_pass_at_k_estimates_and_interval_ends(
        tallies: list[Tally]) -> None:
    got = consistency(tallies)
    a, one, at = got.pass_all_k, got.pass_at_1, got.pass_at_k
    assert 0.0 <= a.estimate <= one.estimate <= at.estimate <= 1.0
    assert a.low <= one.low <= at.low and a.high <= one.high <= at.high
    for x in (a, one, at):
        assert 0.0 <= x.low <= x.estimate <= x.high <= 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8), st.booleans()), min_size=1, max_size=30))
def test_all_three_agree_when_no_item_is_flaky(items: list[tuple[int, bool]]) -> None:
    got = consistency([Tally(n, n if ok else 0) for n, ok in items])
    assert got.flaky == 0
    assert got.pass_all_k == got.pass_at_1 == got.pass_at_k
    assert got.pass_at_1.estimate == pytest.approx(sum(ok for _, ok in items) / len(items))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n),
                                                        st.integers(1, n))))
def test_one_item_at_any_k_is_ordered(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    assert 0.0 <= pass_all_k(n, c, k) <= c / n <= pass_at_k(n, c, k) <= 1.0
