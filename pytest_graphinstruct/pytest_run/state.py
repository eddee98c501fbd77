"""The state of one active run in one process, shared by the run's plugins (:mod:`.entry`
registers them): what the options say, what this process is (single, xdist controller or
worker), the run's session once opened, what the workers sent, and what the end decided.

Each plugin does one concern's steps over it: the session's start and end
(:mod:`.lifecycle`), collection (:mod:`.collection`), each item's outcome (:mod:`.outcomes`),
the xdist controller's answer service (:mod:`.service`), the workers' input and payloads
(:mod:`.xdist_hooks`), the live line (:mod:`.live`) and the terminal summary (:mod:`.summary`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.pytest_run.outputs import output_on_input, run_inputs
from pytest_graphinstruct.pytest_run.signals import RunStopper
from pytest_graphinstruct.pytest_run.usage import one_line, usage_error, write_stopped
from pytest_graphinstruct.run.config import Cell, RunConfig
from pytest_graphinstruct.run.payload import INPUT_KEY, WorkerInput, WorkerTotals
from pytest_graphinstruct.run.records.results import ItemResult, RunReport
from pytest_graphinstruct.run.tally import BatchProgress, ProgressCounts
from pytest_graphinstruct.suite.instruction import Instruction

if TYPE_CHECKING:  # the evaluation path is imported on first use: an xdist controller that
    # only merges results starts its workers sooner without it
    from pytest_graphinstruct.run.answer_service import AnswerService
    from pytest_graphinstruct.run.gate.verdict import Decision, Written
    from pytest_graphinstruct.run.local import LocalHost
    from pytest_graphinstruct.run.preflight import RunInputs
    from pytest_graphinstruct.run.served import Served
    from pytest_graphinstruct.run.session import BenchmarkSession
    from pytest_graphinstruct.run.session_inputs import SessionInputs


class RunState:
    """Session-scoped state of an active benchmark run in this process."""

    def __init__(self, config: pytest.Config, run: RunConfig) -> None:
        from pytest_graphinstruct.run.gate.plan import BaselinePlan, GateOptions, plan_baseline
        from pytest_graphinstruct.run.local import LocalHost

        self.config = config
        self.run = run
        self.worker = _worker(config)  # (index, count) in an xdist worker, else None
        self.winput = _worker_input(config)  # what the controller told this worker
        self.opened: BenchmarkSession | None = None  # the run's session, once `bench` opened it
        self.service: AnswerService | None = None  # the xdist controller's answer service
        self.inputs: RunInputs | None = None  # what the preflight read (this process only)
        self._session_inputs: SessionInputs | None = None
        self.served: Served | None = None if self.winput is None else self.winput.served
        self.stopper = RunStopper(worker=self.worker is not None,
                                  is_controller=lambda: self.controller, on_stop=self._stop_bench)
        self.totals = WorkerTotals()  # xdist controller: what the workers sent
        self.selected: list[str] | None = None  # node ids of the selected items, once known
        self.share: int | None = None  # an xdist worker: about how many items it will run
        self.usage_error: str | None = None
        self.notes: list[str] = []  # BenchmarkSession.notes() of every process
        self.limits: list[str] = []  # BenchmarkSession.limits() of every process
        self.items_done = 0  # items with an outcome, counted where they are reported
        self.violations_shown_as_xfail: list[str] = []  # node ids --lf must rerun
        self.started: str | None = None  # UTC ISO time the session started (run provenance)
        self.gate_options = GateOptions.of(run)
        self.plan = BaselinePlan()  # what the run is compared with (run.verdict)
        self.expected_failures: set[tuple[str, str]] = set()
        self.report: RunReport | None = None  # the run's report, at the end
        self.decision: Decision | None = None  # the run's verdict, at the end
        self.written: list[Written] = []  # what was (not) written at the end, one line each
        self.placeholder: str | None = None  # the report's start-of-run text (outputs)
        # The embedded model: the controller (or the single process) owns the server; xdist
        # workers get its address through their WorkerInput.
        self.local: LocalHost | None = None
        self.local_info: dict[str, str] | None = None
        try:
            if "local" in run.models and run.replay is None:
                if self.worker is not None:
                    local = None if self.winput is None else self.winput.local
                    self.local_info = None if local is None else dict(local)
                else:
                    self.local = LocalHost.find()
            refused = output_on_input(run) or _every_item_on_every_worker(config)
            if refused is not None:
                raise GraphInstructError(refused)
            self.plan = plan_baseline(self.gate_options, [c.label for c in run.cells])
            self.expected_failures = self.plan.expected_failures()
        except GraphInstructError as exc:
            raise self.usage(exc) from None

    @property
    def controller(self) -> bool:
        """Whether this process is the xdist controller (asked late: xdist registers its
        session plugin in its own ``pytest_configure``, which may run after ours)."""
        return getattr(self.config, "workerinput", None) is None and bool(
            getattr(self.config.option, "numprocesses", None)) and (
            self.config.pluginmanager.has_plugin("dsession"))

    @property
    def bench(self) -> BenchmarkSession:
        """The run's session, opened on first use (a stop already requested applies to it)."""
        if self.opened is None:
            from pytest_graphinstruct.run.session import BenchmarkSession

            stop = self.stopper.signal
            try:
                self.opened = BenchmarkSession(
                    self.run, worker=self.worker, local=self.local_info,
                    service=None if self.winput is None else self.winput.answers,
                    service_key="" if self.winput is None else self.winput.answers_key or "",
                    stop_check=None if stop is None else stop.reason,
                    session_inputs=self.session_inputs)
            except GraphInstructError as exc:
                raise self.usage(exc) from None
            if self.stopper.reason is not None:
                self.opened.stop(self.stopper.reason)
            if self.share is not None:
                self.opened.expect_items(self.share)
        return self.opened

    def _stop_bench(self, reason: str) -> None:
        if self.opened is not None:
            self.opened.stop(reason)

    def query(self, instruction: Instruction, strategy: str = "zero-shot", sample: int = 0,
              model: str | None = None) -> Any:
        """The ``gi_query`` fixture: one answer from the run's model, through its scheduler."""
        return self.bench.query(instruction, Cell(model or self.run.models[0], strategy), sample)

    def evaluate(self, instruction: Instruction, answers: Sequence[Any],
                 strategy: str = "zero-shot") -> ItemResult:
        """The ``gi_evaluate`` fixture: ``answers`` scored like the run's own items."""
        return self.bench.evaluate(instruction, Cell(self.run.models[0], strategy),
                                   tuple(answers))

    def usage(self, exc: GraphInstructError | str) -> pytest.UsageError:
        """A usage error, remembered so the report says why the run stopped, and written to
        the report now (except by a worker): pytest skips ``pytest_sessionfinish`` for one
        raised before the session began (configure, sessionstart), so no later hook would
        replace an older report."""
        self.usage_error = one_line(str(exc))
        if self.worker is None:
            write_stopped(self.run.report, f"usage error: {self.usage_error}",
                          inputs=run_inputs(self.run))
        return usage_error(exc)

    @property
    def session_inputs(self) -> SessionInputs:
        """What this process reads for the run — the suite, recorded answers, answer cache;
        pools on first use —, read once (at collection: items need only the suite)."""
        if self._session_inputs is None:
            from pytest_graphinstruct.run.served import Served
            from pytest_graphinstruct.run.session_inputs import SessionInputs

            try:
                self._session_inputs = SessionInputs(
                    self.run, worker=self.worker, inputs=self.inputs,
                    served=Served() if self.served is None else self.served)
            except GraphInstructError as exc:
                raise self.usage(exc) from None
        return self._session_inputs

    def selection(self) -> list[Instruction]:
        """The instructions this run selects before ``--gi-shard`` (and before ``-k``/``-m``):
        the suite, cut to ``--gi-per-level``, without those the recorded answers lack."""
        from pytest_graphinstruct.run.preflight import first_per_level

        inputs = self.session_inputs
        return inputs.select(first_per_level(inputs.suite, self.run.per_level))

    def progress_counts(self) -> ProgressCounts:
        """The answer counts of the run so far (under xdist: the workers' latest and the
        answer service's, added)."""
        own = self.opened.progress() if self.opened is not None else ProgressCounts()
        return self.totals.counts() + own if self.controller else own

    def batch_progress(self) -> tuple[BatchProgress, ...]:
        """Where a batch run's batches stand (empty otherwise; under xdist the controller's
        answer service holds them)."""
        return self.opened.batch_progress() if self.opened is not None else ()


