"""answers: the records of a model exchange and the invariants they enforce."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_graphinstruct.answers import USAGE_PROVIDER, Answer, Message, MethodStep, Usage


def test_message_to_json() -> None:
    assert Message("user", "hi").to_json() == {"role": "user", "content": "hi"}


@pytest.mark.parametrize(("inp", "out", "total"), [
    (3, 4, 7), (None, 4, None), (3, None, None), (None, None, None), (0, 0, 0)])
def test_usage_total_needs_both_counts(inp: int | None, out: int | None,
                                       total: int | None) -> None:
    assert Usage(inp, out).total == total


def test_usage_defaults_to_the_provider_source() -> None:
    assert Usage().source == USAGE_PROVIDER


@pytest.mark.parametrize("kwargs", [{}, {"text": "g", "error": "boom"}])
def test_answer_needs_exactly_one_of_text_and_error(kwargs: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Answer(**kwargs)


def test_an_empty_text_is_an_answer_not_an_error() -> None:
    assert Answer(text="").ok


def test_answer_ok_and_truncated() -> None:
    good = Answer(text="g", finish_reason="length")
    assert good.ok and good.truncated
    bad = Answer(error="timeout")
    assert not bad.ok and not bad.truncated
    assert not Answer(text="g", finish_reason="stop").truncated


def test_records_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Answer(text="g").text = "h"  # type: ignore[misc]


def test_method_step_calls_is_named_api_calls_in_json() -> None:
    (calls,) = [f for f in dataclasses.fields(MethodStep) if f.name == "calls"]
    assert calls.metadata["json"] == "api_calls"
