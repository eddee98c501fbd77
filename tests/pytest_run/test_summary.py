"""``write_summary``: the GraphInstruct section of pytest's terminal summary, written only by the
process that wrote the report."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pytest_graphinstruct.models.backends.recorded import RecordProblem, ReplayCheck
from pytest_graphinstruct.pytest_run.summary import SummaryPlugin, write_summary
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.gate.plan import BaselinePlan, GateOptions
from pytest_graphinstruct.run.gate.verdict import Decision, Written, decide
from pytest_graphinstruct.run.records.results import CellMetadata, ItemResult, RunInfo, RunReport

from .fakes import FakeConfig, FakeTerminalReporter, worker_config


def _report() -> RunReport:
    items = [ItemResult(instruction_id="L1-001", level=1, cell="m-zero-shot", model="m",
                        strategy="zero-shot", outcome="failed", level_score=0.25)]
    return with_pareto([build_cell(CellMetadata("m", "zero-shot"), items)])


def _state(tmp_path: Path, report: RunReport | None, decision: Decision | None = None,
            **kw: Any) -> Any:
    given: dict[str, Any] = {
        "config": FakeConfig(tmp_path), "report": report, "local": None, "local_info": None,
        "notes": [], "written": [], "usage_error": None,
        "decision": decision if decision is not None or report is None
        else decide(report, BaselinePlan(), GateOptions())}
    given.update(kw)
    return SimpleNamespace(**given)


def _written(driver: Any) -> FakeTerminalReporter:
    reporter = FakeTerminalReporter()
    write_summary(driver, reporter)
    return reporter


def test_nothing_before_the_report_or_in_a_worker(tmp_path: Path) -> None:
    assert _written(_state(tmp_path, None)).lines == []
    worker = _state(tmp_path, _report(), config=worker_config(tmp_path))
    reporter = _written(worker)
    assert reporter.sections == [] and reporter.lines == []


def test_the_section_holds_scores_warnings_verdict_and_written_lines(tmp_path: Path) -> None:
    report = _report()
    decision = decide(report, BaselinePlan(), GateOptions(fail_under=0.9))
    driver = _state(tmp_path, report, decision,
                     notes=["stale answers at \x1b[31mhttp://x\x1b[0m"],
                     written=[Written("report written to r.json", ok=True),
                              Written("html report NOT written to h: no", ok=False)])
    reporter = _written(driver)
    assert reporter.sections == ["GraphInstruct"]
    texts = reporter.texts()
    assert any("m-zero-shot" in t for t in texts)  # the score table
    warning = next(line for line in reporter.lines if line[0].startswith("WARNING: stale"))
    assert "\x1b" not in warning[0] and warning[1] == {"yellow": True}  # escaped
    verdict = decision.verdict.lines()
    assert verdict and all((line, {"red": True}) in reporter.lines for line in verdict)
    assert reporter.lines[-2:] == [("report written to r.json", {"red": False}),
                                   ("html report NOT written to h: no", {"red": True})]


def test_a_usage_error_before_any_result_shows_only_what_was_written(tmp_path: Path) -> None:
    empty = with_pareto([build_cell(CellMetadata("m", "zero-shot"), [])])
    driver = _state(tmp_path, empty, usage_error="the cache is busy",
                    notes=["a note"], written=[Written("report written to r.json", ok=True)])
    reporter = _written(driver)
    assert reporter.sections == ["GraphInstruct"]
    assert reporter.lines == [("report written to r.json", {"red": False})]
    # once an item has a result, the tables are shown whatever stopped the run
    shown = _written(_state(tmp_path, _report(), usage_error="the cache is busy"))
    assert any("m-zero-shot" in t for t in shown.texts())


def test_the_embedded_server_line_once_it_started(tmp_path: Path) -> None:
    local = SimpleNamespace(startup_s=2.345)
    texts = _written(_state(tmp_path, _report(), local=local,
                             local_info={"describe": "tiny model"})).texts()
    assert texts[0] == "local model: tiny model (server ready in 2.3 s)"
    never = _written(_state(tmp_path, _report(), local=SimpleNamespace(startup_s=None)))
    assert not any(t.startswith("local model") for t in never.texts())


def test_the_replay_check_warns_only_when_lines_were_skipped(tmp_path: Path) -> None:
    clean = ReplayCheck("a.jsonl", lines=2, used=2)
    report = replace(_report(), run=RunInfo(replay_problems=clean))
    lines = _written(_state(tmp_path, report)).lines
    assert (clean.summary_line(), {"yellow": False}) in lines
    problem = RecordProblem(3, "unknown_id", "L9-001", "no such instruction")
    skipped = ReplayCheck("a.jsonl", lines=3, used=2, counts={"unknown_id": 1},
                          problems=(problem,))
    report = replace(_report(), run=RunInfo(replay_problems=skipped))
    lines = _written(_state(tmp_path, report)).lines
    first = lines.index(("WARNING: " + skipped.summary_line(), {"yellow": True}))
    assert lines[first + 1] == ("  a.jsonl:3: no such instruction", {"yellow": True})


def test_the_plugin_writes_the_states_summary(tmp_path: Path) -> None:
    reporter = FakeTerminalReporter()
    state = SimpleNamespace(report=None, decision=None, config=FakeConfig(tmp_path))
    SummaryPlugin(state).pytest_terminal_summary(reporter)  # type: ignore[arg-type]
    assert reporter.sections == []  # no report yet
    report = _report()
    state.report = report
    state.decision = decide(report, BaselinePlan(), GateOptions())
    state.local, state.notes, state.written, state.usage_error = None, [], [], None
    SummaryPlugin(state).pytest_terminal_summary(reporter)  # type: ignore[arg-type]
    assert reporter.sections == ["GraphInstruct"]
