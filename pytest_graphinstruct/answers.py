"""What a model exchange carries, as plain data: chat messages, token usage, and the answer.

These records sit at the bottom of the package (no imports from it), so the prompts, the scores
and the results can use them without reaching into the model layer that produces them.
An :class:`Answer` is what came back: the text, its token usage (the provider's usage block, or
``tiktoken``'s count when the provider sent none, with :attr:`Usage.source` saying which;
``None`` when nothing counted it — never an estimate), how many HTTP calls it took, and an
infrastructure ``error`` when no answer could be obtained (an error is never a model answer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal, get_args


@dataclass(frozen=True)
class Message:
    """One chat message."""

    role: str  # "system" | "user" | "assistant"
    content: str

    def to_json(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


USAGE_PROVIDER = "provider"
USAGE_RECORDED = "recorded"


@dataclass(frozen=True)
class Usage:
    """Token usage of one answer; a field is ``None`` when nothing reported or counted it.

    ``source`` says where the numbers come from: ``provider`` (the response's usage block),
    ``recorded`` (a recorded responses file), ``tiktoken:<encoding>`` (counted offline because
    the provider sent no usage block) or ``provider+tiktoken:<encoding>`` (the provider reported
    one of the two fields; the other was counted).
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    source: str = USAGE_PROVIDER

    @property
    def total(self) -> int | None:
        if self.input_tokens is None or self.output_tokens is None:
            return None
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class MethodStep:
    """One model call a method (VGIG, retry, self-consistency) made towards an answer.

    ``source`` is ``round0``, ``retry<t>``, ``round<t>`` or ``sample<i>``; ``d4`` and ``passed``
    grade the call's candidate (``d4`` is ``None`` when the call failed); ``kept`` marks the
    call whose text became the answer.
    """

    round: int
    source: str
    temperature: float
    input_tokens: int | None
    output_tokens: int | None
    calls: int = field(metadata={"json": "api_calls"})  # the report names it api_calls
    d4: float | None
    passed: bool
    kept: bool


FailureKind = Literal["error", "budget", "cost_cap", "circuit_open", "stopped", "cancelled"]
"""Why no answer came: ``error``, the request failed (the endpoint, the network, a harness
fault: an infrastructure error); or it was never issued — ``budget`` (the token budget,
``--gi-max-tokens-total``), ``cost_cap`` (``--gi-max-cost``), ``circuit_open`` (the circuit
breaker), ``stopped`` (the run was stopped), ``cancelled`` (the scheduler closed first)."""
FAILURE_KINDS: Final[tuple[FailureKind, ...]] = get_args(FailureKind)
LIMIT_KINDS: Final[frozenset[FailureKind]] = frozenset({"budget", "cost_cap"})
"""The kinds a run's own spending limit produced: the item is not run (no result, the run is
partial and a rerun asks), rather than counted as an error."""


@dataclass(frozen=True)
class Failure:
    """Why an :class:`Answer` holds no text: its ``kind`` (:data:`FailureKind`) and the one-line
    ``message`` a person reads."""

    kind: FailureKind
    message: str


@dataclass(frozen=True)
class Answer:
    """The outcome of one request.

    Exactly one of ``text`` and ``error`` is set; with ``error``, ``failure_kind`` says what
    happened (:data:`FailureKind`; default ``error``) and :attr:`failure` is the two as a
    record.  ``usage`` is ``None`` when the provider sent no usage block; ``calls`` counts every
    HTTP attempt, retries included; ``truncated`` is true when the model stopped at the token
    limit (``finish_reason == 'length'``).  An answer a method produced carries every call it
    made in ``steps`` (its ``usage`` and ``calls`` are their sums); a plain answer has none.
    """

    text: str | None = None
    error: str | None = None
    usage: Usage | None = None
    calls: int = 1
    finish_reason: str | None = None
    cached: bool = False
    latency_s: float = 0.0
    steps: tuple[MethodStep, ...] = ()
    failure_kind: FailureKind | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.error is None):
            raise ValueError("Answer needs exactly one of text and error")
        if self.error is None and self.failure_kind is not None:
            raise ValueError("an Answer with text has no failure kind")
        if self.error is not None and self.failure_kind is None:
            object.__setattr__(self, "failure_kind", "error")
        if self.failure_kind is not None and self.failure_kind not in FAILURE_KINDS:
            raise ValueError(f"unknown failure kind {self.failure_kind!r}")

    @property
    def failure(self) -> Failure | None:
        """What happened when no answer came (``None`` for an answer)."""
        if self.error is None or self.failure_kind is None:
            return None
        return Failure(self.failure_kind, self.error)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"
