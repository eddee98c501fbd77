"""A session's checked items waiting to be scored, scored in batches, and the results so far
(:class:`ScoringQueue`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.methods.registry import method_of
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.evaluate import Checked, check, error_result, score
from pytest_graphinstruct.run.item_store import ItemStore, item_key
from pytest_graphinstruct.run.records.results import ItemResult
from pytest_graphinstruct.run.requests import RequestBuilder
from pytest_graphinstruct.run.session_inputs import SessionInputs
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.verifier import Verifier
from pytest_graphinstruct.vocab import Outcome

SCORE_BATCH = 128
"""Recorded items are scored in batches of this many (D3's GCNs train together).  Scoring as the
run goes, not all at the end, lets pytest-xdist balance the scoring work between workers like
any other test time (a batch of 128 costs ~5 % more than one batch of 800)."""

TAIL_BATCH = 16
"""The smallest batch a process that knows its share scores before its end (see
:meth:`ScoringQueue.batch_limit`)."""


class ScoringQueue:
    """Checks items, holds them until their batch is scored, and keeps every result."""

    def __init__(self, inputs: SessionInputs, requests: RequestBuilder,
                 verifier: Verifier, *, store: ItemStore | None = None,
                 expected: int | None = None) -> None:
        """``store``: where scored results are kept and :meth:`recall` reads them (the
        ``score`` command's; only used where D3 trains on the CPU).  ``expected``: about how
        many items this process will record (an xdist worker's share of the run), so that its
        last batches shrink (:meth:`batch_limit`); ``None``: unknown."""
        self.inputs = inputs
        self.requests = requests
        self.verifier = verifier
        self.store = store if inputs.config.d3_device == "cpu" else None
        self.expected = expected
        self.results: list[ItemResult] = []
        self.recalled = 0  #: results read from the store by :meth:`recall`
        self._recorded = 0  # items handed to record(), scored or pending
        self._pending: list[tuple[Checked, bool]] = []

    def check(self, inst: Instruction, cell: Cell, answers: Sequence[Answer]) -> Checked:
        """Verify every sample of one item and decide its outcome (no scores yet: see
        :meth:`record` and :meth:`flush`)."""
        return check(inst, answers, cell=cell, verifier=self.verifier,
                     pass_rule=self.inputs.config.pass_rule)

    def record(self, checked: Checked, *, expected_failure: bool = False) -> None:
        """Keep a checked item for scoring; its result appears in :attr:`results` after the
        next :meth:`flush`, which happens by itself once :meth:`batch_limit` items are held
        (D3 trains one batch over them)."""
        self._pending.append((checked, expected_failure))
        self._recorded += 1
        if len(self._pending) >= self.batch_limit():
            self.flush()

    def batch_limit(self) -> int:
        """How many held items are scored by themselves: :data:`SCORE_BATCH`; where the
        process knows about how many items it will record (:attr:`expected`), no more than
        those still to come, down to :data:`TAIL_BATCH`.

        The last batch is scored at the session's end, after the process's last item: under
        xdist, a worker left with a full batch there (up to ~1 s of D3 training) kept the
        other workers and the controller waiting.  Halving the batches towards the end leaves
        at most :data:`TAIL_BATCH` or so for then, at the cost of a few more, smaller batches
        (each ~20-30 ms more for its GCN groups).  Batching never changes a score."""
        if self.expected is None:
            return SCORE_BATCH
        return min(SCORE_BATCH, max(TAIL_BATCH, self.expected - self._recorded))

    def recall(self, inst: Instruction, cell: Cell, answers: Sequence[Answer]) -> bool:
        """Keep the stored result of an item scored before with these very answers (the
        queue's :class:`~.item_store.ItemStore`), as :meth:`record` then :meth:`flush` would
        have made it; ``False`` (nothing kept) when there is no store, no such result, or an
        answer is an error."""
        if self.store is None or not answers or any(a.error is not None for a in answers):
            return False
        hit = self.store.get(self._key(inst, cell, answers))
        if hit is None:
            return False
        self.results.append(hit)
        self.recalled += 1
        return True

    def record_error(self, inst: Instruction, cell: Cell, answers: Sequence[Answer], *,
                     outcome: Outcome, error: str | None) -> None:
        """Keep an item that has no scores (``error``: no answer; ``skipped``)."""
        self.results.append(error_result(inst, cell, answers, outcome=outcome,
                                         error=error))

    def flush(self) -> list[ItemResult]:
        """Score every item recorded since the last flush (one batch) and return
        :attr:`results`, the results of every item recorded in this process.

        A batch whose scoring raises is scored item by item; an item whose scoring still
        raises is kept as an ``error`` naming the exception (a harness fault is never the
        model's failure, and no other item is lost with it).
        """
        if not self._pending:
            return self.results
        pending, self._pending = self._pending, []
        try:
            scored = score([c for c, _ in pending], self.inputs.pools,
                           d3_device=self.inputs.config.d3_device)
        except Exception:
            scored = [self._score_alone(c) for c, _ in pending]
        kept: dict[str, ItemResult] = {}
        for (checked, expected), result in zip(pending, scored, strict=True):
            result = self._with_method_details(checked, result)
            if self.store is not None:
                kept[self._key(checked.instruction, checked.cell, checked.answers)] = result
            self.results.append(replace(result, expected_failure=True) if expected
                                else result)
        if self.store is not None:
            self.store.put(kept)
        return self.results

    def evaluate(self, inst: Instruction, cell: Cell, answers: Sequence[Answer]) -> ItemResult:
        """Verify and score one item at once (outside the batches)."""
        return score([self.check(inst, cell, answers)], self.inputs.pools,
                     d3_device=self.inputs.config.d3_device)[0]

    def _with_method_details(self, checked: Checked, result: ItemResult) -> ItemResult:
        """A CAAP cell's result names CAAP's decision for the item (``details.caap``)."""
        if not method_of(checked.cell.spec).caap:
            return result
        d = self.requests.caap(checked.instruction, checked.cell.model)
        caap = {"strategy": d.strategy, "cell": str(d.cell),
                "extras": [name for name, _ in d.extras], "rationale": d.rationale}
        return replace(result, details=replace(result.details, caap=caap))

    def _key(self, inst: Instruction, cell: Cell, answers: Sequence[Answer]) -> str:
        return item_key(inst, cell, answers, pass_rule=self.inputs.config.pass_rule,
                        limits=self.verifier.limits, pools=self.inputs.pools)

    def _score_alone(self, checked: Checked) -> ItemResult:
        try:
            return score([checked], self.inputs.pools,
                         d3_device=self.inputs.config.d3_device)[0]
        except Exception as exc:
            return error_result(checked.instruction, checked.cell, checked.answers,
                                outcome="error",
                                error=f"scoring failed: {type(exc).__name__}: {exc}")
