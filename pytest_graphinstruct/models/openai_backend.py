"""Any OpenAI-compatible chat endpoint through the official ``openai`` client.

Promises:

* :meth:`OpenAIBackend.complete` never raises for infrastructure problems: an answer that could
  not be obtained is ``Answer(error=...)``, with ``calls`` = every HTTP attempt made.
* Retried (exponential backoff with jitter, ``Retry-After`` honoured and capped): HTTP 408, 409,
  429 (except ``insufficient_quota``) and 5xx, timeouts, connection errors, and malformed or
  truncated response bodies — including ``content: null`` without a refusal (unless the model
  stopped at the token limit), which is the provider failing, never the model's empty answer.
  Not retried: 401/403 (authentication), 429 ``insufficient_quota`` and other 4xx (a bad request
  does not get better by repeating it).
* An error text is one line of at most :data:`~.base.MAX_ERROR_CHARS` characters.
* **Deadline**: ``timeout_s`` bounds each HTTP call as a whole (connect, send, wait, and read),
  not only the gap between two bytes: a server that trickles its answer is abandoned at the
  deadline.  The call runs in a daemon thread named ``gi-http-call``, so an abandoned call never
  blocks the caller, a :meth:`OpenAIBackend.cancel`, or interpreter exit.
* **Owned connections**: an abandoned call (deadline or :meth:`OpenAIBackend.cancel`) has its
  socket shut down at once, which wakes its thread out of ``recv``; the thread closes its
  client and ends.  No connection and no thread outlives its call, so a process never holds
  more connections than calls in flight (the scheduler's concurrency).  How, and why so: see
  *Connections* below.
* :meth:`OpenAIBackend.cancel` ends calls in flight at once (their answers are errors saying
  so, or the reason given to it) and stops every retry.
* :attr:`OpenAIBackend.attempt_listener` hears every HTTP attempt of :meth:`~OpenAIBackend.
  complete` (:class:`~.base.AttemptOutcome`: usable, a fault of the endpoint, or neither), from
  the attempt's calling thread — the scheduler's circuit breaker listens.
* The base URL is checked when the backend is built (``http``/``https``, a host, a valid port):
  a malformed one is a one-line :class:`~pytest_graphinstruct.errors.ModelError`.  **A base URL
  carrying credentials is refused**: userinfo (``user:pass@``, ``user@``) or a query parameter
  whose name looks like a credential (:data:`CREDENTIAL_WORDS`: ``api_key``, ``access_token``,
  ``sig``, ...), from ``base_url`` or ``$OPENAI_BASE_URL``; the one line shows the URL with the
  secret parts as ``***`` and says to use the variable named by ``api_key_env``.  The URL names
  the endpoint in every cache key and report, so a secret in it would be written everywhere
  (and httpx sends userinfo as ``Authorization: Basic``, replacing the Bearer key).  Other query
  parameters (``api-version=2024-02-01``) are sent with every request and are part of
  :attr:`OpenAIBackend.endpoint`.
  :meth:`OpenAIBackend.preflight` says in one line whether the endpoint answers at all.
* Every text that came from the endpoint (error details, connection errors, preflight and probe
  lines, served model names) is escaped (:func:`~.base.one_line`,
  :func:`pytest_graphinstruct.escaping.escape`): no raw control character reaches a terminal.
* **Which snapshot serves the name.**  :meth:`OpenAIBackend.complete_served` also returns what
  the response said served it (:class:`~.snapshot.Snapshot`: its ``model`` field, e.g.
  ``gpt-4o-2024-08-06`` for ``gpt-4o``, and ``system_fingerprint``), which the scheduler caches
  with the answer; :meth:`OpenAIBackend.probe_snapshot` asks for it with one 1-token chat
  completion (sent with the header ``X-GI-Probe: snapshot``).  ``model_version`` (the user's
  ``--gi-model-version``) is part of :attr:`OpenAIBackend.endpoint`, hence of every cache key.
* The API key is read once, from the environment variable named by ``api_key_env``; it never
  appears in ``repr``, in an error message, or anywhere this module writes.  Error texts are
  scrubbed of the key in case a server echoes it.
* ``usage`` is the provider's usage block of the successful response.  When the provider sent
  none (or only one of its two counts), the missing counts are taken with ``tiktoken``
  (:mod:`.tokens`; the model's encoding, offline) and ``Usage.source`` says so
  (``tiktoken:<encoding>`` or ``provider+tiktoken:<encoding>``) — never a guess.  A block with
  an impossible count (:func:`.tokens.check_token_count`: negative, not a whole number, above
  10^8) is not believed at all: both counts are taken with ``tiktoken`` and the source says why
  (``tiktoken:<encoding> (provider usage impossible)``); :attr:`OpenAIBackend.usage_rejections`
  counts such answers and :attr:`OpenAIBackend.first_usage_rejection` names the first.  With
  ``token_counter=None`` a missing or impossible block is ``None``.  Failed attempts add calls,
  not tokens.
* With a :class:`~.serial.SerialGate` (a serial endpoint such as the embedded llama.cpp server)
  each HTTP attempt first waits, untimed, until the endpoint is free; the timeout then covers
  that one call only.

The client's own retries are disabled (``max_retries=0``) so every HTTP attempt is counted and
paced here.  Timeouts apply to one HTTP call; time spent waiting in a scheduler queue is not
part of it.

Connections
-----------
Each HTTP call gets its own HTTP client (``openai.DefaultHttpxClient``: an ``httpx.Client`` for
openai 1.x, an ``httpx2.Client`` for openai 3.x — whichever package the installed ``openai`` is
built on; :func:`_http_package`), passed to the ``openai`` client through
``with_options(http_client=...)``), closed when the call ends, and all of them share the
backend's one SSL context (certificates are loaded once, not per call).  The call's client
installs httpcore's documented ``trace`` request extension (from an httpx ``request`` event
hook); httpcore reports every connection it opens (``connection.connect_tcp.complete``, and
``connection.start_tls.complete`` for https) with its network stream, whose public
``get_extra_info("socket")`` is the socket.  Abandoning the call shuts those sockets down
(``shutdown(SHUT_RDWR)``: on Linux this wakes a thread blocked in ``recv``; ``close()`` alone
does not, and closing a descriptor another thread uses could close a reused one) and the call's
thread then closes its client.  A connection opened after the call was abandoned (the abandon
came while it was connecting) is shut down as soon as httpcore reports it.

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
import hashlib
import json
import os
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.escaping import escape
from pytest_graphinstruct.models.base import AttemptOutcome, Request, one_line, quiet_thread
from pytest_graphinstruct.models.retry import (
    DEFAULT_RETRY_AFTER_CAP_S,
    RetryPolicy,
    parse_retry_after,
)
from pytest_graphinstruct.models.serial import SerialGate
from pytest_graphinstruct.models.snapshot import Snapshot, snapshot_of
from pytest_graphinstruct.models.tokens import TokenCounter, check_token_count, encoding_name_for
from pytest_graphinstruct.options import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT_S,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_REDACTED = "[REDACTED]"
_MAX_ERROR_DETAIL = 300
USAGE_IMPOSSIBLE = "provider usage impossible"
"""Said in ``Usage.source`` (``tiktoken:<enc> (provider usage impossible)``) when the provider's
usage block held an impossible count and the tokens were counted instead."""
PREFLIGHT_TIMEOUT_S = 10.0
PROBE_HEADER = "X-GI-Probe"
"""The header that marks :meth:`OpenAIBackend.probe_snapshot`'s request (value ``snapshot``)."""
PROBE_PROMPT = "Reply with OK."
CALL_THREAD_NAME = "gi-http-call"
"""The name of the thread each HTTP call runs in (it ends with its call, abandoned or not)."""
CREDENTIAL_WORDS = ("key", "token", "secret", "password", "passwd", "pass", "auth", "sig",
                    "credential")
