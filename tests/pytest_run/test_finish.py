"""``finish``: the report with its coverage and ``run`` record, the verdict, the outputs' lines,
and a failed verdict failing a session pytest thought passed (an xdist controller's run: its
results are the workers')."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.pytest_run.finish import finish
from pytest_graphinstruct.pytest_run.state import RunState
from pytest_graphinstruct.run.gate.verdict import Written
from pytest_graphinstruct.run.records.results import ItemResult
from tests.plugin._suite import CYCLE4, EMPTY3, TREE4

from .fakes import FakeConfig, FakeSession, controller_config, run_config

CELL = "oracle-zero-shot"


def _result(iid: str, score: float) -> ItemResult:
    return ItemResult(instruction_id=iid, level=int(iid[1]), cell=CELL, model="oracle",
                      strategy="zero-shot", outcome="passed", level_score=score)


def _finished(tmp_path: Path, results: list[ItemResult], selected: list[str] | None,
              session: FakeSession | None = None, **raw: Any) -> tuple[RunState, FakeSession]:
    config = controller_config(tmp_path)
    state = RunState(config, run_config(tmp_path, **raw))
    for r in results:
        state.totals.results.append(r)
    state.selected = selected
    session = session or FakeSession(config)
    finish(state, session)
    return state, session


def test_a_complete_run_reports_its_cells_and_what_produced_it(tmp_path: Path) -> None:
    results = [_result("L0-001", 1.0), _result("L1-001", 0.9)]
    state, session = _finished(tmp_path, results, [f"L0-001[{CELL}]", f"L1-001[{CELL}]"],
                                report=str(tmp_path / "r.json"))
    report = state.report
    assert report is not None and state.decision is not None
    assert report.coverage.complete and report.labels == (CELL,)
    assert [r.instruction_id for r in report.cells[0].per_instruction] == ["L0-001", "L1-001"]
    assert report.run is not None and report.run.filter.selected == 2
    assert report.gate is not None and report.gate.passed
    assert state.written == [Written(f"report written to {tmp_path / 'r.json'}", ok=True)]
    written = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert written["coverage"]["complete"] is True
    assert session.exitstatus == pytest.ExitCode.OK


def test_a_failed_verdict_fails_a_passing_session(tmp_path: Path) -> None:
    state, session = _finished(tmp_path, [_result("L0-001", 0.2)], [f"L0-001[{CELL}]"],
                                fail_under="0.9")
    assert state.decision is not None and state.decision.failed
    assert state.report is not None and state.report.gate is not None
    assert not state.report.gate.passed
    assert session.exitstatus == pytest.ExitCode.TESTS_FAILED
    config = controller_config(tmp_path)
    stopped = FakeSession(config, exitstatus=pytest.ExitCode.INTERRUPTED)
    _, session = _finished(tmp_path, [_result("L0-001", 0.2)], [f"L0-001[{CELL}]"], stopped,
                           fail_under="0.9")
    assert session.exitstatus == pytest.ExitCode.INTERRUPTED  # pytest's own status kept


def test_an_output_not_written_fails_a_passing_session(tmp_path: Path) -> None:
    (tmp_path / "r.json").mkdir()  # a folder where the report goes: the write fails at the end
    state, session = _finished(tmp_path, [_result("L0-001", 1.0)], [f"L0-001[{CELL}]"],
                                report=str(tmp_path / "r.json"))
    assert state.decision is not None and not state.decision.failed  # the verdict passed
    (written,) = state.written
    assert written.fails_run and written.line.startswith(
        f"report NOT written to {tmp_path / 'r.json'}: ")
    assert session.exitstatus == pytest.ExitCode.TESTS_FAILED


def test_items_without_a_result_make_the_report_partial(tmp_path: Path) -> None:
    state, _ = _finished(tmp_path, [_result("L0-001", 1.0)],
                          [f"L0-001[{CELL}]", f"L1-001[{CELL}]"])
    assert state.report is not None
    assert state.report.coverage.reason == "1 selected item(s) have no result"
    assert state.report.coverage.missing == (f"L1-001[{CELL}]",)


def test_a_run_that_never_got_its_session_says_only_why(tmp_path: Path) -> None:
    config = FakeConfig(tmp_path)
    state = RunState(config, run_config(tmp_path))
    shutil.rmtree(tmp_path / "suite")  # the suite is gone before the session opens
    finish(state, FakeSession(config))
    report = state.report
    assert report is not None and report.cells == ()
    assert report.coverage.reason is not None
    assert report.coverage.reason.startswith("usage error: ")
    assert state.usage_error is not None and state.usage_error in report.coverage.reason


def test_recorded_answers_that_cover_part_of_the_suite_are_noted(tmp_path: Path) -> None:
    replay = tmp_path / "a.jsonl"
    replay.write_text("".join(json.dumps(
        {"instruction_id": iid, "level": int(iid[1]),
         "samples": [{"raw_output": text, "input_tokens": 1, "output_tokens": 1}]}) + "\n"
        for iid, text in [("L0-001", EMPTY3), ("L1-001", TREE4), ("L1-002", CYCLE4)]),
        encoding="utf-8")
    config = FakeConfig(tmp_path)
    run = run_config(tmp_path, model=None, replay=str(replay))
    state = RunState(config, run)
    state.selected = []
    finish(state, FakeSession(config))
    assert state.notes == ["the recorded answers cover 3 of the 4 instructions asked for; the "
                            "other 1 were not run"]
