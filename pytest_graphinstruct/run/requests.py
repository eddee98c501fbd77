"""The request for one sample of one item of a run (:class:`RequestBuilder`)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from pytest_graphinstruct.methods.constrained import request_extra, resolve_format
from pytest_graphinstruct.methods.registry import method_of
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.session_inputs import SessionInputs
from pytest_graphinstruct.suite.instruction import Instruction

if TYPE_CHECKING:
    from pytest_graphinstruct.methods.caap import CaapDecision
    from pytest_graphinstruct.prompts.exemplars import Exemplar


class RequestBuilder:
    """Builds a run's requests from its configuration and exemplars (deterministic)."""

    def __init__(self, inputs: SessionInputs) -> None:
        self.inputs = inputs
        # the last item's request: its samples are asked one after another and differ only in
        # their index (one entry, replaced whole, so threads never see half of one)
        self._last: tuple[str, str, Request] | None = None

    def request(self, instruction: Instruction, cell: Cell, sample: int) -> Request:
        """The request for one sample of one item (deterministic; no randomness)."""
        last = self._last
        if last is not None and last[0] == instruction.id and last[1] == cell.label:
            return dataclasses.replace(last[2], sample_index=sample)
        built = self._build(instruction, cell, sample)
        self._last = (instruction.id, cell.label, built)
        return built

    def _build(self, instruction: Instruction, cell: Cell, sample: int) -> Request:
        from pytest_graphinstruct.prompts.builder import build_messages

        config = self.inputs.config
        strategy = cell.strategy
        decision = None
        if method_of(cell.spec).caap:
            decision = self.caap(instruction, cell.model)
            strategy = decision.strategy
        exemplars: tuple[Exemplar, ...] = ()
        if strategy.startswith("few"):
            exemplars = self.inputs.exemplars.select(instruction, k=3,
                                                     seed=config.exemplar_seed)
        messages = build_messages(instruction, strategy, exemplars=exemplars,
                                  templates=config.templates)
        if decision is not None:
            from pytest_graphinstruct.methods.caap import augment

            messages = augment(messages, decision)
        extra: tuple[tuple[str, Any], ...] = ()
        if method_of(cell.spec).constrained:
            fmt = resolve_format(config.constrained_format, cell.model)
            extra = request_extra(fmt, instruction.level)
        return Request(model=cell.model, messages=messages, params=config.params,
                       sample_index=sample, instruction_id=instruction.id, cell=cell.label,
                       extra=extra)

    def caap(self, instruction: Instruction, model: str) -> CaapDecision:
        """CAAP's decision for ``instruction`` and ``model`` (the packaged table, the run's
        ``gi_model_tiers`` and prompt texts)."""
        from pytest_graphinstruct.methods.caap import select

        config = self.inputs.config
        return select(instruction, model, tiers=dict(config.model_tiers),
                      templates=config.templates)
