"""The hooks and items of an active benchmark run (loaded only when one is asked for).

:class:`GraphInstructPlugin` holds the run's state, and its hooks do the run's steps themselves,
calling into the run layer (:mod:`.run.session` and its neighbours): at session start the
controller (or the single process) claims the output files, checks the run's inputs once
(:mod:`.run.preflight`) and starts the embedded server; collection appends one
:class:`GraphInstructItem` per (instruction, cell), cut to ``--gi-per-level`` and
``--gi-shard``, to the session's items (so ``-k``, ``-m``, ``--lf`` and ``--co`` apply to them
like to any test); right after collection the process that runs the items requests every
selected item's answers in the background; each item waits for its answers in ``setup`` (an
answer that could not be obtained is an *error*), verifies them in ``runtest`` (violations are
*failures*) and is recorded for scoring.  At session end each process scores what it holds in
one batch (D3 trains once); xdist workers ship their results, notes, progress counts,
cached-answer counts and cache sources to the controller as one
:class:`~.payload.WorkerPayload` (one ``workeroutput`` key, as the controller hands each
worker one :class:`~.payload.WorkerInput`); the controller (or the single process) builds
the report and its ``run`` record, reaches the run's verdict through the one driver
(:mod:`pytest_graphinstruct.run.verdict`: baseline, gates, coverage), writes what was asked
for (baseline update, report, HTML page, autosave, Markdown summary), sets the exit status
and prints the summary.
"""

from __future__ import annotations

import contextlib
import gc
import signal
import threading
import time
from collections.abc import Generator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.pytest_run.payload import (
    INPUT_KEY,
    OUTPUT_KEY,
    WorkerInput,
    WorkerPayload,
    WorkerTotals,
)
from pytest_graphinstruct.run.config import Cell, RunConfig, build_run_config
from pytest_graphinstruct.run.results import ItemResult, RunReport
from pytest_graphinstruct.suite.constraints import DOMAINS
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.vocab import PYTEST_PLUGIN_NAME as PLUGIN_NAME

if TYPE_CHECKING:  # the evaluation path is imported on first use: an xdist controller that
    # only merges results starts its workers sooner without it
    from pytest_graphinstruct.run.evaluate import Checked
    from pytest_graphinstruct.run.preflight import RunInputs, Served
    from pytest_graphinstruct.run.results import Coverage, RunInfo
    from pytest_graphinstruct.run.session import BenchmarkSession
    from pytest_graphinstruct.run.stop import StopSignal

_PROGRESS_KEY = "graphinstruct_progress"  # report attribute: a worker's answer counts


def _usage_error(exc: GraphInstructError | str) -> pytest.UsageError:
    return pytest.UsageError(f"pytest-graphinstruct: {exc}")


def _one_line(text: str) -> str:
    """``text`` with every run of white space (newlines too) made one space."""
    return " ".join(text.split())


def _write_usage_report(config: pytest.Config, report: str | Path | None, why: str) -> None:
    """Replace the report at ``report`` (``--gi-report`` as given) with the partial one of a
    run refused by a usage error (coverage reason ``usage error: <why, one line>``), so an
    older complete report never stays in its place.

    Writes nothing in an xdist worker (the controller writes), without ``--gi-report``, or
    when that path cannot be written (the usage error then names ``--gi-report`` itself).
    Never raises for I/O: the usage error is what the user must see."""
    if report is None or getattr(config, "workerinput", None) is not None:
        return
    from pytest_graphinstruct.run.results import Coverage
    from pytest_graphinstruct.run.writer import unwritable_reason, write_report

    path = Path(report).expanduser()
    if unwritable_reason(path) is not None:
        return
    with contextlib.suppress(OSError):
        write_report(RunReport((), coverage=Coverage.partial(f"usage error: {_one_line(why)}")),
                     path)


def refuse(config: pytest.Config, raw: dict[str, Any],
           exc: GraphInstructError | str) -> pytest.UsageError:
    """The usage error to raise for a run refused before its plugin exists (raw options that
    do not validate), after the report of ``raw["report"]`` says so
    (:func:`_write_usage_report`)."""
    _write_usage_report(config, raw.get("report"), str(exc))
    return _usage_error(exc)


def activate(config: pytest.Config, raw: dict[str, Any]) -> None:
    """Validate the options and register the run's hooks (a bad value is a usage error, and
    the report of ``--gi-report`` says so)."""
    for d in sorted(DOMAINS):
        config.addinivalue_line("markers", f"{d}: GraphInstruct L4 domain {d}")
    try:
        run = build_run_config(raw, rootdir=config.rootpath)
    except GraphInstructError as exc:
        raise refuse(config, raw, exc) from None
    if run is not None:
        config.pluginmanager.register(GraphInstructPlugin(config, run), PLUGIN_NAME)


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


def _worker_id(node: Any) -> str:
    """The xdist id (``gw0``) of the worker ``node`` stands for (``""`` when unknown)."""
    return str(getattr(node, "workerinput", {}).get("workerid", ""))


