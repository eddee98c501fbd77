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
  answer another process obtained meanwhile is reused.  ``Answer.cached`` is true when the
  answer was cached before this run began (:meth:`AnswerCache.earlier`); one that another
  process of this run (an xdist peer) obtained is reused with ``cached=False``, since the run
  asked for it.
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
* Obtained answers (not errors, not truncated) of a cacheable backend are written to the cache
  as soon as they arrive, so a killed run loses at most the requests in flight.  A write that
  fails is counted (``cache_write_errors``) and the run goes on.
* Requests in flight are shared across processes using one cache directory: before issuing,
  the scheduler takes the key's claim (:meth:`AnswerCache.claim`); a process that finds the key
  claimed waits (at most the owner's worst case, ``claim_wait_s``) for the owner's answer
  instead of asking again (``claim_waits``, ``claim_shared`` in :meth:`Scheduler.stats`).
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
* **Peers are told.**  Every answer this process will not obtain for a key it was asked for —
  circuit open, budget spent, stopped, cancelled, not cacheable (an error, a truncated answer,
  a failed cache write) — is published at once (:meth:`AnswerCache.note_uncached`), so an
  xdist peer waiting for it (``BenchmarkSession._await_peer``) stops waiting.
* Leaving a ``with Scheduler(...)`` block by ``KeyboardInterrupt`` (or ``SystemExit``) cancels:
  requests not started are dropped and calls in flight end at once, so one Ctrl+C suffices.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.base import (
    AttemptOutcome,
    Backend,
    Request,
    one_line,
    quiet_thread,
    wait_result,
)
from pytest_graphinstruct.models.cache import AnswerCache, CacheEntry, Claim
from pytest_graphinstruct.models.circuit import CIRCUIT_OPEN, CircuitBreaker
from pytest_graphinstruct.models.ratelimit import RateLimiter
from pytest_graphinstruct.models.snapshot import CacheSource, Snapshot, is_stale
from pytest_graphinstruct.options import DEFAULT_CONCURRENCY

BUDGET_EXHAUSTED = "token budget exhausted"
"""Prefix of the error of every request not issued because of the token budget."""


def is_budget_exhausted(answer: Answer) -> bool:
    """Whether ``answer`` is a request the token budget stopped (not an infrastructure error)."""
    return answer.error is not None and answer.error.startswith(BUDGET_EXHAUSTED)


DEFAULT_CIRCUIT_BREAKER = 8
DEFAULT_CLAIM_WAIT_S = 600.0


def is_circuit_open(answer: Answer) -> bool:
    """Whether ``answer`` is a request the circuit breaker did not send."""
    return answer.error is not None and answer.error.startswith(CIRCUIT_OPEN)


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


class Scheduler:
    """Runs a backend's requests on a thread pool.

    Args:
        backend: where answers come from.
        concurrency: worker threads (requests in flight at once), >= 1.
        rate_limit: requests per second shared by all workers (``None`` = unlimited).
        rate_burst: requests that may start back to back under the rate limit.
        cache: the answer cache; ignored when the backend is not cacheable.
        token_budget: a token count, or a :class:`TokenBudget` shared with other schedulers.
        circuit_breaker: the breaker's threshold (:class:`~.circuit.CircuitBreaker`: this many
            consecutive endpoint faults, or 80 % of the last five times as many, open it;
            ``None`` or 0 = never); applies to remote backends only (``backend.remote``).
        share_in_flight: take the cache's per-key claims so that processes sharing the cache
            ask for each answer once.
        claim_wait_s: the longest wait for another process's request in flight; default the
            backend's ``worst_case_s`` (else 600 s).
        snapshot: the snapshot the endpoint serves now (``None``: not known); cached answers
            of another snapshot are stale.
        reuse_stale: reuse stale answers anyway (``--gi-reuse-stale-cache``).
        stop_check: asked right before each request is issued; a reason (not ``None``) means
            the run was stopped elsewhere (another process's interrupt: run.stop's file), and
            acts as :meth:`stop_issuing` — so no request starts after a stop, not even in the
            moment before a watcher would have noticed it.
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
        share_in_flight: bool = True,
        claim_wait_s: float | None = None,
        snapshot: str | None = None,
        reuse_stale: bool = False,
        stop_check: Callable[[], str | None] | None = None,
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
        self._executor = ThreadPoolExecutor(max_workers=self.concurrency,
                                            thread_name_prefix="gi-model",
                                            initializer=quiet_thread)
        self._lock = threading.RLock()  # _hit runs inside submit's lock too
        self._futures: dict[str, Future[Answer]] = {}
        self._queued: dict[str, tuple[str, Future[Answer]]] = {}  # slot -> key, future: not started
        self._closed = False
        self._cancel = threading.Event()  # set by close(cancel_pending=True)
        remote = bool(getattr(backend, "remote", False))
        self.circuit_breaker = circuit_breaker if remote and circuit_breaker else None
        self._breaker = (CircuitBreaker(self.endpoint, self.circuit_breaker)
                         if self.circuit_breaker else None)
        self.circuit_open_reason: str | None = None  #: the error of requests not sent, once open
        self.stopped_reason: str | None = None  #: why no new request is issued (stop_issuing)
        self._halt = threading.Event()  # set when no new request may be issued (any reason)
        self.stop_check = stop_check
        # A backend that reports each HTTP attempt feeds the breaker per attempt; others (test
        # fakes, backends without retries) per completed request (see _issue).
        self._attempt_feed = self._breaker is not None and hasattr(backend, "attempt_listener")
        if self._attempt_feed:
            backend.attempt_listener = self._on_attempt  # type: ignore[attr-defined]
        self.share_in_flight = share_in_flight
        self.claim_wait_s = float(claim_wait_s if claim_wait_s is not None
                                  else getattr(backend, "worst_case_s", DEFAULT_CLAIM_WAIT_S))
        self.snapshot = snapshot
        self.reuse_stale = reuse_stale
        self._from_cache: dict[str, CacheEntry] = {}  # keys answered by an earlier run's answer
        self._cells: dict[str, set[str]] = {}  # key -> the cells that asked for it
        self._stale: set[str] = set()  # keys whose cached answer was stale
        self._in_flight = 0
        self._started = time.monotonic()
        self._stats: dict[str, Any] = {
            "submitted": 0,         # submit() calls
            "deduplicated": 0,      # submits answered by an existing future
            "cache_hits": 0,        # answers taken from the cache
            "issued": 0,            # requests handed to the backend
            "calls": 0,             # HTTP attempts (retries included) of issued requests
            "retries": 0,           # calls beyond the first of each issued request
            "errors": 0,            # issued requests that ended in an error
            "truncated": 0,         # answers that hit the token limit
            "budget_skipped": 0,    # requests not issued because of the token budget
            "input_tokens": 0,
            "output_tokens": 0,
            "usage_missing": 0,     # answers without a usage block (tokens unknown)
            "cache_write_errors": 0,  # answers the cache could not write (disk full, ...)
            "claim_waits": 0,       # requests that waited for another process asking the same
            "claim_shared": 0,      # answers obtained by another process while this one waited
            "circuit_skipped": 0,   # requests not sent because the circuit was open
            "stop_skipped": 0,      # requests not sent because of stop_issuing()
            "published": 0,         # keys peers were told this process will not cache
            "stale_skipped": 0,     # cached answers of another snapshot, asked again
            "stale_reused": 0,      # cached answers of another snapshot, reused on purpose
            "max_in_flight": 0,
        }

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
            if self._closed:
                raise RuntimeError("scheduler is closed")
            self._stats["submitted"] += 1
            if self.cache is not None:
                self._cells.setdefault(key, set()).add(request.cell)
            fut = self._futures.get(slot)
            if fut is not None:
                self._stats["deduplicated"] += 1
                return fut
            fut = Future()
            self._futures[slot] = fut
            done = self._hit(key) or self._refusal(key)
            if done is None:
                self._queued[slot] = (key, fut)
                self._executor.submit(self._work, slot, key, request, fut)
        if done is not None:
            fut.set_result(done)
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
                          calls=0)

    # -- the worker --------------------------------------------------------------------------

    def _work(self, slot: str, key: str, request: Request, fut: Future[Answer]) -> None:
        """A worker thread's turn for one queued request, unless it was resolved meanwhile
        (circuit open, stopped, cancelled)."""
        with self._lock:
            if self._queued.pop(slot, None) is None or not fut.set_running_or_notify_cancel():
                return
        fut.set_result(self._run(key, request))

    def _run(self, key: str, request: Request) -> Answer:
        try:
            return self._obtain(key, request)
        except Exception as exc:  # a backend bug must not leave an item waiting forever
            with self._lock:
                self._stats["errors"] += 1
            return Answer(error=one_line(f"internal error in {type(self.backend).__name__}: "
                                         f"{type(exc).__name__}: {exc}"), calls=0)

    # -- the cache ---------------------------------------------------------------------------

    def usable(self, entry: CacheEntry) -> bool:
        """Whether a cached entry may answer: not stale, or stale ones are reused."""
        return self.reuse_stale or not is_stale(entry.snapshot, self.snapshot)

    def cached(self, key: str) -> bool:
        """Whether the cache holds an answer for ``key`` that this scheduler would reuse."""
        entry = self.cache.lookup(key, self.usable) if self.cache is not None else None
        return entry is not None and self.usable(entry)

    def _hit(self, key: str, entry: CacheEntry | None = None) -> Answer | None:
        """The cached answer for ``key`` when one may be reused (counted), else ``None`` (a
        stale one is counted as skipped)."""
        if self.cache is None:
            return None
        entry = entry if entry is not None else self.cache.lookup(key, self.usable)
        if entry is None:
            return None
        stale = is_stale(entry.snapshot, self.snapshot)
        earlier = self.cache.earlier(entry)
        with self._lock:
            if stale and not self.reuse_stale:
                if key not in self._stale:  # looked up again right before issuing
                    self._stale.add(key)
                    self._stats["stale_skipped"] += 1
                return None
            self._stats["cache_hits"] += 1
            if stale:
                self._stats["stale_reused"] += 1
            if earlier:
                self._from_cache.setdefault(key, entry)
        return replace(entry.answer, cached=earlier)

    def cache_sources(self) -> dict[str, CacheSource]:
        """Per cell label: the snapshots of the answers reused from an earlier run's cache
        and when the oldest was cached (cells that reused none are absent)."""
        out: dict[str, CacheSource] = {}
        with self._lock:
            for key, entry in self._from_cache.items():
                for cell in self._cells.get(key, ()):
                    out[cell] = out.get(cell, CacheSource()).add(entry.snapshot, entry.created)
        return out

    def _obtain(self, key: str, request: Request) -> Answer:
        if self.cache is None:
            return self._issue(key, request)
        cached = self._hit(key)  # another process may have obtained it meanwhile
        if cached is not None:
            return cached
        if not self.share_in_flight:
            return self._issue(key, request)
        claim = self.cache.claim(key, wait_s=self.claim_wait_s, stop=self._halt,
                                 accept=self.usable)
        try:
            shared = self._shared_answer(key, claim)
            if shared is not None:
                return shared
            if not claim.waited:  # an owner may have stored it and let go since the check above
                entry = self.cache.lookup(key, self.usable)
                if entry is not None and self.usable(entry):
                    cached = self._hit(key, entry)
                    if cached is not None:
                        return cached
            return self._issue(key, request)
        finally:
            claim.release()

    def _shared_answer(self, key: str, claim: Claim) -> Answer | None:
        """The answer another process obtained while this one waited for its claim, a
        cancellation, or ``None`` (this process asks)."""
        if not claim.waited:
            return None
        answer = claim.answer
        with self._lock:
            self._stats["claim_waits"] += 1
            if answer is not None:
                self._stats["claim_shared"] += 1
        if answer is not None:
            earlier = claim.entry is not None and self.cache is not None and \
                self.cache.earlier(claim.entry)
            if earlier and claim.entry is not None:
                with self._lock:
                    self._from_cache.setdefault(key, claim.entry)
            return replace(answer, cached=earlier)
        if claim.cancelled and self._cancel.is_set():
            return self._publish(key, Answer(
                error="cancelled: the run was interrupted while another process was asking "
                      "for the same answer", calls=0), "cancelled")
        return None  # asks itself (_issue refuses when the circuit opened or it was stopped)

    def _issue(self, key: str, request: Request) -> Answer:
        """Send ``request`` (unless the circuit is open or the budget spent) and store the
        answer."""
        refused = self._refusal(key)
        if refused is not None:
            return refused
        if self.limiter is not None and not self._budget_exhausted():
            self.limiter.acquire()
        refused = self._refusal(key)  # the circuit may have opened during the pacing wait
        if refused is not None:
            return refused
        if self._budget_exhausted():
            assert self.budget is not None
            with self._lock:
                self._stats["budget_skipped"] += 1
            return self._publish(key, Answer(
                error=f"{BUDGET_EXHAUSTED}: {self.budget.spent} of {self.budget.limit} tokens "
                      "spent; request not issued", calls=0), "budget")
        with self._lock:
            self._in_flight += 1
            self._stats["max_in_flight"] = max(self._stats["max_in_flight"], self._in_flight)
        served: Snapshot | None = None
        try:
            complete_served = getattr(self.backend, "complete_served", None)
            if callable(complete_served):
                answer, served = complete_served(request)
            else:
                answer = self.backend.complete(request)
        finally:
            with self._lock:
                self._in_flight -= 1
        if not self._attempt_feed:
            self._feed_request(answer)
        reason = self.circuit_open_reason
        if reason is not None and (answer.error or "").startswith("cancelled"):
            # a call the opening circuit stopped (a backend whose cancel() takes no reason):
            # the one summary line, not an interruption message
            answer = replace(answer, error=reason)
        self._account(answer)
        if self.cache is not None and answer.ok and not answer.truncated:
            if self.cache.store(key, request, answer, endpoint=self.endpoint,
                                served=served) == "failed":
                with self._lock:
                    self._stats["cache_write_errors"] += 1
                self._publish(key, answer, "not cacheable: write failed")
        elif self.cache is not None:  # peers waiting for this answer must not wait in vain
            self._publish(key, answer, "truncated" if answer.ok else "error")
        return answer

    # -- the circuit breaker, stopping, and telling peers ---------------------------------------

    def is_circuit_open(self) -> bool:
        """Whether the circuit breaker opened (no more requests are sent to the endpoint)."""
        return self.circuit_open_reason is not None

    @property
    def halted(self) -> bool:
        """Whether this scheduler issues no new request (circuit open, stopped, cancelled)."""
        return self._halt.is_set()

    def _on_attempt(self, outcome: AttemptOutcome) -> None:
        """The backend's ``attempt_listener``: one HTTP attempt's outcome, from its thread."""
        if self._breaker is None or self._cancel.is_set():
            return  # an interrupted run's cancelled calls say nothing about the endpoint
        reason = self._breaker.record(outcome)
        if reason is not None:
            self._open_circuit(reason)

    def _feed_request(self, answer: Answer) -> None:
        """The request-level feed of a backend without ``attempt_listener``: a completed
        request is one outcome, an error an endpoint fault."""
        if self._breaker is None or self._cancel.is_set() or self.stopped_reason is not None:
            return
        self._on_attempt(AttemptOutcome(ok=answer.ok, endpoint_fault=not answer.ok,
                                        error=answer.error))

    def _open_circuit(self, reason: str) -> None:
        """Open the circuit for good: requests not issued resolve now, calls in flight stop."""
        with self._lock:
            if self.circuit_open_reason is not None:
                return
            self.circuit_open_reason = reason
        self._halt.set()
        self._resolve_queued()
        self._cancel_backend(reason)

    def stop_issuing(self, reason: str) -> None:
        """Issue no new request from now on (an interrupted run): requests not yet issued
        resolve at once to ``Answer(error=reason, calls=0)`` (and peers are told), calls
        already in flight complete normally and their answers are cached.  Safe from any
        thread; a second call changes nothing."""
        with self._lock:
            if self.stopped_reason is not None:
                return
            self.stopped_reason = one_line(reason) or "stopped"
        self._halt.set()
        self._resolve_queued()

    def _refusal(self, key: str) -> Answer | None:
        """The answer of a request that will not be issued (circuit open, stopped), published
        to peers; ``None`` when it may be issued."""
        if self.stopped_reason is None and self.stop_check is not None:
            reason = self.stop_check()  # another process stopped the run just now
            if reason is not None:
                self.stop_issuing(reason)
        with self._lock:
            if self.circuit_open_reason is not None:
                self._stats["circuit_skipped"] += 1
                answer, note = Answer(error=self.circuit_open_reason, calls=0), CIRCUIT_OPEN
            elif self.stopped_reason is not None:
                self._stats["stop_skipped"] += 1
                answer, note = Answer(error=self.stopped_reason, calls=0), "stopped"
            else:
                return None
        return self._publish(key, answer, note)

    def _resolve_queued(self) -> None:
        """Resolve every request not yet started (a cached answer if there is one, else the
        refusal), without waiting for a worker thread."""
        with self._lock:
            queued, self._queued = list(self._queued.values()), {}
        for key, fut in queued:
            if fut.done():
                continue
            answer = self._hit(key) or self._refusal(key)
            if answer is not None and not fut.done():
                fut.set_result(answer)

    def _publish(self, key: str, answer: Answer, reason: str) -> Answer:
        """Tell peers sharing the cache that this process will not cache ``key``'s answer
        (:meth:`AnswerCache.note_uncached`); returns ``answer``."""
        if self.cache is not None:
            self.cache.note_uncached(key, reason, answer.calls)
            with self._lock:
                self._stats["published"] += 1
        return answer

    def _cancel_backend(self, reason: str | None) -> None:
        """End the backend's calls in flight and its retries (``cancel(reason)``, or the
        older ``cancel()``), when it can."""
        cancel = getattr(self.backend, "cancel", None)
        if not callable(cancel):
            return
        try:
            takes_reason = bool(inspect.signature(cancel).parameters)
        except (TypeError, ValueError):
            takes_reason = False
        if takes_reason:
            cancel(reason)
        else:
            cancel()

    def _budget_exhausted(self) -> bool:
        return self.budget is not None and self.budget.exhausted

    def _account(self, answer: Answer) -> None:
        spent = 0
        with self._lock:
            s = self._stats
            s["issued"] += 1
            s["calls"] += answer.calls
            s["retries"] += max(0, answer.calls - 1)
            if not answer.ok:
                s["errors"] += 1
            if answer.truncated:
                s["truncated"] += 1
            if answer.ok and answer.usage is None:
                s["usage_missing"] += 1
            if answer.usage is not None:
                s["input_tokens"] += answer.usage.input_tokens or 0
                s["output_tokens"] += answer.usage.output_tokens or 0
                spent = (answer.usage.input_tokens or 0) + (answer.usage.output_tokens or 0)
        if self.budget is not None and spent:
            self.budget.spend(spent)

    # -- lifecycle and stats -----------------------------------------------------------------

    def tokens_spent(self) -> int:
        """Input + output tokens of the answers obtained so far (their usage; cache hits
        spend nothing)."""
        with self._lock:
            return int(self._stats["input_tokens"] + self._stats["output_tokens"])

    def stats(self) -> dict[str, Any]:
        """A snapshot of the counters (see ``__init__``) plus ``pending`` and ``elapsed_s``."""
        with self._lock:
            out = dict(self._stats)
            out["pending"] = sum(1 for f in self._futures.values() if not f.done())
        out["tokens"] = out["input_tokens"] + out["output_tokens"]
        out["elapsed_s"] = round(time.monotonic() - self._started, 3)
        if self.budget is not None:
            out["budget_limit"] = self.budget.limit
            out["budget_spent"] = self.budget.spent
        return out

    def close(self, *, wait: bool = True, cancel_pending: bool = False) -> None:
        """Stop accepting requests; wait for the rest.

        With ``cancel_pending`` requests not started are cancelled, waits for other processes'
        answers stop, and the backend (when it has a ``cancel()``) ends the calls in flight and
        stops retrying, so an interrupted run ends at once.
        """
        with self._lock:
            self._closed = True
        if cancel_pending:
            self._cancel.set()
            self._halt.set()
            with self._lock:
                queued, self._queued = list(self._queued.values()), {}
            for key, fut in queued:
                if fut.cancel():  # peers must not wait for what will never be asked
                    self._publish(key, Answer(error="cancelled", calls=0), "cancelled")
            self._cancel_backend(None)
        self._executor.shutdown(wait=wait, cancel_futures=cancel_pending)
