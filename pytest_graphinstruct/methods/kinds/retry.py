"""``retry``: the sampling-only control, up to ``1 + T`` fresh calls
(:func:`pytest_graphinstruct.methods.iterative.retry_chain`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

from pytest_graphinstruct.answers import Message
from pytest_graphinstruct.methods.kinds.base_temperature import base_temperature
from pytest_graphinstruct.methods.spec import MethodContext, MethodSpec

if TYPE_CHECKING:
    from pytest_graphinstruct.methods.iterative import Ask, ChainResult, Grader
    from pytest_graphinstruct.suite.instruction import Instruction


class Retry:
    """Fresh calls of the item's prompt, stopping at the first that passes."""

    name: Final = "retry"
    selectable: Final = True
    iterative: Final = True
    feedback: Final = False
    constrained: Final = False
    caap: Final = False

    def chain(self, spec: MethodSpec, instruction: Instruction, prompt: Sequence[Message],
              ask: Ask, grade: Grader, *, chain: int, context: MethodContext) -> ChainResult:
        """Chain ``chain``: up to ``1 + T`` calls."""
        from pytest_graphinstruct.methods.iterative import retry_chain

        return retry_chain(prompt, ask, grade, chain=chain, rounds=context.rounds_of(spec),
                           temperature=base_temperature(context))

    def settings(self, spec: MethodSpec, context: MethodContext) -> Mapping[str, object]:
        """Chains, rounds and base temperature."""
        return {"chains": context.chains, "rounds": context.rounds_of(spec),
                "temperature": base_temperature(context)}


RETRY: Final = Retry()
