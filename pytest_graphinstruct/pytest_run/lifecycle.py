"""The run's session from start to end in this process: claim the outputs and check the inputs
before any work, close the schedulers and finish the run at the end.

Registered under :data:`~pytest_graphinstruct.vocab.PYTEST_PLUGIN_NAME`, where the fixtures
(:mod:`pytest_graphinstruct.plugin`) find the run's session (``bench``), ``query`` and
``evaluate``.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.pytest_run.outputs import mark_started, unclaimable
from pytest_graphinstruct.pytest_run.state import RunState
from pytest_graphinstruct.run.config import RunConfig
from pytest_graphinstruct.run.gc_policy import fewer_collections
from pytest_graphinstruct.run.payload import OUTPUT_KEY, worker_payload
from pytest_graphinstruct.run.records.results import ItemResult
from pytest_graphinstruct.suite.instruction import Instruction

if TYPE_CHECKING:
    from pytest_graphinstruct.run.gate.plan import BaselinePlan
    from pytest_graphinstruct.run.session import BenchmarkSession


class RunLifecyclePlugin:
    """Start and end of an active run (the session's first and last steps)."""

    def __init__(self, state: RunState) -> None:
        self.state = state
        self._during_run = ExitStack()  # what the run changed in this process, undone at the end

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        """Collect garbage less often while the run is active
        (:mod:`~pytest_graphinstruct.run.gc_policy`)."""
        self._during_run.enter_context(fewer_collections())

    def run_session(self) -> BenchmarkSession:
        """The run's session, opened on first use (the ``gi_suite`` and ``gi_results``
        fixtures).  A method, not a property: pytest reads every attribute of a registered
        plugin while looking for fixtures (pytest 8.0 at session start, in every process),
        and a property would open the session then."""
        return self.state.bench

    def query(self, instruction: Instruction, strategy: str = "zero-shot", sample: int = 0,
              model: str | None = None) -> Any:
        return self.state.query(instruction, strategy, sample, model)

    def evaluate(self, instruction: Instruction, answers: Sequence[Any],
                 strategy: str = "zero-shot") -> ItemResult:
        return self.state.evaluate(instruction, answers, strategy)

    @pytest.hookimpl(tryfirst=True)  # before xdist starts its workers
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Before any work: take SIGTERM as an interruption, open the stop file, claim the
        outputs (the report says a run is in progress), check the inputs, start the embedded
        server."""
        from pytest_graphinstruct.run.provenance import utc_now

        state = self.state
        state.started = utc_now()
        state.stopper.open(None if state.winput is None else state.winput.stop_folder)
        if session.config.option.collectonly or state.worker is not None:
            return
        from pytest_graphinstruct.run.preflight import preflight

        problem = unclaimable(state.run, state.plan) or _auto_problem(state.run, state.plan)
        if problem is not None:
            raise state.usage(problem)
        try:
            state.placeholder = mark_started(state.run.report)
            state.inputs = preflight(state.run, pools=not state.controller,
                                     parse_bases=not state.controller)
            state.notes.extend(state.inputs.notes)  # stale cached answers, the snapshot served
            state.served = state.inputs.served
            if state.local is not None:
                state.local_info = state.local.start()
        except GraphInstructError as exc:
            raise state.usage(exc) from None

    # tryfirst: the xdist controller has every worker's results once its loop ends, so it
    # writes the report while the workers exit (xdist's own session finish waits for that).
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Stop the server, close the schedulers; a worker ships its payload, the controller
        (or the single process) finishes the run, unless it only collected."""
        from pytest_graphinstruct.pytest_run.finish import finish

        state = self.state
        # The server first: a request still in flight (after -x, Ctrl+C) then fails at once
        # instead of generating on.
        if state.local is not None:
            state.local.stop()
        if state.stopper.reason is not None and exitstatus in (pytest.ExitCode.OK,
                                                               pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = exitstatus = pytest.ExitCode.INTERRUPTED  # stopped gracefully
        if state.opened is not None:
            self._close_bench(session, exitstatus)
            if state.controller:  # what the answer service sent, refused and noted
                own = worker_payload(state.opened, progress=False)
                state.totals.add("", own)
                state.notes.extend(n for n in own.notes if n not in state.notes)
                state.limits.extend(n for n in own.limits if n not in state.limits)
        output = getattr(state.config, "workeroutput", None)
        if output is not None:
            wanted = state.winput is not None and state.winput.progress
            output[OUTPUT_KEY] = worker_payload(state.opened, progress=wanted).to_json()
        elif not session.config.option.collectonly:  # a collect-only run writes nothing
            finish(state, session)
        # A run leaves millions of long-lived objects (pools, caches, graphs): pytest's own
        # garbage collection at unconfigure and the interpreter's at exit would walk them all
        # (an xdist controller waits for every worker's exit).  Frozen objects are still freed
        # by reference counting.
        gc.freeze()

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Give the signals back, remove the stop file, stop the server (unless already), give
        the collector its thresholds back."""
        state = self.state
        state.stopper.close()
        if state.local is not None:
            state.local.stop()  # already stopped at session finish, unless it never ran
        gc.freeze()  # again: what was made since the session finished (see there)
        self._during_run.close()

    def _close_bench(self, session: pytest.Session, exitstatus: int) -> None:
        """Close the schedulers.  An interrupted run issues nothing more but lets calls in
        flight finish for a grace period (their answers are cached; a second Ctrl+C ends the
        wait); a run stopped by ``-x`` drops what is not started; a finished one waits."""
        state = self.state
        assert state.opened is not None
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            reason = state.stopper.reason or "interrupted (Ctrl+C)"
            state.stopper.request(reason)  # the run's other processes stop too
            state.opened.stop(reason)
            try:
                state.opened.close()
            except KeyboardInterrupt:
                state.opened.close(cancel=True)
            return
        state.opened.close(cancel=bool(session.shouldstop) or bool(session.shouldfail))


def _auto_problem(run: RunConfig, plan: BaselinePlan) -> str | None:
    """Why ``--gi-samples=auto`` cannot run against the baseline ``plan`` (``None``: it can,
    or the run asks a fixed count): no baseline, or one without several samples per
    instruction.  Under ``-n`` it runs too: the controller's answer service runs the looks
    (:mod:`.service`)."""
    if run.auto_samples is not None and plan.missing:
        return ("--gi-samples=auto needs an existing --gi-baseline to be compared with (make "
                "it with a fixed --gi-samples, e.g. 5, and --gi-update-baseline)")
    if run.auto_samples is not None and plan.gated:
        from pytest_graphinstruct.run.adaptive import baseline_problem

        return baseline_problem(plan.cells, str(plan.path))
    return None
