"""A scheduler's counters (:meth:`.Scheduler.stats`): what was submitted, answered from the
cache, issued and spent, and what was not sent and why; and :class:`Sent`, the part of them that
says what really went to the endpoint (:meth:`RequestStats.sent`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any

from pytest_graphinstruct.answers import Answer


@dataclass(frozen=True)
class Sent:
    """What one scheduler (or several, added with ``+``) really sent to its endpoint, each
    request once however many cells or samples asked for it: ``requests`` — HTTP requests,
    retries included (``retries`` of them beyond each request's first call); ``input_tokens``
    and ``output_tokens`` — the usage of the answers obtained (the provider's, or counted
    offline where it sent none; an answer without usage adds nothing), ``batch_input_tokens``
    and ``batch_output_tokens`` of them answered by ``batch_requests`` batch lines
    (``--gi-batch``: billed at the batch price); ``cached`` — answers served from an earlier
    run's answer cache (nothing sent for them); ``batch_in_flight`` — request lines in batches
    still live at the endpoint (submitted, billed when they finish, counted nowhere else: an
    interrupted batch run's).
    """

    requests: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached: int = 0
    batch_input_tokens: int = 0
    batch_output_tokens: int = 0
    batch_requests: int = 0
    batch_in_flight: int = 0

    def __add__(self, other: Sent) -> Sent:
        return Sent(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))


class RequestStats:
    """The counters of one scheduler, updated from any of its threads.

    Args:
        lock: the scheduler's lock, which its parts share (a count changes together with the
            state it counts).
    """

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._counts: dict[str, int] = {
            "submitted": 0,         # submit() calls
            "deduplicated": 0,      # submits answered by an existing future
            "cache_hits": 0,        # answers taken from the cache
            "issued": 0,            # requests handed to the backend
            "calls": 0,             # HTTP attempts (retries included) of issued requests
            "retries": 0,           # calls beyond the first of each issued request
            "errors": 0,            # issued requests that ended in an error
            "truncated": 0,         # answers that hit the token limit
            "budget_skipped": 0,    # requests not issued because of the token budget
            "cost_skipped": 0,      # requests not issued because of the cost cap
            "input_tokens": 0,
            "batch_input_tokens": 0,     # ... of them answered by a batch line
            "batch_output_tokens": 0,
            "batch_requests": 0,
            "output_tokens": 0,
            "usage_missing": 0,     # answers without a usage block (tokens unknown)
            "cache_write_errors": 0,  # answers the cache could not write (disk full, ...)
            "circuit_skipped": 0,   # requests not sent because the circuit was open
            "stop_skipped": 0,      # requests not sent because of stop_issuing()
            "stale_skipped": 0,     # cached answers of another snapshot, asked again
            "stale_reused": 0,      # cached answers of another snapshot, reused on purpose
            "claim_waits": 0,       # requests another run on the cache was asking: waited for
            "claim_awaited": 0,     # ... of them answered by that run (read from the cache)
            "claim_reasked": 0,     # ... of them it did not obtain, asked here after it
            "max_in_flight": 0,
        }
        self._in_flight = 0
        self._started = time.monotonic()

    def add(self, name: str, n: int = 1) -> None:
        """Add ``n`` to the counter ``name`` (one of those above)."""
        with self._lock:
            self._counts[name] += n

    @contextmanager
    def in_flight(self) -> Iterator[None]:
        """Count one backend call in flight for the time of the ``with`` block
        (``max_in_flight``)."""
        self.call_began()
        try:
            yield
        finally:
            self.call_ended()

    def call_began(self) -> None:
        """One backend call more in flight (``max_in_flight``)."""
        with self._lock:
            self._in_flight += 1
            self._counts["max_in_flight"] = max(self._counts["max_in_flight"], self._in_flight)

    def call_ended(self) -> None:
        """One backend call fewer in flight."""
        with self._lock:
            self._in_flight -= 1

    def account(self, answer: Answer, *, batched: bool = False) -> int:
        """Count the answer of one issued request (``batched``: a batch line answered it);
        returns the tokens it spent (its usage's input + output; 0 without a usage block)."""
        spent = 0
        with self._lock:
            s = self._counts
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
                if batched:
                    s["batch_requests"] += 1
                    s["batch_input_tokens"] += answer.usage.input_tokens or 0
                    s["batch_output_tokens"] += answer.usage.output_tokens or 0
                spent = (answer.usage.input_tokens or 0) + (answer.usage.output_tokens or 0)
        return spent

    def tokens_spent(self) -> int:
        """Input + output tokens of the answers counted so far."""
        with self._lock:
            return int(self._counts["input_tokens"] + self._counts["output_tokens"])

    def sent(self, *, cached: int = 0) -> Sent:
        """What was sent to the endpoint so far (issued requests' HTTP calls and their
        answers' usage), with ``cached`` answers an earlier run's cache served (the cache
        view's distinct keys: :meth:`.CacheView.earlier_keys`)."""
        with self._lock:
            s = self._counts
            return Sent(requests=s["calls"], retries=s["retries"],
                        input_tokens=s["input_tokens"], output_tokens=s["output_tokens"],
                        cached=cached, batch_input_tokens=s["batch_input_tokens"],
                        batch_output_tokens=s["batch_output_tokens"],
                        batch_requests=s["batch_requests"])

    def report(self, pending: int) -> dict[str, Any]:
        """The counters, then ``pending`` (as given), ``tokens`` and ``elapsed_s`` (since this
        object was made)."""
        with self._lock:
            out: dict[str, Any] = dict(self._counts)
            out["pending"] = pending
        out["tokens"] = out["input_tokens"] + out["output_tokens"]
        out["elapsed_s"] = round(time.monotonic() - self._started, 3)
        return out
