"""The circuit breaker: when an endpoint is broken, stop sending it requests.

:class:`CircuitBreaker` is fed one :class:`~.base.AttemptOutcome` per HTTP attempt (or, for a
backend that reports no attempts, one per completed request) and decides when the endpoint is
broken.  It holds no I/O and is safe to feed from several threads.

Rules (``threshold`` = ``--gi-circuit-breaker``, default 8):

* Only *counted* attempts matter: a usable answer, or an endpoint fault (5xx, a timeout or
  deadline, a connection error, a malformed body, 401/403/404, an exhausted quota).  A failure
  that says only this request is wrong or that we are being paced (429 rate limit, other 4xx)
  or a cancelled call is neither counted nor resets anything.
* **Consecutive faults**: the circuit opens when the last ``threshold`` counted attempts were
  all endpoint faults.  A usable answer resets the run of faults.
* **A rate over a window**: the circuit opens when at least :data:`OPEN_RATE` (80 %) of the last
  ``WINDOW_FACTOR × threshold`` (5 × 8 = 40) counted attempts were endpoint faults.  The window
  must be full first (fewer attempts are the consecutive rule's business), so an endpoint that
  answers one call in six opens it as surely as a dead one.
* **Only faults that persist open it.**  Either rule opens the circuit only when the faults it
  counts (the run, or the window) hold at least one *confirmed* fault
  (:attr:`~.base.AttemptOutcome.confirmed`): one seen on a retry of a request that has been
  failing for half a backoff base or longer — it failed, waited, and failed again —, after an
  attempt's whole deadline, or one that is not retried (401, 404, a request's last attempt).
  A burst of quick faults (64 calls at once, 16 of them reset by an overflowing accept queue,
  and retries that fire a few milliseconds later into the same burst) is retried with backoff
  like any transient fault; it opens the circuit only if the retries keep failing.  A dead
  endpoint still opens it within one backoff base (a refused or 500-answering endpoint: the
  first fault of a request failing for half a base) or at its first deadline (a hanging or
  dripping one: as before).
* Once open it stays open.  :attr:`CircuitBreaker.reason` is one line naming the rule that
  opened it, the endpoint and the first of the faults that opened it (the run's first, or the
  window's): not that of a burst survived earlier.
"""

from __future__ import annotations

import threading
from collections import deque

from pytest_graphinstruct.models.base import AttemptOutcome, one_line

CIRCUIT_OPEN = "circuit open"
"""Prefix of :attr:`CircuitBreaker.reason` (and so of every error of a request not sent)."""
WINDOW_FACTOR = 5
"""The rate window holds this many times ``threshold`` counted attempts."""
OPEN_RATE = 0.8
"""The share of endpoint faults in a full window that opens the circuit."""


class CircuitBreaker:
    """Decides, from what each attempt said, whether an endpoint is broken (see the module).

    Args:
        endpoint: named in :attr:`reason`.
        threshold: consecutive endpoint faults that open the circuit (>= 1); the rate window is
            ``WINDOW_FACTOR × threshold`` attempts.
    """

    def __init__(self, endpoint: str, threshold: int) -> None:
        if threshold < 1:
            raise ValueError(f"circuit breaker threshold must be >= 1, got {threshold!r}")
        self.endpoint = endpoint
        self.threshold = int(threshold)
        self.window = WINDOW_FACTOR * self.threshold
        self._lock = threading.Lock()
        # (confirmed fault, its error) of each counted attempt in the window; None: a success
        self._recent: deque[tuple[bool, str] | None] = deque(maxlen=self.window)
        self._faults_in_window = 0
        self._confirmed_in_window = 0
        self._run = 0  # consecutive endpoint faults up to now
        self._run_confirmed = False  # the run holds a confirmed fault
        self._run_first_error = ""  # the run's first fault's text
        self._reason: str | None = None

    def __repr__(self) -> str:
        return (f"CircuitBreaker({self.endpoint!r}, threshold={self.threshold}, "
                f"open={self.is_open})")

    @property
    def reason(self) -> str | None:
        """The one line saying why the circuit is open, or ``None`` while it is closed."""
        with self._lock:
            return self._reason

    @property
    def is_open(self) -> bool:
        return self.reason is not None

    def record(self, outcome: AttemptOutcome) -> str | None:
        """Count one attempt; returns :attr:`reason` when *this* outcome opened the circuit
        (exactly once per breaker), else ``None``."""
        if not outcome.ok and not outcome.endpoint_fault:
            return None  # paced, a bad request, or cancelled: says nothing about the endpoint
        fault = None if outcome.ok else (outcome.confirmed, outcome.error or "no error text")
        with self._lock:
            if self._reason is not None:
                return None
            if len(self._recent) == self.window:
                dropped = self._recent[0]
                if dropped is not None:
                    self._faults_in_window -= 1
                    self._confirmed_in_window -= dropped[0]
            self._recent.append(fault)
            if fault is not None:
                confirmed, error = fault
                self._faults_in_window += 1
                self._confirmed_in_window += confirmed
                if self._run == 0:
                    self._run_first_error = error
                self._run += 1
                self._run_confirmed = self._run_confirmed or confirmed
            else:
                self._run = 0
                self._run_confirmed = False
            self._reason = self._decide()
            return self._reason

    def _decide(self) -> str | None:
        """The reason to open now, or ``None`` (called under the lock)."""
        if self._run >= self.threshold and self._run_confirmed:
            what = f"{self._run} consecutive calls to {self.endpoint} failed"
            first = self._run_first_error
        elif (len(self._recent) == self.window and self._confirmed_in_window
              and self._faults_in_window >= OPEN_RATE * self.window):
            what = (f"{self._faults_in_window} of the last {self.window} calls to "
                    f"{self.endpoint} failed (at least {OPEN_RATE:.0%})")
            first = next(seen[1] for seen in self._recent if seen is not None)
        else:
            return None
        return one_line(f"{CIRCUIT_OPEN}: {what} (no more are sent; calls in flight are "
                        f"stopped); the first error: {first}")
