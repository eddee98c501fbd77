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
