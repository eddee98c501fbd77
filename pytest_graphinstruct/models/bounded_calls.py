"""The backend's ``openai`` client and the HTTP calls made with it, each bounded by a deadline
and owning its connections.

* **Deadline**: :meth:`BoundedCalls.run` bounds an HTTP call as a whole (connect, send, wait,
  and read), not only the gap between two bytes: a server that trickles its answer is abandoned
  at the deadline.  The call runs in a daemon thread named ``gi-http-call``
  (:data:`CALL_THREAD_NAME`), so an abandoned call never blocks the caller, a
  :meth:`BoundedCalls.cancel`, or interpreter exit.
* **Owned connections**: an abandoned call (deadline or :meth:`BoundedCalls.cancel`) has its
  socket shut down at once, which wakes its thread out of ``recv``; the thread closes its client
  and ends.  No connection and no thread outlives its call, so a process never holds more
  connections than calls in flight (the scheduler's concurrency).
* :meth:`BoundedCalls.cancel` ends calls in flight at once and refuses every later one
  (:class:`CallCancelled`); the first reason given stays.
* **Bounded bodies**: a response body is read up to :data:`MAX_RESPONSE_BYTES` (or the
  backend's own bound), no further: one declared longer is refused before its body is read, one
  that turns out longer stops there (:class:`ResponseTooLarge`).  Bodies are asked for
  uncompressed, so the bound holds for what is decoded too.

Connections
-----------
Each HTTP call gets its own HTTP client (``openai.DefaultHttpxClient``: an ``httpx.Client`` for
openai 1.x, an ``httpx2.Client`` for openai 3.x — whichever package the installed ``openai`` is
built on; :func:`http_package`), passed to the ``openai`` client through
``with_options(http_client=...)``), closed when the call ends, and all of them share the
backend's one SSL context (:attr:`BoundedCalls.ssl_context`: certificates are loaded once, not
per call).  The call's client installs httpcore's documented ``trace`` request extension (from an
httpx ``request`` event hook); httpcore reports every connection it opens
(``connection.connect_tcp.complete``, and ``connection.start_tls.complete`` for https) with its
network stream, whose public ``get_extra_info("socket")`` is the socket.  Abandoning the call
shuts those sockets down (``shutdown(SHUT_RDWR)``: on Linux this wakes a thread blocked in
``recv``; ``close()`` alone does not, and closing a descriptor another thread uses could close a
reused one) and the call's thread then closes its client.  An abandoned call's thread that has
not begun to connect never does (the trace raises at ``connect_tcp.started``: a thread starved of
CPU past its deadline would otherwise connect after its caller moved on).  A connect already
under way at the abandon is shut down as soon as httpcore reports it, and the caller waits for
that report (:data:`SETTLE_S` at most) before it returns, so the slot it frees is never taken
by a new call while the old connection is still open.

Why a client per call and not one shared pool: httpcore reports a connection to the trace of
the request that *opened* it; a pooled connection reused by a later request is not reported
again, so a shared pool could not say which socket a given call is reading.  The cost is
keep-alive: every HTTP call opens a new TCP connection (and, for https, makes a full TLS
handshake), one or two round trips per call — small beside a model's answer, which takes
seconds — and building the client takes about 0.3 ms.  Private httpcore hooks (a custom network
backend, the pool's connection list) would keep keep-alive but break with any httpcore release.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from pytest_graphinstruct.answers import Answer, FailureKind
from pytest_graphinstruct.models.base import quiet_thread

CALL_THREAD_NAME = "gi-http-call"
"""The name of the thread each HTTP call runs in (it ends with its call, abandoned or not)."""
_REDACTED = "[REDACTED]"
_CONNECT_EVENTS = ("connect_tcp.", "start_tls.")  # httpcore's trace names, after "connection."
SETTLE_S = 2.0
"""How long an abandoned call's caller waits for a connect under way at the abort to be
reported (and shut down), so that the caller's slot is not reused while the abandoned thread
still holds an open connection.  A loopback or LAN connect takes microseconds; the wait matters
only when the abandoned thread is starved of CPU between its connect and its report."""

_T = TypeVar("_T")


MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""The most bytes of one response body read from the endpoint (8 MiB, as a batch output line):
a graph answer of 16,384 tokens is about 64 KB of text, so only a broken or hostile endpoint
sends more.  A longer body is not read further (:class:`ResponseTooLarge`)."""


class ResponseTooLarge(Exception):
    """The response body is longer than the bound; it was not read further.

    Attributes:
        limit: the bound, in bytes.
        declared: the length the response's ``Content-Length`` declared (``None``: it was
            found reading).
    """

    def __init__(self, limit: int, declared: int | None = None) -> None:
        said = "" if declared is None else f" (Content-Length {declared})"
        super().__init__(f"the response body is larger than {limit} bytes{said}")
        self.limit = limit
        self.declared = declared


