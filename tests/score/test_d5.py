from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.score.d5 import (
    Spend,
    cell_cost,
    d5_value,
    infeasible_d5,
    instruction_d5,
    mean_instruction_tpv,
)
from tests.score.published_results import load, requires_published, run_names

# ---------------------------------------------------------------- the formula (Eq. 1)


def test_zero_tokens_one_call_is_one() -> None:
    assert d5_value(0.0, 1.0) == 1.0


def test_hand_computed_values() -> None:
    # 1000 tokens per valid graph, 3 calls per valid graph: both exponents are −1.
    assert d5_value(1000.0, 3.0) == pytest.approx(math.exp(-1))
    assert d5_value(500.0, 2.0) == pytest.approx(0.7 * math.exp(-0.5) + 0.3 * math.exp(-0.5))
    assert d5_value(200.6, 1.0) == pytest.approx(0.8727677633777404, abs=1e-15)


def test_api_term_is_one_below_one_call_per_valid_graph() -> None:
    assert d5_value(1000.0, 0.5) == pytest.approx(0.7 * math.exp(-1) + 0.3)


def test_infinite_cost_scores_zero() -> None:
    assert d5_value(math.inf, math.inf) == 0.0


@pytest.mark.parametrize(("tpv", "api"), [(-1.0, 1.0), (1.0, -1.0), (math.nan, 1.0)])
def test_formula_rejects_bad_inputs(tpv: float, api: float) -> None:
    with pytest.raises(ValueError):
        d5_value(tpv, api)


# ---------------------------------------------------------------- one instruction


def test_five_valid_samples_one_call_each() -> None:
    r = instruction_d5([Spend(100, 1)] * 5, valid=5)
    assert (r.tokens, r.calls, r.valid) == (500, 5, 5)
    assert r.tpv == 100.0
    assert r.api == 1.0
    assert r.token_score == pytest.approx(math.exp(-0.1))
    assert r.api_score == 1.0
    assert r.d5 == pytest.approx(0.7 * math.exp(-0.1) + 0.3)
    assert r.basis == "valid"


def test_every_round_and_sample_is_charged() -> None:
    # 3 samples × 2 refinement rounds = 6 calls of 250 tokens; 2 valid graphs at the end.
    r = instruction_d5([Spend(250, 1)] * 6, valid=2)
    assert r.tpv == 750.0
    assert r.api == 3.0
    assert r.d5 == pytest.approx(0.7 * math.exp(-0.75) + 0.3 * math.exp(-1))


def test_retries_cost_calls_but_no_tokens() -> None:
    ok = Spend.of_answer(Answer(text="Graph[]{}", usage=Usage(40, 60), calls=3))
    failed = Spend.of_answer(Answer(error="HTTP 503", calls=5))
    assert ok == Spend(100, 3)
    assert failed == Spend(0, 5)
    r = instruction_d5([ok, failed], valid=1)
    assert (r.tpv, r.api) == (100.0, 8.0)
    assert r.d5 == pytest.approx(0.7 * math.exp(-0.1) + 0.3 * math.exp(-3.5))


def test_no_valid_sample_scores_zero() -> None:
    r = instruction_d5([Spend(100)] * 5, valid=0)
    assert r.d5 == 0.0
    assert r.tpv is None and r.api is None
    assert r.basis == "no-valid"


def test_no_valid_sample_scores_zero_even_with_unknown_usage() -> None:
    r = instruction_d5([Spend(None)] * 5, valid=0)
    assert r.d5 == 0.0
    assert r.tokens is None


def test_unknown_usage_leaves_d5_absent() -> None:
    missing = Spend.of_answer(Answer(text="Graph[]{}", usage=None))
    partial = Spend.of_answer(Answer(text="Graph[]{}", usage=Usage(10, None)))
    assert missing.tokens is None and partial.tokens is None
    r = instruction_d5([Spend(100), missing, Spend(100)], valid=3)
    assert r.d5 is None
    assert r.tokens is None and r.tpv is None
    assert r.api == 1.0  # calls are known
    assert r.basis == "unknown-usage"


def test_negative_counts_are_rejected() -> None:
    with pytest.raises(ValueError):
        Spend(-1)
    with pytest.raises(ValueError):
        Spend(1, calls=-1)
    with pytest.raises(ValueError):
        instruction_d5([], valid=-1)


# ---------------------------------------------------------------- infeasible instructions


