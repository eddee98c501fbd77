"""``sc``: self-consistency, ``1 + T`` samples per chain, the best graded one kept
(:func:`pytest_graphinstruct.methods.iterative.sc_chain`) — the most calls VGIG or retry may
make, so the sampling-only controls get the iterative methods' budget."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

from pytest_graphinstruct.answers import Message
from pytest_graphinstruct.methods.kinds.base_temperature import base_temperature
from pytest_graphinstruct.methods.spec import MethodContext, MethodSpec

if TYPE_CHECKING:
    from pytest_graphinstruct.methods.iterative import Ask, ChainResult, Grader
    from pytest_graphinstruct.suite.instruction import Instruction


class SelfConsistency:
    """``1 + T`` fresh samples per chain; the best kept."""

    name: Final = "sc"
    selectable: Final = True
    iterative: Final = True
    feedback: Final = False
    constrained: Final = False
    caap: Final = False

    def chain(self, spec: MethodSpec, instruction: Instruction, prompt: Sequence[Message],
              ask: Ask, grade: Grader, *, chain: int, context: MethodContext) -> ChainResult:
        """Chain ``chain``: ``1 + T`` samples."""
        from pytest_graphinstruct.methods.iterative import sc_chain

        return sc_chain(prompt, ask, grade, chain=chain, samples=context.rounds_of(spec) + 1,
                        temperature=base_temperature(context))

    def settings(self, spec: MethodSpec, context: MethodContext) -> Mapping[str, object]:
        """Chains, rounds, base temperature and the samples per chain."""
        return {"chains": context.chains, "rounds": context.rounds_of(spec),
                "temperature": base_temperature(context),
                "samples_per_chain": context.rounds_of(spec) + 1}


SELF_CONSISTENCY: Final = SelfConsistency()
