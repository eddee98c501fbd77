"""OpenAIBackend against the local fake server: answers, usage, retries, errors, secrecy."""

from __future__ import annotations

import logging
import pickle
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from email.utils import formatdate

import openai
import pytest

from pytest_graphinstruct.answers import Usage
from pytest_graphinstruct.errors import GraphInstructError, ModelError
from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
from pytest_graphinstruct.models.backends.retry import RetryPolicy
from pytest_graphinstruct.models.base import AttemptOutcome, Backend, DecodingParams
from tests.models.fake_openai import FakeOpenAIServer, Fault
from tests.models.helpers import SECRET, req

CALL_S = 1.0  # the timeout where one is hit: a normal answer takes at most 0.03 s under load
WAIT_S = 60.0  # a safety net for a broken call, never the point of a test
ENDLESS = "x " * 100_000  # an answer that, dripped a byte per 0.05 s or more, takes hours

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


@pytest.mark.slow
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
@pytest.mark.slow
def test_transient_faults_are_retried(fake_openai, backend_for, sleeps, fault) -> None:
    fake_openai.script(fault, fault)
    answer = backend_for().complete(req())
    assert answer.ok, answer.error
    assert answer.calls == 3 == fake_openai.request_count
    assert len(sleeps.delays) == 2


def test_timeouts_are_retried_and_counted(fake_openai, backend_for, sleeps) -> None:
    # The first call hangs until the server stops; the retry is a normal answer, which must
    # come within the timeout: 1 s against at most 0.03 s measured with one core kept busy.
    fake_openai.script(Fault.hang(600.0))
    answer = backend_for(timeout_s=CALL_S).complete(req())
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


def test_an_answer_holding_the_key_is_withheld_with_its_usage_never_rewritten(
        fake_openai, backend_for) -> None:
    fake_openai.responder = lambda body: f"the key: {SECRET}."
    fake_openai.script(Fault.no_usage())  # counted with tiktoken: on the text as received
    answer = backend_for().complete(req())
    assert answer.text is None and answer.failure_kind == "error" and answer.calls == 1
    assert answer.error is not None and "holds the API key" in answer.error
    assert "GI_TEST_API_KEY" in answer.error and SECRET not in repr(answer)
    from pytest_graphinstruct.models.backends.tokens import TokenCounter

    assert answer.usage is not None  # generated and paid for: its usage stays
    assert answer.usage.output_tokens == TokenCounter("cl100k_base").count_text(
        f"the key: {SECRET}.")


@pytest.mark.parametrize("key", ["e", "x", "1", "EMPTY", "dummy", "sk-test"])
def test_a_key_too_short_to_be_a_secret_changes_no_answer_and_no_error(
        fake_openai, monkeypatch, key) -> None:
    # issue 47 §3: OPENAI_API_KEY=e rewrote every 'e' of every answer and error text
    monkeypatch.setenv("GI_SHORT_KEY", key)
    text = "Graph[name=tree] with 1 node e, expected EMPTY dummy sk-test x"
    fake_openai.responder = lambda body: text
    backend = OpenAIBackend(fake_openai.base_url, "fake-model", api_key_env="GI_SHORT_KEY",
                            max_retries=0)
    assert backend.complete(req()).text == text
    fake_openai.script(Fault.bad_request(message=f"expected {key} to be valid"))
    error = backend.complete(req()).error
    assert error is not None and f"expected {key} to be valid" in error
    assert "REDACTED" not in error


def test_the_key_given_as_the_variable_name_is_refused_without_showing_it() -> None:
    with pytest.raises(ModelError, match="looks like the key itself") as raised:
        OpenAIBackend("http://127.0.0.1:9/v1", "m", api_key_env=SECRET)
    assert SECRET not in str(raised.value)


def test_models_route_lists_the_model(fake_openai, api_key) -> None:
    import os

    client = openai.OpenAI(base_url=fake_openai.base_url, api_key=os.environ[api_key],
                           max_retries=0)
    assert [m.id for m in client.models.list()] == ["fake-model"]


# -- trust under failure (issue 11) ---------------------------------------------------------


def test_null_content_with_stop_is_retried_not_an_empty_answer(fake_openai, backend_for,
                                                              sleeps) -> None:
    fake_openai.script(Fault.null_content(), Fault.null_content())
    answer = backend_for().complete(req())
    assert answer.ok and answer.text == "echo: hello world"
    assert answer.calls == 3 == fake_openai.request_count and len(sleeps.delays) == 2


