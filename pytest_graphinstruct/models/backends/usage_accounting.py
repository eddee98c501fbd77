"""The usage of the OpenAI-compatible backend's answers: the provider's usage block when it is
believable, ``tiktoken`` counts (:mod:`.tokens`) for what it did not report or reported
impossibly, and the count of blocks not believed."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.models.backends.tokens import TokenCounter, check_token_count
from pytest_graphinstruct.models.base import Request, one_line

USAGE_IMPOSSIBLE = "provider usage impossible"
"""Said in ``Usage.source`` (``tiktoken:<enc> (provider usage impossible)``) when the provider's
usage block held an impossible count and the tokens were counted instead."""


class UsageAccounting:
    """Reads and completes the usage of one backend's answers (see the promises of
    :mod:`.openai_backend`).

    Args:
        counter: counts tokens the provider did not report (``None``: they stay unknown).
    """

    def __init__(self, counter: TokenCounter | None) -> None:
        self.counter = counter
        self._lock = threading.Lock()
        self.rejections = 0  #: answers whose usage block held an impossible count
        self.first_rejection: str | None = None  #: why the first was not believed, one line

    def read(self, completion: Any) -> tuple[Usage | None, str | None]:
        """The provider's usage block as :class:`Usage` (``None`` when it sent none), and why
        it is not believed (``None``: it is), e.g. ``prompt_tokens=-5 (negative)``; a block not
        believed is counted."""
        usage = getattr(completion, "usage", None)
        if usage is None:
            return None, None
        counts: dict[str, int | None] = {}
        for name in ("prompt_tokens", "completion_tokens"):
            count, why = check_token_count(getattr(usage, name, None))
            if why is not None:
                self._note_rejection(f"{name}={why}")
                return None, f"{name}={why}"
            counts[name] = count
        if counts["prompt_tokens"] is None and counts["completion_tokens"] is None:
            return None, None
        return Usage(counts["prompt_tokens"], counts["completion_tokens"]), None

    def _note_rejection(self, why: str) -> None:
        why = one_line(why, limit=200)  # it quotes the server's value
        with self._lock:
            self.rejections += 1
            if self.first_rejection is None:
                self.first_rejection = why

    def complete(self, request: Request, answer: Answer, *, impossible: bool) -> Answer:
        """``answer`` with what the provider did not report, or reported impossibly, counted
        with tiktoken (and ``Usage.source`` saying so)."""
        usage = answer.usage
        counter = self.counter
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
