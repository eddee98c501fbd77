"""``--gi-samples=auto`` in a run: each instruction's first sample, then more only while the
gate needs them, decided look by look before any item runs (:mod:`~pytest_graphinstruct.score
.sequential`; the gate replays the same looks from the report).

A look asks every sample the design wants at once, waits for them, verifies each and hands
their pass outcomes to :func:`~pytest_graphinstruct.score.regression.sequential.sequential_test`
with the
baseline cell's; it stops when every level of every cell is decided.  A sample that got no
answer (an infrastructure error) takes its instruction out of the design: it is not paired,
as the gate leaves an item with an error unpaired.  The samples each item was asked are
recorded in :attr:`SessionInputs.planned`, which the items then read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.base import wait_result
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.records.results import CellReport, sample_passed
from pytest_graphinstruct.score.regression.multiple import FAMILY_ALPHA
from pytest_graphinstruct.score.regression.sequential import (
    SequentialResult,
    SequentialSettings,
    sequential_test,
)
from pytest_graphinstruct.suite.instruction import Instruction

__all__ = ["Looks", "ask_adaptively", "baseline_problem", "design", "sample_outcomes"]

Outcomes = dict[str, tuple[int, tuple[bool, ...]]]


def sample_outcomes(cell: CellReport) -> Outcomes:
    """A cell's scored instructions with recorded samples: id → (level, each sample passed,
    in sample order) — the rule the report's ``pass_share`` counts with."""
    return {r.instruction_id: (r.level, tuple(sample_passed(s) for s in r.samples))
            for r in cell.per_instruction if r.scored and r.samples}


def baseline_problem(cells: Mapping[str, CellReport], name: str) -> str | None:
    """Why the baseline ``name`` cannot serve ``--gi-samples=auto`` (``None``: it can): the
    looks pair sample j of the run with sample j of the baseline, so each baseline cell
    compared (``cells``: run cell label → baseline cell) must hold several samples of some
    instruction; one that holds one sample per instruction (or no per-sample verdicts) leaves
    nothing to ask after the first sample.  One line naming the baseline, the cell and what
    it holds."""
    for label, cell in cells.items():
        most = max((len(r.samples) for r in cell.per_instruction if r.scored), default=0)
        if most < 2:
            holds = ("no per-sample verdicts" if most == 0 else "1 sample per instruction")
            return (f"--gi-samples=auto needs a baseline of several samples per instruction, "
                    f"but {name} holds {holds} (cell {label}): nothing could be asked beyond "
                    "the first sample; make the baseline with a fixed --gi-samples (e.g. 5) "
                    "and --gi-update-baseline, or give a fixed count")
    return None


def design(cap: int, runs: Mapping[str, Mapping[str, int]], bases: Mapping[str, Outcomes],
           alpha: float = FAMILY_ALPHA) -> SequentialSettings:
    """The looks' settings for a run whose cells hold ``runs`` (cell label → instruction id →
    level: every item, whatever its outcome) against ``bases`` (the baseline cells'
    :func:`sample_outcomes`): the family is every (cell, level) with an instruction in both —
    what the run selects and the gate replays alike, so both take the same looks."""
    family = sum(len({lv for i, lv in run.items() if i in bases.get(label, {})})
                 for label, run in runs.items())
    return SequentialSettings(cap=cap, alpha=alpha, tests=max(1, family))


@dataclass(frozen=True)
class Looks:
    """What the looks decided, per cell label, and the samples asked in all."""

    cells: Mapping[str, SequentialResult]
    asked: int


Ask = Callable[[Instruction, Cell, int], Future[Answer]]
Passed = Callable[[Instruction, Cell, Answer], bool]


def ask_adaptively(items: Sequence[tuple[Instruction, Cell]],
                   baselines: Mapping[str, CellReport], planned: dict[tuple[str, str], int], *,
                   cap: int, ask: Ask, passed: Passed,
                   alpha: float = FAMILY_ALPHA) -> Looks:
    """Run the looks for ``items`` (module docstring): ``ask(inst, cell, k)`` submits sample
    ``k`` (from 0), ``passed`` verifies an answer; ``planned`` is filled with each item's
    samples.  A cell without a baseline cell, or an instruction the baseline did not score,
    gets one sample (nothing to pair it with)."""
    by_cell: dict[str, dict[str, tuple[Instruction, Cell]]] = {}
    for inst, cell in items:
        by_cell.setdefault(cell.label, {})[inst.id] = (inst, cell)
        planned[(inst.id, cell.label)] = 1
    base = {label: sample_outcomes(baselines[label]) for label in by_cell if label in baselines}
    settings = design(cap, {label: {i: inst.level for i, (inst, _) in chosen.items()}
                            for label, chosen in by_cell.items()}, base, alpha)
    runs: dict[str, Outcomes] = {
        label: {i: (base[label][i][0], ()) for i in by_cell[label] if i in base[label]}
        for label in base}
    # an instruction with nothing to pair gets its one sample with the first look
    asked = 0
    for label, chosen in by_cell.items():
        for iid, (inst, cell) in chosen.items():
            if iid not in runs.get(label, {}):
                ask(inst, cell, 0)
                asked += 1
    results: dict[str, SequentialResult] = {}
    while True:
        wanted = []
        for label, run in runs.items():
            results[label] = sequential_test(base[label], run, settings)
            for iid, k in results[label].asks.items():
                inst, cell = by_cell[label][iid]
                planned[(iid, label)] = k
                wanted.append((inst, cell, ask(inst, cell, k - 1)))
        if not wanted:
            return Looks(results, asked)
        asked += len(wanted)
        for inst, cell, fut in wanted:
            answer = wait_result(fut)
            run = runs[cell.label]
            if not answer.ok:
                # no answer: the item is an error, which the gate does not pair; the next
                # look replays the design without it, as the gate will
                run.pop(inst.id, None)
            elif inst.id in run:
                level, got = run[inst.id]
                run[inst.id] = (level, (*got, passed(inst, cell, answer)))
