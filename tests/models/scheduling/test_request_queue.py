"""request_queue: one future per slot, queued requests run by worker threads in submission
order, and the queue taken back before a worker starts them."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator

import pytest

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.models.scheduling.request_queue import RequestQueue
from tests.models.helpers import req

WAIT_S = 60.0  # a safety net for a broken test, never the point of one


class Runner:
    """The queue's ``run``: records each (key, thread, blocked signals), answers with the key;
    ``gate`` (when given) holds every call until set, ``started`` says one began."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.gate = gate
        self.started = threading.Event()
        self.ran: list[str] = []
        self.threads: list[str] = []
        self.blocked: list[set[int]] = []

    def __call__(self, key: str, request: Request) -> Answer:
        self.ran.append(key)
        self.threads.append(threading.current_thread().name)
        self.blocked.append(set(signal.pthread_sigmask(signal.SIG_BLOCK, [])))
        self.started.set()
        if self.gate is not None:
            assert self.gate.wait(WAIT_S)
        return Answer(text=f"answer {key}")


@pytest.fixture
def make() -> Iterator[Callable[..., RequestQueue]]:
    made: list[RequestQueue] = []

    def build(concurrency: int, run: Callable[[str, Request], Answer]) -> RequestQueue:
        queue = RequestQueue(concurrency, threading.RLock(), run)
        made.append(queue)
        return queue

    yield build
    for queue in made:
        queue.shutdown(wait=True, cancel_futures=True)


def test_a_slot_has_one_future(make: Callable[..., RequestQueue]) -> None:
    queue = make(1, Runner())
    assert queue.existing("s") is None
    fut = queue.new("s")
    assert queue.existing("s") is fut and queue.pending() == 1
    fut.set_result(Answer(text="resolved by the caller"))
    assert queue.pending() == 0


def test_a_queued_request_is_answered_by_a_quiet_worker_thread(
        make: Callable[..., RequestQueue]) -> None:
    run = Runner()
    queue = make(2, run)
    fut = queue.new("s")
    queue.start("s", "key", req(), fut)
    assert fut.result(WAIT_S) == Answer(text="answer key")
    assert run.threads[0].startswith("gi-model")
    assert {signal.SIGINT, signal.SIGTERM} <= run.blocked[0]  # Ctrl+C goes to the main thread


def test_one_worker_runs_requests_in_submission_order(make: Callable[..., RequestQueue]) -> None:
    run = Runner()
    queue = make(1, run)
    futures = []
    for i in range(6):
        futures.append(fut := queue.new(f"s{i}"))
        queue.start(f"s{i}", f"k{i}", req(), fut)
    assert [f.result(WAIT_S).text for f in futures] == [f"answer k{i}" for i in range(6)]
    assert run.ran == [f"k{i}" for i in range(6)]


def test_concurrency_workers_run_at_once(make: Callable[..., RequestQueue]) -> None:
    together = threading.Barrier(3)

    def run(key: str, request: Request) -> Answer:
        together.wait(WAIT_S)  # breaks (an error) unless three calls are in flight together
        return Answer(text=key)

    queue = make(3, run)
    futures = []
    for i in range(3):
        futures.append(fut := queue.new(f"s{i}"))
        queue.start(f"s{i}", f"k{i}", req(), fut)
    assert sorted(f.result(WAIT_S).text or "" for f in futures) == ["k0", "k1", "k2"]


def test_requests_taken_back_are_never_run(make: Callable[..., RequestQueue]) -> None:
    gate = threading.Event()
    run = Runner(gate)
    queue = make(1, run)
    futures = []
    for i in range(4):
        futures.append(fut := queue.new(f"s{i}"))
        queue.start(f"s{i}", f"k{i}", req(), fut)
    assert run.started.wait(WAIT_S)  # k0 is running, the others queued
    taken = queue.take_queued()
    assert [key for key, _ in taken] == ["k1", "k2", "k3"]
    assert [f for _, f in taken] == futures[1:]
    assert queue.take_queued() == []
    for _, fut in taken:  # the caller resolves them
        fut.set_result(Answer(error="stopped", calls=0))
    gate.set()
    assert futures[0].result(WAIT_S).text == "answer k0"
    queue.shutdown(wait=True, cancel_futures=False)
    assert run.ran == ["k0"] and queue.pending() == 0


def test_a_future_cancelled_before_its_turn_is_skipped(make: Callable[..., RequestQueue]) -> None:
    gate = threading.Event()
    run = Runner(gate)
    queue = make(1, run)
    first, second, third = (queue.new(f"s{i}") for i in range(3))
    queue.start("s0", "k0", req(), first)
    assert run.started.wait(WAIT_S)
    queue.start("s1", "k1", req(), second)
    queue.start("s2", "k2", req(), third)
    assert second.cancel()
    gate.set()
    assert third.result(WAIT_S).text == "answer k2"
    assert run.ran == ["k0", "k2"] and second.cancelled()


def test_pending_counts_only_unresolved_futures(make: Callable[..., RequestQueue]) -> None:
    gate = threading.Event()
    queue = make(1, Runner(gate))
    done, running, waiting = (queue.new(s) for s in ("a", "b", "c"))
    done.set_result(Answer(text="x"))
    queue.start("b", "kb", req(), running)
    queue.start("c", "kc", req(), waiting)
    assert queue.pending() == 2
    gate.set()
    waiting.result(WAIT_S)
    assert queue.pending() == 0
