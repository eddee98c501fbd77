from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.score.levels import (
    LEVEL_WEIGHTS_V,
    WEIGHTS,
    LevelMean,
    effective_weights,
    level_means,
    level_score,
    s_total,
)
from pytest_graphinstruct.vocab import DIMENSIONS
from tests.score.published_results import load, requires_published, run_names

# ---------------------------------------------------------------- weights


def test_table4_weights() -> None:
    assert WEIGHTS[0] == (0.10, 0.0, 0.0, 0.60, 0.30)
    assert WEIGHTS[1] == WEIGHTS[2] == (0.15, 0.0, 0.0, 0.70, 0.15)
    assert WEIGHTS[3] == WEIGHTS[5] == (0.15, 0.0, 0.15, 0.50, 0.20)
    assert WEIGHTS[4] == (0.10, 0.15, 0.05, 0.55, 0.15)
    for row in WEIGHTS.values():
        assert math.fsum(row) == pytest.approx(1.0)
    assert LEVEL_WEIGHTS_V == (0.05, 0.10, 0.15, 0.20, 0.25, 0.25)
    assert math.fsum(LEVEL_WEIGHTS_V) == 1.0


def test_quality_only_weights_renormalize_without_d5() -> None:
    assert effective_weights(0, True) == pytest.approx({"D1": 1 / 7, "D4": 6 / 7})
    assert effective_weights(0, False) == {"D1": 0.10, "D4": 0.60, "D5": 0.30}
    w4 = effective_weights(4, True)
    assert w4 == pytest.approx({"D1": 0.10 / 0.85, "D2": 0.15 / 0.85, "D3": 0.05 / 0.85,
                                "D4": 0.55 / 0.85})


# ---------------------------------------------------------------- one instruction


def test_l0_combined_and_quality_only() -> None:
    dims = {"D1": 0.82, "D2": 0.0, "D3": 0.0, "D4": 1.0, "D5": 0.5}
    combined = level_score(0, dims, quality_only=False)
    assert combined.score == pytest.approx(0.10 * 0.82 + 0.60 * 1.0 + 0.30 * 0.5)
    assert combined.complete
    q = level_score(0, dims, quality_only=True)
    assert q.score == pytest.approx((0.10 * 0.82 + 0.60) / 0.70)
    assert q.score == pytest.approx(0.9742857142857143, abs=1e-15)  # the release's value


def test_l4_uses_all_five_dimensions() -> None:
    dims = {"D1": 0.5, "D2": 0.4, "D3": 0.3, "D4": 0.8, "D5": 0.6}
    s = level_score(4, dims, quality_only=False)
    assert s.score == pytest.approx(0.10 * 0.5 + 0.15 * 0.4 + 0.05 * 0.3 + 0.55 * 0.8 + 0.15 * 0.6)


def test_zero_weight_dimensions_may_be_absent() -> None:
    s = level_score(1, {"D1": 1.0, "D4": 0.5}, quality_only=True)
    assert s.score == pytest.approx((0.15 + 0.70 * 0.5) / 0.85)
    assert s.missing == ()


def test_missing_dimension_is_renormalized_and_reported() -> None:
    s = level_score(3, {"D1": 0.6, "D3": None, "D4": 0.9}, quality_only=True)
    assert s.missing == ("D3",)
    assert not s.complete
    assert s.weights == pytest.approx({"D1": 0.15 / 0.65, "D4": 0.50 / 0.65})
    assert s.score == pytest.approx((0.15 * 0.6 + 0.50 * 0.9) / 0.65)


def test_missing_d5_counts_only_when_d5_is_weighted() -> None:
    dims = {"D1": 1.0, "D4": 0.5, "D5": None}
    assert level_score(0, dims, quality_only=True).missing == ()
    s = level_score(0, dims, quality_only=False)
    assert s.missing == ("D5",)
    assert s.score == pytest.approx((0.10 + 0.60 * 0.5) / 0.70)


def test_nothing_present_gives_no_score() -> None:
    s = level_score(2, {"D1": None}, quality_only=True)
    assert s.score is None
    assert s.missing == ("D1", "D4")


