"""The request scheduler: bounded concurrency, a shared rate limit, the cache and a token budget.

Generation for every collected item is submitted right after collection; items then wait on
their futures.  With ``concurrency`` worker threads the wall time is about
``N / concurrency × latency`` instead of ``N × latency``.

Promises:

* :meth:`Scheduler.submit` returns a future that always resolves to an :class:`Answer` (never an
  exception, unless the scheduler is closed with ``cancel_pending=True`` and the future is
  cancelled); identical requests (same cache key; for the non-cacheable oracle and replay
  backends, also the same instruction id) share one future.
* A cache hit resolves immediately; the cache is consulted again right before issuing, so an
  answer another run obtained meanwhile is reused.  ``Answer.cached`` is true when the answer
  was cached before this run began (:meth:`AnswerCache.earlier`).
* **Stale answers** (:mod:`.snapshot`): with ``snapshot`` (what the endpoint serves now), an
  answer cached from another known snapshot is a miss — asked again, and the new answer
  replaces it in the cache (``stale_skipped``) — unless ``reuse_stale`` (then it is reused,
  ``stale_reused``).  An answer or endpoint without a known snapshot is never stale.
  :meth:`Scheduler.cache_sources` says, per cell, which snapshots the reused answers came from
  and when the oldest was cached.
* Requests run in submission order (FIFO).  A request's wait in the queue is not part of its
  timeout — only the HTTP call is timed.
* Token budget: once the tokens spent by answers obtained through the budget reach it, no new
  request is issued; those not issued resolve to ``Answer(error=BUDGET_EXHAUSTED + ...)``.
  Requests already in flight complete and are kept (the budget can be overshot by at most
  ``concurrency - 1`` answers).  Answers without a usage block spend nothing (unknown, never
  estimated); cached answers spend nothing.
* Cost cap (``cost``, :mod:`.cap`): a request is issued only when its worst case (counted
  input tokens + ``max_tokens`` output, at list price) fits in what the cap has left, reserved
  until its answer's usage replaces it, so spent ≤ cap at any concurrency; once one is refused
  none is issued after it (``Answer(error=COST_CAP_REACHED + ...)``, ``cost_skipped``).
* **Two runs on one cache** (:mod:`~.caching.claims`): a request is asked under a claim on its
  key that every process opening the cache folder sees; a request another process is asking
  now waits for it and takes its answer from the cache (``claim_waits``, ``claim_awaited``),
  and is asked here only when that run did not obtain it.  A batch backend takes no claims
  (its ledger is its claim).
* Obtained answers (not errors, not truncated) of a cacheable backend are written to the cache
  as soon as they arrive, so a killed run loses at most the requests in flight.  A write that
  fails is counted (``cache_write_errors``) and the run goes on.
* Circuit breaker (:mod:`.circuit`, remote backends only): fed what every HTTP attempt said
  (the backend's ``attempt_listener``; a backend without one feeds one outcome per completed
  request, an error counting as an endpoint fault), it opens after ``circuit_breaker``
  consecutive endpoint faults or when 80 % of the last ``5 × circuit_breaker`` counted attempts
  were faults.  Once open (for good): every request not yet issued resolves at once to
  ``Answer(error=CIRCUIT_OPEN + ...)`` naming the rule and the first error
  (``circuit_skipped``), calls in flight and their retries stop (``backend.cancel(reason)``),
  and a call that still fails after the opening carries the same one line.
* :meth:`Scheduler.stop_issuing` (an interrupted run): no new request is issued; those not
  issued resolve at once to ``Answer(error=reason, calls=0)``; calls in flight complete and are
  cached.
* Leaving a ``with Scheduler(...)`` block by ``KeyboardInterrupt`` (or ``SystemExit``) cancels:
  requests not started are dropped and calls in flight end at once, so one Ctrl+C suffices.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import CancelledError, Future
from typing import Any

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.base import Backend, Request, one_line, wait_result
from pytest_graphinstruct.models.caching.cache import AnswerCache
from pytest_graphinstruct.models.caching.claims import ClaimBoard
from pytest_graphinstruct.models.caching.lease import PLAIN, CacheLease
from pytest_graphinstruct.models.caching.lease import acquire as acquire_lease
from pytest_graphinstruct.models.caching.snapshot import CacheSource
from pytest_graphinstruct.models.caching.view import CacheView
from pytest_graphinstruct.models.cost.cap import RequestCost
from pytest_graphinstruct.models.scheduling.issue_gate import IssueGate
from pytest_graphinstruct.models.scheduling.issuer import RequestIssuer
from pytest_graphinstruct.models.scheduling.ratelimit import RateLimiter
from pytest_graphinstruct.models.scheduling.request_queue import RequestQueue
from pytest_graphinstruct.models.scheduling.request_stats import RequestStats, Sent
from pytest_graphinstruct.options import DEFAULT_CONCURRENCY

BUDGET_EXHAUSTED = "token budget exhausted"
"""Prefix of the error of every request not issued because of the token budget."""


DEFAULT_CIRCUIT_BREAKER = 8


class TokenBudget:
    """A thread-safe token budget that several schedulers (one per model) may share."""

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError(f"token budget must be >= 0, got {limit!r}")
        self.limit = int(limit)
        self._spent = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"TokenBudget(limit={self.limit}, spent={self.spent})"

    @property
    def spent(self) -> int:
        with self._lock:
            return self._spent

    @property
    def exhausted(self) -> bool:
        with self._lock:
            return self._spent >= self.limit

    def spend(self, tokens: int) -> None:
        with self._lock:
            self._spent += max(0, tokens)

    def refusal(self) -> str:
        """The error of a request not issued because the budget is spent."""
        return f"{BUDGET_EXHAUSTED}: {self.spent} of {self.limit} tokens spent; request not issued"


class Scheduler:
    """Runs a backend's requests on a thread pool (:class:`~.request_queue.RequestQueue`): one
    future per distinct request, answered from the cache (:class:`~.view.CacheView`),
    refused (:class:`~.issue_gate.IssueGate`) or obtained by a worker
    (:class:`~.issuer.RequestIssuer`), and counted (:class:`~.request_stats.RequestStats`).
    Its parts share one lock.

    Args:
        backend: where answers come from.
        concurrency: worker threads (requests in flight at once), >= 1.
        rate_limit: requests per second shared by all workers (``None`` = unlimited).
        rate_burst: requests that may start back to back under the rate limit.
        cache: the answer cache; ignored when the backend is not cacheable.
        token_budget: a token count, or a :class:`TokenBudget` shared with other schedulers.
        cost: this backend's side of a cost cap shared with other schedulers
            (:class:`~.cap.RequestCost`; ``None``: no cap).
        circuit_breaker: the breaker's threshold (:class:`~.circuit.CircuitBreaker`: this many
            consecutive endpoint faults, or 80 % of the last five times as many, open it;
            ``None`` or 0 = never); applies to remote backends only (``backend.remote``).
        snapshot: the snapshot the endpoint serves now (``None``: not known); cached answers
            of another snapshot are stale.
        reuse_stale: reuse stale answers anyway (``gi_reuse_stale_cache``).
        stop_check: asked right before each request is issued; a reason (not ``None``) means
            the run was stopped elsewhere (another process's interrupt: run.stop's file), and
            acts as :meth:`stop_issuing` — so no request starts after a stop, not even in the
            moment before a watcher would have noticed it.

    Raises:
        CacheBusy: a ``--gi-batch`` run holds the cache folder (:mod:`~.caching.lease`; this
            scheduler shares it with other ordinary runs until :meth:`close`).
    """

    def __init__(
        self,
        backend: Backend,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        rate_limit: float | None = None,
        rate_burst: int = 1,
        cache: AnswerCache | None = None,
        token_budget: int | TokenBudget | None = None,
        circuit_breaker: int | None = DEFAULT_CIRCUIT_BREAKER,
        snapshot: str | None = None,
        reuse_stale: bool = False,
        stop_check: Callable[[], str | None] | None = None,
        cost: RequestCost | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency!r}")
        self.backend = backend
        self.endpoint: str = backend.endpoint
        self.concurrency = int(concurrency)
        self.cache = cache if cache is not None and getattr(backend, "cacheable", False) else None
        self.limiter = RateLimiter(rate_limit, rate_burst) if rate_limit else None
        if isinstance(token_budget, int):
            token_budget = TokenBudget(token_budget)
        self.budget = token_budget
        self._lock = threading.RLock()  # hits and refusals run inside submit's lock too
        later = callable(getattr(backend, "submit_served", None))  # answers with futures
        self._inline = bool(getattr(backend, "inline", False)) and not later
        self._queue = RequestQueue(self.concurrency, self._lock, self._run,
                                   self._run_later if later else None)
        remote = bool(getattr(backend, "remote", False))
        self.circuit_breaker = circuit_breaker if remote and circuit_breaker else None
        self._stats = RequestStats(self._lock)
        self._view = CacheView(self.cache, snapshot=snapshot, reuse_stale=reuse_stale,
                               lock=self._lock, stats=self._stats)
        self._gate = IssueGate(backend, self.circuit_breaker, lock=self._lock, stats=self._stats,
                               stop_check=stop_check, on_halt=self._resolve_queued)
        # the requests another run on the same cache folder asks now are awaited, not asked
        # twice; a batch run has its folder alone (its runner's lease): it takes no claims
        self.claims: ClaimBoard | None = None
        self.lease: CacheLease | None = None  #: the cache folder's lease, shared
        if self.cache is not None and not later:
            self.lease = acquire_lease(self.cache.directory, PLAIN)
            self.claims = ClaimBoard(self.cache.directory)
        self._issuer = RequestIssuer(
            backend, self.endpoint, view=self._view, gate=self._gate, stats=self._stats,
            limiter=self.limiter, budget=self.budget, cost=cost, claims=self.claims)
        self.cost = cost

    def __repr__(self) -> str:
        return (f"Scheduler({self.backend!r}, concurrency={self.concurrency}, "
                f"rate_limit={self.limiter.rate if self.limiter else None}, "
                f"cache={self.cache!r}, budget={self.budget!r})")

    def __enter__(self) -> Scheduler:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        # Ctrl+C (or sys.exit) while waiting: do not wait for calls in flight as well.
        interrupted = exc_type is not None and not issubclass(exc_type, Exception)
        self.close(cancel_pending=interrupted)

    # -- submitting --------------------------------------------------------------------------

    def key(self, request: Request) -> str:
        """The cache key of ``request`` for this scheduler's backend."""
        return request.cache_key(self.endpoint)

    def _dedupe_key(self, key: str, request: Request) -> str:
        # A cacheable backend's answer depends only on what is sent (the cache key); the oracle
        # and replay answer by instruction id, so identical prompts of two instructions differ.
        if getattr(self.backend, "cacheable", False):
            return key
        return f"{key}|{request.instruction_id}"

    def submit(self, request: Request) -> Future[Answer]:
        """Queue ``request``; the future resolves to its :class:`Answer`.

        Raises:
            RuntimeError: the scheduler is closed.
        """
        key = self.key(request)
        slot = self._dedupe_key(key, request)
        with self._lock:
            if self._queue.closed:
                raise RuntimeError("scheduler is closed")
            self._stats.add("submitted")
            self._view.asked_by(key, request.cell)
            fut, done, inline = self._queue.existing(slot), None, False
            if fut is not None:
                self._stats.add("deduplicated")
            else:
                fut = self._queue.new(slot)
                done = self._view.hit(key) or self._gate.refusal()
                inline = done is None and self._inline
                if done is None and not inline:
                    self._queue.start(slot, key, request, fut)
        if inline and fut.set_running_or_notify_cancel():
            done = self._run(key, request)
        if done is not None:
            fut.set_result(done)
        fut.add_done_callback(functools.partial(record_use, self.cache, key, request))
        return fut

    def submit_all(self, requests: Iterable[Request]) -> list[Future[Answer]]:
        """Submit every request (in order); returns their futures in the same order."""
        return [self.submit(r) for r in requests]

    def answer(self, request: Request, timeout: float | None = None) -> Answer:
        """Submit (or join) ``request`` and wait for its answer.

        A cancelled request (the scheduler closed with ``cancel_pending=True``) is returned as
        ``Answer(error="cancelled ...")``.
        """
        try:
            return wait_result(self.submit(request), timeout)
        except CancelledError:
            return Answer(error="cancelled: the scheduler was closed before the request ran",
                          calls=0, failure_kind="cancelled")

    def _run(self, key: str, request: Request) -> Answer:
        try:
            return self._issuer.obtain(key, request)
        except Exception as exc:  # a backend bug must not leave an item waiting forever
            self._stats.add("errors")
            return Answer(error=one_line(f"internal error in {type(self.backend).__name__}: "
                                         f"{type(exc).__name__}: {exc}"), calls=0)

    def _run_later(self, key: str, request: Request, done: Callable[[Answer], None]) -> None:
        """:meth:`_run` for a backend that answers with futures: ``done`` gets the answer."""
        try:
            cached = self._view.hit(key)
            if cached is not None:
                done(cached)
            else:
                self._issuer.issue_later(key, request, done)
        except Exception as exc:  # a backend bug must not leave an item waiting forever
            self._stats.add("errors")
            done(Answer(error=one_line(f"internal error in {type(self.backend).__name__}: "
                                       f"{type(exc).__name__}: {exc}"), calls=0))

    def _resolve_queued(self) -> None:
        """Resolve every request not yet started (a cached answer if there is one, else the
        refusal), without waiting for a worker thread."""
        for key, fut in self._queue.take_queued():
            if fut.done():
                continue
            answer = self._view.hit(key) or self._gate.refusal()
            if answer is not None and not fut.done():
                fut.set_result(answer)

    # -- the cache, the circuit breaker and stopping -------------------------------------------

    def cached(self, key: str) -> bool:
        """Whether the cache holds an answer for ``key`` that this scheduler would reuse."""
        return self._view.cached(key)

    def cache_sources(self) -> dict[str, CacheSource]:
        """Per cell label: the snapshots of the answers reused from an earlier run's cache
        and when the oldest was cached (cells that reused none are absent)."""
        return self._view.sources()

    @property
    def snapshot(self) -> str | None:
        """The snapshot the endpoint serves now (``None``: not known): cached answers of
        another snapshot are stale."""
        return self._view.snapshot

    @property
    def circuit_open_reason(self) -> str | None:
        """The error of the requests not sent once the circuit opened (``None``: closed)."""
        return self._gate.circuit_open_reason

    @property
    def stopped_reason(self) -> str | None:
        """Why no new request is issued (:meth:`stop_issuing`; ``None``: not stopped)."""
        return self._gate.stopped_reason

    def is_circuit_open(self) -> bool:
        """Whether the circuit breaker opened (no more requests are sent to the endpoint)."""
        return self._gate.circuit_open_reason is not None

    def stop_issuing(self, reason: str) -> None:
        """Issue no new request from now on (an interrupted run): requests not yet issued
        resolve at once to ``Answer(error=reason, calls=0)``, calls
        already in flight complete normally and their answers are cached.  Safe from any
        thread; a second call changes nothing."""
        self._gate.stop_issuing(reason)

    # -- lifecycle and stats -----------------------------------------------------------------

    def tokens_spent(self) -> int:
        """Input + output tokens of the answers obtained so far (their usage; cache hits
        spend nothing)."""
        return self._stats.tokens_spent()

    def sent(self) -> Sent:
        """What this scheduler really sent to its backend so far (:class:`~.request_stats.Sent`:
        HTTP requests with their retries and their answers' tokens, each request once however
        many cells asked for it) and how many distinct answers an earlier run's cache served
        (:meth:`earlier_keys`)."""
        return self._stats.sent(cached=len(self._view.earlier_keys()))

    def earlier_keys(self) -> frozenset[str]:
        """The cache keys an earlier run's answer cache answered in this process."""
        return self._view.earlier_keys()

    def stats(self) -> dict[str, Any]:
        """A snapshot of the counters (:class:`~.request_stats.RequestStats`) plus ``pending``,
        ``tokens`` and ``elapsed_s`` (and the budget's limit and spending, when there is one)."""
        with self._lock:
            out = self._stats.report(self._queue.pending())
        if self.budget is not None:
            out["budget_limit"] = self.budget.limit
            out["budget_spent"] = self.budget.spent
        return out

    def close(self, *, wait: bool = True, cancel_pending: bool = False) -> None:
        """Stop accepting requests; wait for the rest.

        With ``cancel_pending`` requests not started are cancelled, and the backend (when it
        has a ``cancel()``) ends the calls in flight and stops retrying, so an interrupted run
        ends at once.
        """
        with self._lock:
            self._queue.closed = True
        if cancel_pending:
            self._gate.cancel()
            for _key, fut in self._queue.take_queued():
                fut.cancel()
            self._gate.cancel_backend(None)
        self._queue.shutdown(wait=wait, cancel_futures=cancel_pending)
        if self.lease is not None and (wait or cancel_pending):
            self.lease.release()  # no request of this scheduler is asked any more


def record_use(cache: AnswerCache | None, key: str, request: Request,
               fut: Future[Answer]) -> None:
    """A done callback of ``request``'s future: when its answer is another instruction's,
    cell's or sample's (identical messages, one key), ``cache`` records this use too
    (:meth:`.AnswerCache.record_use`), so an export finds every instruction.  Nothing without
    a cache (``None``: none, or a backend whose answers are not cached).  Never raises."""
    if cache is None or fut.cancelled():
        return
    with contextlib.suppress(Exception):
        answer = fut.result()
        if answer.ok and not answer.truncated:
            cache.record_use(key, request)
