"""Scheduler: concurrency scaling, dedupe, cache, token budget, rate limit, stats."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.models.caching.cache import CACHE_FILE, AnswerCache
from pytest_graphinstruct.models.scheduling.scheduler import (
    BUDGET_EXHAUSTED,
    Scheduler,
    TokenBudget,
)
from tests.models.fake_openai import FakeOpenAIServer, Fault
from tests.models.helpers import SECRET, req
from tests.signals import take_sigint


def _timed(sched: Scheduler, requests: list[Request]) -> tuple[float, list[Answer]]:
    t0 = time.monotonic()
    answers = [f.result() for f in sched.submit_all(requests)]
    return time.monotonic() - t0, answers


def test_the_scheduler_keeps_its_concurrency_in_flight(fake_openai: FakeOpenAIServer,
                                                        backend_for) -> None:
    """``concurrency=1`` sends one request at a time; ``concurrency=8`` keeps eight in flight.
    The server answers no request of a wave until eight are waiting (a barrier), so a scheduler
    that sent fewer at once would break the barrier: nothing here depends on wall time."""
    backend = backend_for(timeout_s=120.0)
    with Scheduler(backend, concurrency=1) as serial:
        answers = [f.result() for f in serial.submit_all([req(f"s{i}") for i in range(8)])]
    assert all(a.ok for a in answers)
    assert fake_openai.max_in_flight == 1
    fake_openai.reset()
    barrier = threading.Barrier(8, timeout=60)
    answer = fake_openai.responder

    def in_waves_of_eight(body: dict[str, Any]) -> str:
        barrier.wait()
        return answer(body)

    fake_openai.responder = in_waves_of_eight
    with Scheduler(backend, concurrency=8) as parallel:
        answers = [f.result() for f in parallel.submit_all([req(f"p{i}") for i in range(16)])]
    assert not barrier.broken
    assert all(a.ok for a in answers) and len(answers) == 16
    assert fake_openai.max_in_flight == 8


def test_identical_requests_share_one_future(fake_openai, backend_for) -> None:
    with Scheduler(backend_for(), concurrency=4) as sched:
        a = sched.submit(req("same"))
        b = sched.submit(req("same", iid="L2-999", cell="other/cell"))  # not part of the key
        c = sched.submit(req("same", sample=1))
        assert a is b and a is not c
        assert a.result().text == c.result().text == "echo: same"
        stats = sched.stats()
    assert fake_openai.request_count == 2
    assert stats["submitted"] == 3 and stats["deduplicated"] == 1 and stats["issued"] == 2


def test_every_use_of_a_shared_answer_is_recorded_in_the_cache(fake_openai, backend_for,
                                                               tmp_path: Path) -> None:
    backend = backend_for()
    with Scheduler(backend, concurrency=2, cache=AnswerCache(tmp_path)) as sched:
        for f in sched.submit_all([req("same"), req("same", iid="L1-002")]):
            f.result()
    # a later run: a third instruction's request is a cache hit, and a use too
    with Scheduler(backend, concurrency=2, cache=AnswerCache(tmp_path)) as sched:
        assert sched.answer(req("same", iid="L1-003")).cached
    assert fake_openai.request_count == 1
    cache = AnswerCache(tmp_path)
    assert len(cache) == 1  # one answer
    assert [e.instruction_id for e in cache.all_entries()] == ["L1-001", "L1-002", "L1-003"]
    assert {e.answer.text for e in cache.all_entries()} == {"echo: same"}


def test_cache_hits_resolve_immediately_and_misses_are_written(
    fake_openai, backend_for, tmp_path: Path
) -> None:
    cache = AnswerCache(tmp_path)
    backend = backend_for()
    with Scheduler(backend, concurrency=2, cache=cache) as sched:
        first = [f.result() for f in sched.submit_all([req("a"), req("b")])]
    assert not any(a.cached for a in first) and len(cache) == 2
    fake_openai.reset()
    with Scheduler(backend, concurrency=2, cache=AnswerCache(tmp_path)) as sched:
        fut = sched.submit(req("a"))
        assert fut.done()
        hit = fut.result()
        assert hit.cached and hit.text == "echo: a" and hit.usage == first[0].usage
        assert sched.answer(req("c")).ok
        stats = sched.stats()
    assert fake_openai.request_count == 1
    assert stats["cache_hits"] == 1 and stats["issued"] == 1
    assert SECRET not in (tmp_path / CACHE_FILE).read_text(encoding="utf-8")


def test_an_earlier_answer_asked_again_counts_once_as_cached(
    fake_openai, backend_for, tmp_path: Path
) -> None:
    backend = backend_for()
    with Scheduler(backend, concurrency=2, cache=AnswerCache(tmp_path)) as sched:
        sched.answer(req("a"))
    with Scheduler(backend, concurrency=2, cache=AnswerCache(tmp_path)) as sched:
        assert sched.answer(req("a")).cached
        assert sched.answer(req("a", iid="L2-999", cell="other/cell")).cached  # same key
        sent, keys = sched.sent(), sched.earlier_keys()
    assert sent.cached == 1 and sent.requests == 0
    assert keys == {req("a").cache_key(backend.endpoint)}


def test_errors_and_truncated_answers_are_not_cached(fake_openai, backend_for, tmp_path) -> None:
    cache = AnswerCache(tmp_path)
    fake_openai.script(Fault.unauthorized(), Fault.length())
    with Scheduler(backend_for(), concurrency=1, cache=cache) as sched:
        err = sched.answer(req("x"))
        cut = sched.answer(req("y"))
        stats = sched.stats()
    assert not err.ok and cut.ok and cut.truncated
    assert len(cache) == 0
    assert stats["errors"] == 1 and stats["truncated"] == 1
    with Scheduler(backend_for(), concurrency=1, cache=cache) as sched:
        assert not sched.answer(req("x")).cached and not sched.answer(req("y")).cached
    assert len(cache) == 2


def test_calls_and_retries_are_counted(fake_openai, backend_for, sleeps) -> None:
    fake_openai.script(Fault.server_error(), Fault.rate_limited("1"))
    with Scheduler(backend_for(), concurrency=1) as sched:
        answer = sched.answer(req())
        stats = sched.stats()
    assert answer.ok and answer.calls == 3
    assert stats["calls"] == 3 and stats["retries"] == 2 and stats["issued"] == 1
    assert stats["input_tokens"] == 2 and stats["output_tokens"] == 3 and stats["tokens"] == 5


def test_missing_usage_counts_no_tokens(fake_openai, backend_for) -> None:
    fake_openai.script(Fault.no_usage())
    with Scheduler(backend_for(token_counter=None), concurrency=1, token_budget=100) as sched:
        assert sched.answer(req()).usage is None
        stats = sched.stats()
    assert stats["tokens"] == 0 and stats["usage_missing"] == 1 and stats["budget_spent"] == 0


def test_token_budget_stops_issuing_and_keeps_what_was_obtained(
    fake_openai, backend_for, tmp_path
) -> None:
    cache = AnswerCache(tmp_path)
    # Each "w w" request costs 2 prompt + 3 completion tokens ("echo: w w").
    requests = [req("w w", sample=k) for k in range(6)]
    with Scheduler(backend_for(), concurrency=1, cache=cache, token_budget=12) as sched:
        answers = [f.result() for f in sched.submit_all(requests)]
        stats = sched.stats()
    assert [a.ok for a in answers] == [True, True, True, False, False, False]
    for a in answers[3:]:
        assert a.failure_kind == "budget" and a.error.startswith(BUDGET_EXHAUSTED)
        assert "15 of 12 tokens" in a.error and a.calls == 0
    assert fake_openai.request_count == 3
    assert stats["budget_skipped"] == 3 and stats["budget_spent"] == 15
    assert stats["errors"] == 0  # a budget stop is not an infrastructure error
    assert len(cache) == 3


def test_a_shared_budget_spans_schedulers(fake_openai, backend_for) -> None:
    budget = TokenBudget(5)
    with Scheduler(backend_for(), concurrency=1, token_budget=budget) as one, \
            Scheduler(backend_for(), concurrency=1, token_budget=budget) as two:
        assert one.answer(req("w w")).ok
        assert two.answer(req("v v")).failure_kind == "budget"
    assert budget.spent == 5 and budget.exhausted


def test_a_budget_stop_is_told_by_its_kind_not_its_text() -> None:
    assert Answer(error=f"{BUDGET_EXHAUSTED}: 1 of 1").failure_kind == "error"
    assert Answer(text=f"{BUDGET_EXHAUSTED} is what I say").failure_kind is None


def test_rate_limit_spaces_requests(fake_openai, backend_for) -> None:
    with Scheduler(backend_for(), concurrency=4, rate_limit=20.0) as sched:
        t0 = time.monotonic()
        answers = [f.result() for f in sched.submit_all([req(f"r{i}") for i in range(6)])]
    assert all(a.ok for a in answers)
    # burst 1: the k-th start is granted no earlier than k x 50 ms after the first (which is
    # after t0), and a request reaches the server after its grant.  Lower bounds only: a loaded
    # machine delays arrivals, it cannot bring one forward (1 ms: float rounding).
    arrivals = sorted(r.arrived for r in fake_openai.requests)
    assert len(arrivals) == 6
    assert all(arrived - t0 >= k / 20 - 0.001 for k, arrived in enumerate(arrivals)), arrivals


@pytest.mark.slow
def test_queue_wait_is_not_part_of_the_timeout(fake_openai, backend_for) -> None:
    # A one-at-a-time server and a queue three times longer than the timeout: no spurious
    # timeouts.  Each call takes 0.2 s (the server's latency) against a 1 s timeout: 5x
    # headroom, so only a timer that counted the queue wait (3 s for the last) could fire.
    fake_openai.serial = True
    fake_openai.latency_s = 0.2
    with Scheduler(backend_for(timeout_s=1.0), concurrency=1) as sched:
        t, answers = _timed(sched, [req(f"t{i}") for i in range(16)])
    assert t > 1.0 * 3  # a lower bound: 16 x 0.2 s at least
    assert all(a.ok and a.calls == 1 for a in answers)


class _Stub:
    endpoint = "stub"
    cacheable = False

    def __init__(self, gate: threading.Event | None = None, boom: bool = False) -> None:
        self.gate, self.boom, self.calls = gate, boom, 0
        self.started = threading.Event()  # set when the first call begins

    def complete(self, request: Request) -> Answer:
        self.calls += 1
        self.started.set()
        if self.gate is not None:
            self.gate.wait(60)  # a safety net: the test opens the gate
        if self.boom:
            raise RuntimeError("backend bug")
        return Answer(text=request.messages[0].content, usage=Usage(1, 1))


def test_a_backend_exception_becomes_an_error_answer() -> None:
    with Scheduler(_Stub(boom=True), concurrency=1) as sched:
        answer = sched.answer(req())
    assert not answer.ok and "internal error" in answer.error and "backend bug" in answer.error


def test_non_cacheable_backends_ignore_the_cache(tmp_path) -> None:
    cache = AnswerCache(tmp_path)
    with Scheduler(_Stub(), concurrency=1, cache=cache) as sched:
        assert sched.cache is None
        assert sched.answer(req()).ok
    assert len(cache) == 0


def test_close_can_cancel_pending_requests() -> None:
    gate = threading.Event()
    stub = _Stub(gate)
    sched = Scheduler(stub, concurrency=1)
    futures = sched.submit_all([req(f"c{i}") for i in range(5)])
    assert stub.started.wait(60)  # the first request is in the backend, the others queued
    ended = threading.Semaphore(0)
    for f in futures[1:]:
        f.add_done_callback(lambda f: ended.release())  # cancel() runs the callbacks
    closer = threading.Thread(target=sched.close, kwargs={"cancel_pending": True})
    closer.start()
    assert all(ended.acquire(timeout=60) for _ in futures[1:])  # close() cancelled them
    gate.set()  # only now may the first call end (else the worker could take the next)
    closer.join(60)
    assert not closer.is_alive()
    assert futures[0].result().ok
    assert all(f.cancelled() for f in futures[1:])
    assert stub.calls == 1
    with pytest.raises(RuntimeError, match="closed"):
        sched.submit(req("late"))


def test_answer_turns_cancellation_into_an_error(monkeypatch) -> None:
    from concurrent.futures import Future

    sched = Scheduler(_Stub(), concurrency=1)
    cancelled: Future[Answer] = Future()
    cancelled.cancel()
    monkeypatch.setattr(sched, "submit", lambda request: cancelled)
    answer = sched.answer(req())
    sched.close()
    assert not answer.ok and answer.error.startswith("cancelled")


class _InlineStub(_Stub):
    inline = True

    def __init__(self, boom: bool = False) -> None:
        super().__init__(boom=boom)
        self.threads: list[int] = []

    def complete(self, request: Request) -> Answer:
        self.threads.append(threading.get_ident())
        return super().complete(request)


def test_an_inline_backend_answers_in_the_submitting_thread_once_per_request() -> None:
    stub = _InlineStub()
    with Scheduler(stub, concurrency=4) as sched:
        futures = sched.submit_all([req("a"), req("b"), req("a")])
        assert all(f.done() for f in futures)  # resolved by submit itself
        assert [f.result().text for f in futures] == ["a", "b", "a"]
        assert futures[0] is futures[2]  # deduplicated, not asked again
        assert sched.stats()["submitted"] == 3 and sched.stats()["deduplicated"] == 1
    assert stub.threads == [threading.get_ident()] * 2


def test_an_inline_backend_bug_is_an_error_answer_and_a_stop_refuses_it() -> None:
    with Scheduler(_InlineStub(boom=True), concurrency=1) as sched:
        answer = sched.answer(req())
    assert not answer.ok and "internal error" in answer.error
    stub = _InlineStub()
    with Scheduler(stub, concurrency=1, stop_check=lambda: "stopped by the test") as sched:
        answer = sched.answer(req())
    assert not answer.ok and "stopped by the test" in answer.error and stub.calls == 0


def test_invalid_concurrency() -> None:
    with pytest.raises(ValueError):
        Scheduler(_Stub(), concurrency=0)


# -- trust under failure (issue 11) ---------------------------------------------------------


def test_circuit_opens_when_the_first_requests_all_fail(fake_openai, backend_for) -> None:
    from pytest_graphinstruct.models.scheduling.circuit import CIRCUIT_OPEN

    fake_openai.fault_for = lambda body: Fault.unauthorized()
    with Scheduler(backend_for(), concurrency=1, circuit_breaker=4) as sched:
        answers = [f.result() for f in sched.submit_all([req(f"q{i}") for i in range(10)])]
        stats = sched.stats()
    assert fake_openai.request_count == 4
    assert not any(a.ok for a in answers)
    assert not any(a.failure_kind == "circuit_open" for a in answers[:4])
    for a in answers[4:]:
        assert a.failure_kind == "circuit_open" and a.calls == 0
        assert a.error.startswith(CIRCUIT_OPEN)
        assert "authentication failed (HTTP 401" in a.error and "\n" not in a.error
    assert stats["circuit_skipped"] == 6 and stats["issued"] == 4 and stats["errors"] == 4


def test_the_circuit_is_on_by_default_after_eight_failures(fake_openai, backend_for) -> None:
    fake_openai.fault_for = lambda body: Fault.unauthorized()  # an endpoint fault, not retried
    with Scheduler(backend_for(), concurrency=2) as sched:
        answers = [f.result() for f in sched.submit_all([req(f"q{i}") for i in range(12)])]
    sent = fake_openai.request_count
    assert 8 <= sent <= 9  # the other worker's request may already be in flight when it opens
    # a call in flight when it opens is stopped and says so too, unless it ended first
    assert 12 - sent <= sum(a.error is not None and "circuit open" in a.error
                            for a in answers) <= 12 - 8


def test_a_success_resets_the_run_of_failures_but_later_ones_still_open_it(
        fake_openai, backend_for) -> None:
    fake_openai.script(*[Fault.unauthorized()] * 3)
    with Scheduler(backend_for(), concurrency=1, circuit_breaker=4) as sched:
        answers = [f.result() for f in sched.submit_all([req(f"q{i}") for i in range(4)])]
        assert not sched.is_circuit_open()  # 3 faults, then a success: the run starts over
        fake_openai.fault_for = lambda body: Fault.unauthorized()
        later = [f.result() for f in sched.submit_all([req(f"r{i}") for i in range(6)])]
    assert [a.ok for a in answers] == [False, False, False, True]
    assert fake_openai.request_count == 4 + 4  # 4 consecutive faults open it
    assert not any("circuit" in (a.error or "") for a in later[:4])
    assert all((a.error or "").startswith("circuit open: 4 consecutive calls") for a in later[4:])


def test_local_backends_never_open_the_circuit() -> None:
    class _Failing(_Stub):
        def complete(self, request: Request) -> Answer:
            return Answer(error="no recorded answer", calls=0)

    with Scheduler(_Failing(), concurrency=1, circuit_breaker=2) as sched:
        answers = [sched.answer(req(f"q{i}")) for i in range(5)]
    assert all(a.error == "no recorded answer" for a in answers)


def test_an_internal_error_is_one_line() -> None:
    class _Bug(_Stub):
        def complete(self, request: Request) -> Answer:
            raise RuntimeError("line\n" * 300)

    with Scheduler(_Bug(), concurrency=1) as sched:
        answer = sched.answer(req())
    assert not answer.ok and "\n" not in answer.error and len(answer.error) <= 300


_CTRL_C_CHILD = """
import sys
from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
from pytest_graphinstruct.models.scheduling.scheduler import Scheduler
from tests.models.helpers import KEY_ENV, req

