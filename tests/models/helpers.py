"""Helpers shared by the model tests (importable, unlike conftest)."""

from __future__ import annotations

from typing import Any

from pytest_graphinstruct.answers import Message
from pytest_graphinstruct.models.base import Request

KEY_ENV = "GI_TEST_API_KEY"
SECRET = "sk-test-9f8e7d6c5b4a-SECRET-do-not-leak"


class SleepRecorder:
    """A ``sleep`` stand-in that records the requested delays and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def req(text: str = "hello world", *, sample: int = 0, iid: str = "L1-001",
        cell: str = "fake-model/zero-shot", **kw: Any) -> Request:
    """A one-message request (distinct texts/samples give distinct cache keys)."""
    return Request(model="fake-model", messages=(Message("user", text),), sample_index=sample,
                   instruction_id=iid, cell=cell, **kw)


def http_request(url: str = "http://fake.invalid/v1/chat/completions") -> Any:
    """A request of the HTTP package ``openai`` is built on (for its exceptions)."""
    from pytest_graphinstruct.models.backends.bounded_calls import http_package

    return http_package().Request("POST", url)


def status_error(status: int, body: object = None, *, headers: dict[str, str] | None = None,
                 cls: Any = None, message: str = "error") -> Any:
    """An ``openai`` status error (``cls``, default ``APIStatusError``) of HTTP ``status``."""
    import openai

    from pytest_graphinstruct.models.backends.bounded_calls import http_package

    response = http_package().Response(status, request=http_request(), headers=headers or {})
    return (cls or openai.APIStatusError)(message, response=response, body=body)


def connection_error(cause: BaseException | None = None) -> Any:
    """An ``openai.APIConnectionError`` raised from ``cause`` (as the client raises it)."""
    import openai

    exc = openai.APIConnectionError(request=http_request())
    exc.__cause__ = cause
    return exc
