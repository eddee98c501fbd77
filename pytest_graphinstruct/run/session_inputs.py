"""What a benchmark session reads: the suite, the recorded answers, the answer cache, the
reference pools and the few-shot exemplars (:class:`SessionInputs`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_graphinstruct.methods.registry import method_of
from pytest_graphinstruct.run.config import Cell, RunConfig
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import Suite, load_suite

if TYPE_CHECKING:
    from pytest_graphinstruct.models.backends.recorded import RecordProblem, ReplayCheck, Responses
    from pytest_graphinstruct.models.caching.cache import AnswerCache
    from pytest_graphinstruct.pools import ReferencePools
    from pytest_graphinstruct.prompts.exemplars import ExemplarPool
    from pytest_graphinstruct.run.preflight import RunInputs
    from pytest_graphinstruct.run.served import Served


class SessionInputs:
    """The inputs of one benchmark run in one process: read once, shared by every part of its
    session (see :class:`~pytest_graphinstruct.run.session.BenchmarkSession`'s arguments)."""

    def __init__(self, config: RunConfig, *, worker: tuple[int, int] | None,
                 inputs: RunInputs | None, served: Served | None) -> None:
        """Load the suite, the recorded answers and open the answer cache (``inputs``' when
        given; an xdist ``worker`` opens none: only the controller asks endpoints); pools and
        exemplars are loaded on first use.

        Raises:
            GraphInstructError: the suite or the recorded answers cannot be read.
        """
        from pytest_graphinstruct.models.caching.cache import AnswerCache
        from pytest_graphinstruct.run.served import Served

        self.config = config
        self.suite: Suite = (inputs.suite if inputs is not None
                             else load_suite(config.suite, levels=config.levels))
        self.replay: Responses | None = inputs.replay if inputs is not None else None
        if config.replay is not None and self.replay is None:
            from pytest_graphinstruct.models.backends.recorded import read_responses

            self.replay = read_responses(config.replay, self.suite, levels=config.levels)
        self.served: Served = (inputs.served if inputs is not None
                               else served if served is not None else Served())
        self.cache: AnswerCache | None = (
            None if worker is not None
            else inputs.cache if inputs is not None and inputs.cache is not None
            else AnswerCache(config.cache_dir, mark=self.served.cache_mark)
            if config.cache_dir is not None else None)
        self._pools: ReferencePools | None = inputs.pools if inputs is not None else None
        self._exemplars: ExemplarPool | None = None
        #: --gi-samples=auto: (instruction id, cell label) → the samples its looks asked
        self.planned: dict[tuple[str, str], int] = {}

    @property
    def pools(self) -> ReferencePools | None:
        """The run's reference pools: those the preflight read in this process, else loaded on
        first use — by an xdist worker when it first scores an item (the preflight, in the
        controller, has reported a broken pool directory before any item ran).

        Raises:
            GraphInstructError: the pools cannot be read.
        """
        if self._pools is None and self.config.pools is not None:
            from pytest_graphinstruct.run.preflight import load_pools

            self._pools = load_pools(self.config)
        return self._pools

    def flush_pools(self) -> None:
        """Write what the pools learned to their disk cache (nothing when never loaded)."""
        if self._pools is not None:
            for pool in self._pools.pools.values():
                pool.flush()

    @property
    def exemplars(self) -> ExemplarPool:
        """The few-shot exemplar pool of the suite, built on first use."""
        if self._exemplars is None:
            from pytest_graphinstruct.prompts.exemplars import ExemplarPool
            from pytest_graphinstruct.verify.verifier import DEFAULT_VERIFIER

            self._exemplars = ExemplarPool.from_suite(self.suite, parse=DEFAULT_VERIFIER.parse,
                                                      templates=self.config.templates)
        return self._exemplars

    @property
    def recorded_ids(self) -> frozenset[str] | None:
        """The instruction ids the recorded answers hold usable records for — ids of the suite,
        never a skipped line's (``None`` without ``--gi-replay``)."""
        if self.replay is None:
            return None
        return frozenset(r.instruction_id for r in self.replay)

    @property
    def replay_problems(self) -> tuple[RecordProblem, ...]:
        """Every line of the recorded answers that was skipped, and why, in line order."""
        return self.replay.problems if self.replay is not None else ()

    @property
    def replay_check(self) -> ReplayCheck | None:
        """What reading the recorded answers found, as the report's ``run.replay_problems``
        keeps it (``None`` without ``--gi-replay``)."""
        return self.replay.check() if self.replay is not None else None

    def select(self, instructions: Sequence[Instruction]) -> list[Instruction]:
        """The instructions this run asks: with recorded answers, only those the file holds
        (an instruction without answers is not an infrastructure error of the run)."""
        recorded = self.recorded_ids
        if recorded is None:
            return list(instructions)
        return [inst for inst in instructions if inst.id in recorded]

    def samples(self, inst: Instruction, cell: Cell | None = None) -> int:
        """Samples per item: ``gi_chains`` in an iterative method's cell; else
        ``--gi-samples``, or with recorded answers and no ``--gi-samples`` as many as the file
        holds for the instruction (at least 1); with ``--gi-samples=auto`` as many as its
        looks asked (:attr:`planned`, 1 before them)."""
        if cell is not None and runs_method(cell):
            return self.config.chains
        if self.config.auto_samples is not None:  # decided look by look (run.adaptive)
            return self.planned.get((inst.id, cell.label if cell is not None else ""), 1)
        if self.config.samples is not None:
            return self.config.samples
        record = self.replay.get(inst.id) if self.replay is not None else None
        return max(1, len(record.samples)) if record is not None else 1


def runs_method(cell: Cell) -> bool:
    """Whether the cell runs a method (its samples are ``gi_chains``)."""
    kind = method_of(cell.spec)
    return kind.iterative or kind.caap
