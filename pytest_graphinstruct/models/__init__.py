"""Model answers: data types, backends (OpenAI-compatible, replay), cache, scheduler.

The light types are imported eagerly; everything else loads on first attribute access, so
``import pytest_graphinstruct.models`` does not import the ``openai`` client.
"""

from __future__ import annotations

from typing import Any

from pytest_graphinstruct.answers import Answer, Message, Usage
from pytest_graphinstruct.lazy import lazy_attribute
from pytest_graphinstruct.models.base import Backend, DecodingParams, Request

_LAZY = {
    "AnswerCache": "pytest_graphinstruct.models.caching.cache",
    "BUDGET_EXHAUSTED": "pytest_graphinstruct.models.scheduling.scheduler",
    "OpenAIBackend": "pytest_graphinstruct.models.backends.openai_backend",
    "RateLimiter": "pytest_graphinstruct.models.scheduling.ratelimit",
    "ReplayBackend": "pytest_graphinstruct.models.backends.replay",
    "RetryPolicy": "pytest_graphinstruct.models.backends.retry",
    "Scheduler": "pytest_graphinstruct.models.scheduling.scheduler",
    "TokenBudget": "pytest_graphinstruct.models.scheduling.scheduler",
    "make_backend": "pytest_graphinstruct.models.backends.registry",
    "parse_retry_after": "pytest_graphinstruct.models.backends.retry",
    "read_responses": "pytest_graphinstruct.models.backends.recorded",
}

__all__ = ["Answer", "Backend", "DecodingParams", "Message", "Request", "Usage", *_LAZY]


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _LAZY, globals(), name)
