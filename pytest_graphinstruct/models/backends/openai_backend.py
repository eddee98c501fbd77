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
  deadline.  The call is a coroutine on the process's one call loop (:mod:`.bounded_calls`),
  inside an ``asyncio.timeout`` cancel scope; the calling thread waits for it.
* **Owned connections**: each call has an HTTP client of its own, closed when the call ends
  (answered, past its deadline or cancelled), so a process never holds more connections than
  calls in flight (the scheduler's concurrency).
* :meth:`OpenAIBackend.cancel` ends calls in flight at once (their answers are errors saying
  so, or the reason given to it) and stops every retry.
* :attr:`OpenAIBackend.attempt_listener` hears every HTTP attempt of :meth:`~OpenAIBackend.
  complete` (:class:`~.base.AttemptOutcome`: usable, a fault of the endpoint, or neither), from
  the attempt's calling thread — the scheduler's circuit breaker listens.
* :meth:`OpenAIBackend.complete_served` takes a per-call :class:`~.base.AttemptGuard` (the
  cost cap's charge of the request): it hears every failed attempt (``unread`` when its answer
  may exist unread: a timeout, a cancel in flight, a broken connection or body) and is asked
  before every retry; a retry it refuses is not sent.
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
  appears in ``repr``, in an error message, or anywhere this module writes.  A key long enough
  to be a secret (:mod:`.key_secrecy`: 8+ characters; shorter ones are local servers'
  placeholders) is replaced by ``[REDACTED]`` where it stands as a whole token in an error
  text, in case a server echoes it; an answer holding it is withheld (an error saying so),
  never rewritten: an answer that is scored is the text as received.
  An ``api_key_env`` that is no variable name but looks like a key is refused
  (:func:`~pytest_graphinstruct.options.api_key_env_problem`), never shown whole.
* ``usage`` is the provider's usage block of the successful response.  When the provider sent
  none (or only one of its two counts), the missing counts are taken with ``tiktoken``
  (:mod:`.tokens`; the model's encoding, offline) and ``Usage.source`` says so
  (``tiktoken:<encoding>`` or ``provider+tiktoken:<encoding>``) — never a guess
  (:mod:`.usage_accounting`).  A block with
  an impossible count (:func:`.tokens.check_token_count`: negative, not a whole number, above
  10^8) is not believed at all: both counts are taken with ``tiktoken`` and the source says why
  (``tiktoken:<encoding> (provider usage impossible)``); :attr:`OpenAIBackend.usage_rejections`
  counts such answers and :attr:`OpenAIBackend.first_usage_rejection` names the first.  With
  ``token_counter=None`` a missing or impossible block is ``None``.  Failed attempts add calls,
  not tokens.

The client's own retries are disabled (``max_retries=0``) so every HTTP attempt is counted and
paced here.  Timeouts apply to one HTTP call; time spent waiting in a scheduler queue is not
part of it.

The backend's parts: :class:`~.bounded_calls.BoundedCalls` (the client, deadlines, owned
connections, cancel), :class:`~.chat_completions.ChatCompletions` (what is sent and read back),
:class:`~.call_failures.FailureClassifier` (what a failed attempt means),
:class:`~.usage_accounting.UsageAccounting` (usage and its rejections),
:class:`~.endpoint_probes.EndpointProbes` (preflight and snapshot probe), and
:mod:`.base_url` (the URL's checks).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import urllib.parse
from collections.abc import Callable
from typing import Any, Literal

from pytest_graphinstruct.answers import Answer, FailureKind
from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.backends.base_url import check_base_url, split_query
from pytest_graphinstruct.models.backends.bounded_calls import (
    MAX_RESPONSE_BYTES,
    BoundedCalls,
    CallCancelled,
)
from pytest_graphinstruct.models.backends.call_failures import FailureClassifier
from pytest_graphinstruct.models.backends.chat_completions import ChatCompletions, choice
from pytest_graphinstruct.models.backends.endpoint_probes import EndpointProbes
from pytest_graphinstruct.models.backends.retry import DEFAULT_RETRY_AFTER_CAP_S, RetryPolicy
from pytest_graphinstruct.models.backends.tokens import TokenCounter, encoding_name_for
from pytest_graphinstruct.models.backends.usage_accounting import UsageAccounting
from pytest_graphinstruct.models.base import AttemptGuard, AttemptOutcome, Request, one_line
from pytest_graphinstruct.models.caching.snapshot import Snapshot, snapshot_of
from pytest_graphinstruct.options import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT_S,
    api_key_env_problem,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
CONFIRMED_AFTER = 0.5
"""A retried request's fault is *confirmed* (:attr:`~.base.AttemptOutcome.confirmed`) once the
request has been failing for this share of the backoff base or longer: a retry that fires a few
milliseconds after its first failure (full jitter makes that common) may still land in the
same burst of concurrent failures, and says nothing about whether the fault persists."""


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
        token_counter: counts tokens the provider did not report; ``"auto"`` = ``tiktoken``
            with the model's encoding (:func:`.tokens.encoding_name_for`), ``None`` = off.
        model_version: the version the user expects (``--gi-model-version``); part of the
            endpoint's name in cache keys (``#version=<v>``), so answers cached under another
            version, or none, are not reused for it.
        max_response_bytes: the most bytes of one response body read (8 MiB): a longer one
            is that request's error, not retried, read no further (:mod:`.bounded_calls`).

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
    takes_guard = True  # complete_served(request, guard=...): the cost cap sees every attempt
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
        token_counter: TokenCounter | Literal["auto"] | None = "auto",
        model_version: str | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        key = _checked_key(base_url, api_key_env, api_key)
        if timeout_s <= 0:
            raise ModelError(f"timeout must be > 0 seconds, got {timeout_s!r}")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = float(timeout_s)
        self.chat = ChatCompletions(model, self.timeout_s, extra_body, response_format)
        self.policy = retry_policy or RetryPolicy(
            max_retries=max_retries, base_s=backoff_base_s, max_s=backoff_max_s,
            retry_after_cap_s=retry_after_cap_s)
        self._sleep = sleep
        self._failures = FailureClassifier(self.timeout_s, api_key_env)
        root, query = split_query(base_url) if base_url else (None, "")
        self._calls = BoundedCalls(
            api_key=key, base_url=root, timeout_s=self.timeout_s,
            default_query=dict(urllib.parse.parse_qsl(query, keep_blank_values=True)) or None,
            max_response_bytes=max_response_bytes, key_variable=api_key_env)
        self.base_url = ((str(self._calls.client.base_url).rstrip("/") or DEFAULT_BASE_URL)
                         + (f"?{query}" if query else ""))
        self.model_version = model_version or None
        self.endpoint = ((endpoint_id or self.base_url) + self.chat.config_tag()
                         + (f"#version={self.model_version}" if self.model_version else ""))
        self._usage = UsageAccounting(TokenCounter(encoding_name_for(model))
                                      if token_counter == "auto" else token_counter)
        self._probes = EndpointProbes(self._calls, self.chat, self._failures, self.base_url,
                                      self.timeout_s)
        #: ``answer`` as it came, or an error when its text holds the API key (an endpoint
        #: echoing its request): never rewritten, so a scored answer is the one received
        #: (:meth:`.key_secrecy.KeySecrecy.withhold`)
        self.withhold_key: Callable[[Answer], Answer] = self._calls.secrecy.withhold

    @property
    def usage_rejections(self) -> int:
        """Answers whose provider usage block held an impossible count (recounted)."""
        return self._usage.rejections

    @property
    def first_usage_rejection(self) -> str | None:
        """Why the first such block was not believed, one line (``None``: none was)."""
        return self._usage.first_rejection

    @property
    def client(self) -> object:
        """The backend's ``openai`` client (its key and base URL; no retries of its own): the
        batch mode's files and batches calls (:mod:`.api`).  Never written anywhere."""
        return self._calls.client

    def __repr__(self) -> str:
        return (f"OpenAIBackend(endpoint={self.endpoint!r}, model={self.model!r}, "
                f"api_key_env={self.api_key_env!r})")

    __str__ = __repr__

    def __reduce__(self) -> Any:
        # Pickling would carry the key into another process's memory or a file.
        raise TypeError("OpenAIBackend cannot be pickled (it holds an API key)")

    # -- the call ----------------------------------------------------------------------------

    def complete(self, request: Request) -> Answer:
        """Obtain one answer, retrying transient failures (see the module docstring)."""
        return self.complete_served(request)[0]

    def complete_served(self, request: Request, *,
                        guard: AttemptGuard | None = None) -> tuple[Answer, Snapshot]:
        """:meth:`complete`, and what the successful response said served it (an empty
        :class:`Snapshot` for an error).  ``guard`` (the cost cap's charge) hears every failed
        attempt; a retry it refuses is not sent (the answer is an error with its reason)."""
        started = time.monotonic()
        calls = 0
        attempt = 0
        failing_since: float | None = None  # when the request's first attempt failed
        none = Snapshot()
        cancelled = self._calls.cancelled
        while True:
            if cancelled.is_set():
                return self._cancelled_answer(
                    f"cancelled: the run was interrupted before call {calls + 1}", calls,
                    started), none
            calls += 1
            try:
                answer, rejected, served = self._attempt(request, calls, started)
            except CallCancelled as stop:
                ended = self._cancelled_answer(
                    f"cancelled: the run was interrupted during call {calls}", calls, started)
                self._tell(AttemptOutcome(False, error=ended.error, unread=stop.started), guard)
                return ended, none
            except Exception as exc:  # classified below; nothing escapes complete()
                failure = self._failures.classify(exc)
                final = not failure.retryable or attempt >= self.policy.max_retries
                now = time.monotonic()
                failing_since = now if failing_since is None else failing_since
                # Confirmed: one that lasted the deadline, one not retried, or the fault of a
                # request failing for a while (CONFIRMED_AFTER).  A quick fault of a request
                # that just began failing may be one of a burst of concurrent calls: the
                # breaker waits for its later retries.
                persisted = now - failing_since >= CONFIRMED_AFTER * self.policy.base_s
                self._tell(AttemptOutcome(ok=False, endpoint_fault=failure.endpoint_fault,
                                          error=one_line(self._calls.scrub(failure.message)),
                                          unread=failure.unread,
                                          confirmed=failure.timed_out or final or persisted),
                           guard)
            else:
                self._tell(AttemptOutcome(ok=True))
                return self.withhold_key(self._usage.complete(
                    request, answer, impossible=rejected is not None)), served
            if final:
                note = "" if not failure.retryable else f"; gave up after {calls} call(s)"
                return self._error(failure.message, note, calls, started), none
            _pause(self._sleep, cancelled, self.policy.delay(attempt, failure.retry_after))
            if cancelled.is_set():
                if self._calls.cancel_reason is not None:
                    return self._cancelled_answer("", calls, started), none
                return self._error(failure.message, "; not retried: the run was cancelled after "
                                   f"{calls} call(s)", calls, started), none
            refused = None if guard is None else guard.before_retry(calls)
            if refused is not None:
                return self._error(refused, "", calls, started, kind="cost_cap"), none
            attempt += 1

    def _error(self, message: str, note: str, calls: int, started: float,
               kind: FailureKind = "error") -> Answer:
        return Answer(error=one_line(self._calls.scrub(message), note), calls=calls,
                      latency_s=time.monotonic() - started, failure_kind=kind)

    def _cancelled_answer(self, default: str, calls: int, started: float) -> Answer:
        """The answer of a call ended by :meth:`cancel`: its reason when one was given."""
        reason = self._calls.cancel_reason
        return self._error(default if reason is None else reason, "", calls, started,
                           kind="cancelled" if reason is None else self._calls.cancel_kind)

    def _tell(self, outcome: AttemptOutcome, guard: AttemptGuard | None = None) -> None:
        """Hand one attempt's outcome to ``guard`` (a failed one) and to
        :attr:`attempt_listener` (what it raises is ignored: a listener must not break the
        call)."""
        if guard is not None:
            guard.after_attempt(outcome)
        listener = self.attempt_listener
        if listener is None:
            return
        with contextlib.suppress(Exception):
            listener(outcome)

    def cancel(self, reason: str | None = None, kind: FailureKind = "cancelled") -> None:
        """Stop: every call in flight ends at once — its socket is shut down, which ends its
        thread too — and nothing is retried.  The answers of the calls so ended, and of every
        call after, are errors saying ``reason`` (one line; e.g. the circuit breaker's) when
        given, else saying the run was cancelled.  Irreversible; the first reason given stays.
        """
        self._calls.cancel(reason, kind)

    def _attempt(self, request: Request, calls: int,
                 started: float) -> tuple[Answer, str | None, Snapshot]:
        """One HTTP call: the answer, why its usage block was rejected (``None``: it was
        not), and what the response said served it."""
        kwargs = self.chat.arguments(request)

        def call(client: Any) -> Any:
            return self.chat.create(client, request, kwargs)

        completion = self._calls.run(call, self.timeout_s)
        text, finish = choice(completion)
        usage, rejected = self._usage.read(completion)
        return (Answer(text=text, usage=usage, calls=calls, finish_reason=finish,
                       latency_s=time.monotonic() - started), rejected, snapshot_of(completion))

    # -- checks of the endpoint ----------------------------------------------------------------

    def preflight(self, timeout_s: float | None = None) -> str | None:
        """Whether the endpoint answers at all (:meth:`.EndpointProbes.preflight`): ``None``,
        else one line saying why not.  Never raises, never retries."""
        return self._probes.preflight(timeout_s)

    def probe_snapshot(self, timeout_s: float | None = None) -> tuple[Snapshot, str | None]:
        """Which snapshot serves :attr:`model` now, with one 1-token chat completion
        (:meth:`.EndpointProbes.probe_snapshot`), or why nothing is known.  Never raises,
        never retries a failure."""
        return self._probes.probe_snapshot(timeout_s)


def _checked_key(base_url: str | None, api_key_env: str, api_key: str | None) -> str:
    """The API key (``api_key``, else the variable ``api_key_env``'s value), once the name,
    the base URL (or ``$OPENAI_BASE_URL``) and the key are checked.

    Raises:
        ModelError: ``api_key_env`` looks like a key itself (checked first, before any
            message could name it), the base URL is malformed or carries credentials, or the
            variable is unset or empty.
    """
    key_problem = api_key_env_problem(api_key_env)
    if key_problem is not None and api_key is None:
        raise ModelError(key_problem)
    if base_url:
        check_base_url(base_url, api_key_env)
    elif os.environ.get("OPENAI_BASE_URL"):
        check_base_url(os.environ["OPENAI_BASE_URL"], api_key_env, "$OPENAI_BASE_URL")
    key = api_key if api_key is not None else os.environ.get(api_key_env, "")
    if not key.strip():
        raise ModelError(
            f"the API key environment variable {api_key_env} is not set (or empty); "
            f"export it, or name another variable with --gi-api-key-env")
    return key


def _pause(sleep: Callable[[float], None], cancelled: threading.Event, delay: float) -> None:
    """Wait ``delay`` seconds before a retry: cut short by a cancel when the sleep is the real
    one (an injected sleep, a test's recorder, is called instead)."""
    if sleep is time.sleep:
        cancelled.wait(delay)
    else:
        sleep(delay)
