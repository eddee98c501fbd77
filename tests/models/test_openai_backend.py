"""OpenAIBackend against the local fake server: answers, usage, retries, errors, secrecy."""

from __future__ import annotations

import logging
import pickle
from dataclasses import replace
from email.utils import formatdate

import openai
import pytest

from pytest_graphinstruct.answers import Usage
from pytest_graphinstruct.errors import GraphInstructError, ModelError
from pytest_graphinstruct.models.base import Backend, DecodingParams
from pytest_graphinstruct.models.openai_backend import OpenAIBackend
from pytest_graphinstruct.models.retry import RetryPolicy
from tests.models.fake_openai import FakeOpenAIServer, Fault
from tests.models.helpers import SECRET, req

# -- answers and usage ----------------------------------------------------------------------


def test_answer_text_usage_and_one_call(fake_openai: FakeOpenAIServer, backend_for) -> None:
    backend = backend_for()
    assert isinstance(backend, Backend)
    assert backend.cacheable
    answer = backend.complete(req("three little words"))
    assert answer.ok and answer.text == "echo: three little words"
    assert answer.usage == Usage(input_tokens=3, output_tokens=4)
    assert answer.calls == 1 and answer.finish_reason == "stop" and not answer.truncated
    assert fake_openai.request_count == 1


def test_missing_usage_is_counted_with_tiktoken(fake_openai, backend_for) -> None:
    fake_openai.script(Fault.no_usage())
    answer = backend_for().complete(req())  # "fake-model": not an o200k model -> cl100k_base
    # prompt: 3 reply-primer + (3 framing + "user" 1 + "hello world" 2); answer "echo: hello
    # world" is 4 cl100k tokens
    assert answer.ok and answer.usage == Usage(9, 4, "tiktoken:cl100k_base")


def test_gpt4o_models_are_counted_with_o200k(fake_openai, api_key) -> None:
    fake_openai.script(Fault.no_usage())
    backend = OpenAIBackend(fake_openai.base_url, "gpt-4o-mini", api_key_env=api_key)
    answer = backend.complete(replace(req(), model="gpt-4o-mini"))
    assert answer.usage is not None and answer.usage.source == "tiktoken:o200k_base"
    assert answer.usage.total is not None and answer.usage.total > 0


def test_partial_usage_keeps_the_provider_count_and_counts_the_rest(fake_openai,
                                                                   backend_for) -> None:
    fake_openai.script(Fault.partial_usage())
    answer = backend_for().complete(req("three little words"))
    # the fake server's prompt count (3 words) is kept; "echo: three little words" is counted
    # (5 cl100k tokens)
    assert answer.usage == Usage(3, 5, "provider+tiktoken:cl100k_base")


def test_without_a_counter_missing_usage_stays_unknown(fake_openai, backend_for) -> None:
    fake_openai.script(Fault.no_usage())
    answer = backend_for(token_counter=None).complete(req())
    assert answer.ok and answer.usage is None


def test_provider_usage_is_marked_as_the_providers(fake_openai, backend_for) -> None:
    assert backend_for().complete(req()).usage.source == "provider"


def test_finish_reason_length_marks_the_answer_truncated(fake_openai, backend_for) -> None:
    fake_openai.script(Fault.length())
    answer = backend_for().complete(req())
    assert answer.ok and answer.truncated


def test_request_carries_messages_params_and_extras(fake_openai, backend_for) -> None:
    backend = backend_for(extra_body={"top_k": 5}, response_format={"type": "json_object"})
    request = req("hi", params=DecodingParams(temperature=0.2, top_p=0.9, max_tokens=64, seed=7),
                  extra=(("grammar", "root ::= x"),))
    assert backend.complete(request).ok
    body = fake_openai.requests[0].body
    assert body["model"] == "fake-model"
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (
        0.2, 0.9, 64, 7)
    assert body["top_k"] == 5 and body["grammar"] == "root ::= x"
    assert body["response_format"] == {"type": "json_object"}
    headers = {k.lower(): v for k, v in fake_openai.requests[0].headers.items()}
    assert headers["authorization"] == f"Bearer {SECRET}"


def test_unset_params_are_not_sent(fake_openai, backend_for) -> None:
    backend_for().complete(req(params=DecodingParams(temperature=None)))
    body = fake_openai.requests[0].body
    assert not {"temperature", "top_p", "max_tokens", "seed"} & body.keys()


def test_endpoint_is_base_url_and_options_change_it(fake_openai, backend_for) -> None:
    assert backend_for().endpoint == fake_openai.base_url
    tagged = backend_for(response_format={"type": "json_object"}).endpoint
    assert tagged.startswith(fake_openai.base_url + "#cfg=")
    r = req()
    assert r.cache_key(tagged) != r.cache_key(fake_openai.base_url)


def test_default_endpoint_is_openai(monkeypatch, api_key) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert OpenAIBackend(None, "gpt-x", api_key_env=api_key).endpoint == (
        "https://api.openai.com/v1")


# -- retries --------------------------------------------------------------------------------


def test_429_retry_after_seconds_is_honoured(fake_openai, backend_for, sleeps) -> None:
    fake_openai.script(Fault.rate_limited("7"), Fault.rate_limited("3"))
    answer = backend_for(backoff_base_s=0.01, backoff_max_s=0.02).complete(req())
    assert answer.ok and answer.calls == 3 == fake_openai.request_count
    assert sleeps.delays == [7.0, 3.0]


def test_retry_after_http_date_is_honoured(fake_openai, backend_for, sleeps) -> None:
    import time

    fake_openai.script(Fault.rate_limited(formatdate(time.time() + 30, usegmt=True)))
    answer = backend_for(backoff_base_s=0.01, backoff_max_s=0.01).complete(req())
    assert answer.ok and answer.calls == 2
    assert 27.0 <= sleeps.delays[0] <= 31.0


