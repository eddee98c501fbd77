"""Model answers: data types, backends (OpenAI-compatible, replay), cache, scheduler.

The light types are imported eagerly; everything else loads on first attribute access, so
``import pytest_graphinstruct.models`` does not import the ``openai`` client.
"""

from __future__ import annotations

import importlib
from typing import Any

from pytest_graphinstruct.answers import Answer, Message, Usage
from pytest_graphinstruct.models.base import Backend, DecodingParams, Request

_LAZY = {
    "AnswerCache": "pytest_graphinstruct.models.cache",
    "BUDGET_EXHAUSTED": "pytest_graphinstruct.models.scheduler",
    "OpenAIBackend": "pytest_graphinstruct.models.openai_backend",
    "RateLimiter": "pytest_graphinstruct.models.ratelimit",
    "ReplayBackend": "pytest_graphinstruct.models.replay",
    "RetryPolicy": "pytest_graphinstruct.models.retry",
    "Scheduler": "pytest_graphinstruct.models.scheduler",
    "TokenBudget": "pytest_graphinstruct.models.scheduler",
    "make_backend": "pytest_graphinstruct.models.registry",
    "parse_retry_after": "pytest_graphinstruct.models.retry",
    "read_responses": "pytest_graphinstruct.models.recorded",
}

__all__ = ["Answer", "Backend", "DecodingParams", "Message", "Request", "Usage", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
