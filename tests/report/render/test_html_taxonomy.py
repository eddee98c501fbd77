"""The failure taxonomy: each sample in exactly one class, errors and release items counted."""

from __future__ import annotations

from pytest_graphinstruct.report.render.html.taxonomy import (
    CLASSES,
    item_classes,
    sample_class,
    taxonomy,
)
from pytest_graphinstruct.run.records.results import ItemResult, SampleResult, ViolationDetail
from tests.report.html_fixtures import two_cell_report


def test_the_fixture_answers_fall_in_their_classes() -> None:
    zero, few = two_cell_report().cells
    assert [item_classes(i) for i in zero.per_instruction] == [
        ("violations",), ("refusal",), ("unparseable",), ("no answer",)]
    assert item_classes(few.per_instruction[0]) == ("passed",)


def test_counts_per_cell_and_violated_categories() -> None:
    zero, few = two_cell_report().cells
    t = taxonomy(zero.per_instruction)
    assert t.classes == {"no answer": 1, "refusal": 1, "truncated": 0, "unparseable": 1,
                         "violations": 1, "passed": 0, "unknown": 0}
    assert t.categories == {"count": 1, "structural": 1}  # a sample counts once per category
    assert t.total == 4 and list(t.classes) == list(CLASSES)
    assert taxonomy(few.per_instruction).classes["passed"] == 1


def test_truncation_wins_over_violations_but_not_over_a_pass() -> None:
    broken = SampleResult(parsed=True, refusal=False, violations=("num_nodes=3",),
                          truncated=True,
                          violation_details=(ViolationDetail("num_nodes=3", "count", 1.0),))
    assert sample_class(broken) == "truncated"
    assert sample_class(SampleResult(parsed=True, refusal=False, truncated=True)) == "passed"
    assert sample_class(SampleResult(parsed=False, refusal=False, truncated=True,
                                     error="truncated block")) == "truncated"


def test_items_without_samples_are_no_answer_when_errored_else_unknown() -> None:
    errored = ItemResult("L0-001", 0, "m-zero-shot", "m", "zero-shot", outcome="error",
                         error="HTTP 500")
    released = ItemResult("L0-002", 0, "m-zero-shot", "m", "zero-shot", outcome="passed")
    assert item_classes(errored) == ("no answer",)
    assert item_classes(released) == ("unknown",)  # never guessed from its scores
    assert taxonomy([errored, released]).classes["unknown"] == 1


def test_an_empty_or_blank_answer_is_no_answer_and_refusal_comes_before_truncation() -> None:
    assert sample_class(SampleResult(parsed=False, refusal=False, raw_answer=" \n\t")) == \
        "no answer"
    assert sample_class(SampleResult(parsed=False, refusal=False, error="empty answer")) == \
        "no answer"
    assert sample_class(SampleResult(parsed=False, refusal=True, truncated=True,
                                     raw_answer="I can't")) == "refusal"
    assert sample_class(SampleResult(parsed=False, refusal=False, raw_answer="words")) == \
        "unparseable"
    # a parsed graph with only derived violations still has violations
    assert sample_class(SampleResult(parsed=True, refusal=False,
                                     derived_violations=("num_edges=3",))) == "violations"


def test_a_sample_counts_once_per_category_and_only_with_violations() -> None:
    details = (ViolationDetail("num_nodes=3", "count", 1.0),
               ViolationDetail("num_edges=2", "count", 1.0),
               ViolationDetail("graph_type=tree", "structural", 1.0))
    bad = SampleResult(parsed=True, refusal=False, violations=("num_nodes=3",),
                       violation_details=details)
    truncated = SampleResult(parsed=True, refusal=False, violations=("num_nodes=3",),
                             truncated=True, violation_details=details)
    item = ItemResult("L0-001", 0, "m-zero-shot", "m", "zero-shot", outcome="failed",
                      samples=(bad, bad, truncated))
    t = taxonomy([item])
    assert t.classes["violations"] == 2 and t.classes["truncated"] == 1
    assert t.categories == {"count": 2, "structural": 2}


def test_no_items_count_nothing() -> None:
    t = taxonomy([])
    assert t.total == 0 and t.classes == dict.fromkeys(CLASSES, 0) and t.categories == {}