def test_infeasible_is_the_refusal_share() -> None:
    r = infeasible_d5([Spend(80)] * 5, refusals=3, samples=5)
    assert r.d5 == pytest.approx(0.6)
    assert r.basis == "refusals"
    assert r.valid == 3
    assert r.tpv == pytest.approx(400 / 3)


def test_infeasible_all_refused_and_none_refused() -> None:
    assert infeasible_d5([Spend(1)] * 5, refusals=5, samples=5).d5 == 1.0
    r = infeasible_d5([Spend(1)] * 5, refusals=0, samples=5)
    assert r.d5 == 0.0 and r.tpv is None and r.api is None


def test_infeasible_does_not_need_usage() -> None:
    assert infeasible_d5([Spend(None)] * 4, refusals=2, samples=4).d5 == 0.5


def test_infeasible_without_samples_scores_zero() -> None:
    assert infeasible_d5([], refusals=0, samples=0).d5 == 0.0


def test_infeasible_rejects_more_refusals_than_samples() -> None:
    with pytest.raises(ValueError):
        infeasible_d5([], refusals=3, samples=2)


# ---------------------------------------------------------------- cell level


def test_cell_tpv_is_total_tokens_over_total_valid() -> None:
    a = instruction_d5([Spend(100)] * 5, valid=5)  # 500 tokens, 5 valid
    b = instruction_d5([Spend(300)] * 5, valid=1)  # 1500 tokens, 1 valid
    c = instruction_d5([Spend(50)] * 5, valid=0)  # 250 tokens, nothing valid
    cost = cell_cost([a, b, c])
    assert (cost.tokens, cost.valid, cost.calls, cost.instructions) == (2250, 6, 15, 3)
    assert cost.tpv == 375.0
    assert cost.api == 2.5
    # the leaderboard variant averages per-instruction TPVs instead: (100 + 1500) / 2
    assert mean_instruction_tpv([a.tpv, b.tpv, c.tpv]) == 800.0


def test_cell_tpv_is_unknown_when_any_usage_is() -> None:
    a = instruction_d5([Spend(100)] * 5, valid=5)
    b = instruction_d5([Spend(None)], valid=1)
    cost = cell_cost([a, b])
    assert cost.tpv is None and cost.tokens is None
    assert cost.unknown_instructions == 1


def test_cell_without_valid_output_has_no_tpv() -> None:
    assert cell_cost([instruction_d5([Spend(10)], valid=0)]).tpv is None
    assert cell_cost([]).tpv is None


def test_mean_instruction_tpv_skips_undefined_values() -> None:
    assert mean_instruction_tpv([None, 0.0, 100.0, 300.0, math.inf]) == 200.0
    assert mean_instruction_tpv([None, 0.0]) is None


# ---------------------------------------------------------------- properties

spends = st.lists(
    st.builds(Spend, st.one_of(st.none(), st.integers(0, 10**6)), st.integers(0, 20)),
    max_size=30,
)


@given(spends, st.integers(0, 30))
def test_d5_is_a_score(sp: list[Spend], valid: int) -> None:
    r = instruction_d5(sp, valid)
    assert r.d5 is None or 0.0 <= r.d5 <= 1.0
    if r.d5 is None:
        assert valid > 0 and any(s.tokens is None for s in sp)


@given(st.integers(1, 10), st.integers(0, 10**5), st.integers(1, 10**5), st.integers(1, 5))
def test_more_tokens_never_raise_d5(valid: int, tokens: int, extra: int, calls: int) -> None:
    low = instruction_d5([Spend(tokens, calls)], valid).d5
    high = instruction_d5([Spend(tokens + extra, calls)], valid).d5
    assert low is not None and high is not None and high <= low


# ---------------------------------------------------------------- published results


@requires_published
def test_published_d5_follows_eq1() -> None:
    """The release's D5 is Eq. 1 with API = k/valid, lower only where retries added calls."""
    equal = below = 0
    for name in run_names():
        for r in load(name)["per_instruction"]:
            tpv, vr, d5 = r["d5_tokens_per_valid"], r["d1_valid_rate"], r["dimension_scores"]["D5"]
            if tpv is None:  # no valid sample
                assert d5 == 0.0
                continue
            if tpv == 0:  # the release's infeasible short-circuit: everything refused
                assert d5 == 1.0
                continue
            expected = d5_value(tpv, 1 / vr)  # one call per sample, no retry
            assert d5 <= expected + 1e-12
            if abs(d5 - expected) < 1e-12:
                equal += 1
            else:
                below += 1
    assert equal > 0.95 * (equal + below)
