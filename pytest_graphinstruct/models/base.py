"""The model-facing data types: requests, answers, usage, and the backend protocol.

A :class:`Request` is everything that determines a model's answer (endpoint and model, the full
chat messages, decoding parameters, the sample index); its :meth:`Request.cache_key` hashes
exactly that.  A :class:`Answer` is what came back: the text, its token usage (the
provider's usage block, or ``tiktoken``'s count when the provider sent none, with
:attr:`Usage.source` saying which; ``None`` when nothing counted it — never an estimate), how many
HTTP calls it took, and an infrastructure ``error`` when no answer could be obtained (an error
is never a model answer).
"""

from __future__ import annotations

import hashlib
import json
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

from pytest_graphinstruct.answers import Answer, Message
from pytest_graphinstruct.escaping import escape

_T = TypeVar("_T")

MAX_ERROR_CHARS = 300
INTERRUPT_WAKE_S = 0.25
"""How often the main thread's waits wake up to act on a Ctrl+C or SIGTERM (see
:func:`wait_result`)."""
"""The longest error text an :class:`Answer` of this layer carries (always one line)."""


def one_line(message: str, note: str = "", limit: int = MAX_ERROR_CHARS) -> str:
    """``message + note`` as one line of at most ``limit`` characters.

    Whitespace runs (newlines included) become one space, and ``message`` is cut (ending in
    ``…``) so that ``note`` — the part saying what happened to the request — always survives.
    Control, format and separator characters (an endpoint's ``ESC [2J``, a bell) are written as
    visible escapes (:func:`pytest_graphinstruct.escaping.escape`): the text came from outside.
    """
    text = escape(" ".join(message.split()))
    tail = (" " if note[:1].isspace() else "") + escape(" ".join(note.split()))
    room = max(0, limit - len(tail))
    if len(text) > room:
        text = text[: max(0, room - 1)] + "…"
    return (text + tail)[:limit]


def wait_result(future: Future[_T], timeout: float | None = None) -> _T:
    """``future.result(timeout)``, woken every :data:`INTERRUPT_WAKE_S` seconds.

    The kernel hands a process-wide signal (Ctrl+C, SIGTERM) to any thread that does not
    block it — an HTTP call's thread, a native thread of torch — and CPython then runs the
    handler only when the main thread next executes bytecode; a main thread blocked in a plain
    lock wait is not woken, so the interrupt would wait for the answer.  Waking every 0.25 s
    bounds that delay (measured: the one hang of the Ctrl+C tests under load, a minute).

    Raises:
        TimeoutError: ``timeout`` passed; CancelledError / the future's exception as
            ``Future.result``.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        step = INTERRUPT_WAKE_S if deadline is None else max(
            0.0, min(INTERRUPT_WAKE_S, deadline - time.monotonic()))
        try:
            return future.result(timeout=step)
        except TimeoutError:
            if deadline is not None and time.monotonic() >= deadline:
                raise


def quiet_thread() -> None:
    """Block SIGINT and SIGTERM in the calling (non-main) thread, so the kernel delivers them
    to the main thread, whose handler acts on them (a thread's first act: an executor's
    ``initializer``, a thread target's first line)."""
    if threading.current_thread() is not threading.main_thread():
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})


def quiet_timer(seconds: float, fn: Callable[[], object], name: str) -> threading.Timer:
    """Call ``fn()`` once, ``seconds`` from now, from a started daemon thread that blocks
    SIGINT and SIGTERM (:func:`quiet_thread`); a daemon timer fires even while the interpreter
    waits for other threads at exit.  ``cancel()`` on the timer drops the call."""

    def run() -> None:
        quiet_thread()
        fn()

    timer = threading.Timer(seconds, run)
    timer.name = name
    timer.daemon = True
    timer.start()
    return timer


