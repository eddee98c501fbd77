"""The local OpenAI-compatible test server, re-exported for tests.

The server lives in the package (:mod:`pytest_graphinstruct.testing.openai_server`) so benchmarks
and users' own tests can start it too; import it from either place.
"""

from __future__ import annotations

from pytest_graphinstruct.testing.openai_server import (
    FakeOpenAIServer,
    Fault,
    RecordedRequest,
    default_responder,
)

__all__ = ["FakeOpenAIServer", "Fault", "RecordedRequest", "default_responder"]