def test_null_content_every_time_is_an_error_never_cached(fake_openai, backend_for,
                                                         tmp_path) -> None:
    from pytest_graphinstruct.models.caching.cache import AnswerCache
    from pytest_graphinstruct.models.scheduling.scheduler import Scheduler

    fake_openai.fault_for = lambda body: Fault.null_content()
    cache = AnswerCache(tmp_path)
    with Scheduler(backend_for(max_retries=2), concurrency=1, cache=cache) as sched:
        answer = sched.answer(req())
    assert not answer.ok and answer.text is None
    assert "content is null" in answer.error and "gave up after 3 call(s)" in answer.error
    assert len(cache) == 0


def test_a_dripping_server_hits_the_whole_call_deadline(fake_openai, backend_for) -> None:
    # One byte per 0.05 s: every single read succeeds well within the 1 s timeout (a read
    # would have to stall 20x to time out), and the whole answer (ENDLESS) would take hours.
    # So a call that came back at all, with the deadline's error, was cut at its deadline: it
    # did not wait the drip out (the server stops only after the answer is in).
    fake_openai.responder = lambda body: ENDLESS
    fake_openai.script(Fault.drip(0.05))
    backend = backend_for(timeout_s=CALL_S, max_retries=0)
    with ThreadPoolExecutor(1) as pool:
        try:
            answer = pool.submit(backend.complete, req()).result(timeout=WAIT_S)
        finally:
            fake_openai.stop()  # a broken deadline must not keep the pool waiting for hours
    assert not answer.ok and answer.text is None and answer.calls == 1
    assert "deadline of 1 s" in answer.error, answer


def test_the_deadline_is_retried_like_a_timeout(fake_openai, backend_for, sleeps) -> None:
    fake_openai.script(Fault.drip(0.05))  # ~18 s for the whole answer; the retry is a normal one
    answer = backend_for(timeout_s=CALL_S, max_retries=1).complete(req())
    assert answer.ok and answer.calls == 2 and len(sleeps.delays) == 1


def test_cancel_ends_a_call_in_flight_at_once(fake_openai, api_key) -> None:
    # The answer would drip for hours and the call's deadline is an hour away, and the server
    # keeps dripping until it stops (after the answer is in): only the cancel can have ended
    # the call, and it did while the server still held it.
    fake_openai.responder = lambda body: ENDLESS
    fake_openai.script(Fault.drip(0.2))
    backend = OpenAIBackend(fake_openai.base_url, "fake-model", api_key_env=api_key,
                            timeout_s=3600)
    with ThreadPoolExecutor(1) as pool:
        try:
            future = pool.submit(backend.complete, req())
            assert fake_openai.wait_for_requests(1, timeout=WAIT_S)  # the call is in flight
            backend.cancel()
            answer = future.result(timeout=WAIT_S)
        finally:
            fake_openai.stop()  # a broken cancel must not keep the pool waiting for hours
    assert not answer.ok and "cancelled" in answer.error and answer.calls == 1


@pytest.mark.parametrize("url", ["127.0.0.1:8000/v1", "localhost:8000", "ftp://example.com/v1",
                                 "http://[::1", "http://", "https:///v1", "http://host:99999/v1"])
def test_malformed_base_urls_are_rejected_at_construction(url, api_key) -> None:
    with pytest.raises(ModelError) as info:
        OpenAIBackend(url, "m", api_key_env=api_key)
    text = str(info.value)
    assert url in text and "\n" not in text and "base URL" in text


def test_base_url_from_the_environment_is_checked_too(monkeypatch, api_key) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "ftp://example.com/v1")
    with pytest.raises(ModelError, match="ftp"):
        OpenAIBackend(None, "m", api_key_env=api_key)


def test_error_text_is_one_bounded_line(fake_openai, backend_for, monkeypatch) -> None:
    backend = backend_for(max_retries=0)

    def explode(client, request, kwargs):
        raise RuntimeError("a traceback\n" * 400)

    monkeypatch.setattr(backend.chat, "create", explode)
    answer = backend.complete(req())
    assert not answer.ok and "\n" not in answer.error and len(answer.error) <= 300
    assert answer.error.startswith("unexpected error RuntimeError: a traceback a traceback")


@pytest.mark.parametrize(("usage", "why"), [
    ({"prompt_tokens": -5, "completion_tokens": 4}, "prompt_tokens=-5"),
    ({"prompt_tokens": 2, "completion_tokens": 1.5}, "completion_tokens=1.5"),
    ({"prompt_tokens": 10**9, "completion_tokens": 4}, "prompt_tokens=1000000000"),
    ({"prompt_tokens": "7", "completion_tokens": 4}, "prompt_tokens='7'"),
], ids=["negative", "fraction", "absurd", "string"])
def test_impossible_provider_counts_are_recounted_and_marked(fake_openai, backend_for, usage,
                                                            why) -> None:
    fake_openai.script(Fault.with_usage(**usage))
    backend = backend_for()
    answer = backend.complete(req())
    # The whole block is distrusted: both counts come from tiktoken (see the no_usage test).
    assert answer.ok and answer.usage == Usage(9, 4, "tiktoken:cl100k_base "
                                                     "(provider usage impossible)")
    assert backend.usage_rejections == 1
    assert backend.first_usage_rejection is not None and why in backend.first_usage_rejection


