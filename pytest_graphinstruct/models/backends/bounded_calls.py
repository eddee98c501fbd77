"""The backend's ``openai`` clients and the HTTP calls made with them, each bounded by a
deadline, on one event loop per process.

* **One loop, no thread per call**: every HTTP call of the process is a coroutine on one
  event loop that runs in a daemon thread named ``gi-http-loop`` (:data:`LOOP_THREAD_NAME`).
  A caller (a scheduler's worker thread) hands its call over and waits for its result, so a
  process holds its schedulers' threads plus this one, however many calls are in flight.
* **Deadline**: :meth:`BoundedCalls.run` bounds an HTTP call as a whole (connect, send, wait,
  and read), not only the gap between two bytes: the call runs inside an ``asyncio.timeout``
  cancel scope, so a server that trickles its answer is abandoned at the deadline, its
  connection closed before the caller returns (:class:`DeadlineExceeded`).
* **Connections**: a backend's calls share one HTTP client (``openai.DefaultAsyncHttpxClient``:
  an ``httpx.AsyncClient`` for openai 1.x, an ``httpx2.AsyncClient`` for 3.x, whichever package
  the installed ``openai`` is built on: :func:`http_package`), made on the loop at the first
  call: a connection is kept alive for the next call (no new handshake per call).  A call ended
  by its deadline or by :meth:`BoundedCalls.cancel` closes its connection (an abandoned
  response is never read by a later call).  Connections open at once: at most the calls in
  flight plus :data:`KEEP_ALIVE` idle ones.
* :meth:`BoundedCalls.cancel` ends calls in flight at once (their tasks are cancelled, which
  closes their connections) and refuses every later one (:class:`CallCancelled`); the first
  reason given stays.
* **Bounded bodies**: a response body is read up to :data:`MAX_RESPONSE_BYTES` (or the
  backend's own bound), no further, and decodes to no more than that: one declared longer is
  refused before its body is read, one that turns out longer stops there
  (:class:`ResponseTooLarge`).  Bodies are asked for uncompressed; one compressed anyway is
  decoded within the bound, or refused unread when its encoding is not gzip or deflate
  (:class:`UndecodableBody`; :mod:`.response_bounds`).
"""


from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pytest_graphinstruct.answers import FailureKind
from pytest_graphinstruct.models.backends.key_secrecy import KeySecrecy
from pytest_graphinstruct.models.backends.response_bounds import (
    MAX_RESPONSE_BYTES,
    ResponseTooLarge,
    UndecodableBody,
    bound_response,
)
from pytest_graphinstruct.models.base import quiet_thread

__all__ = ["MAX_RESPONSE_BYTES", "BoundedCalls", "CallCancelled", "DeadlineExceeded",
           "ResponseTooLarge", "UndecodableBody", "call_loop", "http_package"]

LOOP_THREAD_NAME = "gi-http-loop"
"""The name of the thread that runs every HTTP call of the process (one per process); the
loop's host-name lookups run in at most :data:`RESOLVER_THREADS` more, named after it."""
RESOLVER_THREADS = 4
KEEP_ALIVE = 64
"""The most idle connections a backend's client keeps open for later calls."""

_T = TypeVar("_T")


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


_loop: asyncio.AbstractEventLoop | None = None
_loop_pid = 0
_loop_lock = threading.Lock()


def call_loop() -> asyncio.AbstractEventLoop:
    """The process's event loop for HTTP calls, started on first use in a daemon thread
    (:data:`LOOP_THREAD_NAME`) that blocks SIGINT and SIGTERM (they are the main thread's);
    its blocking host-name lookups get :data:`RESOLVER_THREADS` threads at most."""
    global _loop, _loop_pid
    with _loop_lock:
        if _loop is None or _loop_pid != os.getpid():  # a forked child has no loop thread
            loop = asyncio.new_event_loop()
            loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(
                RESOLVER_THREADS, thread_name_prefix=f"{LOOP_THREAD_NAME}-resolve",
                initializer=quiet_thread))

            def run() -> None:
                quiet_thread()
                asyncio.set_event_loop(loop)
                loop.run_forever()

            threading.Thread(target=run, name=LOOP_THREAD_NAME, daemon=True).start()
            _loop, _loop_pid = loop, os.getpid()
        return _loop