def _is_xdist_controller(config: pytest.Config) -> bool:
    return getattr(config, "workerinput", None) is None and bool(
        getattr(config.option, "numprocesses", None)) and config.pluginmanager.has_plugin(
        "dsession")


def _is_item_id(nodeid: str) -> bool:
    """Whether ``nodeid`` is a GraphInstruct item's (``ID[cell]``, no file part)."""
    return nodeid.endswith("]") and "[" in nodeid and "::" not in nodeid


def _junit_writer(config: pytest.Config) -> Any:
    """pytest's JUnit writer of this run (``None`` without ``--junitxml``, or in a pytest
    whose writer is not where this one keeps it)."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - a pytest without it: JUnit keeps its default
        return None
    return config.stash.get(xml_key, None)


def _item_done(report: pytest.TestReport) -> bool:
    """Whether ``report`` is the one that decides its item's outcome (the call, or a setup
    that did not pass: no answer, or skipped)."""
    return report.when == "call" or (report.when == "setup" and not report.passed)


def _baseline_xfail(report: pytest.TestReport) -> bool:
    """An xfail because the item failed in the baseline too (not a benchmark violation)."""
    return str(getattr(report, "wasxfail", "")).startswith("failed in the baseline too")


def _write(report: RunReport, path: Path, what: str) -> str:
    """Write ``report``; the line to show, whether it worked or not (never raises for I/O)."""
    from pytest_graphinstruct.run.writer import write_report

    try:
        write_report(report, path)
    except OSError as exc:
        return f"{what} NOT written to {path}: {exc.strerror or exc}"
    return f"{what} written to {path}"


def _write_html(report: RunReport, path: Path, bench: BenchmarkSession | None) -> str:
    """Write the HTML page of ``report`` (instruction texts from the run's suite); the line to
    show.  Never raises: the JSON report is already written and the run's verdict comes next."""
    from pytest_graphinstruct.report.html import NamedReport, build_page, write_page

    try:
        instructions = {i.id: i for i in bench.suite} if bench is not None else None
        page = build_page([NamedReport("this run", report)], instructions=instructions)
        write_page(page, path)
    except OSError as exc:
        return f"html report NOT written to {path}: {exc.strerror or exc}"
    except Exception as exc:  # a fault of the page builder must not cost the run its verdict
        return f"html report NOT written to {path}: {type(exc).__name__}: {exc}"
    partial = " (partial run)" if report.partial else ""
    return f"html report{partial} written to {path}"


def _autosave(report: RunReport, store: Path) -> str:
    """Save ``report`` as the next run of the store (its bytes are the JSON report's, whether or
    not ``--gi-report`` also wrote it), unless no item has a result (a usage error, a run
    stopped before its first item); the line to show (never raises for I/O)."""
    from pytest_graphinstruct.run.store import RunStore, StoreError
    from pytest_graphinstruct.run.writer import report_json

    if not any(c.per_instruction for c in report.cells):
        why = report.coverage.describe() if report.partial else "no item was selected"
        return f"run NOT saved in {store}: no item has a result ({why})"
    try:
        saved = RunStore(store).save_bytes(report_json(report).encode("utf-8"))
    except StoreError as exc:
        return f"run NOT saved: {exc}"
    partial = " (a partial run)" if report.partial else ""
    return f"saved as run {saved.name} in {store}{partial}"


CIRCUIT_SKIP_REASON = ("not sent: the circuit breaker opened (an error in the report; the "
                       "summary's WARNING says why)")


class GraphInstructFailure(AssertionError):
    """Raised by an item whose answers break constraints; carries the formatted verdicts."""


class InfraError(Exception):
    """An answer could not be obtained (the item errors; the model is not blamed)."""


class GraphInstructItem(pytest.Item):
    """One instruction in one cell; its assertions are the verifier's verdicts."""

    def __init__(self, *, instruction: Instruction, cell: Cell, plugin: GraphInstructPlugin,
                 **kw: Any) -> None:
        super().__init__(**kw)
        self.instruction = instruction
        self.cell = cell
        self.plugin = plugin
        self.answers: tuple[Any, ...] = ()
        self.checked: Checked | None = None
        self.expected_failure = False
        self.stopped = False  # skipped unasked because the run was stopped (no result)
        self.unsent: str | None = None  # the circuit breaker's error: never sent (an error)

    def setup(self) -> None:
        from pytest_graphinstruct.models.scheduler import BUDGET_EXHAUSTED, is_circuit_open

        answers = self.plugin.bench.answers(self.instruction, self.cell)  # at once if stopped
        stopped = self.plugin.stop_reason
        if stopped is not None and all(a.error is not None and a.calls == 0 for a in answers):
            self.stopped = True  # never asked: no result (the report counts it missing)
            pytest.skip(f"not asked: the run stopped ({stopped})")
        self.answers = answers
        errors = [a.error for a in answers if a.error is not None]
        if errors:
            if all(e.startswith(BUDGET_EXHAUSTED) for e in errors):
                pytest.skip(f"token budget exhausted before {self.instruction.id} was asked")
            if all(is_circuit_open(a) and a.calls == 0 for a in answers):
                # Never sent: the report records an error; the terminal shows one grouped
                # line for all of them (the breaker's reason is in the summary), not a block
                # per item.
                self.unsent = errors[0]
                pytest.skip(CIRCUIT_SKIP_REASON)
            raise InfraError(f"{len(errors)} of {len(answers)} answer(s) could not be "
                             f"obtained: {errors[0]}")

    def runtest(self) -> None:
        from pytest_graphinstruct.report.failures import format_failure

        checked = self.plugin.bench.check(self.instruction, self.cell, self.answers)
        self.checked = checked
        self.user_properties.extend([
            ("gi_passed_samples", checked.passing_samples),
            ("gi_samples", len(checked.verifications)),
            ("gi_api_calls", sum(a.calls for a in checked.answers)),
        ])
        if checked.passed:
            return
        message = format_failure(checked, self.plugin.run.pass_rule,
                                 raw=self.config.getoption("verbose") > 0)
        if (self.cell.label, self.instruction.id) in self.plugin.expected_failures:
            self.expected_failure = True
            pytest.xfail("failed in the baseline too:\n" + message)
        if self.plugin.plan.gated and not self.plugin.run.strict:
            pytest.xfail("newly failing against the baseline (the statistical gate judges its "
                         "level; --gi-strict fails on it):\n" + message)
        if self.plugin.run.benchmark:
            pytest.xfail("model violations (--gi-benchmark reports them, does not fail):\n"
                         + message)
        raise GraphInstructFailure(message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str | Any:
        if isinstance(excinfo.value, GraphInstructFailure | InfraError | pytest.xfail.Exception):
            return str(excinfo.value)  # the verdicts say it all: no Python traceback
        return super().repr_failure(excinfo, style=style)

    def _repr_failure_py(self, excinfo: pytest.ExceptionInfo[BaseException],
                         style: Any = None) -> Any:
        # pytest formats errors outside ``runtest`` (our answers arrive in ``setup``) here, not
        # in repr_failure: an answer that could not be obtained is one line, not a traceback
        if isinstance(excinfo.value, InfraError):
            return str(excinfo.value)
        return super()._repr_failure_py(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


def _first_per_level(suite: Any, n: int | None) -> list[Instruction]:
    """The suite's instructions, or only the first ``n`` of each level (suite order; the one
    rule, :func:`~.run.preflight.first_per_level`, which the shard check uses too)."""
    from pytest_graphinstruct.run.preflight import first_per_level

    return first_per_level(suite, n)


def _markers(inst: Instruction) -> list[str]:
    marks = ["graphinstruct", f"level{inst.level}"]
    if inst.size:
        marks.append(inst.size)
    if not inst.feasible:
        marks.append("infeasible")
    if inst.domain:
        marks.append(inst.domain)
    return marks


class GraphInstructPlugin:
    """Session-scoped state and hooks of an active benchmark run."""

    def __init__(self, config: pytest.Config, run: RunConfig) -> None:
        from pytest_graphinstruct.run.local import LocalHost
        from pytest_graphinstruct.run.verdict import BaselinePlan, GateOptions, plan_baseline

        self.config = config
        self.run = run
        self.worker = _worker(config)
        self._bench: BenchmarkSession | None = None
        self._inputs: RunInputs | None = None  # what the preflight read (this process only)
        self.selected: list[str] | None = None  # node ids of the selected items, once known
        self.usage_error: str | None = None
        self.terminated = False  # SIGTERM arrived (see _on_sigterm)
        self._previous_sigterm: Any = None
        self._previous_sigint: Any = None
        self.stop_signal: StopSignal | None = None  # the run's stop file (run.stop)
        self.stop_reason: str | None = None  # why this run stopped issuing requests
        self._stop_line: str | None = None  # what the stop says, not yet shown
        self.totals = WorkerTotals()  # xdist controller: what the workers sent
        self.report: RunReport | None = None
        self.written: list[str] = []  # what was (not) written at the end, one line each
        self.notes: list[str] = []  # BenchmarkSession.notes() of every process
        self.items_done = 0  # items with an outcome, counted where they are reported
        self.started: str | None = None  # UTC ISO time the session started (run provenance)
        # what the controller's preflight learned about the models
        self.winput = _worker_input(config)  # what the controller told this worker
        self.served: Served | None = None if self.winput is None else self.winput.served
        self.gate_options = GateOptions.of(run)
        self.plan = BaselinePlan()  # what the run is compared with (run.verdict)
        self.decision: Any = None  # the run's verdict (run.verdict.Decision), at the end
        self.expected_failures: set[tuple[str, str]] = set()
        # The embedded model: the controller (or the single process) owns the server; xdist
        # workers get its address through workerinput.
        self.local: LocalHost | None = None
        self.local_info: dict[str, str] | None = None
        try:
            if "local" in run.models and run.replay is None:
                if self.worker is not None:
                    self.local_info = None if self.winput is None else self.winput.local
                else:
                    self.local = LocalHost.find()
            self.plan = plan_baseline(self.gate_options, [c.label for c in run.cells])
            self.expected_failures = self.plan.expected_failures()
        except GraphInstructError as exc:
            raise self._usage(exc) from None

    @property
    def controller(self) -> bool:
        """Whether this process is the xdist controller (asked late: xdist registers its
        session plugin in its own ``pytest_configure``, which may run after ours)."""
        return _is_xdist_controller(self.config)

    @property
    def bench(self) -> BenchmarkSession:
        if self._bench is None:
            from pytest_graphinstruct.run.preflight import Served
            from pytest_graphinstruct.run.session import BenchmarkSession

            try:
                share = self.stop_signal.folder if self.stop_signal is not None else None
                served = Served() if self.served is None else self.served
                self._bench = BenchmarkSession(self.run, worker=self.worker,
                                               local=self.local_info, inputs=self._inputs,
                                               served=served,
                                               share_dir=share, stop_check=None if
                                               self.stop_signal is None
                                               else self.stop_signal.reason)
            except GraphInstructError as exc:
                raise self._usage(exc) from None
            if self.stop_reason is not None:
                self._bench.stop(self.stop_reason)
        return self._bench

    # -- fixtures' helpers -------------------------------------------------------------------

    def query(self, instruction: Instruction, strategy: str = "zero-shot", sample: int = 0,
              model: str | None = None) -> Any:
        cell = Cell(model or self.run.models[0], strategy)
        return self.bench.schedulers[cell.model].submit(
            self.bench.request(instruction, cell, sample)).result()

    def evaluate(self, instruction: Instruction, answers: Sequence[Any],
                 strategy: str = "zero-shot") -> ItemResult:
        return self.bench.evaluate(instruction, Cell(self.run.models[0], strategy),
                                   tuple(answers))

    # -- the embedded model ------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Before any work (and before xdist starts its workers): take SIGTERM as an
        interruption, mark the report as a run in progress, start the embedded server."""
        from pytest_graphinstruct.run.provenance import utc_now

        self.started = utc_now()
        self._catch_sigterm()
        self._open_stop_signal()
        if session.config.option.collectonly or self.worker is not None:
            return
        from pytest_graphinstruct.run.preflight import preflight

        self._claim_outputs()
        try:
            self._inputs = preflight(self.run)
        except GraphInstructError as exc:
            raise self._usage(exc) from None
        self.notes.extend(self._inputs.notes)  # stale cached answers, the snapshot served
        self.served = self._inputs.served
        if self.local is None:
            return
        try:
            self.local_info = self.local.start()
        except GraphInstructError as exc:
            raise self._usage(exc) from None

    def _usage(self, exc: GraphInstructError | str) -> pytest.UsageError:
        """A usage error, remembered so the report says why the run stopped, and written to
        the report now: pytest skips ``pytest_sessionfinish`` for one raised before the
        session began (configure, sessionstart), so no later hook would replace an older
        report (:meth:`_write_stopped`)."""
        self.usage_error = _one_line(str(exc))
        self._write_stopped(f"usage error: {self.usage_error}")
        return _usage_error(exc)

    def _catch_sigterm(self) -> None:
        """SIGTERM ends the run like Ctrl+C (requests not started are dropped, the report says
        the run was terminated) instead of killing the process with nothing written."""
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None):
            return  # someone else handles it
        self._previous_sigterm = signal.signal(signal.SIGTERM, self._on_sigterm)

    def _on_sigterm(self, signum: int, frame: Any) -> None:
        if self.terminated or self.stop_signal is None:
            self.terminated = True
            raise KeyboardInterrupt("SIGTERM")  # the second one, or before the run began
        self.terminated = True
        self._stop("terminated (SIGTERM)", "SIGTERM")

    def _on_sigint(self, signum: int, frame: Any) -> None:
        """xdist controller: the first Ctrl+C stops the run (every worker stops issuing and
        sends what it has), the second one quits at once."""
        if self.stop_reason is not None:
            raise KeyboardInterrupt()
        self._stop("interrupted (Ctrl+C)", "Ctrl+C")

    def _stop(self, reason: str, what: str) -> None:
        """Stop issuing requests in every process of the run, now; items still to run end
        at once without a result; the run then writes its (partial) report.  Runs inside a
        signal handler, so it only sets a flag and writes the stop file: the schedulers are
        stopped by the watcher's thread (:meth:`_stop_requested`), never here, where a lock the
        interrupted code holds could deadlock."""
        import os
        import sys

        from pytest_graphinstruct.run.stop import STOP_GRACE_S

        self.stop_reason = reason
        if self.stop_signal is not None:
            self.stop_signal.request(reason)
        self._stop_line = (f"pytest-graphinstruct: {what}: no new requests; calls in flight "
                           f"may finish for {STOP_GRACE_S:g} s, then the partial report is "
                           f"written ({what} again to quit at once)")
        if self.controller:  # no item runs here, so nothing captures stderr: say it now
            with contextlib.suppress(OSError, ValueError):
                os.write(sys.stderr.fileno(), f"\n{self._stop_line}\n".encode())
            self._stop_line = None

    def _open_stop_signal(self) -> None:
        """The run's stop file: the controller (or the single process) creates its folder;
        a worker watches it and stops issuing requests as soon as it appears."""
        from pytest_graphinstruct.run.stop import StopSignal

        folder = None if self.winput is None else self.winput.stop_folder
        if self.worker is None:
            self.stop_signal = StopSignal.create()
            if (self.controller and threading.current_thread() is threading.main_thread()
                    and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
                self._previous_sigint = signal.signal(signal.SIGINT, self._on_sigint)
        elif folder is not None:
            self.stop_signal = StopSignal(Path(folder))
        if self.stop_signal is not None:
            self.stop_signal.watch(self._stop_requested)

    def _stop_requested(self, reason: str) -> None:
        """Some process of the run asked it to stop (called from the watcher's thread)."""
        self.stop_reason = reason
        if self._bench is not None:
            self._bench.stop(reason)

    def _write_stopped(self, reason: str) -> None:
        """Write the report of a run that stopped before its session began (no cells), unless
        this is an xdist worker or the report's path cannot be written (never raises)."""
        from pytest_graphinstruct.run.results import Coverage
        from pytest_graphinstruct.run.writer import unwritable_reason, write_report

        report = self.run.report
        if report is None or self.worker is not None or unwritable_reason(report) is not None:
            return
        with contextlib.suppress(OSError):
            write_report(RunReport((), coverage=Coverage.partial(reason)), report)

    def _claim_outputs(self) -> None:
        """Check that every file the run will write can be written, now rather than after
        the run (a usage error naming the option); replace an earlier report with one that
        says this run has not finished (so a run killed outright never leaves an older report
        looking like its own).

        The outputs: ``--gi-report``, ``--gi-html``, ``--gi-markdown`` (and the
        ``$GITHUB_STEP_SUMMARY`` file it appends to), the baseline when this run may write it,
        and the run store of ``--gi-autosave``.  The answer cache is not among them: a cache
        that cannot be written costs only reuse (the run warns)."""
        from pytest_graphinstruct.run.results import Coverage
        from pytest_graphinstruct.run.writer import unwritable_reason, write_report

        for flag, path in self._outputs():
            reason = unwritable_reason(path)
            if reason is not None:
                raise self._usage(f"{flag}: {reason}")
        if self.run.store is not None:
            from pytest_graphinstruct.run.store import RunStore

            reason = RunStore(self.run.store).unwritable_reason()
            if reason is not None:
                raise self._usage(f"--gi-autosave: {reason}")
        if self.run.report is not None:
            started = time.strftime("%Y-%m-%d %H:%M:%S")
            write_report(RunReport((), coverage=Coverage.partial(
                f"the run started at {started} has not finished (or was killed)")),
                self.run.report)

    def _outputs(self) -> list[tuple[str, Path]]:
        """The files this run writes (the option that names each, its path), the report
        first: when it is the one that cannot be written, nothing is."""
        import os

        run = self.run
        named = [("--gi-report", run.report), ("--gi-html", run.html),
                 ("--gi-markdown", run.markdown)]
        if run.markdown is not None and os.environ.get("GITHUB_STEP_SUMMARY"):
            named.append(("$GITHUB_STEP_SUMMARY (--gi-markdown appends to it)",
                          Path(os.environ["GITHUB_STEP_SUMMARY"])))
        if self.plan.writes:
            named.append(("--gi-baseline", run.baseline))
        return [(flag, path) for flag, path in named if path is not None]

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist: hand the embedded server's address to each worker."""
        node.workerinput[INPUT_KEY] = WorkerInput(
            local=self.local_info, served=self.served, progress=self._live_wanted(),
            stop_folder=None if self.stop_signal is None else str(self.stop_signal.folder),
        ).to_json()

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self._previous_sigterm is not None:
            signal.signal(signal.SIGTERM, self._previous_sigterm)
        if self._previous_sigint is not None:
            signal.signal(signal.SIGINT, self._previous_sigint)
        if self.stop_signal is not None:
            if self.worker is None:
                self.stop_signal.remove()
            else:
                self.stop_signal.close()
        if self.local is not None:
            self.local.stop()  # already stopped at session finish, unless it never ran
        # A run leaves millions of long-lived objects (pools, caches, graphs); the interpreter's
        # final garbage collection would walk them all for seconds (an xdist run waits for
        # every worker's exit).  Frozen objects are still freed by reference counting.
        gc.freeze()

    # -- collection --------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        try:
            self.bench.pools  # noqa: B018  (load now: a broken pool directory is a usage error)
        except GraphInstructError as exc:
            raise self._usage(exc) from None
        new: list[pytest.Item] = []
        chosen = self._selection()
        if self.run.shard is not None:
            from pytest_graphinstruct.run.shard import select

            mine = select({inst.id: inst.level for inst in chosen}, self.run.shard)
            chosen = [inst for inst in chosen if inst.id in mine]
        for cell in self.run.cells:
            for inst in chosen:
                item = GraphInstructItem.from_parent(
                    session, name=f"{inst.id}[{cell.label}]", instruction=inst, cell=cell,
                    plugin=self, nodeid=f"{inst.id}[{cell.label}]")
                for marker in _markers(inst):
                    item.add_marker(marker)
                new.append(item)
        items.extend(new)
        # Announce the items like a collector would, so "collected N items" counts them.
        session.ihook.pytest_collectreport(report=pytest.CollectReport(
            "graphinstruct", "passed", None, list(new)))

    def _selection(self) -> list[Instruction]:
        """The instructions this run selects before ``--gi-shard`` (and before ``-k``/``-m``):
        the suite, cut to ``--gi-per-level``, without those the recorded answers lack."""
        return self.bench.select(_first_per_level(self.bench.suite, self.run.per_level))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.controller or session.config.option.collectonly:
            return
        self.selected = [it.nodeid for it in session.items if isinstance(it, GraphInstructItem)]
        try:
            self.bench.prefetch([(it.instruction, it.cell) for it in session.items
                                 if isinstance(it, GraphInstructItem)])
        except GraphInstructError as exc:  # a backend that cannot be set up
            raise self._usage(exc) from None

    # -- the live progress line (docs/PLUGIN.md, "Live progress") -----------------------------

    def _live_wanted(self) -> bool:
        """Whether this process shows the live line (never an xdist worker)."""
        from pytest_graphinstruct.report.live import live_enabled

        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if self.worker is not None or reporter is None:
            return False
        return live_enabled(self.run.progress, isatty=bool(reporter.isatty),
                            hasmarkup=bool(reporter.hasmarkup),
                            verbosity=self.config.get_verbosity(),
                            capture_off=self.config.getoption("capture", None) == "no")

    def _progress_counts(self) -> Any:
        """The answer counts of the run so far (under xdist: the workers' latest, added)."""
        from pytest_graphinstruct.run.tally import ProgressCounts

        if self.controller:
            return self.totals.counts()
        return self._bench.progress() if self._bench is not None else ProgressCounts()

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """Show the live line while the items run (trylast: inside the terminal reporter's
        wrapper, so the line is gone before it writes its last ``[100%]``)."""
        if session.config.option.collectonly or not self._live_wanted() or not (
                self.selected or self.controller):
            return (yield)
        from pytest_graphinstruct.report.live import LiveLine
        from pytest_graphinstruct.report.progress import ProgressMeter, progress_line

        writer = self.config.get_terminal_writer()
        stream = getattr(writer, "_file", None)  # pytest keeps no public handle on it
        if stream is None:
            return (yield)
        meter = ProgressMeter(time.monotonic())

        def render(width: int) -> str:
            selected = self.selected
            view = meter.observe(time.monotonic(), self._progress_counts(), self.items_done,
                                 None if selected is None else len(selected))
            return progress_line(view, width)

        live = LiveLine(stream, render, width=lambda: writer.fullwidth)
        writer._file = live
        live.start()
        try:
            return (yield)
        finally:
            live.stop()
            writer._file = stream

    # -- results -----------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[None],
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if isinstance(item, GraphInstructItem):
            self._record(item, report, call)
            if _item_done(report) and self.winput is not None and self.winput.progress:
                # travels to the controller with the report (xdist serializes its attributes)
                setattr(report, _PROGRESS_KEY, self.bench.progress().to_json())
        return report

    def _record(self, item: GraphInstructItem, report: pytest.TestReport,
                call: pytest.CallInfo[None]) -> None:
        bench = self.bench
        if item.stopped:
            return
        if report.when == "setup" and item.unsent is not None:
            bench.record_error(item.instruction, item.cell, item.answers, outcome="error",
                               error=item.unsent)
        elif report.when == "setup" and report.outcome != "passed":
            outcome = "skipped" if report.skipped else "error"
            error = str(call.excinfo.value) if call.excinfo is not None else None
            bench.record_error(item.instruction, item.cell, item.answers, outcome=outcome,
                               error=error)
        elif report.when == "call":
            if item.checked is not None:  # passed, failed, or xfailed
                bench.record(item.checked, expected_failure=item.expected_failure)
            else:  # an unexpected exception inside runtest: a harness error, not the model's
                error = str(call.excinfo.value) if call.excinfo is not None else "unknown"
                bench.record_error(item.instruction, item.cell, item.answers,
                                   outcome="error", error=error)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        # The server first: a request still in flight (after -x, Ctrl+C) then fails at once
        # instead of generating on.  An interrupted or stopped run also drops the requests not
        # started; a finished one waits for them (xdist peers may be waiting for its answers).
        if self.local is not None:
            self.local.stop()
        if self.stop_reason is not None and exitstatus in (pytest.ExitCode.OK,
                                                           pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = exitstatus = pytest.ExitCode.INTERRUPTED  # stopped gracefully
        if self._bench is not None:
            self._close_bench(session, exitstatus)
        output = getattr(self.config, "workeroutput", None)
        if output is not None:
            output[OUTPUT_KEY] = self._payload().to_json()
            return
        if session.config.option.collectonly:
            return  # nothing ran: no report, no summary
        self._finish(session)

    def _payload(self) -> WorkerPayload:
        """What this worker sends the controller (its final answer counts too when the
        controller shows the live line: the last report may precede answers)."""
        from pytest_graphinstruct.run.provenance import cached_samples

        bench = self._bench
        results = bench.flush() if bench is not None else []
        return WorkerPayload(
            results=tuple(results), notes=tuple(bench.notes()) if bench is not None else (),
            progress=bench.progress() if bench is not None and self.winput is not None
            and self.winput.progress else None,
            cached=cached_samples(results), sources=bench.cache_sources() if bench else {})

    def _close_bench(self, session: pytest.Session, exitstatus: int) -> None:
        """Close the schedulers.  An interrupted run issues nothing more but lets calls in
        flight finish for a grace period (their answers are cached; a second Ctrl+C ends the
        wait); a run stopped by ``-x`` drops what is not started; a finished one waits (xdist
        peers may be waiting for its answers)."""
        assert self._bench is not None
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            reason = self.stop_reason or "interrupted (Ctrl+C)"
            if self.stop_signal is not None:  # the run's other processes stop too
                self.stop_signal.request(reason)
            self._bench.stop(reason)
            try:
                self._bench.close()
            except KeyboardInterrupt:
                self._bench.close(cancel=True)
            return
        self._bench.close(cancel=bool(session.shouldstop) or bool(session.shouldfail))

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """In the process that reports (the controller under xdist): give JUnit a class name
        per cell, and let ``--lf`` rerun the model violations ``--gi-benchmark`` showed as
        xfail (pytest's last-failed cache forgets xfails)."""
        if self.worker is not None or not _is_item_id(report.nodeid):
            return
        if self._stop_line is not None:  # a signal during an item: pytest captured stderr
            self.config.get_terminal_writer().line("\n" + self._stop_line, yellow=True)
            self._stop_line = None
        if _item_done(report):
            self.items_done += 1
        shipped = getattr(report, _PROGRESS_KEY, None)
        if shipped is not None:  # replace, never mutate: the live line's thread reads it
            from pytest_graphinstruct.run.tally import ProgressCounts

            self.totals.counted(_worker_id(getattr(report, "node", None)),
                                ProgressCounts.from_json(shipped))
        cell = report.nodeid[report.nodeid.index("[") + 1:-1]
        xml = _junit_writer(self.config)
        if xml is not None and report.when != "teardown":  # JUnit closed the test case by now:
            # asking for its reporter again would open a second, nameless one
            xml.node_reporter(report).add_attribute("classname", f"graphinstruct.{cell}")
        if ((self.run.benchmark or self.plan.gated) and report.when == "call"
                and hasattr(report, "wasxfail") and not _baseline_xfail(report)):
            lf = self.config.pluginmanager.get_plugin("lfplugin")
            if lf is not None and isinstance(getattr(lf, "lastfailed", None), dict):
                lf.lastfailed[report.nodeid] = True

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        """xdist controller: every worker collects the same items; keep their node ids."""
        if self.selected is None:
            self.selected = [label for label in ids if _is_item_id(label)]

    @pytest.hookimpl(optionalhook=True)  # an xdist hook: without xdist it must not be required
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", None) or {}
        if error or OUTPUT_KEY not in output:
            self.totals.errors.append(str(error or "worker sent no results"))
            return
        payload = WorkerPayload.from_json(output[OUTPUT_KEY])
        self.totals.add(_worker_id(node), payload)
        self.notes.extend(n for n in payload.notes if n not in self.notes)

    def _coverage(self, session: pytest.Session, results: Sequence[ItemResult]) -> Coverage:
        """What this run covers, from how it ended and which selected items have results."""
        from pytest_graphinstruct.run.results import Coverage

        done = {f"{r.instruction_id}[{r.cell}]" for r in results}
        selected = self.selected
        missing = [label for label in (selected or ()) if label not in done]
        status = session.exitstatus
        reason = None
        if self.usage_error is not None:
            reason = f"usage error: {self.usage_error}"
        elif self.terminated:
            reason = "terminated (SIGTERM)"
        elif status == pytest.ExitCode.INTERRUPTED:
            reason = "interrupted (Ctrl+C)"
        elif status in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR):
            reason = f"pytest stopped with {pytest.ExitCode(status).name}"
        elif self.totals.errors:
            reason = "a worker crashed: " + "; ".join(self.totals.errors)
        elif session.shouldstop or session.shouldfail:
            reason = f"stopped early: {session.shouldstop or session.shouldfail}"
        elif selected is None:
            reason = "the run stopped before its items were collected"
        elif missing:
            reason = f"{len(missing)} selected item(s) have no result"
        if reason is None:
            return Coverage(selected=len(selected or ()))
        return Coverage.partial(reason, selected=None if selected is None else len(selected),
                                missing=missing)

    def _note_unrecorded(self) -> None:
        """With recorded answers: say how many instructions of the suite had none (they are
        not collected, so they are neither errors nor missing)."""
        try:
            bench = self.bench
        except pytest.UsageError:
            return
        recorded = bench.recorded_ids
        if recorded is None:
            return
        wanted = _first_per_level(bench.suite, self.run.per_level)
        absent = sum(1 for inst in wanted if inst.id not in recorded)
        if absent:
            self.notes.append(f"the recorded answers cover {len(wanted) - absent} of the "
                              f"{len(wanted)} instructions asked for; the other {absent} were "
                              "not run")

    def _run_info(self, results: Sequence[ItemResult], coverage: Coverage) -> RunInfo:
        """What produced this run (docs/RUNS.md), as the process that writes the report knows
        it; under xdist the cache counts are the workers' (the controller's results are read
        back from JSON, which does not keep them)."""
        from pytest_graphinstruct.run.provenance import run_info
        from pytest_graphinstruct.run.results import ItemFilter

        run, option = self.run, self.config.option
        return run_info(
            run, started=self.started, suite=None if self._bench is None else self._bench.suite,
            rootdir=self.config.rootpath, results=results,
            item_filter=ItemFilter(keyword=getattr(option, "keyword", "") or None,
                                   markers=getattr(option, "markexpr", "") or None,
                                   levels=run.levels, per_level=run.per_level,
                                   selected=coverage.selected, shard=self._shard_selection()),
            cached=self.totals.cached if self.controller else None, local=self.local_info,
            sources=self.totals.sources if self.controller or self._bench is None
            else self._bench.cache_sources(),
            served=None if self._inputs is None else self._inputs.served.models(),
            replay=None if self._bench is None else self._bench.replay_check)

    def _shard_selection(self) -> Any:
        """The report's record of ``--gi-shard`` (``None`` without it, or when the run never
        got its suite)."""
        from pytest_graphinstruct.run.results import ShardSelection

        shard = self.run.shard
        if shard is None or self._bench is None:
            return None
        universe = tuple((inst.id, inst.level) for inst in self._selection())
        return ShardSelection(shard.index, shard.count, universe)

    def _finish(self, session: pytest.Session) -> None:
        from pytest_graphinstruct.run.verdict import decide, settle_baseline

        results = self.totals.results if self.controller else (
            self._bench.flush() if self._bench is not None else [])
        model_info = {"local": self.local_info["describe"]} if self.local_info else None
        if not self.controller and self._bench is not None:
            self.notes.extend(self._bench.notes())
        self._note_unrecorded()
        coverage = self._coverage(session, results)
        try:
            self.report = self.bench.report(results, coverage=coverage, model_info=model_info)
        except pytest.UsageError:  # the run never got a session (a bad suite): say only why
            self.report = RunReport((), coverage=coverage)
        self.report = replace(self.report, run=self._run_info(results, coverage))
        self.decision = decide(self.report, self.plan, self.gate_options)
        update = settle_baseline(self.report, self.decision)
        self.report = replace(self.report, gate=self.decision.record(update))
        self.written = [] if update is None else [update]
        if self.run.report is not None:
            self.written.append(_write(self.report, self.run.report, "report"))
        if self.run.html is not None:
            self.written.append(_write_html(self.report, self.run.html, self._bench))
        if self.run.store is not None:
            self.written.append(_autosave(self.report, self.run.store))
        if self.run.markdown is not None:
            self.written.append(self._write_markdown(session.testsfailed))
        if self.decision.failed and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _write_markdown(self, failed_tests: int) -> str:
        """Write the Markdown summary (``--gi-markdown``); the line to show (never raises).
        ``failed_tests`` (pytest's count) makes its heading agree with the exit status."""
        from pytest_graphinstruct.report.markdown import render_markdown, write_markdown

        path = self.run.markdown
        assert path is not None and self.report is not None
        try:
            text = render_markdown(self.report, self.decision, failed_tests=failed_tests,
                                   benchmark=self.run.benchmark)
            write_markdown(path, text)
        except OSError as exc:
            return f"markdown summary NOT written to {path}: {exc.strerror or exc}"
        return f"markdown summary written to {path}"

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if getattr(self.config, "workeroutput", None) is not None or self.report is None:
            return
        from pytest_graphinstruct.report.terminal import (
            replay_lines,
            summary_lines,
            warning_lines,
        )

        terminalreporter.section("GraphInstruct")
        if self.local is not None and self.local.startup_s is not None:
            terminalreporter.write_line(
                f"local model: {self.local_info['describe'] if self.local_info else ''} "
                f"(server ready in {self.local.startup_s:.1f} s)")
        for line in summary_lines(self.report):
            terminalreporter.write_line(line)
        for line in warning_lines(self.notes):  # escaped: they quote endpoints
            terminalreporter.write_line(line, yellow=True)
        replay = replay_lines(self.report.run)  # the count line, then each skipped line
        if replay:
            skipped = len(replay) > 1
            terminalreporter.write_line(("WARNING: " if skipped else "") + replay[0],
                                        yellow=skipped)
            for line in replay[1:]:
                terminalreporter.write_line(f"  {line}", yellow=True)
        decision = self.decision
        for line in decision.compared_lines() + decision.update_lines():
            terminalreporter.write_line(line)
        for line in decision.verdict.lines():
            terminalreporter.write_line(line, red=True)
        for line in decision.notes:
            terminalreporter.write_line(line, yellow=True)
        for line in getattr(self, "written", ()):
            terminalreporter.write_line(line, red="NOT" in line)
