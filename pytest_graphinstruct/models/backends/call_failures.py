"""What a failed HTTP attempt of the OpenAI-compatible backend means: its one-line text,
whether it is retried, how long the server asked us to wait, and whether it is the endpoint's
fault (the circuit breaker's feed, :class:`~.base.AttemptOutcome`)."""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pytest_graphinstruct.models.backends.bounded_calls import (
    DeadlineExceeded,
    ResponseTooLarge,
    UndecodableBody,
    http_package,
)
from pytest_graphinstruct.models.backends.retry import parse_retry_after

_MAX_ERROR_DETAIL = 300


@dataclass(frozen=True)
class Failure:
    """One failed attempt, classified; ``endpoint_fault`` and ``unread`` as in
    :class:`~.base.AttemptOutcome`; ``timed_out``: the attempt ended at its deadline (the
    endpoint stayed silent or slow for all of it: a fault that lasted, so confirmed even on a
    request's first attempt)."""

    message: str
    retryable: bool
    retry_after: float | None = None
    endpoint_fault: bool = False
    unread: bool = False
    timed_out: bool = False


class Malformed(Exception):
    """A 2xx response whose body is not a usable chat completion."""


class FailureClassifier:
    """Classifies the exceptions of one backend's attempts.

    Args:
        timeout_s: the backend's deadline of one call (said in timeout messages).
        api_key_env: the name of the key's variable (said when authentication fails).
    """

    def __init__(self, timeout_s: float, api_key_env: str) -> None:
        self.timeout_s = timeout_s
        self.api_key_env = api_key_env

    def classify(self, exc: BaseException) -> Failure:
        """What a failed attempt means: its text, whether to retry, whether it is the
        endpoint's fault (a timeout, a broken connection or body, a 5xx: see
        :meth:`_classify_status` for the other statuses), and whether its answer may exist
        unread (``unread``: a timeout, a broken connection or body — not a connection that
        was never made, not an HTTP error status)."""
        import openai

        too_large = _cause(exc, ResponseTooLarge)
        if too_large is not None:  # not retried: the same request would be as long again
            return Failure(f"response body too large: {too_large}, far more than any graph "
                           "answer; not read further, not retried", retryable=False,
                           unread=True)
        undecodable = _cause(exc, UndecodableBody)
        if undecodable is not None:  # the endpoint ignores identity: it would do so again
            return Failure(f"response body not read: {undecodable}; not retried",
                           retryable=False, endpoint_fault=True, unread=True)
        if isinstance(exc, Malformed):
            return Failure(f"malformed response body: {exc}", retryable=True, endpoint_fault=True,
                           unread=True)
        if isinstance(exc, DeadlineExceeded):
            return Failure(f"request timed out: the whole call exceeded its deadline of "
                           f"{self.timeout_s:g} s", retryable=True, endpoint_fault=True,
                           unread=True, timed_out=True)
        if isinstance(exc, openai.APIStatusError):
            return self._classify_status(exc)
        if isinstance(exc, openai.APITimeoutError):
            return Failure(f"request timed out after {self.timeout_s:g} s", retryable=True,
                           endpoint_fault=True, unread=not never_connected(exc),
                           timed_out=True)
        if isinstance(exc, openai.APIConnectionError):
            return Failure(connection_detail(exc), retryable=True, endpoint_fault=True,
                           unread=not never_connected(exc))
        if isinstance(exc, openai.APIResponseValidationError):
            return Failure(f"malformed response body: {exc.message}", retryable=True,
                           endpoint_fault=True, unread=True)
        if isinstance(exc, (ValueError, TypeError, KeyError, AttributeError)):
            # json.JSONDecodeError and pydantic's ValidationError are ValueErrors.
            return Failure(f"malformed response body: {type(exc).__name__}: {exc}",
                           retryable=True, endpoint_fault=True, unread=True)
        if isinstance(exc, openai.OpenAIError):
            return Failure(f"{type(exc).__name__}: {exc}", retryable=False)
        return Failure(f"unexpected error {type(exc).__name__}: {exc}", retryable=False)

    def _classify_status(self, exc: Any) -> Failure:
        """An HTTP error status.  The endpoint's fault: 5xx, 401/403 (it refuses this key),
        404 (no such route or model there), an exhausted quota.  Not its fault: a 429 rate
        limit (we are being paced) and every other 4xx (this request is wrong)."""
        status = int(exc.status_code)
        detail = error_detail(exc)
        if status in (401, 403):
            return Failure(f"authentication failed (HTTP {status}; check {self.api_key_env}): "
                           f"{detail}", retryable=False, endpoint_fault=True)
        if status == 429 and _is_quota(exc):
            return Failure(f"quota exhausted (HTTP 429 insufficient_quota): {detail}",
                           retryable=False, endpoint_fault=True)
        if status in (408, 409, 429) or status >= 500:
            return Failure(f"HTTP {status}: {detail}", retryable=True,
                           retry_after=_retry_after(exc), endpoint_fault=status >= 500)
        return Failure(f"HTTP {status} (not retried): {detail}", retryable=False,
                       endpoint_fault=status == 404)


_E = TypeVar("_E", bound=BaseException)


def _cause(exc: BaseException, kind: type[_E]) -> _E | None:
    """``exc`` or the first of its causes (or contexts) that is a ``kind``, else ``None``."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, kind):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def never_connected(exc: BaseException) -> bool:
    """Whether ``exc`` (a connection error or timeout of the ``openai`` client) is a connection
    that was never made (refused, no route, a DNS failure, a connect timeout): then nothing
    reached the endpoint.  Read from the HTTP package's exception among its causes."""
    http = http_package()
    never: tuple[type, ...] = (ConnectionRefusedError, socket.gaierror, *(
        t for t in (getattr(http, "ConnectError", None), getattr(http, "ConnectTimeout", None))
        if isinstance(t, type)))
    return _cause(exc, never) is not None  # type: ignore[arg-type]


def connection_detail(exc: Any) -> str:
    """``connection error (ConnectError: [Errno 111] Connection refused)``: the type of the
    HTTP package's exception (the first cause) and the first message found down its causes
    (``ReadError`` says nothing itself; the ``[Errno 104] Connection reset by peer`` under it
    does)."""
    cause = exc.__cause__ or exc.__context__
    if cause is None:
        return "connection error"
    said, seen = cause, {id(cause)}
    while not str(said) and (said.__cause__ or said.__context__) is not None:
        said = said.__cause__ or said.__context__
        if id(said) in seen:
            break
        seen.add(id(said))
    return f"connection error ({type(cause).__name__}: {said})"


def _error_body(exc: Any) -> Mapping[str, Any]:
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        inner = body.get("error")
        return inner if isinstance(inner, Mapping) else body
    return {}


def error_detail(exc: Any) -> str:
    """The error's message from its body (``[code] message``), on one line, the message cut
    to its first 300 characters (then ``…``)."""
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