"""A base URL's query parameter whose name contains one of these (any case) is a credential."""

_T = TypeVar("_T")


@dataclass(frozen=True)
class _Failure:
    """One failed attempt, classified; ``endpoint_fault`` as in :class:`~.base.AttemptOutcome`."""

    message: str
    retryable: bool
    retry_after: float | None = None
    endpoint_fault: bool = False


class _Malformed(Exception):
    """A 2xx response whose body is not a usable chat completion."""


class _DeadlineExceeded(Exception):
    """The HTTP call as a whole took longer than its deadline; it was abandoned."""


class _Cancelled(Exception):
    """:meth:`OpenAIBackend.cancel` was called while the HTTP call was in flight."""


def _shut(sock: socket.socket) -> None:
    """Shut ``sock`` down both ways (wakes a thread blocked reading it); never raises.

    The plain ``socket.socket`` method, also for an ``SSLSocket``: its own ``shutdown`` drops the
    TLS object under the reading thread's feet."""
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _OwnedCall:
    """The sockets one HTTP call opened, so that abandoning the call closes its connections.

    :meth:`attach` is an httpx ``request`` event hook: it installs :meth:`_trace` as the
    request's httpcore ``trace`` extension, which hears of every connection httpcore opens for
    it.  :meth:`abort` shuts every such socket down, and any opened later at once.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.aborted = False

    def attach(self, request: Any) -> None:
        request.extensions["trace"] = self._trace

    def _trace(self, event: str, info: Mapping[str, Any]) -> None:
        if not event.endswith((".connect_tcp.complete", ".start_tls.complete")):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._sockets.append(sock)
            aborted = self.aborted
        if aborted:  # abandoned while connecting: this connection must not live either
            _shut(sock)

    def abort(self) -> None:
        """Shut down every connection of the call, now and when one is opened later."""
        with self._lock:
            self.aborted = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


class OpenAIBackend:
    """A :class:`~pytest_graphinstruct.models.base.Backend` for OpenAI-compatible endpoints.

    Args:
        base_url: the API root (``http://host:port/v1``); ``None`` = the OpenAI default (or
            ``$OPENAI_BASE_URL`` as the client reads it).
        model: the model name sent when a request leaves ``Request.model`` empty.
        api_key_env: the *name* of the environment variable holding the key.
        timeout_s: the deadline of one HTTP call as a whole (also the timeout of each read).
        max_retries: retries after the first attempt.
        backoff_base_s / backoff_max_s: the exponential backoff (see :class:`RetryPolicy`).
        extra_body: extra JSON fields sent with every request (e.g. a provider's options).
        response_format: the OpenAI ``response_format`` sent with every request.
        sleep: the sleep used between retries (inject a recorder in tests).
        retry_policy: overrides the policy built from the backoff arguments.
        retry_after_cap_s: the most a ``Retry-After`` header can make us wait.
        api_key: a key given directly instead of through ``api_key_env`` (the embedded local
            server takes any key); never written anywhere either.
        endpoint_id: the name of the endpoint in cache keys instead of the base URL (the
            embedded server's port changes every run, its model does not).
        serial_gate: orders the calls of every process sharing the endpoint (see
            :mod:`.serial`); ``None`` = requests go out concurrently.
        token_counter: counts tokens the provider did not report; ``"auto"`` = ``tiktoken``
            with the model's encoding (:func:`.tokens.encoding_name_for`), ``None`` = off.
        model_version: the version the user expects (``--gi-model-version``); part of the
            endpoint's name in cache keys (``#version=<v>``), so answers cached under another
            version, or none, are not reused for it.

    Attributes:
        attempt_listener: called with an :class:`~.base.AttemptOutcome` after every HTTP
            attempt of :meth:`complete` (also a cancelled one), from the thread that called
            :meth:`complete`, never under this backend's lock; what it raises is ignored.
            Set by the scheduler (its circuit breaker); ``None`` = nobody listens.

    Raises:
        ModelError: the base URL is malformed (no ``http``/``https`` scheme, no host, a bad
            port) or carries credentials (userinfo, a query parameter named like a key), the
            API key variable is unset or empty (the message names the variable), or tiktoken's
            files cannot be made available offline.
    """

    cacheable = True
    remote = True  # answers come over the network: the scheduler's circuit breaker applies
    attempt_listener: Callable[[AttemptOutcome], None] | None = None

    def __init__(
        self,
        base_url: str | None,
        model: str,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        extra_body: dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        retry_policy: RetryPolicy | None = None,
        retry_after_cap_s: float = DEFAULT_RETRY_AFTER_CAP_S,
        api_key: str | None = None,
        endpoint_id: str | None = None,
        serial_gate: SerialGate | None = None,
        token_counter: TokenCounter | Literal["auto"] | None = "auto",
        model_version: str | None = None,
    ) -> None:
        import openai

        if base_url:
            _check_base_url(base_url, api_key_env)
        elif os.environ.get("OPENAI_BASE_URL"):
            _check_base_url(os.environ["OPENAI_BASE_URL"], api_key_env, "$OPENAI_BASE_URL")
        key = api_key if api_key is not None else os.environ.get(api_key_env, "")
        if not key.strip():
            raise ModelError(
                f"the API key environment variable {api_key_env} is not set (or empty); "
                f"export it, or name another variable with --gi-api-key-env")
        if timeout_s <= 0:
            raise ModelError(f"timeout must be > 0 seconds, got {timeout_s!r}")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = float(timeout_s)
        self.extra_body = dict(extra_body) if extra_body else None
        self.response_format = dict(response_format) if response_format else None
        self.policy = retry_policy or RetryPolicy(
            max_retries=max_retries, base_s=backoff_base_s, max_s=backoff_max_s,
            retry_after_cap_s=retry_after_cap_s)
        self._sleep = sleep
        self._cancelled = threading.Event()
        self._cancel_reason: str | None = None
        self._lock = threading.Lock()
        # One per call in flight, with the event its caller waits on; cancel() aborts and sets them.
        self._calls: dict[_OwnedCall, threading.Event] = {}
        self.usage_rejections = 0
        self.first_usage_rejection: str | None = None
        # One SSL context for every call's client: certificates are loaded once per backend.
        self._ssl_context = _http_package().create_ssl_context()
        root, query = _split_query(base_url) if base_url else (None, "")
        self._client = openai.OpenAI(
            api_key=key,
            base_url=root,
            timeout=self.timeout_s,
            max_retries=0,
            # The base URL's query (api-version=...) goes with every request: the client would
            # otherwise glue the request path after it.
            default_query=dict(urllib.parse.parse_qsl(query, keep_blank_values=True)) or None,
            # never sends: see _bounded
            http_client=openai.DefaultHttpxClient(verify=self._ssl_context),
        )
        self.base_url = ((str(self._client.base_url).rstrip("/") or DEFAULT_BASE_URL)
                         + (f"?{query}" if query else ""))
        # The client imports its chat resources on first use (~0.1 s): do it here, once, not
        # inside the first call's deadline.
        self._client.chat.completions  # noqa: B018
        self.model_version = model_version or None
        self.endpoint = ((endpoint_id or self.base_url) + self._config_tag()
                         + (f"#version={self.model_version}" if self.model_version else ""))
        self.serial_gate = serial_gate
        self.token_counter = (TokenCounter(encoding_name_for(model)) if token_counter == "auto"
                              else token_counter)

    @property
    def worst_case_s(self) -> float:
        """The longest one :meth:`complete` can take (every attempt hitting its deadline, every
        backoff at its cap), not counting a wait at a serial gate."""
        pause = max(self.policy.max_s, self.policy.retry_after_cap_s)
        return (self.policy.max_retries + 1) * self.timeout_s + self.policy.max_retries * pause

    def __repr__(self) -> str:
        return (f"OpenAIBackend(endpoint={self.endpoint!r}, model={self.model!r}, "
                f"api_key_env={self.api_key_env!r})")

    __str__ = __repr__

    def __reduce__(self) -> Any:
        # Pickling would carry the key into another process's memory or a file.
        raise TypeError("OpenAIBackend cannot be pickled (it holds an API key)")

    def _config_tag(self) -> str:
        """Backend-wide request options that change answers must change cache keys too."""
        if not self.extra_body and not self.response_format:
            return ""
        blob = json.dumps({"extra_body": self.extra_body, "response_format": self.response_format},
                          sort_keys=True, default=str)
        return "#cfg=" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]

    # -- the call ----------------------------------------------------------------------------

    def complete(self, request: Request) -> Answer:
        """Obtain one answer, retrying transient failures (see the module docstring)."""
        return self.complete_served(request)[0]

    def complete_served(self, request: Request) -> tuple[Answer, Snapshot]:
        """:meth:`complete`, and what the successful response said served it (an empty
        :class:`Snapshot` for an error)."""
        started = time.monotonic()
        calls = 0
        attempt = 0
        none = Snapshot()
        while True:
            if self._cancelled.is_set():
                return self._cancelled_answer(
                    f"cancelled: the run was interrupted before call {calls + 1}", calls,
                    started), none
            calls += 1
            try:
                answer, rejected, served = self._attempt(request, calls, started)
            except _Cancelled:
                cancelled = self._cancelled_answer(
                    f"cancelled: the run was interrupted during call {calls}", calls, started)
                self._tell(AttemptOutcome(ok=False, error=cancelled.error))
                return cancelled, none
            except Exception as exc:  # classified below; nothing escapes complete()
                failure = self._classify(exc)
                self._tell(AttemptOutcome(ok=False, endpoint_fault=failure.endpoint_fault,
                                          error=one_line(self._scrub(failure.message))))
            else:
                self._tell(AttemptOutcome(ok=True))
                return self._complete_usage(request, answer,
                                            impossible=rejected is not None), served
            if not failure.retryable or attempt >= self.policy.max_retries:
                note = "" if not failure.retryable else f"; gave up after {calls} call(s)"
                return self._error(failure.message, note, calls, started), none
            delay = self.policy.delay(attempt, failure.retry_after)
            if self._sleep is time.sleep:
                self._cancelled.wait(delay)  # cut short by cancel()
            else:
                self._sleep(delay)
            if self._cancelled.is_set():
                if self._cancel_reason is not None:
                    return self._cancelled_answer("", calls, started), none
                return self._error(failure.message, "; not retried: the run was cancelled after "
                                   f"{calls} call(s)", calls, started), none
            attempt += 1

    def _error(self, message: str, note: str, calls: int, started: float) -> Answer:
        return Answer(error=one_line(self._scrub(message), note), calls=calls,
                      latency_s=time.monotonic() - started)

    def _cancelled_answer(self, default: str, calls: int, started: float) -> Answer:
        """The answer of a call ended by :meth:`cancel`: its reason when one was given."""
        reason = self._cancel_reason
        return self._error(default if reason is None else reason, "", calls, started)

    def _tell(self, outcome: AttemptOutcome) -> None:
        """Hand one attempt's outcome to :attr:`attempt_listener` (what it raises is ignored:
        a listener must not break the call)."""
        listener = self.attempt_listener
        if listener is None:
            return
        with contextlib.suppress(Exception):
            listener(outcome)

    def cancel(self, reason: str | None = None) -> None:
        """Stop: every call in flight ends at once — its socket is shut down, which ends its
        thread too — and nothing is retried.  The answers of the calls so ended, and of every
        call after, are errors saying ``reason`` (one line; e.g. the circuit breaker's) when
        given, else saying the run was cancelled.  Irreversible; the first reason given stays.
        """
        with self._lock:
            if reason is not None and self._cancel_reason is None:
                self._cancel_reason = " ".join(reason.split()) or "cancelled"
            self._cancelled.set()
            calls = list(self._calls.items())
        for call, waker in calls:
            call.abort()
            waker.set()

    def _bounded(self, fn: Callable[[Any], _T], deadline_s: float) -> _T:
        """``fn(client)`` with an ``openai`` client of its own (see *Connections* in the module
        docstring), run in a daemon thread and abandoned — its connection shut down — after
        ``deadline_s`` seconds or at :meth:`cancel`.

        Raises:
            _DeadlineExceeded: the deadline passed first.
            _Cancelled: :meth:`cancel` was called first.
            Exception: whatever ``fn`` raised.
        """
        import openai

        call = _OwnedCall()
        waker = threading.Event()
        outcome: list[tuple[bool, Any]] = []

        def run() -> None:
            quiet_thread()  # a Ctrl+C goes to the main thread, not to this call
            try:
                http = openai.DefaultHttpxClient(verify=self._ssl_context, timeout=deadline_s,
                                                 follow_redirects=True,
                                                 event_hooks={"request": [call.attach]})
                try:
                    client = self._client.with_options(http_client=http, timeout=deadline_s)
                    outcome.append((True, fn(client)))
                finally:
                    http.close()  # closes the call's connection, if any is left
            except BaseException as exc:  # handed to the waiting thread
                outcome.append((False, exc))
            finally:
                waker.set()

        with self._lock:
            if self._cancelled.is_set():
                raise _Cancelled()
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
        if self._cancelled.is_set():
            raise _Cancelled()
        raise _DeadlineExceeded()

    def _attempt(self, request: Request, calls: int,
                 started: float) -> tuple[Answer, str | None, Snapshot]:
        """One HTTP call: the answer, why its usage block was rejected (``None``: it was
        not), and what the response said served it."""
        kwargs: dict[str, Any] = dict(request.params.to_json())
        extra: dict[str, Any] = dict(self.extra_body or {})
        extra.update(dict(request.extra))
        if extra:
            kwargs["extra_body"] = extra
        if self.response_format:
            kwargs["response_format"] = self.response_format

        def call(client: Any) -> Any:
            return self._create(client, request, kwargs)

        if self.serial_gate is None:
            completion = self._bounded(call, self.timeout_s)
        else:
            with self.serial_gate.hold():  # queued here, untimed; the deadline starts inside
                completion = self._bounded(call, self.timeout_s)
        text, finish = _choice(completion)
        usage, rejected = _usage(completion)
        if rejected is not None:
            self._note_rejection(rejected)
        return (Answer(text=text, usage=usage, calls=calls, finish_reason=finish,
                       latency_s=time.monotonic() - started), rejected, snapshot_of(completion))

    def _note_rejection(self, why: str) -> None:
        why = one_line(why, limit=200)  # it quotes the server's value
        with self._lock:
            self.usage_rejections += 1
            if self.first_usage_rejection is None:
                self.first_usage_rejection = why

    # -- preflight ---------------------------------------------------------------------------

    def preflight(self, timeout_s: float | None = None) -> str | None:
        """Whether the endpoint answers at all: ``None`` when ``GET {base_url}/models`` got any
        HTTP answer (401 and 404 included — reachable is all this checks), else one line
        saying why not (connection refused, DNS failure, no answer within ``timeout_s``,
        default ``min(timeout_s of the backend, 10)``).  Never raises, never retries."""
        import openai

        limit = min(self.timeout_s, PREFLIGHT_TIMEOUT_S) if timeout_s is None else timeout_s
        where = f"cannot reach {self.base_url}"
        try:
            self._bounded(lambda client: client.models.with_raw_response.list(), limit)
        except (_DeadlineExceeded, openai.APITimeoutError):
            return one_line(f"{where}: GET /models timed out (no answer within {limit:g} s)")
        except _Cancelled:
            return one_line(f"{where}: the preflight was cancelled")
        except openai.APIConnectionError as exc:
            return one_line(self._scrub(f"{where}: {_connection_detail(exc)}"))
        except Exception:  # any HTTP answer, even an unparseable one, means it is reachable
            return None
        return None

    def probe_snapshot(self, timeout_s: float | None = None) -> tuple[Snapshot, str | None]:
        """Which snapshot serves :attr:`model` now: one chat completion of at most 1 token
        (``max_tokens=1``; an endpoint that refuses ``max_tokens`` — OpenAI's reasoning models —
        is asked once more with ``max_completion_tokens=1``), marked with the header
        ``X-GI-Probe: snapshot``, with the backend's ``extra_body`` but no response format.

        Returns:
            The :class:`Snapshot` the response named, and ``None``; or an empty
            :class:`Snapshot` and one line saying why nothing is known (the call failed, or the
            response named no model).  Never raises, never retries a failure.
        """
        import openai

        limit = min(self.timeout_s, PREFLIGHT_TIMEOUT_S) if timeout_s is None else timeout_s
        body: dict[str, Any] = dict(self.extra_body or {})

        def ask(client: Any, limits: dict[str, Any]) -> Any:
            return client.chat.completions.create(
                model=self.model, messages=[{"role": "user", "content": PROBE_PROMPT}],
                extra_headers={PROBE_HEADER: "snapshot"}, extra_body={**body, **limits} or None,
                timeout=limit)

        try:
            try:
                completion = self._bounded(lambda c: ask(c, {"max_tokens": 1}), limit)
            except openai.BadRequestError as exc:
                if "max_tokens" not in _error_detail(exc):
                    raise
                completion = self._bounded(lambda c: ask(c, {"max_completion_tokens": 1}),
                                           limit)
        except _Cancelled:
            return Snapshot(), "the probe was cancelled"
        except Exception as exc:  # any failure: the snapshot is simply not known
            failure = self._classify(exc)
            return Snapshot(), one_line(self._scrub(f"the 1-token probe failed: "
                                                    f"{failure.message}"), limit=200)
        served = snapshot_of(completion)
        if not served.known:
            return served, "the response named no model"
        return served, None

    def _create(self, client: Any, request: Request, kwargs: dict[str, Any]) -> Any:
        return client.chat.completions.create(
            model=request.model or self.model,
            messages=[m.to_json() for m in request.messages],
            timeout=self.timeout_s,
            **kwargs,
        )

    def _complete_usage(self, request: Request, answer: Answer, *, impossible: bool) -> Answer:
        """Count with tiktoken what the provider did not report, or reported impossibly (see
        the module docstring)."""
        usage = answer.usage
        counter = self.token_counter
        if counter is None:
            return answer
        if impossible:  # nothing of that block is believed
            usage, source = None, f"{counter.source} ({USAGE_IMPOSSIBLE})"
        elif usage is not None and usage.total is not None:
            return answer
        else:
            source = counter.source if usage is None else f"provider+{counter.source}"
        inp = usage.input_tokens if usage is not None else None
        out = usage.output_tokens if usage is not None else None
        if inp is None:
            inp = counter.count_messages((m.role, m.content) for m in request.messages)
        if out is None:
            out = counter.count_text(answer.text or "")
        return replace(answer, usage=Usage(inp, out, source))

    def _classify(self, exc: BaseException) -> _Failure:
        """What a failed attempt means: its text, whether to retry, and whether it is the
        endpoint's fault (a timeout, a broken connection or body, a 5xx: see
        :meth:`_classify_status` for the other statuses)."""
        import openai

        if isinstance(exc, _Malformed):
            return _Failure(f"malformed response body: {exc}", retryable=True, endpoint_fault=True)
        if isinstance(exc, _DeadlineExceeded):
            return _Failure(f"request timed out: the whole call exceeded its deadline of "
                            f"{self.timeout_s:g} s", retryable=True, endpoint_fault=True)
        if isinstance(exc, openai.APIStatusError):
            return self._classify_status(exc)
        if isinstance(exc, openai.APITimeoutError):
            return _Failure(f"request timed out after {self.timeout_s:g} s", retryable=True,
                            endpoint_fault=True)
        if isinstance(exc, openai.APIConnectionError):
            return _Failure(_connection_detail(exc), retryable=True, endpoint_fault=True)
        if isinstance(exc, openai.APIResponseValidationError):
            return _Failure(f"malformed response body: {exc.message}", retryable=True,
                            endpoint_fault=True)
        if isinstance(exc, (ValueError, TypeError, KeyError, AttributeError)):
            # json.JSONDecodeError and pydantic's ValidationError are ValueErrors.
            return _Failure(f"malformed response body: {type(exc).__name__}: {exc}",
                            retryable=True, endpoint_fault=True)
        if isinstance(exc, openai.OpenAIError):
            return _Failure(f"{type(exc).__name__}: {exc}", retryable=False)
        return _Failure(f"unexpected error {type(exc).__name__}: {exc}", retryable=False)

    def _classify_status(self, exc: Any) -> _Failure:
        """An HTTP error status.  The endpoint's fault: 5xx, 401/403 (it refuses this key),
        404 (no such route or model there), an exhausted quota.  Not its fault: a 429 rate
        limit (we are being paced) and every other 4xx (this request is wrong)."""
        status = int(exc.status_code)
        detail = _error_detail(exc)
        if status in (401, 403):
            return _Failure(f"authentication failed (HTTP {status}; check {self.api_key_env}): "
                            f"{detail}", retryable=False, endpoint_fault=True)
        if status == 429 and _is_quota(exc):
            return _Failure(f"quota exhausted (HTTP 429 insufficient_quota): {detail}",
                            retryable=False, endpoint_fault=True)
        if status in (408, 409, 429) or status >= 500:
            return _Failure(f"HTTP {status}: {detail}", retryable=True,
                            retry_after=_retry_after(exc), endpoint_fault=status >= 500)
        return _Failure(f"HTTP {status} (not retried): {detail}", retryable=False,
                        endpoint_fault=status == 404)

    def _scrub(self, text: str) -> str:
        secret = self._client.api_key
        return text.replace(secret, _REDACTED) if secret else text


def _http_package() -> Any:
    """The HTTP package the installed ``openai`` is built on (``httpx`` for openai 1.x,
    ``httpx2`` for 3.x): the package of ``openai.DefaultHttpxClient``'s ``Client`` base."""
    import importlib

    import openai

    base = next(c for c in openai.DefaultHttpxClient.__mro__ if c.__name__ == "Client")
    return importlib.import_module(base.__module__.split(".")[0])


def _choice(completion: Any) -> tuple[str, str | None]:
    """The first choice's text and finish reason; raises :class:`_Malformed` when absent."""
    if isinstance(completion, (str, bytes)) or completion is None:
        raise _Malformed(f"expected a chat completion object, got {type(completion).__name__}")
    choices = getattr(completion, "choices", None)
    if not choices:
        raise _Malformed("no 'choices' in the response")
    first = choices[0]
    message = getattr(first, "message", None)
    if message is None:
        raise _Malformed("the first choice has no 'message'")
    content = getattr(message, "content", None)
    finish = getattr(first, "finish_reason", None)
    finish = finish if isinstance(finish, str) else None
    if content is None:
        refusal = getattr(message, "refusal", None)
        if isinstance(refusal, str):
            content = refusal
        elif finish == "length":  # the model spent its token limit before any visible text
            content = ""
        else:  # nothing the model said: the provider failed, this is not an empty answer
            raise _Malformed(f"message content is null (finish_reason {finish!r})")
    if not isinstance(content, str):
        raise _Malformed(f"message content is {type(content).__name__}, not a string")
    return content, finish


def _usage(completion: Any) -> tuple[Usage | None, str | None]:
    """The provider's usage block as :class:`Usage` (``None`` when it sent none), and why it
    is not believed (``None``: it is), e.g. ``prompt_tokens=-5 (negative)``."""
    usage = getattr(completion, "usage", None)
    if usage is None:
        return None, None
    counts: dict[str, int | None] = {}
    for name in ("prompt_tokens", "completion_tokens"):
        count, why = check_token_count(getattr(usage, name, None))
        if why is not None:
            return None, f"{name}={why}"
        counts[name] = count
    if counts["prompt_tokens"] is None and counts["completion_tokens"] is None:
        return None, None
    return Usage(counts["prompt_tokens"], counts["completion_tokens"]), None


def _connection_detail(exc: Any) -> str:
    """``connection error (ConnectError: [Errno 111] Connection refused)``."""
    cause = exc.__cause__ or exc.__context__
    return f"connection error ({type(cause).__name__}: {cause})" if cause is not None else (
        "connection error")


def _check_base_url(url: str, api_key_env: str = DEFAULT_API_KEY_ENV,
                    source: str = "base URL") -> None:
    """Raise a one-line :class:`ModelError` unless ``url`` is ``http(s)://host[:port]/...``
    without credentials (no userinfo, no query parameter named like a key: see
    :func:`_is_credential_name`).  The message never shows a secret: userinfo and credential
    values are ``***`` (:func:`redact_url`).  ``source`` names where the URL came from."""
    shown = escape(" ".join(redact_url(url).split()))
    where = "base URL" if source == "base URL" else f"base URL from {source}"
    hint = "expected http://host[:port]/v1 or https://..."
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
    except ValueError as exc:
        why = str(exc) if "@" not in url else "unparseable host part"  # never quote userinfo
        raise ModelError(f"invalid {where} {shown!r}: {why} ({hint})") from None
    if parts.scheme not in ("http", "https"):
        what = (f"unsupported scheme {parts.scheme!r}" if "://" in url
                else "no http:// or https:// scheme")
        raise ModelError(f"invalid {where} {shown!r}: {what} ({hint})")
    if not parts.hostname:
        raise ModelError(f"invalid {where} {shown!r}: no host ({hint})")
    found = [*(["user:password@" if parts.password is not None else "user@"]
               if "@" in parts.netloc else []),
             *(f"query parameter {name!r}" for name, _ in
               urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
               if _is_credential_name(name))]
    if found:
        raise ModelError(
            f"the {where} {shown!r} carries credentials ({', '.join(found)}): they would be "
            f"written into the answer cache and reports; remove them and put the API key in the "
            f"environment variable named by --gi-api-key-env (now {api_key_env})")


def _is_credential_name(name: str) -> bool:
    """Whether a query parameter's name looks like a credential (:data:`CREDENTIAL_WORDS`)."""
    lowered = name.lower()
    return any(word in lowered for word in CREDENTIAL_WORDS)


def redact_url(url: str) -> str:
    """``url`` with its userinfo and the values of credential-named query parameters written
    ``***`` — safe to show.  Plain string work, so a malformed URL is redacted too; everything
    between ``//`` and the last ``@`` before the query counts as userinfo (a password holding
    a raw ``/`` included: better one path character too many hidden than a secret shown)."""
    start = url.find("//")
    if start >= 0:
        stop = min((i for i in (url.find("?", start), url.find("#", start)) if i >= 0),
                   default=len(url))
        at = url.rfind("@", start + 2, stop)
        if at >= 0:
            url = url[: start + 2] + "***" + url[at:]
    head, sep, tail = url.partition("?")
    if not sep:
        return url
    query, hash_sep, fragment = tail.partition("#")
    pieces = []
    for piece in query.split("&"):
        name, eq, _ = piece.partition("=")
        if not _is_credential_name(urllib.parse.unquote_plus(name)):
            pieces.append(piece)
        else:
            pieces.append(f"{name}=***" if eq else "***")
    return head + sep + "&".join(pieces) + hash_sep + fragment


def _split_query(url: str) -> tuple[str, str]:
    """``url`` without its query (and fragment), and the query."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(query="", fragment="")), parts.query


def _error_body(exc: Any) -> Mapping[str, Any]:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error")
        return inner if isinstance(inner, Mapping) else body
    return {}


def _error_detail(exc: Any) -> str:
    body = _error_body(exc)
    msg = body.get("message")
    if not isinstance(msg, str) or not msg:
        raw = getattr(exc, "body", None)
        msg = raw if isinstance(raw, str) and raw else getattr(exc, "message", "") or ""
    msg = " ".join(str(msg).split())
    if len(msg) > _MAX_ERROR_DETAIL:
        msg = msg[:_MAX_ERROR_DETAIL] + "…"
    code = body.get("code") or body.get("type")
    return f"[{code}] {msg}" if isinstance(code, str) and code else msg


def _is_quota(exc: Any) -> bool:
    body = _error_body(exc)
    return "insufficient_quota" in (getattr(exc, "code", None), body.get("code"), body.get("type"))


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        seconds = parse_retry_after(ms)
        if seconds is not None:
            return seconds / 1000.0
    return parse_retry_after(headers.get("retry-after"))
