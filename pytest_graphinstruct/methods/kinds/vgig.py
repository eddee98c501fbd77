"""``vgig`` (``vgig-<feedback>``): verification-guided iterative generation
(:func:`pytest_graphinstruct.methods.iterative.vgig_chain`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

from pytest_graphinstruct.answers import Message
from pytest_graphinstruct.methods.kinds.base_temperature import base_temperature
from pytest_graphinstruct.methods.spec import MethodContext, MethodSpec

if TYPE_CHECKING:
    from pytest_graphinstruct.methods.iterative import Ask, ChainResult, Grader
    from pytest_graphinstruct.suite.instruction import Instruction


class Vgig:
    """VGIG over the item's prompt (with ``caap``: over CAAP's prompt, the ``combined``
    method)."""

    selectable: Final = True
    iterative: Final = True
    constrained: Final = False
    feedback: bool

    def __init__(self, name: str, *, caap: bool, feedback: bool) -> None:
        self.name, self.caap, self.feedback = name, caap, feedback

    def chain(self, spec: MethodSpec, instruction: Instruction, prompt: Sequence[Message],
              ask: Ask, grade: Grader, *, chain: int, context: MethodContext) -> ChainResult:
        """Chain ``chain`` of VGIG: the spec's rounds and feedback, else the run's."""
        from pytest_graphinstruct.methods.iterative import vgig_chain

        return vgig_chain(prompt, ask, grade, chain=chain, feasible=instruction.feasible,
                          rounds=context.rounds_of(spec),
                          feedback_level=context.feedback_of(spec),
                          temperature=base_temperature(context), instruction=instruction,
                          templates=context.templates)

    def settings(self, spec: MethodSpec, context: MethodContext) -> Mapping[str, object]:
        """Chains, rounds, base temperature and feedback (and CAAP's table and tiers)."""
        out: dict[str, object] = {"chains": context.chains, "rounds": context.rounds_of(spec),
                                  "temperature": base_temperature(context),
                                  "feedback": context.feedback_of(spec)}
        if self.caap:
            out["caap_table"] = "packaged"
            out["model_tiers"] = dict(context.model_tiers)
        return out


VGIG: Final = Vgig("vgig", caap=False, feedback=True)