@pytest.mark.parametrize(
    ("level", "dims"),
    [(6, {"D1": 1.0}), (0, {"D6": 1.0}), (0, {"D1": 1.5}), (0, {"D1": math.nan}),
     (0, {"D4": -0.1})],
)
def test_bad_input_raises(level: int, dims: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        level_score(level, dims)


# ---------------------------------------------------------------- levels and S_total


def test_level_means_count_unscored_instructions() -> None:
    m = level_means([(0, 1.0), (0, 0.5), (0, None), (2, 0.3), (5, None)])
    assert list(m) == [0, 2, 5]
    assert m[0] == LevelMean(0, 0.75, 2, 1)
    assert m[2].mean == pytest.approx(0.3)
    assert m[5] == LevelMean(5, None, 0, 1)


def test_s_total_all_levels() -> None:
    t = s_total({0: 1.0, 1: 0.9, 2: 0.8, 3: 0.7, 4: 0.6, 5: 0.5})
    expected = 0.05 * 1 + 0.10 * 0.9 + 0.15 * 0.8 + 0.20 * 0.7 + 0.25 * 0.6 + 0.25 * 0.5
    assert t.unnormalized == pytest.approx(expected)
    assert t.renormalized == t.unnormalized
    assert t.complete and t.levels_missing == ()


def test_s_total_of_a_level_subset_reports_both_forms() -> None:
    t = s_total({0: 1.0, 1: 1.0, 2: 1.0})
    assert t.unnormalized == pytest.approx(0.30)
    assert t.renormalized == pytest.approx(1.0)
    assert t.levels_present == (0, 1, 2)
    assert t.levels_missing == (3, 4, 5)
    t = s_total({3: 0.5, 5: None})
    assert t.unnormalized == pytest.approx(0.10)
    assert t.renormalized == pytest.approx(0.5)
    assert t.levels_missing == (0, 1, 2, 4, 5)


def test_s_total_accepts_level_means() -> None:
    t = s_total(level_means([(4, 0.8), (4, 0.6), (5, None)]))
    assert t.unnormalized == pytest.approx(0.25 * 0.7)
    assert t.levels_present == (4,)


def test_s_total_of_nothing() -> None:
    t = s_total({})
    assert t.unnormalized == 0.0 and t.renormalized is None
    assert t.levels_missing == (0, 1, 2, 3, 4, 5)


def test_s_total_rejects_unknown_levels() -> None:
    with pytest.raises(ValueError):
        s_total({7: 0.5})


# ---------------------------------------------------------------- properties

unit = st.floats(0.0, 1.0)
maybe_unit = st.one_of(st.none(), unit)


@given(st.sampled_from(range(6)), st.fixed_dictionaries({d: maybe_unit for d in DIMENSIONS}),
       st.booleans())
def test_level_score_is_a_score(level: int, dims: dict[str, float | None], q: bool) -> None:
    s = level_score(level, dims, quality_only=q)
    assert s.score is None or 0.0 <= s.score <= 1.0
    if s.score is not None:
        assert math.fsum(s.weights.values()) == pytest.approx(1.0)
        lo = min(dims[d] for d in s.weights)  # type: ignore[type-var]
        hi = max(dims[d] for d in s.weights)  # type: ignore[type-var]
        assert lo - 1e-12 <= s.score <= hi + 1e-12  # a weighted mean


@given(st.sampled_from(range(6)), st.booleans())
def test_all_ones_score_one(level: int, q: bool) -> None:
    s = level_score(level, dict.fromkeys(DIMENSIONS, 1.0), quality_only=q)
    assert s.score == pytest.approx(1.0, abs=1e-12)


@given(st.dictionaries(st.sampled_from(range(6)), maybe_unit))
def test_s_total_is_a_score(means: dict[int, float | None]) -> None:
    t = s_total(means)
    assert 0.0 <= t.unnormalized <= 1.0 + 1e-12
    if t.renormalized is not None:
        assert 0.0 <= t.renormalized <= 1.0
        assert t.unnormalized <= t.renormalized + 1e-12
    assert set(t.levels_present) | set(t.levels_missing) == set(range(6))


# ---------------------------------------------------------------- published results


@requires_published
def test_published_level_scores_are_quality_only_table4() -> None:
    """Every published per-instruction level score is the quality-only Table 4 formula."""
    worst = 0.0
    for name in run_names():
        for r in load(name)["per_instruction"]:
            s = level_score(r["level"], r["dimension_scores"], quality_only=True)
            assert s.complete
            assert s.score is not None
            worst = max(worst, abs(s.score - r["level_score"]))
    assert worst < 1e-12


@requires_published
def test_published_totals_reproduce_from_per_instruction_scores() -> None:
    for name in run_names():
        run = load(name)
        means = level_means((r["level"], r["level_score"]) for r in run["per_instruction"])
        for level, m in means.items():
            assert m.unscored == 0
            assert m.mean == pytest.approx(run["per_level_scores"][str(level)], abs=1e-12)
        total = s_total(means)
        assert total.complete
        assert total.unnormalized == pytest.approx(run["total_score"], abs=1e-12)
        # quality-only files publish final = total (no Pareto bonus applied)
        assert run["final_score"] == run["total_score"]
