"""The key's secrecy rule: a key too short to be a secret changes nothing, a secret is redacted
in error texts wherever it stands, and an answer holding it is withheld, never rewritten
(issue 47 §3: ``OPENAI_API_KEY=e`` rewrote every ``e`` of every answer)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.models.backends.key_secrecy import (
    MIN_SECRET_CHARS,
    REDACTED,
    KeySecrecy,
)

SECRET = "sk-proj-Q7x2LmN4pR8sT1vW3yZ5aB6cD9eF0gH"


def test_a_short_key_is_no_secret_and_redacts_nothing() -> None:
    for key in ("e", "x", "1", "EMPTY", "dummy", "no-key", "sk-test"):
        rule = KeySecrecy(key, "OPENAI_API_KEY")
        assert not rule.secret
        text = f"Graph[name=tree] expected {key}"
        assert rule.scrub(text) == text and not rule.holds(text)
        answer = Answer(text=text)
        assert rule.withhold(answer) is answer


def test_a_secret_is_redacted_in_error_texts_wherever_it_stands() -> None:
    rule = KeySecrecy(SECRET, "MY_KEY")
    assert rule.secret
    assert rule.scrub(f"Bearer {SECRET}, again {SECRET}") == f"Bearer {REDACTED}, again {REDACTED}"
    assert rule.scrub(f"url?key%3D{SECRET}&x=1") == f"url?key%3D{REDACTED}&x=1"


def test_an_answer_holding_the_secret_is_withheld_with_its_usage_and_calls() -> None:
    rule = KeySecrecy(SECRET, "MY_KEY")
    usage = Usage(12, 34)
    held = rule.withhold(Answer(text=f"my key is {SECRET}\nGraph", usage=usage, calls=2,
                                finish_reason="stop", latency_s=1.5))
    assert held.text is None and held.failure_kind == "error" and held.finish_reason is None
    assert held.error is not None and "MY_KEY" in held.error and SECRET not in held.error
    assert (held.usage, held.calls, held.latency_s) == (usage, 2, 1.5)


def test_the_rule_says_the_variable_never_the_key() -> None:
    assert SECRET not in repr(KeySecrecy(SECRET, "MY_KEY"))


_TEXT = st.text(st.characters(codec="utf-8"), max_size=60)


@given(st.text(min_size=1, max_size=40), _TEXT)
def test_an_answer_is_returned_unchanged_or_withheld_never_rewritten(key: str, text: str) -> None:
    rule = KeySecrecy(key, "V")
    answer = Answer(text=text)
    kept = rule.withhold(answer)
    if kept.text is not None:
        assert kept is answer
    else:
        assert len(key) >= MIN_SECRET_CHARS and key in text


@given(st.text(min_size=MIN_SECRET_CHARS, max_size=40), _TEXT, _TEXT)
def test_a_scrubbed_error_text_never_holds_a_secret(key: str, before: str, after: str) -> None:
    rule = KeySecrecy(key, "V")
    scrubbed = rule.scrub(before + key + after)
    assert key not in scrubbed or key in REDACTED