def test_impossible_counts_without_a_counter_are_unknown(fake_openai, backend_for) -> None:
    fake_openai.script(Fault.with_usage(prompt_tokens=-1, completion_tokens=-1))
    backend = backend_for(token_counter=None)
    assert backend.complete(req()).usage is None and backend.usage_rejections == 1


def test_integral_float_counts_are_plausible(fake_openai, backend_for) -> None:
    fake_openai.script(Fault.with_usage(prompt_tokens=3.0, completion_tokens=4))
    backend = backend_for()
    assert backend.complete(req()).usage == Usage(3, 4) and backend.usage_rejections == 0


# -- attempt outcomes (the circuit breaker's feed) ------------------------------------------


def _listened(backend: OpenAIBackend) -> list[tuple[AttemptOutcome, int]]:
    heard: list[tuple[AttemptOutcome, int]] = []
    backend.attempt_listener = lambda outcome: heard.append((outcome, threading.get_ident()))
    return heard


@pytest.mark.parametrize(("fault", "endpoint_fault"), [
    (Fault.server_error(500), True),
    (Fault.unavailable(), True),
    (Fault.rate_limited(), False),
    (Fault.quota(), True),
    (Fault.bad_request(), False),
    (Fault.unauthorized(401), True),
    (Fault.unauthorized(403), True),
    (Fault("status", 404, message="no such model"), True),
    (Fault.malformed(), True),
    (Fault.drip(0.05), True),  # the whole-call deadline (the whole answer takes ~18 s)
])
def test_the_listener_hears_one_outcome_per_attempt(fake_openai, backend_for, fault,
                                                    endpoint_fault) -> None:
    fake_openai.script(fault)
    # an answer (an error status, too) must come within the timeout to be heard as itself
    backend = backend_for(max_retries=0, timeout_s=CALL_S)
    heard = _listened(backend)
    answer = backend.complete(req())
    assert not answer.ok and answer.calls == 1
    assert [(o.ok, o.endpoint_fault) for o, _ in heard] == [(False, endpoint_fault)]
    error = heard[0][0].error
    assert error and answer.error and answer.error.startswith(error)  # + "; gave up after ..."
    assert heard[0][1] == threading.get_ident()  # told from the calling thread


def test_the_listener_hears_a_refused_connection_as_the_endpoints_fault(api_key) -> None:
    with FakeOpenAIServer() as server:
        url = server.base_url
    backend = OpenAIBackend(url, "m", api_key_env=api_key, max_retries=0, timeout_s=2)
    heard = _listened(backend)
    assert not backend.complete(req()).ok
    assert len(heard) == 1 and not heard[0][0].ok and heard[0][0].endpoint_fault
    assert "connection" in (heard[0][0].error or "")


def test_the_listener_hears_every_retry_and_the_success(fake_openai, backend_for) -> None:
    fake_openai.script(Fault.server_error(502), Fault.rate_limited(), Fault.malformed())
    backend = backend_for(max_retries=3)
    heard = _listened(backend)
    assert backend.complete(req()).ok
    assert [(o.ok, o.endpoint_fault) for o, _ in heard] == [
        (False, True), (False, False), (False, True), (True, False)]


def test_a_listener_that_raises_does_not_break_the_call(fake_openai, backend_for) -> None:
    fake_openai.script(Fault.server_error())
    backend = backend_for(max_retries=1)
    calls: list[AttemptOutcome] = []

    def broken(outcome: AttemptOutcome) -> None:
        calls.append(outcome)
        raise RuntimeError("listener bug")

    backend.attempt_listener = broken
    answer = backend.complete(req())
    assert answer.ok and answer.calls == 2 and len(calls) == 2


