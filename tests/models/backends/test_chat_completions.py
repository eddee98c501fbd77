"""chat_completions: what the OpenAI-compatible backend sends and reads back."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.answers import Message
from pytest_graphinstruct.models.backends.call_failures import Malformed
from pytest_graphinstruct.models.backends.chat_completions import ChatCompletions, choice
from pytest_graphinstruct.models.base import DecodingParams, Request
from tests.models.helpers import req


def chat(extra_body: dict[str, Any] | None = None,
         response_format: dict[str, Any] | None = None) -> ChatCompletions:
    return ChatCompletions("default-model", 12.5, extra_body, response_format)


def test_without_extras_the_config_tag_is_empty() -> None:
    assert chat().config_tag() == "" and chat({}, {}).config_tag() == ""


def test_the_config_tag_changes_with_what_changes_answers() -> None:
    tags = {chat({"top_k": 5}).config_tag(), chat({"top_k": 6}).config_tag(),
            chat(None, {"type": "json_object"}).config_tag(),
            chat({"top_k": 5}, {"type": "json_object"}).config_tag()}
    assert len(tags) == 4 and all(t.startswith("#cfg=") and len(t) == 17 for t in tags)


json_values = st.recursive(st.none() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3), max_leaves=5)


@given(st.dictionaries(st.text(max_size=5), json_values, min_size=1, max_size=5))
def test_the_config_tag_ignores_key_order(extra: dict[str, Any]) -> None:
    assert chat(extra).config_tag() == chat(dict(reversed(extra.items()))).config_tag()


def test_the_options_are_copied_not_shared() -> None:
    extra = {"top_k": 5}
    c = chat(extra)
    extra["top_k"] = 6
    assert c.extra_body == {"top_k": 5}


def test_arguments_carry_params_extras_and_the_response_format() -> None:
    c = chat({"top_k": 5, "grammar": "backend's"}, {"type": "json_object"})
    r = req(params=DecodingParams(temperature=0.2, max_tokens=64, seed=1),
            extra=(("grammar", "request's"),))
    assert c.arguments(r) == {
        "temperature": 0.2, "max_tokens": 64, "seed": 1,
        "extra_body": {"top_k": 5, "grammar": "request's"},  # the request's extra wins
        "response_format": {"type": "json_object"}}


def test_arguments_without_extras_send_only_the_params() -> None:
    assert chat().arguments(req(params=DecodingParams(temperature=None))) == {}


def test_create_sends_the_model_messages_and_timeout() -> None:
    sent: list[dict[str, Any]] = []
    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(
        create=lambda **kw: sent.append(kw) or "done")))
    c = chat()
    r = req("hi", params=DecodingParams(temperature=0.0))
    assert c.create(client, r, c.arguments(r)) == "done"
    assert sent == [{"model": "fake-model", "messages": [{"role": "user", "content": "hi"}],
                     "timeout": 12.5, "temperature": 0.0}]
    unnamed = Request(model="", messages=(Message("user", "x"),))
    c.create(client, unnamed, {})
    assert sent[-1]["model"] == "default-model"


# -- reading back -----------------------------------------------------------------------------

def completion(content: Any = "text", finish: Any = "stop", refusal: Any = None,
               message: bool = True) -> Any:
    msg = SimpleNamespace(content=content, refusal=refusal) if message else None
    return SimpleNamespace(choices=[SimpleNamespace(message=msg, finish_reason=finish)])


def test_choice_reads_the_first_choices_text_and_finish_reason() -> None:
    two = completion("first")
    two.choices.append(SimpleNamespace(message=SimpleNamespace(content="second"),
                                       finish_reason="stop"))
    assert choice(two) == ("first", "stop")
    assert choice(completion("x", finish=None)) == ("x", None)
    assert choice(completion("x", finish=7)) == ("x", None)  # not a string: not said


def test_a_refusal_is_the_text_and_a_length_stop_before_any_text_is_empty() -> None:
    assert choice(completion(None, refusal="I can't")) == ("I can't", "stop")
    assert choice(completion(None, finish="length")) == ("", "length")


@pytest.mark.parametrize(("obj", "words"), [
    (None, "got NoneType"), ("text", "got str"), (b"bytes", "got bytes"),
    (SimpleNamespace(), "no 'choices'"), (SimpleNamespace(choices=[]), "no 'choices'"),
    (completion(message=False), "has no 'message'"),
    (completion(None), "content is null (finish_reason 'stop')"),
    (completion(["parts"]), "content is list, not a string"),
])
def test_what_is_not_a_usable_completion_is_malformed(obj: Any, words: str) -> None:
    with pytest.raises(Malformed, match=words.replace("(", r"\(").replace(")", r"\)")):
        choice(obj)
