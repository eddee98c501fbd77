"""Scheduler: concurrency scaling, dedupe, cache, token budget, rate limit, stats."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.models.cache import CACHE_FILE, AnswerCache
from pytest_graphinstruct.models.scheduler import (
    BUDGET_EXHAUSTED,
    Scheduler,
    TokenBudget,
    is_budget_exhausted,
)
from tests.models.fake_openai import FakeOpenAIServer, Fault
from tests.models.helpers import SECRET, req


def _timed(sched: Scheduler, requests: list[Request]) -> tuple[float, list[Answer]]:
    t0 = time.monotonic()
    answers = [f.result() for f in sched.submit_all(requests)]
    return time.monotonic() - t0, answers


def test_wall_time_scales_with_concurrency(fake_openai: FakeOpenAIServer, backend_for) -> None:
    fake_openai.latency_s = 0.1
    backend = backend_for()
    with Scheduler(backend, concurrency=1) as serial:
        t_serial, answers = _timed(serial, [req(f"s{i}") for i in range(8)])
    assert all(a.ok for a in answers)
    assert fake_openai.max_in_flight == 1
    fake_openai.reset()
    with Scheduler(backend, concurrency=8) as parallel:
        t_parallel, answers = _timed(parallel, [req(f"p{i}") for i in range(16)])
    assert all(a.ok for a in answers) and len(answers) == 16
    assert fake_openai.max_in_flight == 8
    speedup = (t_serial / 8) / (t_parallel / 16)  # per-answer time, serial vs parallel
    assert speedup >= 3, (t_serial, t_parallel)


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
    # noted for xdist peers waiting for these answers (they then stop waiting)
    endpoint = fake_openai.base_url
    assert AnswerCache(tmp_path).uncached() == {req("x").cache_key(endpoint),
                                                req("y").cache_key(endpoint)}
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
        assert is_budget_exhausted(a) and a.error.startswith(BUDGET_EXHAUSTED)
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
        assert is_budget_exhausted(two.answer(req("v v")))
    assert budget.spent == 5 and budget.exhausted


def test_is_budget_exhausted_only_for_budget_stops() -> None:
    assert not is_budget_exhausted(Answer(error="HTTP 503"))
    assert not is_budget_exhausted(Answer(text=f"{BUDGET_EXHAUSTED} is what I say"))


def test_rate_limit_spaces_requests(fake_openai, backend_for) -> None:
    with Scheduler(backend_for(), concurrency=4, rate_limit=20.0) as sched:
        t, answers = _timed(sched, [req(f"r{i}") for i in range(6)])
    assert all(a.ok for a in answers)
    assert t >= 5 / 20 - 0.02
    arrivals = [r.arrived for r in fake_openai.requests]
    assert arrivals[-1] - arrivals[0] >= 5 / 20 - 0.03  # burst 1: one start per 50 ms


def test_queue_wait_is_not_part_of_the_timeout(fake_openai, backend_for) -> None:
    # A one-at-a-time server and a queue 4x longer than the timeout: no spurious timeouts.
    fake_openai.serial = True
    fake_openai.latency_s = 0.03
    with Scheduler(backend_for(timeout_s=0.25), concurrency=1) as sched:
        t, answers = _timed(sched, [req(f"t{i}") for i in range(30)])
    assert t > 0.25 * 3
    assert all(a.ok and a.calls == 1 for a in answers)


class _Stub:
    endpoint = "stub"
    cacheable = False

    def __init__(self, gate: threading.Event | None = None, boom: bool = False) -> None:
        self.gate, self.boom, self.calls = gate, boom, 0

    def complete(self, request: Request) -> Answer:
        self.calls += 1
        if self.gate is not None:
            self.gate.wait(5)
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
    time.sleep(0.05)
    closer = threading.Thread(target=sched.close, kwargs={"cancel_pending": True})
    closer.start()
    time.sleep(0.05)
    gate.set()
    closer.join(5)
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


def test_invalid_concurrency() -> None:
    with pytest.raises(ValueError):
        Scheduler(_Stub(), concurrency=0)
