"""Live counts of a run's answers, for the progress line (exact, thread-safe, cheap to read),
and a batch run's batches (:class:`BatchProgress`).

A :class:`BenchmarkSession` counts the answers it *planned* — every sample its prefetch
submitted (a method's chain counts once) — as they are delivered: cache hits and
infrastructure errors included, each also counted on its own.  Answers an item asks for outside
the prefetch (under xdist, an item whose owner is another worker) are not counted here: the
owner counts them, so the workers' counts add up to the run's.  Tokens are not summed from the
answers: :meth:`BenchmarkSession.progress` takes them from the schedulers, which count the usage
of every request this process sent (a method's every call; never a cache hit).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import dataclass, fields

from pytest_graphinstruct.answers import Answer


@dataclass(frozen=True)
class ProgressCounts:
    """The answer counts of one process (or, added up, of a whole xdist run).

    ``requested``: answers the run asked for; ``received``: those delivered so far;
    ``cached`` and ``errors``: of the received, taken from the answer cache and without an
    answer (an infrastructure error: failed request, token budget, circuit breaker);
    ``tokens``: input + output tokens of the requests sent (the providers' usage).
    """

    requested: int = 0
    received: int = 0
    cached: int = 0
    errors: int = 0
    tokens: int = 0

    def __add__(self, other: ProgressCounts) -> ProgressCounts:
        return ProgressCounts(*(getattr(self, f.name) + getattr(other, f.name)
                                for f in fields(self)))


@dataclass(frozen=True)
class BatchProgress:
    """Where one model's batches stand in a batch run (``--gi-batch``), for the progress line:
    the oldest batch whose results were not read yet.

    ``index`` of ``total``: its place (from 1) among the model's batches this run deals with
    (a killed run's it resumes, and its own); ``state``, ``completed``, ``failed`` and
    ``requests``: its last known status and request counts, as the endpoint said them —
    untrusted (:func:`~pytest_graphinstruct.report.live.progress.batch_text` escapes and bounds
    them).
    """

    model: str
    index: int
    total: int
    state: str
    completed: int = 0
    failed: int = 0
    requests: int = 0


class AnswerTally:
    """Counts answers as their futures resolve (callbacks run in the scheduler's threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requested = 0
        self._received = 0
        self._cached = 0
        self._errors = 0

    def watch(self, future: Future[Answer]) -> None:
        """Count ``future`` as requested, and as received once it resolves (a cancelled
        request is never received)."""
        with self._lock:
            self._requested += 1
        future.add_done_callback(self._delivered)

    def _delivered(self, future: Future[Answer]) -> None:
        if future.cancelled() or future.exception() is not None:
            return
        answer = future.result()
        with self._lock:
            self._received += 1
            self._cached += bool(answer.cached)
            self._errors += answer.error is not None

    def counts(self, tokens: int = 0) -> ProgressCounts:
        """A snapshot, with ``tokens`` as spent so far."""
        with self._lock:
            return ProgressCounts(self._requested, self._received, self._cached, self._errors,
                                  tokens)
