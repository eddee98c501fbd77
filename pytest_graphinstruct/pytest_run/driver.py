"""The run driver at the pytest edge: the state of one active run in one process, and the steps
its hooks hand over (:mod:`.hooks`; :mod:`.xdist_hooks` under xdist).

The steps call into the run layer (:mod:`pytest_graphinstruct.run.session` and its
neighbours): at session start the controller (or the single process) claims the output files,
checks the run's inputs once (:mod:`~pytest_graphinstruct.run.preflight`) and starts the
embedded server; under xdist the controller also opens the run's answer service
(:mod:`~pytest_graphinstruct.run.answer_service`), the one process that asks endpoints;
collection appends the run's items (:mod:`.items`); once collected, every selected item's
answers are requested in the background (by the single process, or the controller's service
for the models with an endpoint); each item's outcome is recorded for scoring; at session end
the schedulers close (gracefully after an interrupt: :mod:`.signals`), a worker ships its
payload (:mod:`.payload`) and the controller (or the single process) finishes the run
(:mod:`.finish`).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.pytest_run.items import (
    GraphInstructItem,
    baseline_xfail,
    is_item_id,
    item_done,
    make_items,
    record_outcome,
)
from pytest_graphinstruct.pytest_run.outputs import mark_started, output_on_baseline, unclaimable
from pytest_graphinstruct.pytest_run.signals import RunStopper
from pytest_graphinstruct.pytest_run.usage import one_line, usage_error, write_stopped
from pytest_graphinstruct.run.answer_service import served_models
from pytest_graphinstruct.run.config import Cell, RunConfig
from pytest_graphinstruct.run.payload import (
    INPUT_KEY,
    OUTPUT_KEY,
    WorkerInput,
    WorkerTotals,
    worker_payload,
)
from pytest_graphinstruct.run.records.results import ItemResult, RunReport
from pytest_graphinstruct.run.tally import BatchProgress, ProgressCounts
from pytest_graphinstruct.suite.instruction import Instruction

if TYPE_CHECKING:  # the evaluation path is imported on first use: an xdist controller that
    # only merges results starts its workers sooner without it
    from pytest_graphinstruct.run.answer_service import AnswerService
    from pytest_graphinstruct.run.gate.verdict import BaselinePlan, Decision, Written
    from pytest_graphinstruct.run.local import LocalHost
    from pytest_graphinstruct.run.preflight import RunInputs
    from pytest_graphinstruct.run.served import Served
    from pytest_graphinstruct.run.session import BenchmarkSession


class RunDriver:
    """Session-scoped state of an active benchmark run, and its steps."""

    def __init__(self, config: pytest.Config, run: RunConfig) -> None:
        from pytest_graphinstruct.run.gate.verdict import BaselinePlan, GateOptions, plan_baseline
        from pytest_graphinstruct.run.local import LocalHost

        self.config = config
        self.run = run
        self.worker = _worker(config)  # (index, count) in an xdist worker, else None
        self.winput = _worker_input(config)  # what the controller told this worker
        self.opened: BenchmarkSession | None = None  # the run's session, once `bench` opened it
        self.service: AnswerService | None = None  # the xdist controller's answer service
        self.inputs: RunInputs | None = None  # what the preflight read (this process only)
        self.served: Served | None = None if self.winput is None else self.winput.served
        self.stopper = RunStopper(worker=self.worker is not None,
                                  is_controller=lambda: self.controller, on_stop=self._stop_bench)
        self.totals = WorkerTotals()  # xdist controller: what the workers sent
        self.selected: list[str] | None = None  # node ids of the selected items, once known
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
            on_baseline = output_on_baseline(run)
            if on_baseline is not None:
                raise GraphInstructError(on_baseline)
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
            from pytest_graphinstruct.run.served import Served
            from pytest_graphinstruct.run.session import BenchmarkSession

            stop = self.stopper.signal
            try:
                self.opened = BenchmarkSession(
                    self.run, worker=self.worker, local=self.local_info, inputs=self.inputs,
                    served=Served() if self.served is None else self.served,
                    service=None if self.winput is None else self.winput.answers,
                    stop_check=None if stop is None else stop.reason)
            except GraphInstructError as exc:
                raise self.usage(exc) from None
            if self.stopper.reason is not None:
                self.opened.stop(self.stopper.reason)
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
                          baseline=self.run.baseline)
        return usage_error(exc)

    def start(self, session: pytest.Session) -> None:
        """Before any work (and before xdist starts its workers): take SIGTERM as an
        interruption, open the stop file, claim the outputs (the report says a run is in
        progress), check the inputs, start the embedded server; the xdist controller of a run
        with an endpoint builds its backends and opens the answer service."""
        from pytest_graphinstruct.run.provenance import utc_now

        self.started = utc_now()
        self.stopper.open(None if self.winput is None else self.winput.stop_folder)
        if session.config.option.collectonly or self.worker is not None:
            return
        from pytest_graphinstruct.run.preflight import preflight

        problem = unclaimable(self.run, self.plan) or _one_process(self.run, self.plan,
                                                                    session)
        if problem is not None:
            raise self.usage(problem)
        mark_started(self.run.report)
        try:
            self.inputs = preflight(self.run)
            self.notes.extend(self.inputs.notes)  # stale cached answers, the snapshot served
            self.served = self.inputs.served
            if self.local is not None:
                self.local_info = self.local.start()
            if self.controller and not self.run.dry_run and served_models(self.run):
                from pytest_graphinstruct.run.answer_service import AnswerService

                self.bench.schedulers  # noqa: B018  (a backend that cannot be built: usage error)
                assert self.stopper.signal is not None
                self.service = AnswerService(self.bench, self.stopper.signal.folder)
        except GraphInstructError as exc:
            raise self.usage(exc) from None

    def serve(self, ids: Sequence[str]) -> None:
        """The xdist controller, once a worker collected the selected items (node ``ids``):
        ask for the answers of those of a model its service answers, in collection order
        (each cached as it arrives), before any worker asks."""
        if self.service is None:
            return
        cells = {cell.label: cell for cell in self.run.cells}
        chosen = []
        for nodeid in ids:
            inst_id, _, label = nodeid[:-1].partition("[")
            inst, cell = self.bench.suite.get(inst_id), cells.get(label)
            if inst is not None and cell is not None:
                chosen.append((inst, cell))
        self.bench.prefetch(chosen)

    def unconfigure(self) -> None:
        """Give the signals back, remove the stop file, stop the server (unless already); name
        the JUnit classes and keep the violations shown as xfail for ``--lf`` (pytest wrote
        both files by now)."""
        self.stopper.close()
        if self.worker is None:
            _name_junit_classes(self.config)
            _keep_for_last_failed(self.config, self.violations_shown_as_xfail)
        if self.local is not None:
            self.local.stop()  # already stopped at session finish, unless it never ran
        # A run leaves millions of long-lived objects (pools, caches, graphs); the interpreter's
        # final garbage collection would walk them all for seconds (an xdist run waits for
        # every worker's exit).  Frozen objects are still freed by reference counting.
        gc.freeze()

    def collect(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        """Append the run's items, announced like a collector's ("collected N items")."""
        try:
            if not self.run.dry_run:  # a dry run scores nothing
                self.bench.pools  # noqa: B018  (load now: a broken pool directory: usage error)
        except GraphInstructError as exc:
            raise self.usage(exc) from None
        chosen = self.selection()
        if self.run.shard is not None:
            from pytest_graphinstruct.run.shard import select

            mine = select({inst.id: inst.level for inst in chosen}, self.run.shard)
            chosen = [inst for inst in chosen if inst.id in mine]
        new = make_items(session, self, chosen)
        items.extend(new)
        session.ihook.pytest_collectreport(report=pytest.CollectReport(
            "graphinstruct", "passed", None, list(new)))

    def selection(self) -> list[Instruction]:
        """The instructions this run selects before ``--gi-shard`` (and before ``-k``/``-m``):
        the suite, cut to ``--gi-per-level``, without those the recorded answers lack."""
        from pytest_graphinstruct.run.preflight import first_per_level

        return self.bench.select(first_per_level(self.bench.suite, self.run.per_level))

    def collected(self, session: pytest.Session) -> None:
        """The process that runs the items: note them, and (one process) request their
        answers now; an xdist worker asks for each item's answers when it runs."""
        if self.controller or session.config.option.collectonly:
            return
        mine = [it for it in session.items if isinstance(it, GraphInstructItem)]
        self.selected = [it.nodeid for it in mine]
        if self.worker is not None:
            return
        chosen = [(it.instruction, it.cell) for it in mine]
        try:
            self.bench.prefetch(chosen)
        except GraphInstructError as exc:  # a backend that cannot be set up
            raise self.usage(exc) from None
        if self.run.auto_samples is not None:  # how many each level took, and why: the
            self.bench.ask_adaptively(chosen, self.plan.cells)  # gate's compared lines

    def progress_counts(self) -> ProgressCounts:
        """The answer counts of the run so far (under xdist: the workers' latest and the
        answer service's, added)."""
        own = self.opened.progress() if self.opened is not None else ProgressCounts()
        return self.totals.counts() + own if self.controller else own

    def batch_progress(self) -> tuple[BatchProgress, ...]:
        """Where a batch run's batches stand (empty otherwise; under xdist the controller's
        answer service holds them)."""
        return self.opened.batch_progress() if self.opened is not None else ()

    def made_report(self, item: pytest.Item, report: pytest.TestReport,
                    call: pytest.CallInfo[None]) -> None:
        if isinstance(item, GraphInstructItem):
            record_outcome(self.bench, item, report, call)

    def reported(self, report: pytest.TestReport) -> None:
        """In the process that reports (the controller under xdist): show a pending stop
        line, count the item done, give JUnit a class name per cell, and let ``--lf`` rerun
        the model violations shown as xfail (pytest's last-failed cache forgets xfails)."""
        if self.worker is not None or not is_item_id(report.nodeid):
            return
        line = self.stopper.take_line()
        if line is not None:  # a signal during an item: pytest captured stderr
            self.config.get_terminal_writer().line("\n" + line, yellow=True)
        if item_done(report):
            self.items_done += 1
        if ((self.run.benchmark or self.plan.gated) and report.when == "call"
                and hasattr(report, "wasxfail") and not baseline_xfail(report)):
            self.violations_shown_as_xfail.append(report.nodeid)

    def end_session(self, session: pytest.Session, exitstatus: int) -> None:
        """Stop the server, close the schedulers; a worker ships its payload, the controller
        (or the single process) finishes the run, unless it only collected."""
        from pytest_graphinstruct.pytest_run.finish import finish

        # The server first: a request still in flight (after -x, Ctrl+C) then fails at once
        # instead of generating on.  The workers are gone: no question comes any more.
        if self.local is not None:
            self.local.stop()
        if self.service is not None:
            self.service.close()
        if self.stopper.reason is not None and exitstatus in (pytest.ExitCode.OK,
                                                              pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = exitstatus = pytest.ExitCode.INTERRUPTED  # stopped gracefully
        if self.opened is not None:
            self._close_bench(session, exitstatus)
            if self.controller:  # what the answer service sent, refused and noted
                own = worker_payload(self.opened, progress=False)
                self.totals.add("", own)
                self.notes.extend(n for n in own.notes if n not in self.notes)
                self.limits.extend(n for n in own.limits if n not in self.limits)
        output = getattr(self.config, "workeroutput", None)
        if output is not None:
            wanted = self.winput is not None and self.winput.progress
            output[OUTPUT_KEY] = worker_payload(self.opened, progress=wanted).to_json()
        elif not session.config.option.collectonly:  # a collect-only run writes nothing
            finish(self, session)

    def _close_bench(self, session: pytest.Session, exitstatus: int) -> None:
        """Close the schedulers.  An interrupted run issues nothing more but lets calls in
        flight finish for a grace period (their answers are cached; a second Ctrl+C ends the
        wait); a run stopped by ``-x`` drops what is not started; a finished one waits."""
        assert self.opened is not None
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            reason = self.stopper.reason or "interrupted (Ctrl+C)"
            self.stopper.request(reason)  # the run's other processes stop too
            self.opened.stop(reason)
            try:
                self.opened.close()
            except KeyboardInterrupt:
                self.opened.close(cancel=True)
            return
        self.opened.close(cancel=bool(session.shouldstop) or bool(session.shouldfail))


def _one_process(run: RunConfig, plan: BaselinePlan, session: pytest.Session) -> str | None:
    """Why ``--gi-samples=auto`` cannot run here (``None``: it can)."""
    xdist = bool(getattr(session.config.option, "numprocesses", None))
    if run.auto_samples is not None and xdist:
        return ("--gi-samples=auto runs in one process (each look needs every answer of a "
                "level before the next): drop -n")
    if run.auto_samples is not None and plan.missing:
        return ("--gi-samples=auto needs an existing --gi-baseline to be compared with (make "
                "it with a fixed --gi-samples, e.g. 5, and --gi-update-baseline)")
    return None


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


def _name_junit_classes(config: pytest.Config) -> None:
    """Give each GraphInstruct test case of the ``--junitxml`` file the class
    ``graphinstruct.<cell>`` (pytest names none: an item id has no module part).  The file is
    rewritten as pytest wrote it (its declaration, then the tree); nothing without
    ``--junitxml``, and a file that cannot be read or written is left as it is."""
    import xml.etree.ElementTree as ET

    path = config.getoption("xmlpath", None)
    if not path:
        return
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return
    named = False
    for case in root.iter("testcase"):
        name = case.get("name", "")
        if is_item_id(name) and not case.get("classname"):
            case.set("classname", f"graphinstruct.{name[name.index('[') + 1:-1]}")
            named = True
    if named:
        with contextlib.suppress(OSError):
            Path(path).write_text('<?xml version="1.0" encoding="utf-8"?>'
                                  + ET.tostring(root, encoding="unicode"), encoding="utf-8")


def _keep_for_last_failed(config: pytest.Config, nodeids: Sequence[str]) -> None:
    """Add ``nodeids`` (model violations a gated or ``--gi-violations=report`` run showed as
    xfail) to pytest's last-failed record, so ``--lf`` reruns them: pytest's own record
    forgets xfails.  Through the public cache (``config.cache``); nothing without it."""
    cache = getattr(config, "cache", None)
    if cache is None or not nodeids:
        return
    failed = cache.get("cache/lastfailed", {})
    if isinstance(failed, dict):
        cache.set("cache/lastfailed", {**failed, **dict.fromkeys(nodeids, True)})
