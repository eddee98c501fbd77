"""Every sample's answer of a run in one process: asked ahead of time, then awaited per item
(:class:`AnswerFetcher`)."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import Future

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.methods.registry import method_of
from pytest_graphinstruct.models.base import wait_result
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.method_chains import MethodChains
from pytest_graphinstruct.run.peers import PeerAnswers
from pytest_graphinstruct.run.requests import RequestBuilder
from pytest_graphinstruct.run.schedulers import ModelSchedulers
from pytest_graphinstruct.run.session_inputs import SessionInputs
from pytest_graphinstruct.run.tally import AnswerTally
from pytest_graphinstruct.suite.instruction import Instruction


class AnswerFetcher:
    """One future per sample asked (through a scheduler, or a method chain), and the items
    this worker owns under xdist."""

    def __init__(self, inputs: SessionInputs, requests: RequestBuilder,
                 models: ModelSchedulers, chains: MethodChains, tally: AnswerTally, *,
                 worker: tuple[int, int] | None) -> None:
        self.inputs = inputs
        self.requests = requests
        self.models = models
        self.chains = chains
        self.tally = tally
        self.worker = worker
        self.peers = PeerAnswers(inputs, requests, models)
        self._futures: dict[tuple[str, str, int], Future[Answer]] = {}
        #: the items (instruction id, cell label) this worker prefetched; ``None`` outside xdist
        self.owned: set[tuple[str, str]] | None = None

    def prefetch(self, items: Iterable[tuple[Instruction, Cell]]) -> int:
        """Submit every sample of ``items`` to the schedulers; returns the number submitted.

        Under xdist, ``items`` is the full selected list (identical on every worker) and each
        worker prefetches only its share (position modulo worker count); an item that runs on a
        worker which does not own it waits for the owner's answer in the shared cache (see
        :meth:`answers`), so no request is made twice.
        """
        items = list(items)
        if self.worker is not None:
            index, count = self.worker
            items = [x for n, x in enumerate(items) if n % count == index]
            self.owned = {(inst.id, cell.label) for inst, cell in items}
        n = 0
        for inst, cell in items:
            for k in range(self.inputs.samples(inst, cell)):
                self.tally.watch(self._future(inst, cell, k))
                n += 1
        return n

    def answers(self, inst: Instruction, cell: Cell) -> tuple[Answer, ...]:
        """Every sample's answer for one item (blocks until all are obtained or given up).

        An item another worker owned carries the calls that worker made for it: its cached
        answers say so, and an answer it did not cache (an error, or a call cancelled when
        the run stopped) was noted with its calls (:meth:`AnswerCache.uncached_calls`)."""
        iterative = method_of(cell.spec).iterative
        peer = (self.owned is not None and (inst.id, cell.label) not in self.owned
                and not iterative)  # a method's calls are shared through the cache
        if peer and (inst.id, cell.label, 0) not in self._futures:
            self.peers.await_owner(inst, cell)
        futures = [self._future(inst, cell, k) for k in range(self.inputs.samples(inst, cell))]
        got = tuple(wait_result(f) for f in futures)  # a Ctrl+C is acted on while waiting
        return self.peers.with_owner_calls(inst, cell, got) if peer else got

    def ask(self, inst: Instruction, cell: Cell, k: int) -> Future[Answer]:
        """The future of sample ``k`` (from 0) of one item, submitted now unless it was
        already (``--gi-samples=auto``'s looks ask sample by sample)."""
        known = (inst.id, cell.label, k) in self._futures
        fut = self._future(inst, cell, k)
        if not known:
            self.tally.watch(fut)
        return fut

    def _future(self, inst: Instruction, cell: Cell, k: int) -> Future[Answer]:
        key = (inst.id, cell.label, k)
        fut = self._futures.get(key)
        if fut is None:
            if method_of(cell.spec).iterative:
                fut = self.chains.submit(inst, cell, k)
            else:
                fut = self.models.schedulers[cell.model].submit(
                    self.requests.request(inst, cell, k))
            self._futures[key] = fut
        return fut
