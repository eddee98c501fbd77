"""The method protocol: what every method of the registry (:mod:`.registry`) provides.

A method is one module under ``methods/kinds/`` holding one object of this shape (the shape of
pytest-xdist's ``scheduler/protocol.py``).  The run asks it, never the method's name, how a
cell of the method is run:

* ``iterative`` methods make several calls per sample: the run calls :meth:`Method.chain` once
  per sample (chain), through its scheduler;
* ``caap`` methods have their prompt (strategy and extras) chosen by CAAP per instruction, so
  their cells are made once per model;
* ``constrained`` methods send the item's prompt with a decoding constraint of the answer
  format (:mod:`.constrained`); ``--gi-constrained`` gives every baseline cell a twin of
  that method (:data:`~.registry.CONSTRAINED_METHOD`);
* a method that is not ``selectable`` cannot be named in ``--gi-method`` (``constrained``
  cells are made by ``--gi-constrained``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from pytest_graphinstruct.answers import Message
from pytest_graphinstruct.methods.spec import MethodContext, MethodSpec

if TYPE_CHECKING:
    from pytest_graphinstruct.methods.iterative import Ask, ChainResult, Grader
    from pytest_graphinstruct.suite.instruction import Instruction


class Method(Protocol):
    """One method of the registry.

    Attributes:
        name: the registry name (a :attr:`MethodSpec.base`).
        selectable: may be named in ``--gi-method``.
        iterative: several calls per sample (:meth:`chain` makes them); may name rounds.
        feedback: the method string may fix a feedback granularity (``vgig-fine``).
        caap: CAAP chooses the prompt per instruction.
        constrained: its requests carry a decoding constraint (``gi_constrained_format``).
    """

    @property
    def name(self) -> str: ...

    @property
    def selectable(self) -> bool: ...

    @property
    def iterative(self) -> bool: ...

    @property
    def feedback(self) -> bool: ...

    @property
    def caap(self) -> bool: ...

    @property
    def constrained(self) -> bool: ...

    def chain(self, spec: MethodSpec, instruction: Instruction, prompt: Sequence[Message],
              ask: Ask, grade: Grader, *, chain: int, context: MethodContext) -> ChainResult:
        """Chain ``chain`` of an iterative method over the item's ``prompt``.

        Raises:
            ValueError: the method is not iterative.
        """
        ...

    def settings(self, spec: MethodSpec, context: MethodContext) -> Mapping[str, object]:
        """What a cell of ``spec`` runs with, as the report's ``method_settings`` keeps it
        (empty for a one-call method without settings)."""
        ...


def not_iterative(spec: MethodSpec) -> ValueError:
    """The error :meth:`Method.chain` raises for a method that is not iterative."""
    return ValueError(f"not an iterative method: {spec.text!r}")