@dataclass(frozen=True)
class AttemptOutcome:
    """What one HTTP attempt said about the endpoint, for the scheduler's circuit breaker.

    Attributes:
        ok: the attempt got a usable answer.
        endpoint_fault: a failure that says the endpoint itself is broken (5xx, a timeout or
            deadline, a connection error, a malformed body, 401/403/404, exhausted quota) —
            ``False`` for one that says only this request is wrong or that we are being paced
            (429 rate limit, other 4xx), and for a cancelled call.
        error: the failure's one-line text (``None`` when ``ok``).
        unread: the request may have reached the endpoint, but no answer of it was read (a
            timeout or deadline, a call cancelled in flight, a broken connection, a body that
            could not be read): the endpoint may have generated the answer, and bill it.
            ``False`` for an HTTP error status (the endpoint said it did not answer), a
            connection never made, and a usable answer.
        confirmed: a fault that persisted over time or is final: seen after the attempt's
            whole deadline, not retried (401, a last attempt), or on a retry of a request that
            has been failing for half a backoff base or longer (``CONFIRMED_AFTER``).
            ``False`` for a quick fault of a request that just began failing and will be
            retried, which one burst of concurrent failures explains (connections reset by
            an overflowing accept queue, a proxy restarting): the circuit breaker opens only
            on faults that hold a confirmed one (:mod:`~.scheduling.circuit`).  ``True`` by
            default: a producer that cannot tell (a request-level feed, after every retry)
            counts every fault.
    """

    ok: bool
    endpoint_fault: bool = False
    error: str | None = None
    unread: bool = False
    confirmed: bool = True


class AttemptGuard(Protocol):
    """What a backend that retries asks before each retry of one request, and tells after
    each failed attempt (the cost cap's :class:`~.cap.CallCharge`): lent to one call of
    ``complete_served(request, guard=...)``, used from that call's thread only."""

    def before_retry(self, calls: int) -> str | None:
        """Whether the retry after ``calls`` attempts may be sent: ``None``, else the one-line
        reason it may not (the request's error then)."""
        ...

    def after_attempt(self, outcome: AttemptOutcome) -> None:
        """One failed attempt's outcome (called before :meth:`before_retry` of the next)."""
        ...


@dataclass(frozen=True)
class DecodingParams:
    """Decoding parameters sent with every request (``None`` = not sent)."""

    temperature: float | None = 0.7
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in (("temperature", self.temperature), ("top_p", self.top_p),
                                  ("max_tokens", self.max_tokens), ("seed", self.seed))
                if v is not None}


@dataclass(frozen=True)
class Request:
    """One model call to make: the k-th sample of one instruction in one cell.

    ``instruction_id`` and ``cell`` identify where the answer goes; they are not part of the
    cache key (two cells sending identical messages share answers).
    """

    model: str
    messages: tuple[Message, ...]
    params: DecodingParams = field(default_factory=DecodingParams)
    sample_index: int = 0
    instruction_id: str = ""
    cell: str = ""
    extra: tuple[tuple[str, Any], ...] = ()  # backend extras (e.g. a grammar), part of the key

    def cache_key(self, endpoint: str) -> str:
        """SHA-256 over endpoint, model, messages, decoding parameters, extras, sample index."""
        payload = {
            "endpoint": endpoint,
            "model": self.model,
            "messages": [m.to_json() for m in self.messages],
            "params": self.params.to_json(),
            "extra": [list(x) for x in self.extra],
            "sample": self.sample_index,
        }
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@runtime_checkable
class Backend(Protocol):
    """A source of answers.

    ``endpoint`` names where answers come from (base URL, ``oracle``, ``replay:<file>``) and is
    part of every cache key.  ``complete`` blocks until the answer is obtained or given up on;
    it never raises for infrastructure problems (they become ``Answer(error=...)``) and is safe
    to call from several threads at once.
    """

    endpoint: str
    cacheable: bool

    def complete(self, request: Request) -> Answer: ...


# Optional backend attributes the scheduler reads with getattr (not part of the protocol, so
# the oracle and replay backends need not define them):
#   remote: bool      -- answers come over the network; the circuit breaker applies
#   cancel() -> None  -- stop calls in flight and retries (an interrupted run)
#   takes_guard: bool -- complete_served(request, guard=AttemptGuard) tells the guard every
#                        failed attempt and asks it before every retry (the cost cap)
#   inline: bool      -- answers from memory or by local computation, never waits on I/O: the
#                        scheduler answers in the submitting thread (a worker thread would only
#                        add switches under the GIL)
