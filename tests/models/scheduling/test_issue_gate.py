"""issue_gate: the circuit breaker's feed, stop and cancel, and the answer of a request that
will not be issued."""

from __future__ import annotations

import threading

import pytest

from pytest_graphinstruct.answers import Answer, Failure
from pytest_graphinstruct.models.base import AttemptOutcome, Request
from pytest_graphinstruct.models.scheduling.circuit import CIRCUIT_OPEN
from pytest_graphinstruct.models.scheduling.issue_gate import IssueGate
from pytest_graphinstruct.models.scheduling.request_stats import RequestStats

WAIT_S = 60.0  # a safety net for a broken test, never the point of one
FAULT = AttemptOutcome(ok=False, endpoint_fault=True, error="HTTP 503")
GOOD = AttemptOutcome(ok=True)


class Listening:
    """A backend that reports its attempts and whose ``cancel`` takes a reason."""

    endpoint = "http://fake.invalid/v1"
    cacheable = True

    def __init__(self) -> None:
        self.attempt_listener: object = None
        self.cancels: list[str | None] = []

    def complete(self, request: Request) -> Answer:
        return Answer(text="x")

    def cancel(self, reason: str | None = None) -> None:
        self.cancels.append(reason)


class Plain:
    """A backend without ``attempt_listener`` whose ``cancel`` takes nothing."""

    endpoint = "plain"
    cacheable = True

    def __init__(self) -> None:
        self.cancels = 0

    def complete(self, request: Request) -> Answer:
        return Answer(text="x")

    def cancel(self) -> None:
        self.cancels += 1


class Bare:
    endpoint = "bare"
    cacheable = True

    def complete(self, request: Request) -> Answer:
        return Answer(text="x")


class Gate:
    """An :class:`IssueGate` with its parts at hand."""

    def __init__(self, backend: object, threshold: int | None = 2,
                 stop_reason: str | None = None) -> None:
        self.lock = threading.RLock()
        self.stats = RequestStats(self.lock)
        self.halts = 0
        self.checks = 0
        self.stop_reason = stop_reason
        self.gate = IssueGate(backend, threshold, lock=self.lock,  # type: ignore[arg-type]
                              stats=self.stats, stop_check=self._check,
                              on_halt=self._halted)

    def _check(self) -> str | None:
        self.checks += 1
        return self.stop_reason

    def _halted(self) -> None:
        self.halts += 1

    def count(self, name: str) -> int:
        return int(self.stats.report(0)[name])


def test_a_listening_backend_feeds_the_breaker_per_attempt() -> None:
    backend = Listening()
    g = Gate(backend)
    assert g.gate.attempt_feed and backend.attempt_listener == g.gate.on_attempt
    assert not Gate(Plain()).gate.attempt_feed
    other = Listening()
    assert not Gate(other, threshold=None).gate.attempt_feed  # no breaker: nothing to feed
    assert other.attempt_listener is None


def test_threshold_faults_open_the_circuit_once_and_cancel_the_backend() -> None:
    backend = Listening()
    g = Gate(backend)
    g.gate.on_attempt(FAULT)
    assert g.gate.circuit_open_reason is None and not g.gate.halt.is_set()
    g.gate.on_attempt(FAULT)
    reason = g.gate.circuit_open_reason
    assert reason is not None and reason.startswith(CIRCUIT_OPEN) and "HTTP 503" in reason
    assert g.gate.halt.is_set() and g.halts == 1 and backend.cancels == [reason]
    g.gate.on_attempt(FAULT)
    assert g.halts == 1 and backend.cancels == [reason]  # open for good, opened once


def test_a_success_resets_the_run_of_faults() -> None:
    g = Gate(Listening())
    for outcome in (FAULT, GOOD, FAULT, GOOD, FAULT):
        g.gate.on_attempt(outcome)
    assert g.gate.circuit_open_reason is None


def test_without_a_breaker_nothing_opens_it() -> None:
    g = Gate(Plain(), threshold=None)
    for _ in range(20):
        g.gate.on_attempt(FAULT)
        g.gate.feed_request(Answer(error="HTTP 500"))
    assert g.gate.circuit_open_reason is None and g.gate.refusal() is None