def test_a_cancelled_call_is_heard_as_no_fault_of_the_endpoint(fake_openai, api_key) -> None:
    fake_openai.script(Fault.drip(0.2))
    backend = OpenAIBackend(fake_openai.base_url, "fake-model", api_key_env=api_key,
                            timeout_s=30)
    heard = _listened(backend)
    seen = threading.Event()
    fake_openai.responder = lambda body: (seen.set(), "x")[1]
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(backend.complete, req())
        assert seen.wait(10)  # the server is answering (dripping) this call
        backend.cancel("circuit open: test")
        answer = future.result(timeout=10)
    assert answer.error == "circuit open: test"
    # no fault of the endpoint, but the call was in flight: its answer may exist unread
    assert [o for o, _ in heard] == [AttemptOutcome(False, False, "circuit open: test",
                                                    unread=True)]


class _Guard:
    """An attempt guard that records what it is told and refuses the retry after
    ``refuse_after`` attempts."""

    def __init__(self, refuse_after: int) -> None:
        self.told: list[AttemptOutcome] = []
        self.asked: list[int] = []
        self.refuse_after = refuse_after

    def after_attempt(self, outcome: AttemptOutcome) -> None:
        self.told.append(outcome)

    def before_retry(self, calls: int) -> str | None:
        self.asked.append(calls)
        return "cost cap reached: test\nrefusal" if calls >= self.refuse_after else None


def test_a_guard_hears_each_failed_attempt_and_may_refuse_the_retry(fake_openai, backend_for,
                                                                    sleeps) -> None:
    # a 503 (the endpoint said it did not answer), then a call abandoned at its deadline (its
    # answer may exist, unread); the guard refuses the third call, which is never sent
    fake_openai.script(Fault.unavailable(), Fault.hang(600.0), Fault.unavailable())
    guard = _Guard(refuse_after=2)
    backend = backend_for(timeout_s=CALL_S, max_retries=5)
    answer, served = backend.complete_served(req(), guard=guard)
    assert answer.error == "cost cap reached: test refusal" and answer.calls == 2
    assert fake_openai.request_count == 2 and not served.known
    assert [(o.ok, o.unread) for o in guard.told] == [(False, False), (False, True)]
    assert guard.asked == [1, 2]


def test_a_guard_hears_nothing_of_a_success(fake_openai, backend_for) -> None:
    guard = _Guard(refuse_after=1)
    answer, _ = backend_for().complete_served(req(), guard=guard)
    assert answer.ok and guard.told == [] and guard.asked == []


# -- endpoint text is escaped ---------------------------------------------------------------


def test_escape_bytes_in_an_endpoint_error_never_reach_the_answer_raw(fake_openai,
                                                                      backend_for) -> None:
    fake_openai.script(Fault.bad_request("\x1b]0;pwned\x07\x1b[2J\x9b31m oops\u202e"))
    answer = backend_for(max_retries=0).complete(req())
    assert answer.error is not None and "HTTP 400" in answer.error
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in answer.error
    assert "\\x1b]0;pwned\\x07\\x1b[2J" in answer.error


def test_a_served_model_name_with_escape_bytes_is_escaped(fake_openai, backend_for) -> None:
    fake_openai.served_model = "gpt-x\x1b[2J\x07"
    answer, served = backend_for().complete_served(req())
    assert answer.ok and served.model is not None
    assert "\x1b" not in served.model and "\x07" not in served.model
    assert served.model == "gpt-x\\x1b[2J\\x07"


# -- credentials in the base URL ------------------------------------------------------------


@pytest.mark.parametrize(("url", "secret"), [
    ("http://user:pw-SECRET1@127.0.0.1:8000/v1", "pw-SECRET1"),
    ("http://tok-SECRET2@127.0.0.1:8000/v1", "tok-SECRET2"),
    ("http://127.0.0.1:8000/v1?api_key=SECRET3", "SECRET3"),
    ("http://127.0.0.1:8000/v1?api-version=1&API-KEY=SECRET4", "SECRET4"),
    ("http://127.0.0.1:8000/v1?access_token=SECRET5", "SECRET5"),
    ("http://127.0.0.1:8000/v1?sig=SECRET6&x=1", "SECRET6"),
    ("http://127.0.0.1:8000/v1?Password=SECRET7", "SECRET7"),
    ("http://127.0.0.1:8000/v1?client_secret=SECRET8", "SECRET8"),
    ("http://u:SECRET9@127.0.0.1:99999/v1", "SECRET9"),  # malformed too: still not shown
])
def test_credentials_in_the_base_url_are_refused_without_showing_them(url, secret,
                                                                      api_key) -> None:
    with pytest.raises(ModelError) as info:
        OpenAIBackend(url, "m", api_key_env=api_key)
    text = str(info.value)
    assert secret not in text and "\n" not in text and "***" in text
    assert "127.0.0.1" in text and "base URL" in text
    if "99999" not in url:
        assert "carries credentials" in text and "--gi-api-key-env" in text and api_key in text


