"""``baseline`` (``--gi-method=none``): one call per sample, no verifier in the loop."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

from pytest_graphinstruct.answers import Message
from pytest_graphinstruct.methods.protocol import not_iterative
from pytest_graphinstruct.methods.spec import MethodContext, MethodSpec

if TYPE_CHECKING:
    from pytest_graphinstruct.methods.iterative import Ask, ChainResult, Grader
    from pytest_graphinstruct.suite.instruction import Instruction


class OneCall:
    """A method that asks the item's prompt once per sample (no chain, no settings)."""

    selectable: bool
    constrained: bool
    iterative: Final = False
    feedback: Final = False
    caap: Final = False

    def __init__(self, name: str, *, selectable: bool, constrained: bool = False) -> None:
        self.name = name
        self.selectable = selectable
        self.constrained = constrained

    def chain(self, spec: MethodSpec, instruction: Instruction, prompt: Sequence[Message],
              ask: Ask, grade: Grader, *, chain: int, context: MethodContext) -> ChainResult:
        """Never: a one-call method has no chain (raises :class:`ValueError`)."""
        raise not_iterative(spec)

    def settings(self, spec: MethodSpec, context: MethodContext) -> Mapping[str, object]:
        """No settings (``{}``)."""
        return {}


BASELINE: Final = OneCall("baseline", selectable=False)  # named as `none`
