"""``runs list`` and ``runs compare``: the run store for people
(report/commands/runs.py and the CLI)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.report.commands.runs import ComparedRun, compare_runs, first_problem
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    CellReport,
    Coverage,
    GitState,
    ItemResult,
    RunInfo,
    RunReport,
    SampleResult,
    ViolationDetail,
)
from pytest_graphinstruct.run.records.writer import report_json
from pytest_graphinstruct.run.store import RunStore

IDS = [f"L2-{n:03d}" for n in range(30)]
T0 = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)
HASH_A, HASH_B = "sha256:" + "a" * 64, "sha256:" + "b" * 64


def _sample(violation: str | None = None) -> SampleResult:
    if violation is None:
        return SampleResult(parsed=True, refusal=False)
    return SampleResult(parsed=True, refusal=False, violations=(violation,),
                        violation_details=(ViolationDetail(
                            violation, "count", 1.0, expected="= 4", observed="5"),))


def cell(model: str, strategy: str, score: float, *, outcomes: Mapping[str, str] | None = None,
         method: str = "baseline", ids: Collection[str] = IDS) -> CellReport:
    """Items of L2 scoring ``score``, passed unless ``outcomes`` says otherwise."""
    outcomes = outcomes or {}
    label = f"{model}-{strategy}" + ("" if method == "baseline" else f"-{method}")
    items = []
    for i in ids:
        outcome = outcomes.get(i, "passed")
        kw: dict[str, Any] = {}
        if outcome == "failed":
            kw = {"samples": (_sample(), _sample("num_nodes=4"))}
        elif outcome == "error":
            kw = {"error": "backend gave up: HTTP 500\x1b[2J"}
        items.append(ItemResult(instruction_id=i, level=2, cell=label, model=model,
                                strategy=strategy, method=method, outcome=outcome,
                                level_score=None if outcome == "error" else score,
                                tokens=100, d5_valid=1, api_calls=1, **kw))
    return build_cell(CellMetadata(model, strategy, method=method), items)


def run_report(*cells: CellReport, info: RunInfo | None = None,
               partial: bool = False) -> RunReport:
    report = with_pareto(list(cells))
    coverage = Coverage.partial("interrupted (Ctrl+C)") if partial else Coverage()
    return replace(report, run=info, coverage=coverage)


def save(store: RunStore, report: RunReport) -> None:
    store.save_bytes(report_json(report).encode("utf-8"), now=T0)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["runs", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    """Run 1: m-zero-shot and m-few-shot, all passing (suite A, clean commit).  Run 2 (partial,
    suite B, dirty): m-zero-shot worse, two items newly failing, one now an error; m-few-shot
    gone; m-zero-cot new.  Run 3: a file that is not a report."""
    s = RunStore(tmp_path / "runs")
    first = run_report(cell("m", "zero-shot", 0.9), cell("m", "few-shot", 0.8),
                       info=RunInfo(suite_hash=HASH_A, git=GitState("0123456789abcdef" * 2 +
                                                                    "01234567", dirty=False)))
    second = run_report(
        cell("m", "zero-shot", 0.6, outcomes={"L2-003": "failed", "L2-004": "failed",
                                              "L2-005": "error"}),
        cell("m", "zero-cot", 0.7, method="vgig"),
        info=RunInfo(suite_hash=HASH_B, git=GitState("fedcba9876543210" * 2 + "76543210",
                                                     dirty=True)),
        partial=True)
    save(s, first)
    save(s, second)
    s.save_bytes(b"not json", now=T0)
    return s


def test_runs_list_shows_one_row_per_run(store: RunStore,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = cli(capsys, "list", "--store", str(store.root))
    assert status == 0 and err == ""
    lines = out.splitlines()
    head = lines[0]
    for column in ("run", "saved (UTC)", "cells", "models", "strategies/methods", "items",
                   "S_total per cell", "partial", "git", "suite"):
        assert column in head
    row1 = next(line for line in lines if line.startswith("0001"))
    assert "2025-03-04 05:06:07" in row1 and "zero-shot, few-shot" in row1
    assert "0123456789 " in row1 + " " and "aaaaaaaaaaaa" in row1 and "partial" not in row1
    assert "m-zero-shot 0." in row1
    assert any(line.strip().startswith("m-few-shot 0.") for line in lines)  # a second line
    row2 = next(line for line in lines if line.startswith("0002"))
    assert "partial" in row2 and "fedcba9876*" in row2 and "bbbbbbbbbbbb" in row2
    assert "zero-cot+vgig" in row2 and " 60 " in row2  # 2 cells x 30 items
    row3 = next(line for line in lines if line.startswith("0003"))
    assert "unreadable" in row3
    assert any(line.startswith("run 0003 is unreadable: ") and "not JSON" in line
               for line in lines)
    assert lines[-1] == f"3 run(s) in {store.root}; git: * = uncommitted changes"


def test_runs_list_of_an_empty_or_missing_store(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    status, out, _ = cli(capsys, "list", "--store", str(tmp_path / "empty"))
    assert status == 0 and out == f"the run store {tmp_path / 'empty'} holds no runs\n"
    status, out, err = cli(capsys, "list", "--store", str(tmp_path / "none"))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "no run store at" in err and "--gi-autosave" in err


def test_runs_list_defaults_to_the_current_folder(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    save(RunStore(tmp_path / ".graphinstruct" / "runs"), run_report(cell("m", "zero-shot", 1)))
    status, out, _ = cli(capsys, "list")
    assert status == 0 and any(line.startswith("0001") for line in out.splitlines())


def test_runs_compare_pairs_shared_cells_and_lists_changed_items(
        store: RunStore, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = cli(capsys, "compare", "1", "-2", "--store", str(store.root))
    assert status == 0, err
    # "-2" is run 2 counted from the latest (run 3): run 2
    lines = out.splitlines()
    assert lines[0].startswith("A: run 0001 (saved 2025-03-04 05:06:07 UTC, git 0123456789")
    assert lines[1].startswith("B: run 0002 (") and "(dirty)" in lines[1] and "partial" in lines[1]
    assert "only in A: m-few-shot" in lines
    assert "only in B: m-zero-cot-vgig" in lines
    assert "== cell m-zero-shot ==" in lines
    # the compare command's lines
    # each level as a gated run shows it: the change, the Holm-adjusted p labelled, the words
    assert any(x.startswith("  L2 level score -0.300 [-0.300, -0.300]; Holm p(no drop)=")
               and x.endswith(": regressed; 29 instructions") for x in lines)
    assert any(line.startswith("verdict: regression") for line in lines)
    assert "newly failing in B (3):" in lines
    assert ("  L2-003 failed: num_nodes=4 (count): expected = 4, observed 5") in lines
    assert "  L2-005 error: error: backend gave up: HTTP 500\\x1b[2J" in lines  # escaped
    assert "newly passing in B (0): none" in lines
    assert sum("newly failing" in line for line in lines) == 1  # not compare's list again
    assert not any(line.startswith("errors in the candidate") for line in lines)
    assert "different suite files (aaaaaaaaaaaa vs bbbbbbbbbbbb)" in err


def test_runs_compare_the_other_way_shows_newly_passing(
        store: RunStore, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "compare", "2", "0001", "--store", str(store.root))
    assert status == 0
    lines = out.splitlines()
    assert "newly passing in B (3):" in lines
    assert "  L2-005 (was error)" in lines and "  L2-003 (was failed)" in lines
    assert "newly failing in B (0): none" in lines
    assert any(line.startswith("verdict: improvement") for line in lines)


def test_runs_compare_takes_report_files(store: RunStore, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(report_json(run_report(cell("m", "few-shot", 0.8))), encoding="utf-8")
    status, out, _ = cli(capsys, "compare", "1", str(outside), "--store", str(store.root))
    assert status == 0
    assert out.splitlines()[1] == f"B: {outside}"
    assert "== cell m-few-shot ==" in out and "no significant change" in out


@pytest.mark.parametrize(("argv", "message"), [
    (("compare", "1", "9"), "no run '9' in the run store"),
    (("compare", "1", "3"), "not JSON"),
    (("compare", "latest", "1"), "not JSON"),
    (("compare", "1", "2", "--max-regression", "-1"), "--max-regression must be >= 0"),
])
def test_runs_compare_errors_are_one_line(store: RunStore, capsys: pytest.CaptureFixture[str],
                                          argv: tuple[str, ...], message: str) -> None:
    status, out, err = cli(capsys, *argv, "--store", str(store.root))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_runs_compare_with_no_shared_cell(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    s = RunStore(tmp_path / "runs")
    save(s, run_report(cell("m", "zero-shot", 0.9)))
    save(s, run_report(cell("n", "zero-shot", 0.9), cell("n", "few-shot", 0.9)))
    status, _, err = cli(capsys, "compare", "1", "2", "--store", str(s.root))
    assert status == 2
    assert ("share no cell (A: m-zero-shot; B: n-zero-shot, n-few-shot): name the two with "
            "--a-cell and --b-cell") in err


def test_a_cell_with_nothing_paired_still_lists_items(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    s = RunStore(tmp_path / "runs")
    save(s, run_report(cell("m", "zero-shot", 0.9, ids=["L2-001"])))
    save(s, run_report(cell("m", "zero-shot", 0.9, ids=["L2-001"],
                            outcomes={"L2-001": "error"})))
    status, out, _ = cli(capsys, "compare", "1", "2", "--store", str(s.root))
    assert status == 0
    assert "no paired comparison: no instruction scored in both cells" in out
    assert "newly failing in B (1):" in out


def test_first_problem_order_and_bounds() -> None:
    base: dict[str, Any] = {"instruction_id": "L1-001", "level": 1, "cell": "m-zero-shot",
                            "model": "m", "strategy": "zero-shot", "outcome": "failed"}
    refused = SampleResult(parsed=False, refusal=True)
    unparsed = SampleResult(parsed=False, refusal=False, error="no graph found")
    assert first_problem(ItemResult(**base, samples=(refused, unparsed))) == \
        "not parsed: no graph found"
    assert first_problem(ItemResult(**base, samples=(refused,))) == "refused"
    plain = SampleResult(parsed=True, refusal=False, derived_violations=("task:x",))
    assert first_problem(ItemResult(**base, samples=(_sample(), plain))) == "task:x"
    long = ItemResult(**{**base, "outcome": "error"}, error="x" * 500 + "\r\n")
    shown = first_problem(long)
    assert len(shown) == 160 and shown.endswith("…") and "\r" not in shown
    assert first_problem(ItemResult(**base)) == "no violation recorded"


@pytest.mark.parametrize(("flag", "status"), [((), 0), (("--fail-on-regression",), 1)])
def test_runs_compare_exits_1_on_a_regression_only_with_fail_on_regression(
        store: RunStore, capsys: pytest.CaptureFixture[str], flag: tuple[str, ...],
        status: int) -> None:
    got, out, err = cli(capsys, "compare", "1", "2", "--store", str(store.root), *flag)
    assert got == status, err
    assert any(line.startswith("verdict: regression") for line in out.splitlines())


def test_runs_compare_fail_on_regression_exits_0_without_a_regression(
        store: RunStore, capsys: pytest.CaptureFixture[str]) -> None:
    got, out, err = cli(capsys, "compare", "2", "1", "--store", str(store.root),
                        "--fail-on-regression")
    assert got == 0, err
    assert any(line.startswith("verdict: improvement") for line in out.splitlines())
    assert not any(line.startswith("verdict: regression") for line in out.splitlines())


def test_runs_compare_names_the_regressed_cells_when_several_are_compared(
        tmp_path: Path) -> None:
    a = run_report(cell("m", "zero-shot", 0.9), cell("m", "few-shot", 0.8))
    b = run_report(cell("m", "zero-shot", 0.6, outcomes={"L2-003": "failed"}),
                   cell("m", "few-shot", 0.8))
    sides = []
    for name, report in (("a", a), ("b", b)):
        path = tmp_path / f"{name}.json"
        path.write_text(report_json(report), encoding="utf-8")
        sides.append(ComparedRun(name, path, None, report))
    result = compare_runs(*sides)
    assert result.regressed == ("m-zero-shot",)
    assert result.lines[-1] == "regressed cells: m-zero-shot (of 2 compared)"
    assert result.exit_status(fail_on_regression=True) == 1
    assert result.exit_status(fail_on_regression=False) == 0