def test_credentials_in_openai_base_url_are_refused_too(monkeypatch, api_key) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://me:SECRETENV@example.com/v1")
    with pytest.raises(ModelError) as info:
        OpenAIBackend(None, "m", api_key_env=api_key)
    text = str(info.value)
    assert "SECRETENV" not in text and "$OPENAI_BASE_URL" in text and "credentials" in text


def test_a_harmless_query_is_sent_and_the_key_goes_as_bearer(fake_openai, api_key) -> None:
    backend = OpenAIBackend(fake_openai.base_url + "?api-version=1", "fake-model",
                            api_key_env=api_key)
    assert backend.endpoint == fake_openai.base_url + "?api-version=1"
    assert backend.complete(req()).ok
    (sent,) = fake_openai.requests
    assert sent.path == "/v1/chat/completions?api-version=1"
    auth = {k.lower(): v for k, v in sent.headers.items()}["authorization"]
    assert auth == f"Bearer {SECRET}"


# -- bounded response bodies ------------------------------------------------------------------


@pytest.mark.parametrize("fault", [None, Fault.unsized()], ids=["content-length", "read"])
def test_a_body_beyond_the_bound_is_an_error_not_retried_and_not_read_whole(
        fake_openai, backend_for, fault) -> None:
    fake_openai.responder = lambda body: "x" * 5000
    if fault is not None:  # no length declared: the body is found too long while it is read
        fake_openai.script(fault)
    backend = backend_for(max_response_bytes=2000, max_retries=3)
    guard = _Guard(refuse_after=99)
    answer, _ = backend.complete_served(req(), guard=guard)
    assert answer.error is not None and "response body too large" in answer.error
    assert "2000 bytes" in answer.error and "not retried" in answer.error
    assert ("Content-Length 5" in answer.error) == (fault is None)  # refused before reading
    assert answer.calls == 1 == fake_openai.request_count
    assert [o.unread for o in guard.told] == [True]  # generated, maybe billed: its worst case


def test_an_answer_within_the_bound_is_read_uncompressed(fake_openai, backend_for) -> None:
    fake_openai.responder = lambda body: "y" * 1500
    fake_openai.script(Fault.unsized())
    answer = backend_for(max_response_bytes=4000).complete(req())
    assert answer.text == "y" * 1500
    assert fake_openai.requests[0].headers.get("Accept-Encoding") == "identity"


def _heard(backend: OpenAIBackend) -> list[AttemptOutcome]:
    heard: list[AttemptOutcome] = []
    backend.attempt_listener = heard.append
    return heard


def test_a_request_that_just_began_failing_tells_unconfirmed_faults_until_its_last(
        fake_openai, backend_for) -> None:
    # the recorded sleep does not wait: each retry comes at once, inside the same burst
    backend = backend_for(max_retries=2, backoff_base_s=1.0)
    heard = _heard(backend)
    fake_openai.script(Fault.reset(), Fault.reset(), Fault.reset())
    assert backend.complete(req()).error is not None
    assert [(o.endpoint_fault, o.confirmed) for o in heard] == [
        (True, False), (True, False), (True, True)]  # the last attempt is final: confirmed


def test_a_retry_of_a_request_failing_for_half_a_backoff_base_is_confirmed(
        fake_openai, backend_for) -> None:
    backend = backend_for(max_retries=3, backoff_base_s=0.02, sleep=time.sleep)
    heard = _heard(backend)
    fake_openai.script(Fault.server_error(), Fault.server_error(), Fault.server_error(),
                       Fault.server_error())
    backend.complete(req())
    confirmed = [o.confirmed for o in heard]
    assert confirmed[0] is False and confirmed[-1] is True
    # once the request has failed for 0.01 s every later fault is confirmed
    assert confirmed == sorted(confirmed)


def test_a_timeout_and_a_fault_not_retried_are_confirmed_at_once(fake_openai,
                                                                  backend_for) -> None:
    backend = backend_for(max_retries=3, timeout_s=0.3)
    heard = _heard(backend)
    fake_openai.script(Fault.hang(5.0), Fault.unauthorized())
    backend.complete(req())
    assert heard[0].confirmed and heard[0].endpoint_fault  # lasted its whole deadline
    assert heard[1].confirmed and heard[1].endpoint_fault  # 401: not retried
    assert len(heard) == 2


def test_with_no_backoff_every_fault_is_confirmed(fake_openai, backend_for) -> None:
    backend = backend_for(max_retries=1, backoff_base_s=0.0)
    heard = _heard(backend)
    fake_openai.script(Fault.reset(), Fault.reset())
    backend.complete(req())
    assert [o.confirmed for o in heard] == [True, True]
