"""A scheduler's futures: one per distinct request (its slot), the queue of those not started,
and the worker threads that run them in submission order (or, for a backend that answers with
futures, that start them: the thread is free again at once)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent import futures
from concurrent.futures import Future, ThreadPoolExecutor

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.base import Request, quiet_thread


class RequestQueue:
    """The futures of one scheduler and its pool of ``concurrency`` worker threads.

    Args:
        concurrency: worker threads, >= 1.
        lock: the scheduler's lock, shared by its parts.
        run: obtains the answer of a queued request (key, request), in a worker thread; never
            raises.
        run_later: instead of ``run``: starts obtaining it and calls back with the answer
            (key, request, done), returning at once; never raises.
    """

    def __init__(self, concurrency: int, lock: threading.RLock,
                 run: Callable[[str, Request], Answer],
                 run_later: Callable[[str, Request, Callable[[Answer], None]], None] | None = None,
                 ) -> None:
        self._executor = ThreadPoolExecutor(max_workers=concurrency,
                                            thread_name_prefix="gi-model",
                                            initializer=quiet_thread)
        self._lock = lock
        self._run = run
        self._run_later = run_later
        self._futures: dict[str, Future[Answer]] = {}
        self._queued: dict[str, tuple[str, Future[Answer]]] = {}  # slot -> key, future: not started
        self.closed = False  #: no request is accepted any more

    def existing(self, slot: str) -> Future[Answer] | None:
        """The future of ``slot`` when it was submitted before, else ``None``."""
        with self._lock:
            return self._futures.get(slot)

    def new(self, slot: str) -> Future[Answer]:
        """A new future for ``slot`` (resolved by the caller, or by :meth:`start`)."""
        fut: Future[Answer] = Future()
        with self._lock:
            self._futures[slot] = fut
        return fut

    def start(self, slot: str, key: str, request: Request, fut: Future[Answer]) -> None:
        """Queue ``request`` for a worker thread; ``fut`` gets its answer."""
        with self._lock:
            self._queued[slot] = (key, fut)
            self._executor.submit(self._work, slot, key, request, fut)

    def _work(self, slot: str, key: str, request: Request, fut: Future[Answer]) -> None:
        """A worker thread's turn for one queued request, unless it was resolved meanwhile
        (circuit open, stopped, cancelled)."""
        with self._lock:
            if self._queued.pop(slot, None) is None or not fut.set_running_or_notify_cancel():
                return
        if self._run_later is None:
            fut.set_result(self._run(key, request))
        else:
            self._run_later(key, request, fut.set_result)

    def take_queued(self) -> list[tuple[str, Future[Answer]]]:
        """The (key, future) of every request not started, which no worker will run now."""
        with self._lock:
            queued, self._queued = list(self._queued.values()), {}
        return queued

    def pending(self) -> int:
        """Futures not resolved yet."""
        with self._lock:
            return sum(1 for f in self._futures.values() if not f.done())

    def shutdown(self, *, wait: bool, cancel_futures: bool) -> None:
        """End the worker threads (waiting for them when ``wait``, and then, with
        ``run_later``, for the answers they started); see :meth:`ThreadPoolExecutor.shutdown`."""
        self._executor.shutdown(wait=wait, cancel_futures=cancel_futures)
        if wait and not cancel_futures and self._run_later is not None:
            with self._lock:
                started = list(self._futures.values())
            futures.wait(started)
