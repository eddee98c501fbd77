"""Fixtures for model tests: a local OpenAI-compatible server and a throwaway API key.

Everything talks to 127.0.0.1 only.  End-to-end tests elsewhere can use
``from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer`` or these fixtures via
``pytest_plugins = ["tests.models.conftest"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
from tests.models.fake_openai import FakeOpenAIServer
from tests.models.helpers import KEY_ENV, SECRET, SleepRecorder


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A started :class:`FakeOpenAIServer` (no latency, no faults); stopped afterwards."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """Sets ``$GI_TEST_API_KEY`` to a recognisable fake secret; returns the variable's name."""
    monkeypatch.setenv(KEY_ENV, SECRET)
    return KEY_ENV


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def backend_for(
    fake_openai: FakeOpenAIServer, api_key: str, sleeps: SleepRecorder
) -> Callable[..., OpenAIBackend]:
    """``backend_for(**options)`` → an OpenAIBackend on the fake server (sleeps recorded)."""

    def make(**options: Any) -> OpenAIBackend:
        options.setdefault("api_key_env", api_key)
        options.setdefault("sleep", sleeps)
        options.setdefault("timeout_s", 5.0)
        return OpenAIBackend(fake_openai.base_url, "fake-model", **options)

    return make
