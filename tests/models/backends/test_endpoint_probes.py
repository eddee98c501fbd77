"""endpoint_probes: the preflight (does the endpoint answer at all) and the 1-token snapshot
probe — never retried, never raising."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import openai
import pytest

from pytest_graphinstruct.models.backends.bounded_calls import CallCancelled, DeadlineExceeded
from pytest_graphinstruct.models.backends.call_failures import FailureClassifier
from pytest_graphinstruct.models.backends.chat_completions import ChatCompletions
from pytest_graphinstruct.models.backends.endpoint_probes import (
    PREFLIGHT_TIMEOUT_S,
    PROBE_HEADER,
    PROBE_PROMPT,
    EndpointProbes,
)
from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
from pytest_graphinstruct.models.caching.snapshot import Snapshot
from tests.models.fake_openai import FakeOpenAIServer
from tests.models.helpers import SECRET, connection_error, status_error

URL = "http://fake.invalid/v1"


class _Calls:
    """A :class:`.BoundedCalls` stand-in: each :meth:`run` hands ``fn`` a fake client whose
    ``chat.completions.create`` and ``models.with_raw_response.list`` answer from
    :attr:`script` (an exception is raised, anything else returned), recording the limits and
    the keyword arguments of every create."""

    def __init__(self, *script: Any) -> None:
        self.script = list(script)
        self.limits: list[float] = []
        self.creates: list[dict[str, Any]] = []
        self.client = SimpleNamespace(
            chat=SimpleNamespace(completions=SimpleNamespace(create=self._create)),
            models=SimpleNamespace(with_raw_response=SimpleNamespace(list=self._next)))

    def _next(self) -> Any:
        step = self.script.pop(0)
        if isinstance(step, BaseException):
            raise step
        return step

    def _create(self, **kwargs: Any) -> Any:
        self.creates.append(kwargs)
        return self._next()

    def run(self, fn: Callable[[Any], Any], deadline_s: float) -> Any:
        self.limits.append(deadline_s)
        return fn(self.client)

    def scrub(self, text: str) -> str:
        return text.replace(SECRET, "[REDACTED]")


def probes(calls: _Calls, *, timeout_s: float = 30.0,
           extra_body: dict[str, Any] | None = None) -> EndpointProbes:
    chat = ChatCompletions("the-model", timeout_s, extra_body, {"type": "json_object"})
    return EndpointProbes(calls, chat, FailureClassifier(timeout_s, "KEY"),  # type: ignore[arg-type]
                          URL, timeout_s)


def completion(model: Any = "snap-1", fingerprint: Any = "fp_1") -> Any:
    return SimpleNamespace(model=model, system_fingerprint=fingerprint)


# -- preflight --------------------------------------------------------------------------------

def test_preflight_waits_at_most_ten_seconds_or_the_backends_timeout() -> None:
    calls = _Calls(object(), object(), object())
    for timeout_s, given, limit in ((30.0, None, PREFLIGHT_TIMEOUT_S), (2.0, None, 2.0),
                                    (30.0, 0.5, 0.5)):
        assert probes(calls, timeout_s=timeout_s).preflight(given) is None
        assert calls.limits[-1] == limit


@pytest.mark.parametrize("answer", [
    status_error(401, cls=openai.AuthenticationError), status_error(404), ValueError("not json"),
])
def test_preflight_any_answer_but_a_failure_to_connect_means_reachable(answer: Any) -> None:
    assert probes(_Calls(answer)).preflight() is None


@pytest.mark.parametrize(("failure", "words"), [
    (DeadlineExceeded(), "GET /models timed out (no answer within 3 s)"),
    (openai.APITimeoutError(request=connection_error().request),
     "GET /models timed out (no answer within 3 s)"),
    (CallCancelled(), "the preflight was cancelled"),
    (connection_error(ConnectionRefusedError(111, "Connection refused")),
     "connection error (ConnectionRefusedError: [Errno 111] Connection refused)"),
])
def test_preflight_names_why_the_endpoint_is_not_reachable(failure: Exception,
                                                           words: str) -> None:
    reason = probes(_Calls(failure)).preflight(3.0)
    assert reason == f"cannot reach {URL}: {words}"


def test_preflight_scrubs_the_key_and_keeps_one_line() -> None:
    cause = OSError(f"proxy said\nno to {SECRET}")
    reason = probes(_Calls(connection_error(cause))).preflight()
    assert reason is not None and SECRET not in reason and "[REDACTED]" in reason
    assert "\n" not in reason


# -- the snapshot probe -------------------------------------------------------------------------

def test_the_probe_sends_one_marked_token_with_the_extras_but_no_response_format() -> None:
    calls = _Calls(completion())
    served, why = probes(calls, timeout_s=4.0, extra_body={"top_k": 5}).probe_snapshot()
    assert (served, why) == (Snapshot("snap-1", "fp_1"), None)
    (sent,) = calls.creates
    assert sent == {"model": "the-model",
                    "messages": [{"role": "user", "content": PROBE_PROMPT}],
                    "extra_headers": {PROBE_HEADER: "snapshot"},
                    "extra_body": {"top_k": 5, "max_tokens": 1}, "timeout": 4.0}
    assert calls.limits == [4.0]


def test_a_probe_refused_for_max_tokens_is_asked_once_more_with_max_completion_tokens() -> None:
    refusal = status_error(400, {"error": {"message": "Unsupported parameter: 'max_tokens'"}},
                           cls=openai.BadRequestError)
    calls = _Calls(refusal, completion("o-1"))
    served, why = probes(calls).probe_snapshot(1.5)
    assert (served.model, why) == ("o-1", None)
    assert [c["extra_body"] for c in calls.creates] == [{"max_tokens": 1},
                                                        {"max_completion_tokens": 1}]
    assert calls.limits == [1.5, 1.5]


def test_another_bad_request_is_not_asked_again() -> None:
    refusal = status_error(400, {"error": {"message": "unknown model"}},
                           cls=openai.BadRequestError)
    calls = _Calls(refusal, completion())
    served, why = probes(calls).probe_snapshot()
    assert served == Snapshot() and len(calls.creates) == 1
    assert why == "the 1-token probe failed: HTTP 400 (not retried): unknown model"


@pytest.mark.parametrize(("script", "why"), [
    ((CallCancelled(),), "the probe was cancelled"),
    ((completion(None, "fp_1"),), "the response named no model"),
    ((DeadlineExceeded(),), "the 1-token probe failed: request timed out: the whole call "
                            "exceeded its deadline of 30 s"),
])
def test_a_probe_that_learns_nothing_says_why(script: tuple[Any, ...], why: str) -> None:
    served, reason = probes(_Calls(*script)).probe_snapshot()
    assert not served.known and reason == why


def test_a_failed_probe_is_one_scrubbed_line_of_at_most_200_characters() -> None:
    calls = _Calls(RuntimeError(f"{SECRET}\n" + "x" * 500))
    served, why = probes(calls).probe_snapshot()
    assert served == Snapshot() and why is not None
    assert SECRET not in why and "\n" not in why and len(why) <= 200


# -- against the local server -------------------------------------------------------------------

def test_the_probe_asks_for_one_token_and_is_not_a_model_answer(
        fake_openai: FakeOpenAIServer, backend_for) -> None:
    fake_openai.served_model, fake_openai.system_fingerprint = "gpt-x-2024-08-06", "fp_9"
    served, why = backend_for().probe_snapshot()
    assert (served, why) == (Snapshot("gpt-x-2024-08-06", "fp_9"), None)
    (probe,) = fake_openai.probes
    assert probe.body["max_tokens"] == 1 and probe.body["model"] == "fake-model"
    headers = {k.lower(): v for k, v in probe.headers.items()}
    assert headers[PROBE_HEADER.lower()] == "snapshot"
    assert fake_openai.request_count == 0


def test_a_failed_probe_says_why_and_knows_nothing(fake_openai: FakeOpenAIServer,
                                                   backend_for) -> None:
    fake_openai.probe_status = 503
    served, why = backend_for(max_retries=3).probe_snapshot()
    assert served == Snapshot() and why is not None and "503" in why
    assert len(fake_openai.probes) == 1  # never retried


def test_the_probe_falls_back_to_max_completion_tokens(fake_openai: FakeOpenAIServer,
                                                       backend_for) -> None:
    fake_openai.rejects_max_tokens = True  # like OpenAI's reasoning models
    fake_openai.served_model = "o-mini-2025-01-31"
    served, why = backend_for().probe_snapshot()
    assert (served.model, why) == ("o-mini-2025-01-31", None)
    (probe,) = fake_openai.probes
    assert probe.body["max_completion_tokens"] == 1 and "max_tokens" not in probe.body




@pytest.mark.parametrize("status", [200, 401, 404])
def test_preflight_any_http_answer_means_reachable(fake_openai, backend_for, status) -> None:
    fake_openai.models_status = status
    assert backend_for().preflight() is None


def test_preflight_names_a_refused_connection(api_key) -> None:
    with FakeOpenAIServer() as server:
        url = server.base_url
    reason = OpenAIBackend(url, "m", api_key_env=api_key).preflight()
    assert reason is not None and url in reason and "\n" not in reason
    assert "refused" in reason.lower() or "connect" in reason.lower()


def test_preflight_names_a_timeout(fake_openai, backend_for) -> None:
    fake_openai.models_hang_s = 600.0  # until the server stops
    t0 = time.monotonic()
    reason = backend_for().preflight(timeout_s=0.3)
    # the server hangs for 600 s: an answer at all means the preflight gave up on its own
    # timeout, after waiting at least that long (a lower bound, which cannot race)
    assert time.monotonic() - t0 >= 0.25  # slack for the socket timer's granularity
    assert reason is not None and "timed out" in reason and "\n" not in reason


