"""What the OpenAI-compatible backend sends — a chat completion's arguments: the model, the
messages, the decoding parameters, the extras and the response format — and what it reads back
(the first choice's text and finish reason)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pytest_graphinstruct.models.backends.call_failures import Malformed
from pytest_graphinstruct.models.base import Request


class ChatCompletions:
    """The chat completions one backend asks for.

    Args:
        model: the model name sent when a request leaves ``Request.model`` empty.
        timeout_s: the timeout sent with each request.
        extra_body: extra JSON fields sent with every request.
        response_format: the OpenAI ``response_format`` sent with every request.
    """

    def __init__(self, model: str, timeout_s: float, extra_body: dict[str, Any] | None,
                 response_format: dict[str, Any] | None) -> None:
        self.model = model
        self.timeout_s = timeout_s
        self.extra_body = dict(extra_body) if extra_body else None
        self.response_format = dict(response_format) if response_format else None

    def config_tag(self) -> str:
        """Backend-wide request options that change answers must change cache keys too:
        ``#cfg=<hash>`` of the extras and response format (``""`` without them)."""
        if not self.extra_body and not self.response_format:
            return ""
        blob = json.dumps({"extra_body": self.extra_body, "response_format": self.response_format},
                          sort_keys=True, default=str)
        return "#cfg=" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]

    def arguments(self, request: Request) -> dict[str, Any]:
        """The keyword arguments of ``request``'s completion beyond the model and messages:
        its decoding parameters, the extras (the backend's, then the request's) and the
        response format."""
        kwargs: dict[str, Any] = dict(request.params.to_json())
        extra: dict[str, Any] = dict(self.extra_body or {})
        extra.update(dict(request.extra))
        if extra:
            kwargs["extra_body"] = extra
        if self.response_format:
            kwargs["response_format"] = self.response_format
        return kwargs

    def body(self, request: Request) -> dict[str, object]:
        """The JSON body :meth:`create` sends for ``request`` (the client merges
        ``extra_body`` into it, later keys winning): the Batch API's request line body, so a
        batch request is exactly the ordinary one."""
        kwargs = self.arguments(request)
        extra = kwargs.pop("extra_body", {})
        body: dict[str, object] = {"messages": [m.to_json() for m in request.messages],
                                "model": request.model or self.model, **kwargs}
        body.update(extra)
        return body

    def create(self, client: Any, request: Request, kwargs: dict[str, Any]) -> Any:
        """Ask ``client`` for ``request``'s completion with ``kwargs`` (:meth:`arguments`)."""
        return client.chat.completions.create(
            model=request.model or self.model,
            messages=[m.to_json() for m in request.messages],
            timeout=self.timeout_s,
            **kwargs,
        )


def choice(completion: Any) -> tuple[str, str | None]:
    """The first choice's text and finish reason; raises :class:`Malformed` when absent."""
    if isinstance(completion, (str, bytes)) or completion is None:
        raise Malformed(f"expected a chat completion object, got {type(completion).__name__}")
    choices = getattr(completion, "choices", None)
    if not choices:
        raise Malformed("no 'choices' in the response")
    first = choices[0]
    message = getattr(first, "message", None)
    if message is None:
        raise Malformed("the first choice has no 'message'")
    content = getattr(message, "content", None)
    finish = getattr(first, "finish_reason", None)
    finish = finish if isinstance(finish, str) else None
    if content is None:
        refusal = getattr(message, "refusal", None)
        if isinstance(refusal, str):
            content = refusal
        elif finish == "length":  # the model spent its token limit before any visible text
            content = ""
        else:  # nothing the model said: the provider failed, this is not an empty answer
            raise Malformed(f"message content is null (finish_reason {finish!r})")
    if not isinstance(content, str):
        raise Malformed(f"message content is {type(content).__name__}, not a string")
    return content, finish