backend = OpenAIBackend(sys.argv[1], "fake-model", api_key_env=KEY_ENV, timeout_s=3600)
with Scheduler(backend, concurrency=1) as sched:
    print("asking", flush=True)
    sched.answer(req())
"""


@pytest.mark.slow
def test_one_ctrl_c_ends_a_run_stuck_in_a_dripping_call(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[3]
    # One byte a second: the answer would take minutes and the child's deadline is an hour,
    # so only the Ctrl+C can end the call within the wait below.
    with FakeOpenAIServer(fault_for=lambda body: Fault.drip(1.0)) as server:
        child = subprocess.Popen([sys.executable, "-X", "faulthandler", "-c", _CTRL_C_CHILD,
                                  server.base_url],
                                 cwd=root, env={**os.environ, "GI_TEST_API_KEY": SECRET},
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 preexec_fn=take_sigint)
        try:
            # the server has the request: the child is inside its dripping call
            assert server.wait_for_requests(1, timeout=120), child.poll()
            child.send_signal(signal.SIGINT)
            # Exiting takes 0.6-0.8 s idle and 1.6-3.0 s with two CPU-bound processes on two
            # cores (measured); 60 s is a generous bound, far below the drip's end (minutes).
            try:
                child.wait(timeout=60)
            except subprocess.TimeoutExpired:  # a second Ctrl+C would have been needed
                child.send_signal(signal.SIGABRT)  # faulthandler: where every thread is stuck
                pytest.fail("still running 60 s after Ctrl+C:\n"
                            + child.communicate(timeout=60)[1].decode(errors="replace"))
            assert b"KeyboardInterrupt" in child.stderr.read()
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()


class FutureBackend:
    """A backend that answers with futures (as batch mode does): every request waits, no
    thread held, until the test resolves it."""

    endpoint = "futures"
    cacheable = False

    def __init__(self) -> None:
        self.waiting: list[tuple[Request, Any]] = []
        self.arrived = threading.Condition()

    def complete(self, request: Request) -> Answer:  # the protocol's; not used here
        raise AssertionError("a futures backend is asked through submit_served")

    def submit_served(self, request: Request) -> Any:
        from concurrent.futures import Future

        fut: Future[tuple[Answer, None]] = Future()
        with self.arrived:
            self.waiting.append((request, fut))
            self.arrived.notify_all()
        return fut


def test_requests_waiting_on_a_futures_backend_hold_no_thread() -> None:
    backend = FutureBackend()
    before = threading.active_count()
    with Scheduler(backend, concurrency=2) as sched:
        futures = [sched.submit(req(f"q {i}", iid=f"L1-{i:03d}")) for i in range(200)]
        with backend.arrived:  # 60 s: a safety net only
            assert backend.arrived.wait_for(lambda: len(backend.waiting) == 200, 60)
        assert threading.active_count() - before <= 2  # the scheduler's two threads only
        assert sched.stats()["max_in_flight"] == 200 and not any(f.done() for f in futures)
        for request, fut in backend.waiting:
            fut.set_result((Answer(text=f"a {request.instruction_id}", usage=Usage(1, 1)), None))
        got = [f.result(timeout=60) for f in futures]
    assert [a.text for a in got] == [f"a L1-{i:03d}" for i in range(200)]
    assert sched.stats()["issued"] == 200
