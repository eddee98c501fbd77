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
  deadline.  The call runs in a daemon thread, so an abandoned call never blocks the caller, a
  :meth:`OpenAIBackend.cancel`, or interpreter exit.
* :meth:`OpenAIBackend.cancel` ends calls in flight at once (their answers are errors saying
  so) and stops every retry.
* The base URL is checked when the backend is built (``http``/``https``, a host, a valid port):
  a malformed one is a one-line :class:`~pytest_graphinstruct.errors.ModelError`.
  :meth:`OpenAIBackend.preflight` says in one line whether the endpoint answers at all.
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
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.base import Request, one_line
from pytest_graphinstruct.models.retry import RetryPolicy, parse_retry_after
from pytest_graphinstruct.models.serial import SerialGate
from pytest_graphinstruct.models.snapshot import Snapshot, snapshot_of
from pytest_graphinstruct.models.tokens import TokenCounter, check_token_count, encoding_name_for

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

_T = TypeVar("_T")


@dataclass(frozen=True)
class _Failure:
    """One failed attempt, classified."""

    message: str
    retryable: bool
    retry_after: float | None = None


class _Malformed(Exception):
    """A 2xx response whose body is not a usable chat completion."""


class _DeadlineExceeded(Exception):
    """The HTTP call as a whole took longer than its deadline; it was abandoned."""


