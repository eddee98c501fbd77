"""The failure taxonomy: each sample in exactly one class, errors and release items counted."""

from __future__ import annotations

from pytest_graphinstruct.report.render.html.taxonomy import (
    CLASSES,
    item_classes,
    sample_class,
    taxonomy,
)
from pytest_graphinstruct.run.results import ItemResult, SampleResult, ViolationDetail
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