def _every_item_on_every_worker(config: pytest.Config) -> str | None:
    """Why the run refuses xdist's ``--dist each`` (``None``: it is not asked, or this is a
    worker): each worker would run every item, so the report would hold every instruction
    once per worker — a report ``gate`` refuses as damaged, and a baseline no later run could
    be gated against (issue 47)."""
    option = config.option
    if (getattr(config, "workerinput", None) is not None
            or getattr(option, "dist", "no") != "each" or not getattr(option, "tx", None)):
        return None
    return ("--dist each runs every item on every xdist worker, so each instruction would be "
            "answered, scored and reported once per worker; a benchmark run shares its items "
            "out: use -n N with xdist's default --dist load (or worksteal), or drop -n")


def _worker(config: pytest.Config) -> tuple[int, int] | None:
    info = getattr(config, "workerinput", None)
    if info is None:
        return None
    wid = str(info.get("workerid", "gw0"))
    index = int(wid[2:]) if wid[2:].isdigit() else 0
    return index, int(info.get("workercount", 1))


def _worker_input(config: pytest.Config) -> WorkerInput | None:
    """What the controller told this worker (``None`` outside an xdist worker)."""
    info = getattr(config, "workerinput", None)
    if info is None:
        return None
    text = info.get(INPUT_KEY)
    return WorkerInput() if text is None else WorkerInput.from_json(text)