def _bounded_stream(http: Any, inner: Any, limit: int) -> Any:
    """``inner`` (a response's byte stream) raising :class:`ResponseTooLarge` once more than
    ``limit`` bytes came through, so no more than that is ever held."""

    class Bounded(http.SyncByteStream):
        def __iter__(self) -> Any:
            seen = 0
            for chunk in inner:
                seen += len(chunk)
                if seen > limit:
                    raise ResponseTooLarge(limit)
                yield chunk

        def close(self) -> None:
            inner.close()

    return Bounded()


def _bound_response(limit: int) -> Callable[[Any], None]:
    """An httpx ``response`` event hook (run once the headers are in, before the body is read)
    that refuses a body declared longer than ``limit`` bytes at once and stops reading one
    that turns out longer (:class:`ResponseTooLarge`, raised through the client's call)."""
    http = http_package()

    def hook(response: Any) -> None:
        declared = str(response.headers.get("content-length") or "")
        if declared.isdigit() and int(declared) > limit:
            raise ResponseTooLarge(limit, int(declared))
        response.stream = _bounded_stream(http, response.stream, limit)

    return hook


class DeadlineExceeded(Exception):
    """The HTTP call as a whole took longer than its deadline; it was abandoned."""


class CallCancelled(Exception):
    """:meth:`BoundedCalls.cancel` was called while the HTTP call was in flight (or before).

    Attributes:
        started: the call had been started (its request may have reached the endpoint).
    """

    def __init__(self, *, started: bool = True) -> None:
        super().__init__("cancelled" if started else "cancelled before the call started")
        self.started = started


def http_package() -> Any:
    """The HTTP package the installed ``openai`` is built on (``httpx`` for openai 1.x,
    ``httpx2`` for 3.x): the package of ``openai.DefaultHttpxClient``'s ``Client`` base."""
    import importlib

    import openai

    base = next(c for c in openai.DefaultHttpxClient.__mro__ if c.__name__ == "Client")
    return importlib.import_module(base.__module__.split(".")[0])


def _shut(sock: socket.socket) -> None:
    """Shut ``sock`` down both ways (wakes a thread blocked reading it); never raises.

    The plain ``socket.socket`` method, also for an ``SSLSocket``: its own ``shutdown`` drops the
    TLS object under the reading thread's feet."""
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Abandoned(Exception):
    """Raised from the trace into an abandoned call's thread: it must not connect any more."""


class _OwnedCall:
    """The sockets one HTTP call opened, so that abandoning the call closes its connections.

    :meth:`attach` is an httpx ``request`` event hook: it installs :meth:`_trace` as the
    request's httpcore ``trace`` extension, which hears of every connection httpcore opens for
    it.  :meth:`abort` shuts every such socket down, and any opened later at once; a connection
    the call has not begun to open by then is never opened (the trace raises :class:`_Abandoned`
    at its start).  :meth:`settle` waits for a connect already under way at the abort.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)
        self._sockets: list[socket.socket] = []
        self._connecting = 0  # connects (or TLS handshakes) begun and not yet reported
        self.aborted = False

    def attach(self, request: Any) -> None:
        request.extensions["trace"] = self._trace

    def _trace(self, event: str, info: Mapping[str, Any]) -> None:
        if not event.startswith(_CONNECT_EVENTS, event.find(".") + 1):
            return
        if event.endswith(".started"):
            with self._lock:
                if self.aborted:  # a late thread: its call is over, it must not connect
                    raise _Abandoned("the call was abandoned before it connected")
                self._connecting += 1
            return
        stream = info.get("return_value") if event.endswith(".complete") else None
        sock = stream.get_extra_info("socket") if stream is not None else None
        with self._lock:
            self._connecting = max(0, self._connecting - 1)
            if isinstance(sock, socket.socket):
                self._sockets.append(sock)
            aborted = self.aborted
            self._settled.notify_all()
        if aborted and isinstance(sock, socket.socket):  # abandoned while connecting
            _shut(sock)

    def abort(self) -> None:
        """Shut down every connection of the call, now and when one is opened later; refuse
        to open any more."""
        with self._lock:
            self.aborted = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def settle(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` until no connect of this call is under way (a connect that
        completes after an :meth:`abort` is shut down as it is reported).  True: none is."""
        with self._lock:
            return self._settled.wait_for(lambda: self._connecting == 0, timeout_s)


