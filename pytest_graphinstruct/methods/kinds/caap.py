"""``caap``: capability-aware adaptive prompting — one call per sample of the prompt CAAP
chooses per instruction (:mod:`pytest_graphinstruct.methods.caap`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

from pytest_graphinstruct.answers import Message
from pytest_graphinstruct.methods.protocol import not_iterative
from pytest_graphinstruct.methods.spec import MethodContext, MethodSpec

if TYPE_CHECKING:
    from pytest_graphinstruct.methods.iterative import Ask, ChainResult, Grader
    from pytest_graphinstruct.suite.instruction import Instruction


class Caap:
    """CAAP's prompt, asked once per sample."""

    name: Final = "caap"
    selectable: Final = True
    iterative: Final = False
    feedback: Final = False
    constrained: Final = False
    caap: Final = True

    def chain(self, spec: MethodSpec, instruction: Instruction, prompt: Sequence[Message],
              ask: Ask, grade: Grader, *, chain: int, context: MethodContext) -> ChainResult:
        """Never: CAAP makes one call per sample (raises :class:`ValueError`)."""
        raise not_iterative(spec)

    def settings(self, spec: MethodSpec, context: MethodContext) -> Mapping[str, object]:
        """Chains, the CAAP table and the user's tiers."""
        return {"chains": context.chains, "caap_table": "packaged",
                "model_tiers": dict(context.model_tiers)}


CAAP: Final = Caap()
