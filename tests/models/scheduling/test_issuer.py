"""issuer: how a worker obtains a request's answer — cached, or issued (paced, within the
budget) and cached as soon as it arrives."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_graphinstruct.answers import Answer, Failure, Usage
from pytest_graphinstruct.models.base import AttemptOutcome, Request
from pytest_graphinstruct.models.caching.cache import AnswerCache
from pytest_graphinstruct.models.caching.snapshot import Snapshot
from pytest_graphinstruct.models.caching.view import CacheView
from pytest_graphinstruct.models.scheduling.issue_gate import IssueGate
from pytest_graphinstruct.models.scheduling.issuer import RequestIssuer
from pytest_graphinstruct.models.scheduling.request_stats import RequestStats
from pytest_graphinstruct.models.scheduling.scheduler import TokenBudget
from tests.models.helpers import req

ENDPOINT = "http://fake.invalid/v1"
FAULT = AttemptOutcome(ok=False, endpoint_fault=True, error="HTTP 503")


class Backend:
    """Answers ``answer`` (default: an echo with usage 3+4), recording each request;
    ``during`` runs inside each call."""

    endpoint = ENDPOINT
    cacheable = True

    def __init__(self, answer: Answer | None = None,
                 during: Callable[[], None] | None = None) -> None:
        self.answer = answer
        self.during = during
        self.asked: list[Request] = []

    def complete(self, request: Request) -> Answer:
        self.asked.append(request)
        if self.during is not None:
            self.during()
        return self.answer or Answer(text=f"echo {request.messages[0].content}",
                                     usage=Usage(3, 4))


class Served(Backend):
    def complete_served(self, request: Request) -> tuple[Answer, Snapshot]:
        return self.complete(request), Snapshot("snap-7", "fp_7")


class Limiter:
    def __init__(self, during: Callable[[], None] | None = None) -> None:
        self.acquired = 0
        self.during = during

    def acquire(self) -> None:
        self.acquired += 1
        if self.during is not None:
            self.during()


class Parts:
    """A :class:`RequestIssuer` with its parts at hand."""

    def __init__(self, backend: Backend, cache: AnswerCache | None = None, *,
                 budget: TokenBudget | None = None, limiter: Limiter | None = None,
                 threshold: int | None = 2) -> None:
        lock = threading.RLock()
        self.stats = RequestStats(lock)
        self.view = CacheView(cache, snapshot=None, reuse_stale=False, lock=lock,
                              stats=self.stats)
        self.gate = IssueGate(backend, threshold, lock=lock,  # type: ignore[arg-type]
                              stats=self.stats, stop_check=None,
                              on_halt=lambda: None)
        self.issuer = RequestIssuer(backend, ENDPOINT,  # type: ignore[arg-type]
                                    view=self.view, gate=self.gate, stats=self.stats,
                                    limiter=limiter, budget=budget)  # type: ignore[arg-type]

    def count(self, name: str) -> int:
        return int(self.stats.report(0)[name])


def key_of(r: Request) -> str:
    return r.cache_key(ENDPOINT)


def test_without_a_cache_every_request_is_issued() -> None:
    backend = Backend()
    p = Parts(backend)
    r = req("q")
    assert p.issuer.obtain(key_of(r), r).text == "echo q"
    assert backend.asked == [r] and p.count("issued") == 1 and p.count("calls") == 1


def test_an_answer_is_cached_with_its_endpoint_and_snapshot(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path)
    backend = Served()
    p = Parts(backend, cache)
    r = req("q")
    answer = p.issuer.obtain(key_of(r), r)
    assert answer.ok and not answer.cached
    entry = cache.lookup(key_of(r))
    assert entry is not None and entry.endpoint == ENDPOINT
    assert (entry.snapshot, entry.fingerprint) == ("snap-7", "fp_7")
    again = p.issuer.obtain(key_of(r), r)  # now a hit
    assert again.text == answer.text and len(backend.asked) == 1 and p.count("cache_hits") == 1


@pytest.mark.parametrize("answer", [
    Answer(error="HTTP 500", calls=2),
    Answer(text="cut", finish_reason="length"),
], ids=["error", "truncated"])
def test_an_error_or_truncated_answer_is_not_cached(tmp_path: Path, answer: Answer) -> None:
    cache = AnswerCache(tmp_path)
    backend = Backend(answer)
    p = Parts(backend, cache, threshold=None)
    r = req()
    assert p.issuer.obtain(key_of(r), r) == answer
    assert len(cache) == 0 and cache.lookup(key_of(r)) is None
    assert p.issuer.obtain(key_of(r), r) == answer  # asked again, not a hit
    assert backend.asked == [r, r] and p.count("cache_hits") == 0


def test_a_failed_write_is_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = AnswerCache(tmp_path)
    monkeypatch.setattr(cache, "store", lambda *a, **k: "failed")
    p = Parts(Backend(), cache)
    r = req()
    assert p.issuer.obtain(key_of(r), r).ok
    assert p.count("cache_write_errors") == 1 and len(cache) == 0


def test_a_stored_write_is_not_counted_as_an_error(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path)
    p = Parts(Backend(), cache)
    r = req()
    assert p.issuer.obtain(key_of(r), r).ok
    assert p.count("cache_write_errors") == 0 and len(cache) == 1


def test_the_budget_is_spent_and_then_refuses_without_pacing(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path)
    backend, limiter, budget = Backend(), Limiter(), TokenBudget(10)
    p = Parts(backend, cache, budget=budget, limiter=limiter)
    first, second, third = req("1"), req("2"), req("3")
    p.issuer.obtain(key_of(first), first)
    assert budget.spent == 7 and not budget.exhausted
    p.issuer.obtain(key_of(second), second)
    assert budget.spent == 14 and budget.exhausted
    refused = p.issuer.obtain(key_of(third), third)
    assert not refused.ok and refused.calls == 0 and refused.error == budget.refusal()
    assert len(backend.asked) == 2 and limiter.acquired == 2  # a spent budget is not paced
    assert p.count("budget_skipped") == 1 and cache.lookup(key_of(third)) is None


def test_a_circuit_opened_during_the_pacing_wait_refuses_the_request() -> None:
    backend = Backend()
    p: list[Parts] = []

    def opens() -> None:
        p[0].gate.on_attempt(FAULT)
        p[0].gate.on_attempt(FAULT)

    p.append(Parts(backend, limiter=Limiter(opens)))
    refused = p[0].issuer.issue("k", req())
    assert refused.error == p[0].gate.circuit_open_reason and refused.calls == 0
    assert backend.asked == [] and p[0].count("circuit_skipped") == 1


def test_a_call_the_opening_circuit_cancelled_says_the_circuits_reason() -> None:
    p: list[Parts] = []

    def opens() -> None:  # another request's faults open it while this call is in flight
        p[0].gate.on_attempt(FAULT)
        p[0].gate.on_attempt(FAULT)

    backend = Backend(Answer(error="cancelled: the backend was cancelled",
                             failure_kind="cancelled"), during=opens)
    p.append(Parts(backend))
    answer = p[0].issuer.issue("k", req())
    assert answer.failure == Failure("circuit_open", p[0].gate.circuit_open_reason or "")


def test_a_backend_without_attempts_feeds_the_breaker_per_request() -> None:
    p = Parts(Backend(Answer(error="HTTP 500")))
    p.issuer.issue("k1", req("1"))
    p.issuer.issue("k2", req("2"))
    assert p.gate.circuit_open_reason is not None
    assert p.issuer.issue("k3", req("3")).calls == 0


def test_max_in_flight_counts_calls_in_the_backend() -> None:
    p: list[Parts] = []
    seen: list[int] = []
    backend = Backend(during=lambda: seen.append(p[0].count("max_in_flight")))
    p.append(Parts(backend))
    p[0].issuer.issue("k", req())
    assert seen == [1]
