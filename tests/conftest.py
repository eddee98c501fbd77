"""Load, before any test, what an in-process pytester run would otherwise load a second time.

pytester restores ``sys.modules`` after each in-process run: a module first imported inside a
run is dropped and imported again later, as a second copy with classes of its own.  openai and
its HTTP package import parts of themselves lazily, on a client's first request, its first
connection error or its first parsed answer; if that first time falls inside a pytester run,
later tests mix two copies, and openai's ``except httpx2.RequestError`` no longer catches what
the client raises (a refused connection escaped unwrapped, and the preflight took it for an
answer).  One real round trip of each kind here, against the local fake server and a port
that refuses, loads every such part once per process.

Also: the Hypothesis profiles (``HYPOTHESIS_PROFILE``; ``ci`` under ``CI``, else ``dev``), and
D3's GCN result store and its reference-side store (``score/gcn_store.py``) are off for
every test and every process a test starts (the environment is inherited), so scores — and the
committed digests — are computed, never read from a user's cache; the stores' own tests name a
folder of their own.

And the ``torch`` marker: a test that needs the ``[gpu]`` extra skips without it, or fails under
``GI_REQUIRE_TORCH=1`` (``tests/gpu_extra.py``).
"""

from __future__ import annotations

import contextlib
import os
import socket

import openai
import pytest
from hypothesis import HealthCheck, settings

from pytest_graphinstruct.models.backends.bounded_calls import BoundedCalls
from pytest_graphinstruct.score.gcn_store import ENV as D3_CACHE_ENV
from pytest_graphinstruct.score.gcn_store import REFERENCE_ENV
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.gpu_extra import require_torch

settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

os.environ[D3_CACHE_ENV] = "off"
os.environ[REFERENCE_ENV] = "off"


def _warm_http_stack() -> None:
    with FakeOpenAIServer() as server:
        calls = BoundedCalls(api_key="sk-warm", base_url=server.base_url, timeout_s=30.0,
                             default_query=None)
        calls.run(lambda client: client.models.list(), 30.0)
        calls.run(lambda client: client.models.with_raw_response.list(), 30.0)
        calls.run(lambda client: client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "warm"}]), 30.0)
    with socket.socket() as held:  # bound, not listening: a connect is refused
        held.bind(("127.0.0.1", 0))
        refused = BoundedCalls(api_key="sk-warm",
                               base_url=f"http://127.0.0.1:{held.getsockname()[1]}/v1",
                               timeout_s=30.0, default_query=None)
        with contextlib.suppress(openai.APIConnectionError):  # anything else: loud, here
            refused.run(lambda client: client.models.with_raw_response.list(), 30.0)


_warm_http_stack()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``torch`` skips without torch and torch_geometric (the ``[gpu]`` extra), or
    fails under ``GI_REQUIRE_TORCH=1`` (tests/gpu_extra.py)."""
    if item.get_closest_marker("torch") is not None:
        require_torch()