class BoundedCalls:
    """The backend's ``openai`` client (which never sends itself) and its calls in flight.

    Args:
        api_key: the key the client sends (never written anywhere).
        base_url: the API root without its query (``None``: the client's default).
        timeout_s: the client's default timeout.
        default_query: query parameters sent with every request (``None``: none).
        max_response_bytes: the most bytes of one response body read, or decoded (a call's
            body is asked for uncompressed, ``Accept-Encoding: identity``, and a longer one
            raises :class:`ResponseTooLarge` without being read further).
        key_variable: the name of the variable the key came from (said in errors, never the
            key).
    """

    def __init__(self, *, api_key: str, base_url: str | None, timeout_s: float,
                 default_query: dict[str, str] | None,
                 max_response_bytes: int = MAX_RESPONSE_BYTES,
                 key_variable: str = "the API key variable") -> None:
        import openai

        self.max_response_bytes = max_response_bytes
        #: what of the key is secret: error texts scrubbed, answers holding it withheld
        self.secrecy = KeySecrecy(api_key, key_variable)
        self._lock = threading.Lock()
        self._calls: set[concurrent.futures.Future[Any]] = set()  # the calls in flight
        self.cancelled = threading.Event()  #: set by :meth:`cancel`
        self.cancel_reason: str | None = None  #: the first reason given to :meth:`cancel`
        self.cancel_kind: FailureKind = "cancelled"  #: what that reason is
        # One SSL context for every call's client: certificates are loaded once per backend.
        self.ssl_context = http_package().create_ssl_context()
        options: dict[str, Any] = {
            "api_key": api_key, "base_url": base_url, "timeout": timeout_s, "max_retries": 0,
            # The base URL's query (api-version=...) goes with every request: the client would
            # otherwise glue the request path after it.
            "default_query": default_query}
        #: the synchronous client (the batch mode's files and batches calls)
        self.client = openai.OpenAI(
            **options, http_client=openai.DefaultHttpxClient(verify=self.ssl_context))
        self._options = options
        self._async: Any = None  # the calls' client, made on the call loop (see _client)
        self._by_deadline: dict[float, Any] = {}
        # The clients import their chat resources on first use (~0.1 s): do it here, once,
        # not inside the first call's deadline.
        self.client.chat.completions  # noqa: B018

    def scrub(self, text: str) -> str:
        """``text`` with the API key replaced, when it is long enough to be a secret (in case a
        server echoes it: :mod:`.key_secrecy`)."""
        return self.secrecy.scrub(text)

    def cancel(self, reason: str | None = None, kind: FailureKind = "cancelled") -> None:
        """Stop: every call in flight ends at once (its task is cancelled, which closes its
        connection) and every later :meth:`run` raises :class:`CallCancelled`.  ``reason`` (one
        line) and its ``kind`` are kept in :attr:`cancel_reason` and :attr:`cancel_kind` when
        none was given before."""
        with self._lock:
            if reason is not None and self.cancel_reason is None:
                self.cancel_reason = " ".join(reason.split()) or "cancelled"
                self.cancel_kind = kind
            self.cancelled.set()
            calls = list(self._calls)
        for call in calls:
            call.cancel()

    def run(self, fn: Callable[[Any], Awaitable[_T]], deadline_s: float) -> _T:
        """``await fn(client)`` with an ``openai.AsyncOpenAI`` client of its own (see the module
        docstring), on the process's call loop, within ``deadline_s`` seconds; blocks the
        calling thread until it ends.

        Raises:
            DeadlineExceeded: the deadline passed first (the call's connection is closed).
            CallCancelled: :meth:`cancel` was called first.
            Exception: whatever ``fn`` raised.
        """
        with self._lock:
            if self.cancelled.is_set():
                raise CallCancelled(started=False)
            call = asyncio.run_coroutine_threadsafe(self._call(fn, deadline_s), call_loop())
            self._calls.add(call)
        try:
            return call.result()
        except concurrent.futures.CancelledError:
            raise CallCancelled() from None
        finally:
            with self._lock:
                self._calls.discard(call)

    def _client(self, deadline_s: float) -> Any:
        """The calls' ``openai.AsyncOpenAI`` client with ``deadline_s`` as its timeout, made
        on first use (on the call loop: its connections belong to it)."""
        client = self._by_deadline.get(deadline_s)
        if client is None:
            if self._async is None:
                import openai

                # identity: the bound of the body is a bound of what is decoded, too
                http = openai.DefaultAsyncHttpxClient(
                    verify=self.ssl_context, follow_redirects=True,
                    headers={"Accept-Encoding": "identity"},
                    limits=http_package().Limits(max_connections=None,
                                                 max_keepalive_connections=KEEP_ALIVE),
                    event_hooks={"response": [bound_response(http_package(),
                                                             self.max_response_bytes)]})
                self._async = openai.AsyncOpenAI(**self._options, http_client=http)
                self._async.chat.completions  # noqa: B018  (imported once, here)
            client = self._by_deadline[deadline_s] = self._async.with_options(
                timeout=deadline_s)
        return client

    async def _call(self, fn: Callable[[Any], Awaitable[_T]], deadline_s: float) -> _T:
        scope = asyncio.timeout(deadline_s)
        try:
            async with scope:
                return await fn(self._client(deadline_s))
        except TimeoutError:
            if scope.expired():
                raise DeadlineExceeded() from None
            raise
