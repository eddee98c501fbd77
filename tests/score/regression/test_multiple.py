"""The family-wise regression rule: Holm over every (cell, level), and the tolerance."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.score.regression.bootstrap import PairedDiff, paired_bootstrap
from pytest_graphinstruct.score.regression.multiple import (
    FAMILY_ALPHA,
    holm,
    holm_adjusted,
    improvements,
    regressions,
)


def diff(p: float, mean: float = -0.1) -> PairedDiff:
    return PairedDiff(n=50, mean_diff=mean, low=mean - 0.05, high=mean + 0.05, share_ge0=p,
                      share_le0=1 - p, p_drop=p, clusters=10, se=0.02, df=9.0)


def test_holm_by_hand() -> None:
    # m = 4: thresholds 0.0125, 0.0167, 0.025, 0.05 for the sorted p-values
    p = {"a": 0.010, "b": 0.04, "c": 0.015, "d": 0.03}
    assert holm(p) == {"a", "c"}  # 0.010 ≤ 0.0125, 0.015 ≤ 0.0167, 0.03 > 0.025 stops
    assert holm(p, alpha=0.2) == {"a", "b", "c", "d"}
    assert holm({}) == frozenset()
    assert holm({"x": 0.05}) == {"x"}  # a family of one is the plain test


def test_holm_stops_at_the_first_kept_hypothesis() -> None:
    assert holm({"a": 0.03, "b": 0.001}) == {"a", "b"}  # 0.001 ≤ 0.025, then 0.03 ≤ 0.05
    assert holm({"a": 0.03, "b": 0.026, "c": 0.001}) == {"c"}  # 0.026 > 0.025 stops
    assert holm({"a": 0.001, "b": 0.2, "c": 0.011}) == {"a", "c"}  # 0.011 ≤ 0.025, 0.2 > 0.05
    assert holm({"a": 0.001, "b": 0.2, "c": 0.02}) == {"a", "c"}
    assert holm({"a": 0.001, "b": 0.2, "c": 0.03}) == {"a"}  # 0.03 > 0.025 stops


def test_regressions_need_holm_and_the_tolerance() -> None:
    family = {("m-zero-shot", 0): diff(0.001, -0.10),   # real and large
              ("m-zero-shot", 1): diff(0.002, -0.01),   # real but within the tolerance
              ("m-zero-shot", 2): diff(0.30, -0.08),    # large but not shown to be real
              ("m-few-shot", 0): diff(0.004, -0.03)}
    assert regressions(family, delta=0.02) == {("m-zero-shot", 0), ("m-few-shot", 0)}
    assert regressions(family, delta=0.0) == {("m-zero-shot", 0), ("m-zero-shot", 1),
                                              ("m-few-shot", 0)}
    assert regressions(family, delta=0.05) == {("m-zero-shot", 0)}
    assert regressions({}, delta=0.02) == frozenset()


def test_more_tests_in_the_family_make_each_harder_to_flag() -> None:
    one = {0: diff(0.01)}
    assert regressions(one, delta=0.02) == {0}
    six = {lv: diff(0.01 if lv == 0 else 0.9) for lv in range(6)}
    assert regressions(six, delta=0.02) == frozenset()  # 0.01 > 0.05/6


@pytest.mark.parametrize("kwargs", [{"delta": -0.1}, {"delta": 0.02, "alpha": 0.0},
                                    {"delta": 0.02, "alpha": 1.0}])
def test_bad_parameters(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        regressions({0: diff(0.01)}, **kwargs)


def test_bad_p_values() -> None:
    with pytest.raises(ValueError):
        holm({"a": float("nan")})
    with pytest.raises(ValueError):
        holm({"a": 1.5})


@given(st.dictionaries(st.integers(0, 30), st.floats(0, 1), max_size=12),
       st.floats(0.001, 0.5))
def test_holm_lies_between_bonferroni_and_no_correction(p: dict[int, float],
                                                        alpha: float) -> None:
    got = holm(p, alpha=alpha)
    m = max(len(p), 1)
    assert {k for k, v in p.items() if v <= alpha / m} <= got
    assert got <= {k for k, v in p.items() if v <= alpha}
    # rejected hypotheses are the smallest p-values
    if got and len(got) < len(p):
        assert max(p[k] for k in got) <= min(p[k] for k in p if k not in got)
    assert got <= holm(p, alpha=min(alpha * 2, 0.99))


def test_family_wise_false_alarms_stay_below_alpha_with_nothing_changed() -> None:
    # 300 gated runs of six levels × two cells, both runs drawn from the same model
    rng = np.random.default_rng(0)
    alarms = 0
    for _ in range(300):
        family = {}
        for cell in ("a", "b"):
            base = {f"L{lv}-{i}": (lv, float(rng.uniform())) for lv in range(6)
                    for i in range(20)}
            cand = {i: (lv, float(rng.uniform())) for i, (lv, _) in base.items()}
            r = paired_bootstrap(base, cand, b=50)
            family |= {(cell, lv): d for lv, d in r.levels.items()}
        alarms += bool(regressions(family, delta=0.0, alpha=FAMILY_ALPHA))
    assert alarms / 300 <= 0.09  # 5 % expected; a binomial 95 % upper bound for 300 runs


def test_holm_adjusted_agrees_with_holm() -> None:
    p = {"a": 0.001, "b": 0.02, "c": 0.04, "d": 0.3}
    adj = holm_adjusted(p)
    assert adj == pytest.approx({"a": 0.004, "b": 0.06, "c": 0.08, "d": 0.3})
    with pytest.raises(ValueError):
        holm_adjusted({"x": 1.5})


def test_improvements_are_regressions_the_other_way() -> None:
    """Holm over the same family on the p-values of "no rise", and a rise above the tolerance
    (issue 48 §6): the rule "regressed" has, not a lone interval above 0."""
    from dataclasses import replace

    def up(p: float, mean: float) -> PairedDiff:
        return replace(diff(0.99, mean), p_rise=p)

    family = {0: up(0.001, 0.10), 1: up(0.002, 0.01), 2: up(0.30, 0.08), 3: up(0.004, 0.03)}
    assert improvements(family, delta=0.02) == {0, 3}
    assert improvements(family, delta=0.05) == {0}
    # six levels: 0.01 alone would be "improved"; Holm over six says not shown
    six = {lv: up(0.01 if lv == 0 else 0.9, 0.1) for lv in range(6)}
    assert improvements({0: six[0]}, delta=0.02) == {0}
    assert improvements(six, delta=0.02) == frozenset()
    assert regressions(family, delta=0.02) == frozenset()
    with pytest.raises(ValueError, match="delta"):
        improvements(family, delta=-0.1)
