"""tests/pinning.py: what a pin lets move (a float within its tolerance, a printed number by one
unit of its last digit) and what it never does (a verdict, an outcome, a word, an integer)."""

from __future__ import annotations

import math

import pytest

from tests.pinning import (
    SCORE_TOLERANCE,
    floats_agree,
    json_differences,
    numbers_agree,
    shape_digest,
    split_floats,
    summarize,
    text_differences,
    tolerance,
)


def _diffs(expected: object, observed: object) -> list[str]:
    return list(json_differences(expected, observed))


def test_each_float_has_its_tolerance() -> None:
    assert tolerance("cells[0].summary.s_total") == SCORE_TOLERANCE == 1e-5
    assert tolerance("dimension_scores.D3") == 1e-5
    assert tolerance("details.d3.gcn") == 1e-4  # D3's GCN part, weight 0.15 in D3
    assert tolerance("cells[0].summary.q_per_ktpv") == 1e-4
    assert tolerance("cells[0].summary.s_total_ci95[1]") == 1e-5


def test_floats_agree_within_the_tolerance_only() -> None:
    assert floats_agree(0.9498553492507573, 0.9498553492851929, 1e-5)  # two CPUs' S_total
    assert floats_agree(0.5, 0.50001, 1e-5)
    assert not floats_agree(0.5, 0.50002, 1e-5)
    assert not floats_agree(0.5, 0.5 + 1e-12, 0.0)
    assert floats_agree(math.nan, math.nan, 1e-5)
    assert not floats_agree(math.nan, 0.5, 1e-5)
    assert floats_agree(math.inf, math.inf, 1e-5)
    assert not floats_agree(math.inf, 1e300, 1e-5)


def test_a_float_within_its_tolerance_passes() -> None:
    expected = {"summary": {"s_total": 0.9498553492507573, "passed": 12},
                "details": {"d3": {"gcn": 0.75}}}
    observed = {"summary": {"s_total": 0.9498553492851929, "passed": 12},
                "details": {"d3": {"gcn": 0.75008}}}
    assert _diffs(expected, observed) == []


def test_a_float_beyond_its_tolerance_fails_naming_it() -> None:
    assert _diffs({"summary": {"s_total": 0.95}}, {"summary": {"s_total": 0.951}}) == [
        "summary.s_total: expected 0.95, observed 0.951 (|Δ| 0.001 > 1e-05)"]
    assert _diffs({"d3": {"gcn": 0.75}}, {"d3": {"gcn": 0.7502}}) == [
        "d3.gcn: expected 0.75, observed 0.7502 (|Δ| 0.0002 > 0.0001)"]


def test_a_changed_verdict_outcome_or_integer_fails() -> None:
    assert _diffs({"outcome": "passed"}, {"outcome": "failed"}) == [
        "outcome: expected 'passed', observed 'failed'"]
    assert _diffs({"verdict": {"passed": True}}, {"verdict": {"passed": False}}) == [
        "verdict.passed: expected True, observed False"]
    assert _diffs({"summary": {"failed": 0}}, {"summary": {"failed": 1}}) == [
        "summary.failed: expected 0, observed 1"]
    # an integer is not a float, even when equal
    assert _diffs({"tokens": 611}, {"tokens": 611.0}) == [
        "tokens: expected 611, observed 611.0"]
    assert _diffs({"error": None}, {"error": "timeout"}) == [
        "error: expected None, observed 'timeout'"]


def test_keys_and_lengths_are_exact() -> None:
    assert _diffs({"a": 1, "b": 2}, {"a": 1, "c": 2}) == [
        "b: missing (expected 2)", "c: not expected (observed 2)"]
    assert _diffs({"a": 1, "b": 2}, {"b": 2, "a": 1}) == [
        "(top): the keys are in another order"]
    assert _diffs([1, 2], [1, 2, 3]) == ["(top): expected 2 elements, observed 3"]


def test_a_report_item_is_named_by_its_instruction() -> None:
    expected = {"per_instruction": [{"instruction_id": "L3-001", "outcome": "passed"}]}
    observed = {"per_instruction": [{"instruction_id": "L3-001", "outcome": "failed"}]}
    assert _diffs(expected, observed) == [
        "per_instruction[L3-001].outcome: expected 'passed', observed 'failed'"]


