"""The circuit breaker's rules: consecutive endpoint faults, a rate over a window, for good."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.models.base import AttemptOutcome
from pytest_graphinstruct.models.scheduling.circuit import OPEN_RATE, WINDOW_FACTOR, CircuitBreaker

OK = AttemptOutcome(ok=True)
PACED = AttemptOutcome(ok=False, endpoint_fault=False, error="HTTP 429 rate limited")


def fault(n: int = 0) -> AttemptOutcome:
    return AttemptOutcome(ok=False, endpoint_fault=True, error=f"HTTP 500 number {n}")


def quick(n: int = 0) -> AttemptOutcome:
    """A quick fault of a request's first attempt, to be retried (one of a burst, maybe)."""
    return AttemptOutcome(ok=False, endpoint_fault=True, error=f"reset number {n}",
                          confirmed=False)


def test_threshold_consecutive_faults_open_it_and_name_the_first_error() -> None:
    breaker = CircuitBreaker("http://h/v1", 3)
    assert breaker.record(fault(1)) is None and breaker.record(fault(2)) is None
    reason = breaker.record(fault(3))
    assert reason == breaker.reason and breaker.is_open
    assert reason is not None and reason.startswith(
        "circuit open: 3 consecutive calls to http://h/v1 failed (")
    assert reason.endswith("the first error: HTTP 500 number 1")


def test_a_success_resets_the_run_of_faults() -> None:
    breaker = CircuitBreaker("e", 3)
    for outcome in (fault(), fault(), OK, fault(), fault()):
        assert breaker.record(outcome) is None
    assert breaker.record(fault()) is not None


def test_rate_limits_and_bad_requests_neither_count_nor_reset() -> None:
    breaker = CircuitBreaker("e", 3)
    for outcome in (fault(), PACED, fault(), PACED, PACED):
        assert breaker.record(outcome) is None
    assert breaker.record(fault()) is not None  # the two faults around the 429s still count


def test_an_endpoint_that_answers_one_call_in_five_opens_it_by_rate() -> None:
    threshold = 5  # never 5 faults in a row: only the rate can open it
    breaker = CircuitBreaker("e", threshold)
    window = WINDOW_FACTOR * threshold
    opened_at = None
    for n in range(3 * window):
        reason = breaker.record(OK if n % 5 == 0 else fault(n))
        if reason is not None:
            opened_at = n
            break
    assert opened_at == window - 1  # the first full window: 20 of 25 faults = 80 %
    assert breaker.reason is not None
    assert breaker.reason.startswith("circuit open: 20 of the last 25 calls to e failed")


def test_once_open_it_stays_open_and_reports_the_opening_once() -> None:
    breaker = CircuitBreaker("e", 1)
    assert breaker.record(fault()) is not None
    assert breaker.record(OK) is None and breaker.record(fault()) is None
    assert breaker.is_open


def test_a_burst_of_quick_first_attempt_faults_opens_nothing_until_one_is_confirmed() -> None:
    # issue 47 §1: 16 of 64 concurrent calls reset at once opened the circuit on 8 of them
    breaker = CircuitBreaker("e", 8)
    for n in range(16):
        assert breaker.record(quick(n)) is None
    assert not breaker.is_open
    reason = breaker.record(fault(16))  # a retry failed too: the faults persist
    assert reason is not None and reason.startswith("circuit open: 17 consecutive calls to e")
    assert reason.endswith("the first error: reset number 0")


def test_a_burst_survived_is_forgotten_and_not_named_when_it_opens_later() -> None:
    breaker = CircuitBreaker("e", 8)
    for n in range(16):
        breaker.record(quick(n))
    assert breaker.record(OK) is None  # a retry answered: the burst is over
    for n in range(7):
        assert breaker.record(fault(100 + n)) is None  # one short of the threshold
    reason = breaker.record(quick())
    assert reason is not None and reason.startswith("circuit open: 8 consecutive calls")
    assert reason.endswith("the first error: HTTP 500 number 100")  # this run's, not the burst's


def test_a_full_window_of_quick_faults_does_not_open_it_by_rate() -> None:
    breaker = CircuitBreaker("e", 2)  # window 10
    for n in range(25):
        assert breaker.record(quick(n)) is None
    assert breaker.record(fault()) is not None


def test_threshold_must_be_positive() -> None:
    with pytest.raises(ValueError, match=">= 1"):
        CircuitBreaker("e", 0)


def test_many_threads_open_it_exactly_once() -> None:
    breaker = CircuitBreaker("e", 8)
    openings: list[str] = []
    start = threading.Barrier(8)

    def feed() -> None:
        start.wait(timeout=10)
        for _ in range(50):
            reason = breaker.record(fault())
            if reason is not None:
                openings.append(reason)

    threads = [threading.Thread(target=feed) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert len(openings) == 1


_OUTCOMES = st.sampled_from(["ok", "fault", "quick", "paced"])


def _outcome(kind: str) -> AttemptOutcome:
    return {"ok": OK, "paced": PACED, "quick": quick()}.get(kind) or fault()


@given(st.integers(min_value=1, max_value=6), st.lists(_OUTCOMES, max_size=120))
def test_it_opens_exactly_when_a_rule_says_so(threshold: int, kinds: list[str]) -> None:
    """Open exactly when the run of consecutive counted faults since the last success is at
    least ``threshold`` long and holds a confirmed fault, or a full window's faults are at
    least 80 % and it holds a confirmed fault; never before."""
    breaker = CircuitBreaker("e", threshold)
    window = WINDOW_FACTOR * threshold
    counted: list[str] = []  # "ok", "fault" (confirmed) or "quick" (unconfirmed)
    for kind in kinds:
        breaker.record(_outcome(kind))
        if kind != "paced":
            counted.append(kind)
        run: list[str] = []
        for seen in reversed(counted):
            if seen == "ok":
                break
            run.append(seen)
        run_rule = len(run) >= threshold and "fault" in run
        recent = counted[-window:]
        faults = sum(seen != "ok" for seen in recent)
        rate_rule = (len(recent) == window and faults >= OPEN_RATE * window
                     and "fault" in recent)
        if run_rule or rate_rule:
            assert breaker.is_open
            return  # open for good: later outcomes change nothing
        assert not breaker.is_open
