"""The end of a run, in the process that writes its report (the xdist controller, or the single
process): build the report and its ``run`` record, reach the verdict through the one driver
(:mod:`pytest_graphinstruct.run.gate.verdict`: baseline, gates), write what was asked for
(:mod:`.outputs`) and set the exit status."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from pytest_graphinstruct.pytest_run.coverage import run_coverage
from pytest_graphinstruct.pytest_run.outputs import write_outputs
from pytest_graphinstruct.run.records.results import Coverage, ItemResult, RunReport

if TYPE_CHECKING:
    from pytest_graphinstruct.pytest_run.state import RunState
    from pytest_graphinstruct.run.records.results import RunInfo, ShardSelection


def finish(state: RunState, session: pytest.Session) -> None:
    """Build the report (``state.report``), decide the verdict (``state.decision``), write
    the outputs (``state.written``: one line each) and fail the session when the verdict
    fails a run pytest thought passed, or an output it asked for was not written (the line
    names the file and why: the disk full, a baseline refused)."""
    from pytest_graphinstruct.run.gate.verdict import decide, settle_baseline

    bench = state.opened
    results = state.totals.results if state.controller else (
        bench.flush() if bench is not None else [])
    model_info = {"local": state.local_info["describe"]} if state.local_info else None
    if not state.controller and bench is not None:
        state.notes.extend(bench.notes())
        state.limits.extend(bench.limits())
    _note_unrecorded(state)
    coverage = run_coverage(session, results, selected=state.selected,
                            usage_error=state.usage_error,
                            terminated=state.stopper.terminated,
                            worker_errors=state.totals.errors,
                            limits=tuple(dict.fromkeys(state.limits)))
    try:
        report = state.bench.report(results, coverage=coverage, model_info=model_info)
    except pytest.UsageError:  # the run never got a session (a bad suite): say only why
        report = RunReport((), coverage=coverage)
    report = replace(report, run=_run_info(state, results, coverage))
    decision = decide(report, state.plan, state.gate_options)
    update = settle_baseline(report, decision)
    done = None if update is None else update.line
    state.report, state.decision = replace(report, gate=decision.record(done)), decision
    state.written = write_outputs(state.report, decision, state.run, state.opened,
                                   update=update, failed_tests=session.testsfailed,
                                   placeholder=state.placeholder)
    unwritten = any(w.fails_run for w in state.written)
    if (decision.failed or unwritten) and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _note_unrecorded(state: RunState) -> None:
    """With recorded answers: say how many instructions of the suite had none (they are not
    collected, so they are neither errors nor missing)."""
    from pytest_graphinstruct.run.preflight import first_per_level

    try:
        bench = state.bench
    except pytest.UsageError:
        return
    recorded = bench.recorded_ids
    if recorded is None:
        return
    wanted = first_per_level(bench.suite, state.run.per_level)
    absent = sum(1 for inst in wanted if inst.id not in recorded)
    if absent:
        state.notes.append(f"the recorded answers cover {len(wanted) - absent} of the "
                            f"{len(wanted)} instructions asked for; the other {absent} were "
                            "not run")


def _run_info(state: RunState, results: Sequence[ItemResult], coverage: Coverage) -> RunInfo:
    """What produced this run (docs/RUNS.md), as the process that writes the report knows it;
    under xdist the cache counts and what was sent are the workers' (the controller's results
    are read back from JSON, which does not keep them, and it sends nothing itself)."""
    from pytest_graphinstruct.run.provenance import run_info
    from pytest_graphinstruct.run.records.results import ItemFilter

    run, option, bench = state.run, state.config.option, state.opened
    return run_info(
        run, started=state.started, suite=None if bench is None else bench.suite,
        rootdir=state.config.rootpath, results=results,
        item_filter=ItemFilter(keyword=getattr(option, "keyword", "") or None,
                               markers=getattr(option, "markexpr", "") or None,
                               levels=run.levels, per_level=run.per_level,
                               selected=coverage.selected, shard=_shard_selection(state)),
        cached=state.totals.cached if state.controller else None, local=state.local_info,
        sources=state.totals.sources if state.controller or bench is None
        else bench.cache_sources(),
        served=None if state.inputs is None else state.inputs.served.models(),
        replay=None if bench is None else bench.replay_check,
        sent=state.totals.sent if state.controller or bench is None else bench.sent(),
        fingerprints=None if state.inputs is None else state.inputs.fingerprints)


def _shard_selection(state: RunState) -> ShardSelection | None:
    """The report's record of ``--gi-shard`` (``None`` without it, or when the run never got
    its suite)."""
    from pytest_graphinstruct.run.records.results import ShardSelection

    shard = state.run.shard
    if shard is None or state.opened is None:
        return None
    universe = tuple((inst.id, inst.level) for inst in state.selection())
    return ShardSelection(shard.index, shard.count, universe)
