"""The breaker sees the whole endpoint, stops calls in flight, and peers are told at once."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_graphinstruct.answers import Answer, FailureKind, Usage
from pytest_graphinstruct.models.base import AttemptOutcome, Request
from pytest_graphinstruct.models.cache import AnswerCache
from pytest_graphinstruct.models.cache_notes import ATTEMPTS_FILE, notes_fallback
from pytest_graphinstruct.models.scheduler import Scheduler
from tests.models.helpers import req

WAIT_S = 10.0  # every wait of these tests ends by itself; none is expected to come near it


class _Remote:
    """A remote, cacheable fake backend with retries that reports each attempt (like
    ``OpenAIBackend.attempt_listener``) and whose ``cancel(reason)`` ends calls in flight.

    ``script(n)`` says what the n-th attempt (0-based, in arrival order) does: ``ok``,
    ``fault`` (an endpoint fault, retried) or ``hold`` (stays in flight until cancelled or
    :attr:`release` is set).
    """

    endpoint = "http://fake.invalid/v1"
    cacheable = True
    remote = True

    def __init__(self, script: Callable[[int], str], *, retries: int = 5,
                 listener: bool = True) -> None:
        if listener:
            self.attempt_listener: Callable[[AttemptOutcome], None] | None = None
        self.script, self.retries = script, retries
        self.attempts = 0
        self.held = threading.Semaphore(0)  # one release per attempt that began holding
        self.holding: list[Request] = []  # the requests of those attempts
        self.release = threading.Event()
        self.cancelled: str | None = None
        self.cancel_kind: FailureKind = "cancelled"
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def _hear(self, outcome: AttemptOutcome) -> None:
        listener = getattr(self, "attempt_listener", None)
        if listener is not None:
            listener(outcome)

    def complete(self, request: Request) -> Answer:
        calls = 0
        for _ in range(self.retries + 1):
            if self._stop.is_set():
                return Answer(error=self.cancelled, calls=calls, failure_kind=self.cancel_kind)
            calls += 1
            with self._lock:
                n, self.attempts = self.attempts, self.attempts + 1
            kind = self.script(n)
            if kind == "hold":
                with self._lock:
                    self.holding.append(request)
                self.held.release()
                released = self.release.wait(WAIT_S)  # cancel() sets it too
                if self._stop.is_set() or not released:
                    return Answer(error=self.cancelled or "held too long", calls=calls,
                                  failure_kind=self.cancel_kind)
                kind = "ok"
            if kind == "ok":
                self._hear(AttemptOutcome(ok=True))
                return Answer(text=f"answer {n}", usage=Usage(1, 1), calls=calls)
            self._hear(AttemptOutcome(ok=False, endpoint_fault=True, error=f"HTTP 500 #{n}"))
        return Answer(error="HTTP 500: gave up", calls=calls)

    def cancel(self, reason: str | None = None, kind: FailureKind = "cancelled") -> None:
        self.cancelled, self.cancel_kind = reason or "cancelled", kind
        self._stop.set()
        self.release.set()


def _requests(n: int, prefix: str = "q") -> list[Request]:
    return [req(f"{prefix}{i}") for i in range(n)]


@pytest.mark.parametrize("listener", [True, False], ids=["per-attempt", "per-request"])
def test_an_endpoint_that_dies_after_ten_good_answers_opens_the_circuit(listener: bool) -> None:
    backend = _Remote(lambda n: "ok" if n < 10 else "fault", listener=listener)
    with Scheduler(backend, concurrency=1, circuit_breaker=8) as sched:
        answers = [f.result(timeout=WAIT_S) for f in sched.submit_all(_requests(100))]
        assert sched.is_circuit_open()
        stats = sched.stats()
    assert sum(a.ok for a in answers) == 10
    # today's first-N rule never opened it: 90 requests x 6 calls; now 8 calls (per attempt)
    # or 8 requests x 6 calls (per request) after the last good answer
    assert backend.attempts == (10 + 8 if listener else 10 + 8 * 6)
    # issued after the last good answer: 2 requests (6 + 2 calls) or 8 (6 calls each)
    issued = 2 if listener else 8
    # the request whose fault opened it keeps its own error (per request); a stopped one not
    assert all(a.failure_kind == "circuit_open" for a in answers[10 + (1 if listener else 8):])
    assert stats["circuit_skipped"] == 100 - 10 - issued
    assert "8 consecutive calls to http://fake.invalid/v1 failed" in (sched.circuit_open_reason
                                                                      or "")


def test_calls_in_flight_when_it_opens_stop_and_make_no_retries() -> None:
    backend = _Remote(lambda n: "hold" if n < 3 else "fault")
    with Scheduler(backend, concurrency=4, circuit_breaker=8) as sched:
        futures = sched.submit_all(_requests(20))
        answers = [f.result(timeout=WAIT_S) for f in futures]
    held = [a for a in answers if a.calls == 1]
    assert len(held) == 3  # the three held calls ended with the breaker's line, one call each
    assert all(a.failure_kind == "circuit_open" for a in held)
    assert backend.attempts == 3 + 8  # no retry of a stopped call, nothing issued after it
    # all but the one request that made its six calls before the opening say the one line
    assert sum(a.failure_kind != "circuit_open" for a in answers) == 1


def test_requests_not_issued_resolve_at_once_when_the_circuit_opens() -> None:
    # two calls stay in flight (a backend whose cancel the breaker cannot reach would keep
    # them): the queued requests must not wait for them
    backend = _Remote(lambda n: "hold" if n < 2 else "fault", retries=0, listener=False)
    backend.cancel = None  # type: ignore[assignment,method-assign]
    with Scheduler(backend, concurrency=3, circuit_breaker=4) as sched:
        requests = _requests(30)
        futures = sched.submit_all(requests)
        assert backend.held.acquire(timeout=WAIT_S) and backend.held.acquire(timeout=WAIT_S)
        # the held calls are whichever two requests the workers started first
        held = [f for r, f in zip(requests, futures, strict=True) if r in backend.holding]
        others = [f for f in futures if f not in held]
        rest = [f.result(timeout=WAIT_S) for f in others]  # while two are held
        assert len(held) == 2 and sched.is_circuit_open() and not any(f.done() for f in held)
        backend.release.set()
        first = [f.result(timeout=WAIT_S) for f in held]
    assert all(a.ok for a in first)
    assert sum(a.calls for a in rest) == 4 and all(a.error for a in rest)


def test_stop_issuing_resolves_the_queue_and_lets_calls_in_flight_finish_and_be_cached(
        tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path / "c", run="run-1")
    backend = _Remote(lambda n: "hold" if n < 2 else "ok")
    with Scheduler(backend, concurrency=2, cache=cache, share_in_flight=False) as sched:
        futures = sched.submit_all(_requests(6))
        assert backend.held.acquire(timeout=WAIT_S) and backend.held.acquire(timeout=WAIT_S)
        stoppers = [threading.Thread(target=sched.stop_issuing, args=("terminated (SIGTERM)",))
                    for _ in range(2)]
        for t in stoppers:
            t.start()
        for t in stoppers:
            t.join(timeout=WAIT_S)
        queued = [f.result(timeout=WAIT_S) for f in futures[2:]]  # the calls are still held
        assert all(a.error == "terminated (SIGTERM)" and a.calls == 0 for a in queued)
        backend.release.set()
        held = [f.result(timeout=WAIT_S) for f in futures[:2]]
        later = sched.submit(req("after")).result(timeout=WAIT_S)
        stats = sched.stats()
    assert all(a.ok for a in held) and len(cache) == 2  # answered in flight: cached
    assert later.error == "terminated (SIGTERM)"
    assert backend.attempts == 2 and stats["stop_skipped"] == 5
    keys = {sched.key(r) for r in _requests(6)[2:]} | {sched.key(req("after"))}
    assert keys <= AnswerCache(tmp_path / "c", run="run-1").uncached()


def test_every_key_the_open_circuit_skips_is_published_to_peers(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path / "c", run="run-1")
    backend = _Remote(lambda n: "fault")
    with Scheduler(backend, concurrency=2, cache=cache, circuit_breaker=4) as sched:
        requests = _requests(12)
        [f.result(timeout=WAIT_S) for f in sched.submit_all(requests)]
    peer = AnswerCache(tmp_path / "c", run="run-1")
    assert {sched.key(r) for r in requests} <= peer.uncached()
    assert not AnswerCache(tmp_path / "c", run="another-run").uncached()


def test_a_spent_budget_is_published_to_peers(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path / "c", run="r")
    backend = _Remote(lambda n: "ok")
    with Scheduler(backend, concurrency=1, cache=cache, token_budget=2) as sched:
        answers = [f.result(timeout=WAIT_S) for f in sched.submit_all(_requests(3))]
    assert [a.ok for a in answers] == [True, False, False]
    assert {sched.key(r) for r in _requests(3)[1:]} <= AnswerCache(tmp_path / "c",
                                                                   run="r").uncached()


def test_a_read_only_cache_folder_still_tells_peers(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "ro"
    cache = AnswerCache(folder, run="r")
    real_open = os.open

    def read_only(path: object, flags: int, *args: int) -> int:
        if str(path).startswith(str(folder)) and flags & (os.O_WRONLY
                                                           | os.O_RDWR):
            raise OSError(errno.EROFS, "Read-only file system")
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", read_only)
    fallback = notes_fallback(folder)
    try:
        with Scheduler(_Remote(lambda n: "ok"), concurrency=1, cache=cache) as sched:
            answer = sched.submit(req("q")).result(timeout=WAIT_S)
        assert answer.ok and sched.stats()["cache_write_errors"] == 1
        assert sched.key(req("q")) in AnswerCache(folder, run="r").uncached()
        assert fallback.exists() and not (folder / ATTEMPTS_FILE).exists()
    finally:
        fallback.unlink(missing_ok=True)


def test_an_answer_a_peer_of_this_run_cached_is_never_an_earlier_runs(tmp_path: Path) -> None:
    # however the byte mark was taken, an answer recorded by this run is fresh
    mine = AnswerCache(tmp_path / "c", mark=10**9, run="run-1")
    peer = AnswerCache(tmp_path / "c", run="run-1")
    peer.put("k", req("q"), Answer(text="a", usage=Usage(1, 1)))
    entry = mine.lookup("k")
    assert entry is not None and entry.run == "run-1" and not mine.earlier(entry)
    later_run = AnswerCache(tmp_path / "c", mark=10**9, run="run-2")
    entry = later_run.lookup("k")
    assert entry is not None and later_run.earlier(entry)


def test_a_cancelled_queue_is_published_to_peers(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path / "c", run="r")
    backend = _Remote(lambda n: "hold")
    sched = Scheduler(backend, concurrency=1, cache=cache, share_in_flight=False)
    futures = sched.submit_all(_requests(4))
    assert backend.held.acquire(timeout=WAIT_S)
    sched.close(cancel_pending=True)
    assert all(f.cancelled() for f in futures[1:])
    assert {sched.key(r) for r in _requests(4)} <= AnswerCache(tmp_path / "c",
                                                               run="r").uncached()


def test_a_call_cancelled_after_a_stop_is_published_with_its_calls(tmp_path: Path) -> None:
    # the owner sent it (the server counts it) but will not cache its answer: the peer that
    # runs the item must count the call, so the note carries it
    cache = AnswerCache(tmp_path / "c", run="r")
    backend = _Remote(lambda n: "hold")
    with Scheduler(backend, concurrency=1, cache=cache) as sched:
        futures = sched.submit_all(_requests(2))
        assert backend.held.acquire(timeout=WAIT_S)  # the first call is in flight
        sched.stop_issuing("terminated (SIGTERM)")
        backend.cancel("terminated (SIGTERM)")  # the grace is over
        in_flight, queued = (f.result(timeout=WAIT_S) for f in futures)
    assert (in_flight.error, in_flight.calls) == ("terminated (SIGTERM)", 1)
    assert (queued.error, queued.calls) == ("terminated (SIGTERM)", 0)
    noted = AnswerCache(tmp_path / "c", run="r").uncached_calls()
    assert noted[sched.key(_requests(2)[0])] == 1 and noted[sched.key(_requests(2)[1])] == 0