class _Cancelled(Exception):
    """:meth:`OpenAIBackend.cancel` was called while the HTTP call was in flight."""


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

    Raises:
        ModelError: the base URL is malformed (no ``http``/``https`` scheme, no host, a bad
            port), the API key variable is unset or empty (the message names the variable), or
            tiktoken's files cannot be made available offline.
    """

    cacheable = True
    remote = True  # answers come over the network: the scheduler's circuit breaker applies

    def __init__(
        self,
        base_url: str | None,
        model: str,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 120,
        max_retries: int = 5,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        extra_body: dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        retry_policy: RetryPolicy | None = None,
        retry_after_cap_s: float = 120.0,
        api_key: str | None = None,
        endpoint_id: str | None = None,
        serial_gate: SerialGate | None = None,
        token_counter: TokenCounter | Literal["auto"] | None = "auto",
        model_version: str | None = None,
    ) -> None:
        import openai

        _check_base_url(base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
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
        self._lock = threading.Lock()
        self._wakers: set[threading.Event] = set()  # one per call in flight; cancel() sets them
        self.usage_rejections = 0
        self.first_usage_rejection: str | None = None
        self._client = openai.OpenAI(
            api_key=key,
            base_url=base_url if base_url else None,
            timeout=self.timeout_s,
            max_retries=0,
        )
        self.base_url = str(self._client.base_url).rstrip("/") or DEFAULT_BASE_URL
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
                return self._error(f"cancelled: the run was interrupted before call {calls + 1}",
                                   "", calls, started), none
            calls += 1
            try:
                answer, rejected, served = self._attempt(request, calls, started)
            except _Cancelled:
                return self._error("cancelled: the run was interrupted during call "
                                   f"{calls}", "", calls, started), none
            except Exception as exc:  # classified below; nothing escapes complete()
                failure = self._classify(exc)
            else:
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
                return self._error(failure.message, "; not retried: the run was cancelled after "
                                   f"{calls} call(s)", calls, started), none
            attempt += 1

    def _error(self, message: str, note: str, calls: int, started: float) -> Answer:
        return Answer(error=one_line(self._scrub(message), note), calls=calls,
                      latency_s=time.monotonic() - started)

    def cancel(self) -> None:
        """Stop: calls in flight end at once (their answers are errors saying so; the abandoned
        HTTP calls finish in daemon threads nobody waits for) and nothing is retried.  Used
        when a run is interrupted; irreversible."""
        self._cancelled.set()
        with self._lock:
            wakers = list(self._wakers)
        for waker in wakers:
            waker.set()

    def _bounded(self, fn: Callable[[], _T], deadline_s: float) -> _T:
        """``fn()``, run in a daemon thread and abandoned after ``deadline_s`` seconds or at
        :meth:`cancel`.

        Raises:
            _DeadlineExceeded: the deadline passed first.
            _Cancelled: :meth:`cancel` was called first.
            Exception: whatever ``fn`` raised.
        """
        waker = threading.Event()
        outcome: list[tuple[bool, Any]] = []

        def run() -> None:
            try:
                outcome.append((True, fn()))
            except BaseException as exc:  # handed to the waiting thread
                outcome.append((False, exc))
            finally:
                waker.set()

        with self._lock:
            self._wakers.add(waker)
        if self._cancelled.is_set():  # cancel() ran before this waker could be woken
            with self._lock:
                self._wakers.discard(waker)
            raise _Cancelled()
        try:
            threading.Thread(target=run, name="gi-http-call", daemon=True).start()
            waker.wait(deadline_s)
        finally:
            with self._lock:
                self._wakers.discard(waker)
        if outcome:
            ok, value = outcome[0]
            if ok:
                return value
            raise value
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

        def call() -> Any:
            return self._create(request, kwargs)

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
        client = self._client.with_options(timeout=limit, max_retries=0)
        where = f"cannot reach {self.base_url}"
        try:
            self._bounded(lambda: client.models.with_raw_response.list(), limit)
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
        client = self._client.with_options(timeout=limit, max_retries=0)
        body: dict[str, Any] = dict(self.extra_body or {})

        def ask(limits: dict[str, Any]) -> Any:
            return client.chat.completions.create(
                model=self.model, messages=[{"role": "user", "content": PROBE_PROMPT}],
                extra_headers={PROBE_HEADER: "snapshot"}, extra_body={**body, **limits} or None,
                timeout=limit)

        try:
            try:
                completion = self._bounded(lambda: ask({"max_tokens": 1}), limit)
            except openai.BadRequestError as exc:
                if "max_tokens" not in _error_detail(exc):
                    raise
                completion = self._bounded(lambda: ask({"max_completion_tokens": 1}), limit)
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

    def _create(self, request: Request, kwargs: dict[str, Any]) -> Any:
        return self._client.chat.completions.create(
            model=request.model or self.model,
            messages=[m.to_json() for m in request.messages],  # type: ignore[misc]
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
        import openai

        if isinstance(exc, _Malformed):
            return _Failure(f"malformed response body: {exc}", retryable=True)
        if isinstance(exc, _DeadlineExceeded):
            return _Failure(f"request timed out: the whole call exceeded its deadline of "
                            f"{self.timeout_s:g} s", retryable=True)
        if isinstance(exc, openai.APIStatusError):
            return self._classify_status(exc)
        if isinstance(exc, openai.APITimeoutError):
            return _Failure(f"request timed out after {self.timeout_s:g} s", retryable=True)
        if isinstance(exc, openai.APIConnectionError):
            return _Failure(_connection_detail(exc), retryable=True)
        if isinstance(exc, openai.APIResponseValidationError):
            return _Failure(f"malformed response body: {exc.message}", retryable=True)
        if isinstance(exc, (ValueError, TypeError, KeyError, AttributeError)):
            # json.JSONDecodeError and pydantic's ValidationError are ValueErrors.
            return _Failure(f"malformed response body: {type(exc).__name__}: {exc}",
                            retryable=True)
        if isinstance(exc, openai.OpenAIError):
            return _Failure(f"{type(exc).__name__}: {exc}", retryable=False)
        return _Failure(f"unexpected error {type(exc).__name__}: {exc}", retryable=False)

    def _classify_status(self, exc: Any) -> _Failure:
        status = int(exc.status_code)
        detail = _error_detail(exc)
        if status in (401, 403):
            return _Failure(f"authentication failed (HTTP {status}; check {self.api_key_env}): "
                            f"{detail}", retryable=False)
        if status == 429 and _is_quota(exc):
            return _Failure(f"quota exhausted (HTTP 429 insufficient_quota): {detail}",
                            retryable=False)
        if status in (408, 409, 429) or status >= 500:
            return _Failure(f"HTTP {status}: {detail}", retryable=True,
                            retry_after=_retry_after(exc))
        return _Failure(f"HTTP {status} (not retried): {detail}", retryable=False)

    def _scrub(self, text: str) -> str:
        secret = self._client.api_key
        return text.replace(secret, _REDACTED) if secret else text


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


def _check_base_url(url: str) -> None:
    """Raise a one-line :class:`ModelError` unless ``url`` is ``http(s)://host[:port]/...``."""
    shown = " ".join(url.split())
    hint = "expected http://host[:port]/v1 or https://..."
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
    except ValueError as exc:
        raise ModelError(f"invalid base URL {shown!r}: {exc} ({hint})") from None
    if parts.scheme not in ("http", "https"):
        what = (f"unsupported scheme {parts.scheme!r}" if "://" in url
                else "no http:// or https:// scheme")
        raise ModelError(f"invalid base URL {shown!r}: {what} ({hint})")
    if not parts.hostname:
        raise ModelError(f"invalid base URL {shown!r}: no host ({hint})")


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