class BoundedCalls:
    """The backend's ``openai`` client (which never sends itself) and its calls in flight.

    Args:
        api_key: the key the client sends (never written anywhere).
        base_url: the API root without its query (``None``: the client's default).
        timeout_s: the client's default timeout.
        default_query: query parameters sent with every request (``None``: none).
        max_response_bytes: the most bytes of one response body read (a call's body is
            asked for uncompressed, ``Accept-Encoding: identity``, and a longer one raises
            :class:`ResponseTooLarge` without being read further).
    """

    def __init__(self, *, api_key: str, base_url: str | None, timeout_s: float,
                 default_query: dict[str, str] | None,
                 max_response_bytes: int = MAX_RESPONSE_BYTES) -> None:
        import openai

        self.max_response_bytes = max_response_bytes

        self._lock = threading.Lock()
        # One per call in flight, with the event its caller waits on; cancel() aborts and sets them.
        self._calls: dict[_OwnedCall, threading.Event] = {}
        self.cancelled = threading.Event()  #: set by :meth:`cancel`
        self.cancel_reason: str | None = None  #: the first reason given to :meth:`cancel`
        self.cancel_kind: FailureKind = "cancelled"  #: what that reason is
        # One SSL context for every call's client: certificates are loaded once per backend.
        self.ssl_context = http_package().create_ssl_context()
        self.client = openai.OpenAI(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=0,
            # The base URL's query (api-version=...) goes with every request: the client would
            # otherwise glue the request path after it.
            default_query=default_query,
            # never sends: see run
            http_client=openai.DefaultHttpxClient(verify=self.ssl_context),
        )
        # The client imports its chat resources on first use (~0.1 s): do it here, once, not
        # inside the first call's deadline.
        self.client.chat.completions  # noqa: B018

    def scrub(self, text: str) -> str:
        """``text`` with the API key replaced (in case a server echoes it)."""
        secret = self.client.api_key
        return text.replace(secret, _REDACTED) if secret else text

    def scrub_answer(self, answer: Answer) -> Answer:
        """``answer`` with the API key in its text replaced (:meth:`scrub`: a model may echo
        it, and the text goes to the cache, reports and pages); its usage as it was."""
        text = answer.text
        clean = None if text is None else self.scrub(text)
        return answer if clean == text else replace(answer, text=clean)

    def cancel(self, reason: str | None = None, kind: FailureKind = "cancelled") -> None:
        """Stop: every call in flight ends at once — its socket is shut down, which ends its
        thread too — and every later :meth:`run` raises :class:`CallCancelled`.  ``reason``
        (one line) and its ``kind`` are kept in :attr:`cancel_reason` and
        :attr:`cancel_kind` when none was given before."""
        with self._lock:
            if reason is not None and self.cancel_reason is None:
                self.cancel_reason = " ".join(reason.split()) or "cancelled"
                self.cancel_kind = kind
            self.cancelled.set()
            calls = list(self._calls.items())
        for call, waker in calls:
            call.abort()
            waker.set()

    def run(self, fn: Callable[[Any], _T], deadline_s: float) -> _T:
        """``fn(client)`` with an ``openai`` client of its own (see *Connections* above), run
        in a daemon thread and abandoned — its connection shut down — after ``deadline_s``
        seconds or at :meth:`cancel`.

        Raises:
            DeadlineExceeded: the deadline passed first.
            CallCancelled: :meth:`cancel` was called first.
            Exception: whatever ``fn`` raised.
        """
        import openai

        call = _OwnedCall()
        waker = threading.Event()
        outcome: list[tuple[bool, Any]] = []

        def run() -> None:
            quiet_thread()  # a Ctrl+C goes to the main thread, not to this call
            try:
                # identity: the bound of the body is a bound of what is decoded, too
                http = openai.DefaultHttpxClient(
                    verify=self.ssl_context, timeout=deadline_s, follow_redirects=True,
                    headers={"Accept-Encoding": "identity"},
                    event_hooks={"request": [call.attach],
                                 "response": [_bound_response(self.max_response_bytes)]})
                try:
                    client = self.client.with_options(http_client=http, timeout=deadline_s)
                    outcome.append((True, fn(client)))
                finally:
                    http.close()  # closes the call's connection, if any is left
            except BaseException as exc:  # handed to the waiting thread
                outcome.append((False, exc))
            finally:
                waker.set()

        with self._lock:
            if self.cancelled.is_set():
                raise CallCancelled(started=False)
            self._calls[call] = waker
        try:
            threading.Thread(target=run, name=CALL_THREAD_NAME, daemon=True).start()
            waker.wait(deadline_s)
        finally:
            with self._lock:
                self._calls.pop(call, None)
        if outcome:
            ok, value = outcome[0]
            if ok:
                return value
            if not call.aborted:  # aborted: cancel() broke the connection; that is the story
                raise value
        call.abort()
        call.settle(SETTLE_S)
        if self.cancelled.is_set():
            raise CallCancelled()
        raise DeadlineExceeded()