def test_retry_after_ms_header_and_cap(fake_openai, backend_for, sleeps) -> None:
    fake_openai.script(Fault.rate_limited(retry_after_ms="1500"), Fault.rate_limited("86400"))
    answer = backend_for(backoff_base_s=0.001, backoff_max_s=0.001,
                         retry_after_cap_s=90).complete(req())
    assert answer.ok
    assert sleeps.delays == [1.5, 90.0]


def test_backoff_is_exponential_with_jitter_and_capped(fake_openai, backend_for, sleeps) -> None:
    fake_openai.script(*[Fault.server_error(500)] * 6)
    backend = backend_for(max_retries=6, backoff_base_s=1.0, backoff_max_s=8.0)
    answer = backend.complete(req())
    assert answer.ok and answer.calls == 7
    assert len(sleeps.delays) == 6
    for attempt, d in enumerate(sleeps.delays):
        assert 0.0 <= d <= min(8.0, 2.0 ** attempt)


@pytest.mark.parametrize("fault", [
    Fault.server_error(500), Fault.server_error(502), Fault.unavailable(), Fault.rate_limited(),
    Fault.malformed(), Fault.truncated(), Fault.no_choices(),
], ids=lambda f: f"{f.kind}-{f.status}")
def test_transient_faults_are_retried(fake_openai, backend_for, sleeps, fault) -> None:
    fake_openai.script(fault, fault)
    answer = backend_for().complete(req())
    assert answer.ok, answer.error
    assert answer.calls == 3 == fake_openai.request_count
    assert len(sleeps.delays) == 2


def test_timeouts_are_retried_and_counted(fake_openai, backend_for, sleeps) -> None:
    fake_openai.script(Fault.hang(2.0))
    answer = backend_for(timeout_s=0.2).complete(req())
    assert answer.ok and answer.calls == 2
    assert len(sleeps.delays) == 1


def test_gives_up_after_max_retries_with_an_error(fake_openai, backend_for, sleeps) -> None:
    fake_openai.script(*[Fault.unavailable()] * 10)
    answer = backend_for(max_retries=3).complete(req())
    assert not answer.ok and answer.text is None
    assert "HTTP 503" in answer.error and "gave up after 4 call(s)" in answer.error
    assert answer.calls == 4 == fake_openai.request_count
    assert len(sleeps.delays) == 3


@pytest.mark.parametrize(("fault", "words"), [
    (Fault.unauthorized(401), "authentication failed (HTTP 401"),
    (Fault.unauthorized(403), "authentication failed (HTTP 403"),
    (Fault.quota(), "quota exhausted"),
    (Fault.bad_request(), "HTTP 400 (not retried)"),
], ids=["401", "403", "quota", "400"])
def test_non_retryable_errors(fake_openai, backend_for, sleeps, fault, words) -> None:
    fake_openai.script(fault)
    answer = backend_for().complete(req())
    assert not answer.ok and words in answer.error
    assert answer.calls == 1 == fake_openai.request_count
    assert sleeps.delays == []


def test_connection_refused_is_an_error_answer_not_an_exception(api_key, sleeps) -> None:
    with FakeOpenAIServer() as server:
        url = server.base_url
    backend = OpenAIBackend(url, "m", api_key_env=api_key, sleep=sleeps, max_retries=2,
                            timeout_s=2)
    answer = backend.complete(req())
    assert not answer.ok and "connection error" in answer.error and answer.calls == 3


def test_injected_retry_policy(fake_openai, backend_for, sleeps) -> None:
    fake_openai.script(Fault.server_error(), Fault.server_error())
    policy = RetryPolicy(max_retries=1, base_s=0.5, jitter="none")
    answer = backend_for(retry_policy=policy).complete(req())
    assert not answer.ok and answer.calls == 2 and sleeps.delays == [0.5]


# -- the API key ----------------------------------------------------------------------------


def test_missing_key_variable_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.delenv("GI_NOPE_KEY", raising=False)
    with pytest.raises(ModelError, match="GI_NOPE_KEY") as info:
        OpenAIBackend("http://127.0.0.1:9/v1", "m", api_key_env="GI_NOPE_KEY")
    assert isinstance(info.value, GraphInstructError)
    monkeypatch.setenv("GI_NOPE_KEY", "   ")
    with pytest.raises(ModelError, match="GI_NOPE_KEY"):
        OpenAIBackend("http://127.0.0.1:9/v1", "m", api_key_env="GI_NOPE_KEY")


def test_key_never_in_repr_errors_or_logs(fake_openai, backend_for, caplog) -> None:
    backend = backend_for(max_retries=1)
    assert SECRET not in repr(backend) and SECRET not in str(backend)
    assert "GI_TEST_API_KEY" in repr(backend)
    with pytest.raises(TypeError):
        pickle.dumps(backend)
    echo = Fault.unauthorized(message=f"Incorrect API key provided: {SECRET}")
    fake_openai.script(echo, Fault.server_error(), Fault.server_error(), Fault.malformed())
    with caplog.at_level(logging.DEBUG):
        answers = [backend.complete(req(f"q{i}")) for i in range(3)]
    errors = [a.error for a in answers if a.error]
    assert len(errors) == 2
    assert "[REDACTED]" in errors[0]
    for a in answers:
        assert SECRET not in repr(a)
    assert SECRET not in caplog.text


def test_models_route_lists_the_model(fake_openai, api_key) -> None:
    import os

    client = openai.OpenAI(base_url=fake_openai.base_url, api_key=os.environ[api_key],
                           max_retries=0)
    assert [m.id for m in client.models.list()] == ["fake-model"]
