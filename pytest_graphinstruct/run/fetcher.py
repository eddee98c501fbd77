"""Every sample's answer of a run in one process: asked ahead of time, then awaited per item
(:class:`AnswerFetcher`); under xdist, a worker's answers from an endpoint come from the
controller's answer service (:mod:`.answer_service`)."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from concurrent.futures import Future

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.methods.registry import method_of
from pytest_graphinstruct.models.base import one_line, wait_result
from pytest_graphinstruct.run.answer_service import AnswerClient
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.method_chains import MethodChains
from pytest_graphinstruct.run.model_schedulers import ModelSchedulers
from pytest_graphinstruct.run.requests import RequestBuilder
from pytest_graphinstruct.run.session_inputs import SessionInputs
from pytest_graphinstruct.run.tally import AnswerTally
from pytest_graphinstruct.suite.instruction import Instruction


class AnswerFetcher:
    """One future per sample asked (through a scheduler, or a method chain); with ``service``
    (an xdist worker), the answers of the ``served`` models are the controller's."""

    def __init__(self, inputs: SessionInputs, requests: RequestBuilder,
                 models: ModelSchedulers, chains: MethodChains, tally: AnswerTally, *,
                 service: AnswerClient | None = None,
                 served: frozenset[str] = frozenset()) -> None:
        self.inputs = inputs
        self.requests = requests
        self.models = models
        self.chains = chains
        self.tally = tally
        self.service = service
        self.served = served if service is not None else frozenset()
        self._futures: dict[tuple[str, str, int], Future[Answer]] = {}
        self._lock = threading.Lock()  # the service's threads ask beside the main thread

    def prefetch(self, items: Iterable[tuple[Instruction, Cell]]) -> int:
        """Submit every sample of ``items`` to the schedulers (in order); returns the number
        submitted.  Items of a model the controller's service answers are not submitted here
        (the controller asked for them)."""
        n = 0
        for inst, cell in items:
            if cell.model in self.served:
                continue
            for k in range(self.inputs.samples(inst, cell)):
                self.ask(inst, cell, k)
                n += 1
        return n

    def answers(self, inst: Instruction, cell: Cell) -> tuple[Answer, ...]:
        """Every sample's answer for one item (blocks until all are obtained or given up)."""
        if cell.model in self.served:
            return self._from_service(inst, cell)
        futures = [self.ask(inst, cell, k) for k in range(self.inputs.samples(inst, cell))]
        return tuple(wait_result(f) for f in futures)  # a Ctrl+C is acted on while waiting

    def ask(self, inst: Instruction, cell: Cell, k: int) -> Future[Answer]:
        """The future of sample ``k`` (from 0) of one item, submitted now unless it was
        already (``--gi-samples=auto``'s looks ask sample by sample)."""
        if cell.model in self.served:
            done: Future[Answer] = Future()
            done.set_result(self._from_service(inst, cell, (k,))[0])
            return done
        key = (inst.id, cell.label, k)
        with self._lock:
            fut = self._futures.get(key)
            if fut is not None:
                return fut
            if method_of(cell.spec).iterative:
                fut = self.chains.submit(inst, cell, k)
            else:
                fut = self.models.schedulers[cell.model].submit(
                    self.requests.request(inst, cell, k))
            self._futures[key] = fut
        self.tally.watch(fut)
        return fut

    def _from_service(self, inst: Instruction, cell: Cell,
                      samples: tuple[int, ...] | None = None) -> tuple[Answer, ...]:
        """The controller's answers; when it cannot give them, one error per sample saying
        why (the item is then an error, like any answer that could not be obtained)."""
        assert self.service is not None
        try:
            return self.service.answers(inst.id, cell, samples)
        except GraphInstructError as exc:
            n = len(samples) if samples is not None else self.inputs.samples(inst, cell)
            return tuple(Answer(error=one_line(str(exc)), calls=0) for _ in range(n))
