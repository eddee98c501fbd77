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
    from pytest_graphinstruct.pytest_run.driver import RunDriver
    from pytest_graphinstruct.run.records.results import RunInfo, ShardSelection


def finish(driver: RunDriver, session: pytest.Session) -> None:
    """Build the report (``driver.report``), decide the verdict (``driver.decision``), write
    the outputs (``driver.written``: one line each) and fail the session when the verdict
    fails a run pytest thought passed."""
    from pytest_graphinstruct.run.gate.verdict import decide, settle_baseline

    bench = driver.opened
    results = driver.totals.results if driver.controller else (
        bench.flush() if bench is not None else [])
    model_info = {"local": driver.local_info["describe"]} if driver.local_info else None
    if not driver.controller and bench is not None:
        driver.notes.extend(bench.notes())
        driver.limits.extend(bench.limits())
    _note_unrecorded(driver)
    coverage = run_coverage(session, results, selected=driver.selected,
                            usage_error=driver.usage_error,
                            terminated=driver.stopper.terminated,
                            worker_errors=driver.totals.errors,
                            limits=tuple(dict.fromkeys(driver.limits)))
    try:
        report = driver.bench.report(results, coverage=coverage, model_info=model_info)
    except pytest.UsageError:  # the run never got a session (a bad suite): say only why
        report = RunReport((), coverage=coverage)
    report = replace(report, run=_run_info(driver, results, coverage))
    decision = decide(report, driver.plan, driver.gate_options)
    update = settle_baseline(report, decision)
    done = None if update is None else update.line
    driver.report, driver.decision = replace(report, gate=decision.record(done)), decision
    driver.written = write_outputs(driver.report, decision, driver.run, driver.opened,
                                   update=update, failed_tests=session.testsfailed)
    if decision.failed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _note_unrecorded(driver: RunDriver) -> None:
    """With recorded answers: say how many instructions of the suite had none (they are not
    collected, so they are neither errors nor missing)."""
    from pytest_graphinstruct.run.preflight import first_per_level

    try:
        bench = driver.bench
    except pytest.UsageError:
        return
    recorded = bench.recorded_ids
    if recorded is None:
        return
    wanted = first_per_level(bench.suite, driver.run.per_level)
    absent = sum(1 for inst in wanted if inst.id not in recorded)
    if absent:
        driver.notes.append(f"the recorded answers cover {len(wanted) - absent} of the "
                            f"{len(wanted)} instructions asked for; the other {absent} were "
                            "not run")


def _run_info(driver: RunDriver, results: Sequence[ItemResult], coverage: Coverage) -> RunInfo:
    """What produced this run (docs/RUNS.md), as the process that writes the report knows it;
    under xdist the cache counts and what was sent are the workers' (the controller's results
    are read back from JSON, which does not keep them, and it sends nothing itself)."""
    from pytest_graphinstruct.run.provenance import run_info
    from pytest_graphinstruct.run.records.results import ItemFilter

    run, option, bench = driver.run, driver.config.option, driver.opened
    return run_info(
        run, started=driver.started, suite=None if bench is None else bench.suite,
        rootdir=driver.config.rootpath, results=results,
        item_filter=ItemFilter(keyword=getattr(option, "keyword", "") or None,
                               markers=getattr(option, "markexpr", "") or None,
                               levels=run.levels, per_level=run.per_level,
                               selected=coverage.selected, shard=_shard_selection(driver)),
        cached=driver.totals.cached if driver.controller else None, local=driver.local_info,
        sources=driver.totals.sources if driver.controller or bench is None
        else bench.cache_sources(),
        served=None if driver.inputs is None else driver.inputs.served.models(),
        replay=None if bench is None else bench.replay_check,
        sent=driver.totals.sent if driver.controller or bench is None else bench.sent())


def _shard_selection(driver: RunDriver) -> ShardSelection | None:
    """The report's record of ``--gi-shard`` (``None`` without it, or when the run never got
    its suite)."""
    from pytest_graphinstruct.run.records.results import ShardSelection

    shard = driver.run.shard
    if shard is None or driver.opened is None:
        return None
    universe = tuple((inst.id, inst.level) for inst in driver.selection())
    return ShardSelection(shard.index, shard.count, universe)
