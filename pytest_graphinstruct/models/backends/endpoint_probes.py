"""One-off checks of an OpenAI-compatible endpoint, never retried and never raising: whether it
answers at all (``GET /models``) and which snapshot serves the model name now (one 1-token chat
completion)."""

from __future__ import annotations

from typing import Any

from pytest_graphinstruct.models.backends.bounded_calls import (
    BoundedCalls,
    CallCancelled,
    DeadlineExceeded,
)
from pytest_graphinstruct.models.backends.call_failures import (
    FailureClassifier,
    connection_detail,
    error_detail,
)
from pytest_graphinstruct.models.backends.chat_completions import ChatCompletions
from pytest_graphinstruct.models.base import one_line
from pytest_graphinstruct.models.caching.snapshot import Snapshot, snapshot_of

PREFLIGHT_TIMEOUT_S = 10.0
PROBE_HEADER = "X-GI-Probe"
"""The header that marks :meth:`EndpointProbes.probe_snapshot`'s request (value ``snapshot``)."""
PROBE_PROMPT = "Reply with OK."


class EndpointProbes:
    """The checks of one backend's endpoint, through its calls and with its options.

    Args:
        calls: the backend's bounded calls.
        chat: the backend's chat completions (model and extras).
        classifier: names a failed probe.
        base_url: the endpoint's URL (named in a preflight's line).
        timeout_s: the backend's deadline of one call (default bound: ``min(timeout_s, 10)``).
    """

    def __init__(self, calls: BoundedCalls, chat: ChatCompletions, classifier: FailureClassifier,
                 base_url: str, timeout_s: float) -> None:
        self._calls = calls
        self._chat = chat
        self._classifier = classifier
        self.base_url = base_url
        self.timeout_s = timeout_s

    def preflight(self, timeout_s: float | None = None) -> str | None:
        """Whether the endpoint answers at all: ``None`` when ``GET {base_url}/models`` got any
        HTTP answer (401 and 404 included — reachable is all this checks), else one line
        saying why not (connection refused, DNS failure, no answer within ``timeout_s``,
        default ``min(timeout_s of the backend, 10)``).  Never raises, never retries."""
        import openai

        limit = min(self.timeout_s, PREFLIGHT_TIMEOUT_S) if timeout_s is None else timeout_s
        where = f"cannot reach {self.base_url}"
        try:
            self._calls.run(lambda client: client.models.with_raw_response.list(), limit)
        except (DeadlineExceeded, openai.APITimeoutError):
            return one_line(f"{where}: GET /models timed out (no answer within {limit:g} s)")
        except CallCancelled:
            return one_line(f"{where}: the preflight was cancelled")
        except openai.APIConnectionError as exc:
            return one_line(self._calls.scrub(f"{where}: {connection_detail(exc)}"))
        except Exception:  # any HTTP answer, even an unparseable one, means it is reachable
            return None
        return None

    def probe_snapshot(self, timeout_s: float | None = None) -> tuple[Snapshot, str | None]:
        """Which snapshot serves the model now: one chat completion of at most 1 token
        (``max_tokens=1``; an endpoint that refuses ``max_tokens`` — OpenAI's reasoning models —
        is asked once more with ``max_completion_tokens=1``), marked with the header
        ``X-GI-Probe: snapshot``, with the backend's ``extra_body`` but no response format.

        Returns:
            The :class:`Snapshot` the response named, and ``None``; or an empty
            :class:`Snapshot` and one line saying why nothing is known (the call failed, or the
            response named no model).  Never raises, never retries a failure.
        """
        import openai

        limit = min(self.timeout_s, PREFLIGHT_TIMEOUT_S) if timeout_s is None else timeout_s
        body: dict[str, Any] = dict(self._chat.extra_body or {})

        def ask(client: Any, limits: dict[str, Any]) -> Any:
            return client.chat.completions.create(
                model=self._chat.model, messages=[{"role": "user", "content": PROBE_PROMPT}],
                extra_headers={PROBE_HEADER: "snapshot"}, extra_body={**body, **limits} or None,
                timeout=limit)

        try:
            try:
                completion = self._calls.run(lambda c: ask(c, {"max_tokens": 1}), limit)
            except openai.BadRequestError as exc:
                if "max_tokens" not in error_detail(exc):
                    raise
                completion = self._calls.run(lambda c: ask(c, {"max_completion_tokens": 1}),
                                             limit)
        except CallCancelled:
            return Snapshot(), "the probe was cancelled"
        except Exception as exc:  # any failure: the snapshot is simply not known
            failure = self._classifier.classify(exc)
            return Snapshot(), one_line(self._calls.scrub(f"the 1-token probe failed: "
                                                          f"{failure.message}"), limit=200)
        served = snapshot_of(completion)
        if not served.known:
            return served, "the response named no model"
        return served, None
