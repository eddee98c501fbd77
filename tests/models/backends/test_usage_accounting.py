"""usage_accounting: the provider's usage block when believable, counted tokens for what it did
not report or reported impossibly, and the count of blocks not believed."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.answers import Answer, Message, Usage
from pytest_graphinstruct.models.backends.tokens import MAX_TOKENS_PER_CALL
from pytest_graphinstruct.models.backends.usage_accounting import USAGE_IMPOSSIBLE, UsageAccounting
from pytest_graphinstruct.models.base import Request

WAIT_S = 60.0  # a safety net for a broken test, never the point of one


class Counter:
    """A :class:`.TokenCounter` stand-in: one token per character, 10 per message."""

    source = "tiktoken:fake"

    def count_text(self, text: str) -> int:
        return len(text)

    def count_messages(self, messages: Iterable[tuple[str, str]]) -> int:
        return sum(10 + len(content) for _, content in messages)


REQUEST = Request(model="m", messages=(Message("system", "be brief"), Message("user", "hi")))
PROMPT = 10 + 8 + 10 + 2


def accounting(counter: bool = True) -> UsageAccounting:
    return UsageAccounting(Counter() if counter else None)  # type: ignore[arg-type]


def completion(**usage: Any) -> Any:
    return SimpleNamespace(usage=SimpleNamespace(**usage) if usage else None)


# -- read ---------------------------------------------------------------------------------------

def test_no_usage_block_reads_as_none_and_is_not_a_rejection() -> None:
    acc = accounting()
    assert acc.read(completion()) == (None, None)
    assert acc.read(completion(prompt_tokens=None, completion_tokens=None)) == (None, None)
    assert acc.read(SimpleNamespace()) == (None, None)
    assert acc.rejections == 0 and acc.first_rejection is None


def test_a_believable_block_is_the_providers() -> None:
    acc = accounting()
    assert acc.read(completion(prompt_tokens=12, completion_tokens=3)) == (Usage(12, 3), None)
    assert acc.read(completion(prompt_tokens=12.0, completion_tokens=None)) == (
        Usage(12, None), None)  # an integral float is that integer; the missing one unknown
    assert acc.read(completion(prompt_tokens=12, completion_tokens=3))[0].source == "provider"  # type: ignore[union-attr]


def test_an_impossible_count_is_not_believed_counted_and_the_first_kept() -> None:
    acc = accounting()
    assert acc.read(completion(prompt_tokens=-5, completion_tokens=3)) == (
        None, "prompt_tokens=-5 (negative)")
    assert acc.read(completion(prompt_tokens=1, completion_tokens="7")) == (
        None, "completion_tokens='7' (not an integer)")
    assert acc.rejections == 2 and acc.first_rejection == "prompt_tokens=-5 (negative)"


def test_a_rejection_quoting_a_huge_value_stays_one_short_line() -> None:
    acc = accounting()
    _, why = acc.read(completion(prompt_tokens="9\n" * 500, completion_tokens=1))
    assert why is not None
    assert acc.first_rejection is not None and len(acc.first_rejection) <= 200
    assert "\n" not in acc.first_rejection


counts = st.none() | st.integers(0, MAX_TOKENS_PER_CALL)


@given(counts, counts)
def test_plausible_counts_read_back_as_given(prompt: int | None, out: int | None) -> None:
    usage, why = accounting().read(completion(prompt_tokens=prompt, completion_tokens=out))
    assert why is None
    assert usage == (None if prompt is None and out is None else Usage(prompt, out))


def test_rejections_from_many_threads_are_all_counted() -> None:
    acc = accounting()
    n, per = 8, 50
    start = threading.Barrier(n)

    def reject() -> None:
        start.wait(WAIT_S)
        for _ in range(per):
            acc.read(completion(prompt_tokens=-1, completion_tokens=1))

    threads = [threading.Thread(target=reject) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
    assert acc.rejections == n * per


# -- complete -----------------------------------------------------------------------------------

def test_without_a_counter_the_answer_is_left_as_it_is() -> None:
    answer = Answer(text="abc")
    assert accounting(counter=False).complete(REQUEST, answer, impossible=True) is answer


def test_a_full_provider_usage_is_kept() -> None:
    answer = Answer(text="abc", usage=Usage(1, 2))
    assert accounting().complete(REQUEST, answer, impossible=False) is answer


def test_a_missing_usage_is_counted() -> None:
    got = accounting().complete(REQUEST, Answer(text="abcd"), impossible=False)
    assert got.usage == Usage(PROMPT, 4, "tiktoken:fake") and got.text == "abcd"


def test_a_partial_usage_keeps_the_providers_count_and_counts_the_rest() -> None:
    acc = accounting()
    assert acc.complete(REQUEST, Answer(text="abcd", usage=Usage(None, 99)),
                        impossible=False).usage == Usage(PROMPT, 99, "provider+tiktoken:fake")
    assert acc.complete(REQUEST, Answer(text="abcd", usage=Usage(7, None)),
                        impossible=False).usage == Usage(7, 4, "provider+tiktoken:fake")


def test_an_impossible_block_is_counted_whole_and_says_so() -> None:
    got = accounting().complete(REQUEST, Answer(text="ab", usage=Usage(5, None)),
                                impossible=True)
    assert got.usage == Usage(PROMPT, 2, f"tiktoken:fake ({USAGE_IMPOSSIBLE})")


def test_an_error_answer_counts_no_output() -> None:
    got = accounting().complete(REQUEST, Answer(error="HTTP 500"), impossible=False)
    assert got.usage == Usage(PROMPT, 0, "tiktoken:fake") and got.error == "HTTP 500"


@given(counts, counts, st.booleans(), st.text(max_size=20))
def test_a_completed_usage_is_always_whole(prompt: int | None, out: int | None,
                                           impossible: bool, text: str) -> None:
    answer = Answer(text=text, usage=None if prompt is None and out is None
                    else Usage(prompt, out))
    got = accounting().complete(REQUEST, answer, impossible=impossible).usage
    assert got is not None and got.total is not None
    if not impossible and prompt is not None:
        assert got.input_tokens == prompt
    if not impossible and out is not None:
        assert got.output_tokens == out
