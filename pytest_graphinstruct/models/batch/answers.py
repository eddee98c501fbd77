"""A batch output line's chat completion as an ordinary :class:`Answer` (and the snapshot that
served it), read exactly as the OpenAI-compatible backend reads a response: the same
:func:`~.chat_completions.choice` and the same usage accounting (:class:`~.usage_accounting.
UsageAccounting`: the provider's block, tiktoken for what it left out or got impossibly)."""

from __future__ import annotations

from types import SimpleNamespace

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.backends.call_failures import Malformed
from pytest_graphinstruct.models.backends.chat_completions import choice
from pytest_graphinstruct.models.backends.usage_accounting import UsageAccounting
from pytest_graphinstruct.models.base import Request, one_line
from pytest_graphinstruct.models.caching.snapshot import Snapshot, snapshot_of

_MAX_DEPTH = 32


def namespace(value: object, depth: int = 0) -> object:
    """A JSON value with every object as an attribute namespace (what :func:`choice` and the
    usage accounting read, as from the ``openai`` client's objects); nesting past 32 levels is
    cut (``None``)."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, dict):
        return SimpleNamespace(**{str(k): namespace(v, depth + 1) for k, v in value.items()
                                  if str(k).isidentifier()})
    if isinstance(value, list):
        return [namespace(v, depth + 1) for v in value]
    return value


def answer_of(body: dict[str, object], request: Request | None, usage: UsageAccounting, *,
              latency_s: float) -> tuple[Answer, Snapshot]:
    """The answer a 200 line's ``body`` holds (``calls=1``: the line that answered; lines a
    batch failed or expired are not billed and not counted), or an error answer when the body
    is no usable chat completion (never raises).  ``request`` (``None``: not known in this
    process) lets tiktoken count what the provider's usage block left out."""
    completion = namespace(body)
    try:
        text, finish = choice(completion)
    except Malformed as exc:
        return Answer(error=one_line(f"malformed batch response: {exc}"), calls=1,
                      latency_s=latency_s), Snapshot()
    counted, rejected = usage.read(completion)
    answer = Answer(text=text, usage=counted, calls=1, finish_reason=finish,
                    latency_s=latency_s)
    if request is not None:
        answer = usage.complete(request, answer, impossible=rejected is not None)
    return answer, snapshot_of(completion)
