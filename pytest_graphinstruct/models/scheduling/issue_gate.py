"""Whether a scheduler may issue a new request: its circuit breaker (:mod:`.circuit`, fed by the
backend's HTTP attempts or by completed requests), a stop (an interrupted run) and a cancel
(the scheduler closed with ``cancel_pending``)."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable

from pytest_graphinstruct.answers import Answer, FailureKind
from pytest_graphinstruct.models.base import AttemptOutcome, Backend, one_line
from pytest_graphinstruct.models.scheduling.circuit import CircuitBreaker
from pytest_graphinstruct.models.scheduling.request_stats import RequestStats


class IssueGate:
    """Opens the circuit, stops and cancels one scheduler's issuing, and says the answer of a
    request that will not be issued.

    A backend with an ``attempt_listener`` feeds the breaker per HTTP attempt (the gate becomes
    its listener); others (test fakes, backends without retries) per completed request
    (:meth:`feed_request`).

    Args:
        backend: the scheduler's backend (its ``cancel`` ends calls in flight).
        threshold: the breaker's threshold; ``None``: no breaker.
        lock: the scheduler's lock, shared by its parts.
        stats: the scheduler's counters.
        stop_check: asked before each refusal check; a reason stops issuing.
        on_halt: called (without the lock) when the circuit opens or issuing stops, to resolve
            the requests not started.
    """

    def __init__(self, backend: Backend, threshold: int | None, *, lock: threading.RLock,
                 stats: RequestStats,
                 stop_check: Callable[[], str | None] | None,
                 on_halt: Callable[[], None]) -> None:
        self.backend = backend
        self._breaker = CircuitBreaker(backend.endpoint, threshold) if threshold else None
        self._lock = lock
        self._stats = stats
        self.stop_check = stop_check
        self._on_halt = on_halt
        self.circuit_open_reason: str | None = None  #: the error of requests not sent, once open
        self.stopped_reason: str | None = None  #: why no new request is issued (stop_issuing)
        self.halt = threading.Event()  #: set when no new request may be issued (any reason)
        self.cancelled = threading.Event()  #: set by :meth:`cancel`
        self.attempt_feed = self._breaker is not None and hasattr(backend, "attempt_listener")
        if self.attempt_feed:
            backend.attempt_listener = self.on_attempt  # type: ignore[attr-defined]

    def on_attempt(self, outcome: AttemptOutcome) -> None:
        """The backend's ``attempt_listener``: one HTTP attempt's outcome, from its thread."""
        if self._breaker is None or self.cancelled.is_set():
            return  # an interrupted run's cancelled calls say nothing about the endpoint
        reason = self._breaker.record(outcome)
        if reason is not None:
            self._open_circuit(reason)

    def feed_request(self, answer: Answer) -> None:
        """The request-level feed of a backend without ``attempt_listener``: a completed
        request is one outcome, an error an endpoint fault."""
        if self._breaker is None or self.cancelled.is_set() or self.stopped_reason is not None:
            return
        self.on_attempt(AttemptOutcome(ok=answer.ok, endpoint_fault=not answer.ok,
                                       error=answer.error))

    def _open_circuit(self, reason: str) -> None:
        """Open the circuit for good: requests not issued resolve now, calls in flight stop."""
        with self._lock:
            if self.circuit_open_reason is not None:
                return
            self.circuit_open_reason = reason
        self.halt.set()
        self._on_halt()
        self.cancel_backend(reason, "circuit_open")

    def stop_issuing(self, reason: str) -> None:
        """Issue nothing new from now on (see :meth:`.Scheduler.stop_issuing`); a second call
        changes nothing."""
        with self._lock:
            if self.stopped_reason is not None:
                return
            self.stopped_reason = one_line(reason) or "stopped"
        self.halt.set()
        self._on_halt()

    def cancel(self) -> None:
        """Issue nothing new, and let nothing in flight feed the breaker (an interrupted
        run)."""
        self.cancelled.set()
        self.halt.set()

    def refusal(self) -> Answer | None:
        """The answer of a request that will not be issued (circuit open, stopped); ``None``
        when it may be issued."""
        if self.stopped_reason is None and self.stop_check is not None:
            reason = self.stop_check()  # another process stopped the run just now
            if reason is not None:
                self.stop_issuing(reason)
        with self._lock:
            if self.circuit_open_reason is not None:
                self._stats.add("circuit_skipped")
                return Answer(error=self.circuit_open_reason, calls=0,
                              failure_kind="circuit_open")
            if self.stopped_reason is not None:
                self._stats.add("stop_skipped")
                return Answer(error=self.stopped_reason, calls=0, failure_kind="stopped")
            return None

    def cancel_backend(self, reason: str | None, kind: FailureKind = "cancelled") -> None:
        """End the backend's calls in flight and its retries (``cancel(reason, kind)``, or
        ``cancel(reason)``, or the older ``cancel()``), when it can."""
        cancel = getattr(self.backend, "cancel", None)
        if not callable(cancel):
            return
        try:
            params = inspect.signature(cancel).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        if "kind" in params:
            cancel(reason, kind)
        elif params:
            cancel(reason)
        else:
            cancel()