def test_the_shape_holds_everything_but_the_floats() -> None:
    item = {"outcome": "passed", "valid": 2, "scores": [0.5, None, 0.25]}
    assert shape_digest(item) == shape_digest({**item, "scores": [0.50001, None, 0.3]})
    assert shape_digest(item) != shape_digest({**item, "outcome": "failed"})
    assert shape_digest(item) != shape_digest({**item, "valid": 3})
    assert shape_digest(item) != shape_digest({**item, "scores": [0.5, 0.0, 0.25]})
    # no string can pass for a float's placeholder
    assert shape_digest({"x": 0.5}) != shape_digest({"x": "f"})
    assert split_floats(item)[1] == [("scores[0]", 0.5), ("scores[2]", 0.25)]


def test_a_printed_number_may_differ_by_one_unit_of_its_last_digit() -> None:
    assert numbers_agree("0.9499", "0.9498", SCORE_TOLERANCE)
    assert numbers_agree("0.9499", "0.95", SCORE_TOLERANCE)  # printed without a trailing 0
    assert numbers_agree("0.950", "0.949", SCORE_TOLERANCE)
    assert not numbers_agree("0.9499", "0.9497", SCORE_TOLERANCE)
    assert numbers_agree("0.9498553492507573", "0.9498553492851929", SCORE_TOLERANCE)
    assert not numbers_agree("0.9498553492507573", "0.9499553492507573", SCORE_TOLERANCE)
    assert numbers_agree("26.484461", "26.48446", SCORE_TOLERANCE)
    assert numbers_agree("26.484461", "26.534461", 0.1)
    # an integer is a count or an id: exact
    assert not numbers_agree("12", "13", SCORE_TOLERANCE)
    assert not numbers_agree("12", "13", 10.0)


def test_text_holds_but_for_the_last_digit() -> None:
    pinned = "| cell | 0.628 | [0.423, 0.830] | 6 passed |\nL3-001 ✅ passed\n"
    assert text_differences(pinned, pinned.replace("0.830", "0.829")) == []
    assert text_differences(pinned, pinned.replace("0.830", "0.83")) == []


@pytest.mark.parametrize(("old", "new", "why"), [
    ("0.830", "0.828", "line 1: 0.830 → 0.828 (more than one unit of the last digit) in "
                       "'| cell | 0.628 | [0.423, 0.830] | 6 passed |'"),
    ("6 passed", "7 passed",
     "line 1: 6 → 7 (an integer) in '| cell | 0.628 | [0.423, 0.830] | 6 passed |'"),
    ("✅ passed", "❌ failed", "line 2: expected 'L3-001 ✅ passed', observed 'L3-001 ❌ failed'"),
    ("L3-001", "L3-002", "line 2: 001 → 002 (an integer) in 'L3-001 ✅ passed'"),
])
def test_a_changed_word_verdict_or_count_in_text_fails(old: str, new: str, why: str) -> None:
    pinned = "| cell | 0.628 | [0.423, 0.830] | 6 passed |\nL3-001 ✅ passed\n"
    assert text_differences(pinned, pinned.replace(old, new)) == [why]


def test_added_and_missing_lines_are_named() -> None:
    pinned = "a\nb 0.5\nc\n"
    assert text_differences(pinned, "a\nb 0.5\nnew\nc\n", name="md") == [
        "md after line 2: not expected ('new')"]
    assert text_differences(pinned, "a\nc\n", name="md") == ["md line 2: missing ('b 0.5')"]
    assert text_differences(pinned, "a\nb 0.5\nc\n", first_line=10) == []
    assert text_differences(pinned, "a\nb 0.7\nc\n", first_line=10) == [
        "line 11: 0.5 → 0.7 (more than one unit of the last digit) in 'b 0.5'"]


def test_a_long_list_of_differences_is_cut() -> None:
    lines = [f"item L0-{n:03d} differs" for n in range(12)]
    assert summarize(lines).splitlines() == [*lines[:10], "… and 2 more"]
    assert summarize(lines[:3]) == "\n".join(lines[:3])