def test_completed_requests_feed_a_backend_that_reports_no_attempts() -> None:
    backend = Plain()
    g = Gate(backend)
    g.gate.feed_request(Answer(error="HTTP 500"))
    g.gate.feed_request(Answer(text="fine"))  # resets the run
    g.gate.feed_request(Answer(error="HTTP 500"))
    assert g.gate.circuit_open_reason is None
    g.gate.feed_request(Answer(error="HTTP 502"))
    assert g.gate.circuit_open_reason is not None and "HTTP 500" in g.gate.circuit_open_reason
    assert backend.cancels == 1  # its cancel() takes no reason


def test_a_cancelled_or_stopped_run_feeds_nothing() -> None:
    g = Gate(Listening())
    g.gate.cancel()
    assert g.gate.cancelled.is_set() and g.gate.halt.is_set() and g.halts == 0
    for _ in range(5):
        g.gate.on_attempt(FAULT)
    assert g.gate.circuit_open_reason is None
    stopped = Gate(Plain())
    stopped.gate.stop_issuing("enough")
    for _ in range(5):
        stopped.gate.feed_request(Answer(error="cancelled"))
    assert stopped.gate.circuit_open_reason is None


def test_stop_issuing_is_one_line_and_only_the_first_counts() -> None:
    g = Gate(Plain())
    g.gate.stop_issuing("the run\nwas  interrupted")
    g.gate.stop_issuing("another reason")
    assert g.gate.stopped_reason == "the run was interrupted"
    assert g.gate.halt.is_set() and g.halts == 1
    blank = Gate(Plain())
    blank.gate.stop_issuing("  \n ")
    assert blank.gate.stopped_reason == "stopped"


def test_refusals_say_why_and_count() -> None:
    g = Gate(Listening())
    assert g.gate.refusal() is None
    assert (g.count("stop_skipped"), g.count("circuit_skipped")) == (0, 0)
    g.gate.stop_issuing("stopped by the user")
    stopped = g.gate.refusal()
    assert stopped == Answer(error="stopped by the user", calls=0, failure_kind="stopped")
    g.gate.on_attempt(FAULT)
    g.gate.on_attempt(FAULT)  # the circuit opens: it wins over the stop
    refused = g.gate.refusal()
    assert refused is not None and refused.calls == 0
    assert refused.failure == Failure("circuit_open", g.gate.circuit_open_reason or "")
    assert (g.count("stop_skipped"), g.count("circuit_skipped")) == (1, 1)


def test_another_process_stopping_the_run_is_heard_at_the_next_refusal() -> None:
    g = Gate(Plain(), stop_reason="budget spent by a peer")
    refused = g.gate.refusal()
    assert refused is not None and refused.error == "budget spent by a peer"
    assert g.gate.stopped_reason == "budget spent by a peer" and g.halts == 1
    g.gate.refusal()
    assert g.checks == 1  # stopped: not asked again


def test_a_stop_check_saying_nothing_lets_requests_through() -> None:
    g = Gate(Plain())
    assert g.gate.refusal() is None and g.checks == 1 and not g.gate.halt.is_set()


@pytest.mark.parametrize("backend", [Listening(), Plain(), Bare()])
def test_cancel_backend_uses_whatever_cancel_the_backend_has(backend: object) -> None:
    Gate(backend).gate.cancel_backend("why")
    if isinstance(backend, Listening):
        assert backend.cancels == ["why"]
    elif isinstance(backend, Plain):
        assert backend.cancels == 1
    else:
        assert not hasattr(backend, "cancel")  # nothing to call, nothing raised


def test_a_cancel_that_is_not_callable_is_left_alone() -> None:
    backend = Bare()
    backend.cancel = "not a method"  # type: ignore[attr-defined]
    Gate(backend).gate.cancel_backend("why")
    assert backend.cancel == "not a method"  # type: ignore[attr-defined]


def test_faults_from_many_threads_open_the_circuit_exactly_once() -> None:
    backend = Listening()
    g = Gate(backend, threshold=3)
    n = 12
    start = threading.Barrier(n)

    def fault() -> None:
        start.wait(WAIT_S)
        g.gate.on_attempt(FAULT)

    threads = [threading.Thread(target=fault) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
    assert g.halts == 1 and len(backend.cancels) == 1
