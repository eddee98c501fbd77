"""``python -m pytest_graphinstruct show ID --report FILE [--cell C]``: one item of a report —
its cell, outcome, per-sample parse status, violations, tokens and raw answer (escaped).  Bad
input is one ``error: …`` line on stderr and exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    ItemResult,
    SampleResult,
    ViolationDetail,
)
from pytest_graphinstruct.run.records.writer import write_report

HOSTILE = "\x1b[2J\x1b[32mPASSED\x1b[0m\r\nline two\u202e"


def item(model: str, strategy: str, iid: str, **kw: object) -> ItemResult:
    return ItemResult(instruction_id=iid, level=int(iid[1]), cell=f"{model}-{strategy}",
                      model=model, strategy=strategy, **kw)  # type: ignore[arg-type]


def failed_item(model: str = "m", strategy: str = "zero-shot") -> ItemResult:
    return item(model, strategy, "L1-001", outcome="failed", level_score=0.25, tokens=150,
                api_calls=2, samples=(
                    SampleResult(parsed=True, refusal=False, violations=("graph_type=tree",
                                                                          "num_edges=3"),
                                 derived_violations=("no_contradiction",), input_tokens=50,
                                 output_tokens=20, usage_source="provider",
                                 raw_answer=HOSTILE),
                    SampleResult(parsed=False, refusal=False, error="no graph found",
                                 input_tokens=50, output_tokens=30, usage_source="provider",
                                 raw_answer="I cannot draw graphs."),
                ))


def write(path: Path, *cells: list[ItemResult]) -> Path:
    built = [build_cell(CellMetadata(items[0].model, items[0].strategy), items)
             for items in cells]
    write_report(with_pareto(built), path)
    return path


def test_show_prints_cell_outcome_samples_tokens_and_escaped_raw_answer(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = write(tmp_path / "r.json", [failed_item(), item("m", "zero-shot", "L1-002")])
    assert main(["show", "L1-001", "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("L1-001 in cell m-zero-shot")
    assert "outcome failed" in out and "level score 0.2500" in out
    assert "tokens 150" in out
    assert "sample 0: parsed" in out and "graph_type=tree, num_edges=3" in out
    assert "no_contradiction" in out and "50 in + 20 out (provider)" in out
    assert "sample 1: not parsed: no graph found" in out
    assert "| I cannot draw graphs." in out
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out
    assert "| \\x1b[2J\\x1b[32mPASSED\\x1b[0m\\r" in out and "| line two\\u202e" in out


def test_show_picks_the_cell_with_cell(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    report = write(tmp_path / "r.json", [failed_item()],
                   [item("m", "few-shot", "L1-001", level_score=0.9)])
    assert main(["show", "L1-001", "--report", str(report), "--cell", "m-few-shot"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("L1-001 in cell m-few-shot") and "outcome passed" in out


def test_show_an_item_without_samples_or_raw_answers(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    report = write(tmp_path / "r.json", [
        item("m", "zero-shot", "L1-001", outcome="error", error="backend gave up\x1b[0m"),
        item("m", "zero-shot", "L1-002", samples=(SampleResult(parsed=True, refusal=False),))])
    assert main(["show", "L1-001", "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert "outcome error" in out and "backend gave up\\x1b[0m" in out and "no sample" in out
    assert main(["show", "L1-002", "--report", str(report)]) == 0
    assert "raw answer: not in the report" in capsys.readouterr().out


def test_show_an_item_id_in_one_cell_of_several(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    report = write(tmp_path / "r.json", [failed_item()],
                   [item("m", "few-shot", "L1-002")])
    assert main(["show", "L1-001", "--report", str(report)]) == 0
    assert capsys.readouterr().out.startswith("L1-001 in cell m-zero-shot")


def error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    assert captured.out == ""
    return lines[0]


def test_show_errors_are_one_line_exit_2(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    report = write(tmp_path / "r.json", [failed_item()], [failed_item("m", "few-shot")])
    line = error_line(capsys, ["show", "L9-999", "--report", str(report)])
    assert "L9-999" in line and "r.json" in line
    line = error_line(capsys, ["show", "L1-001", "--report", str(report)])
    assert "several cells" in line and "--cell" in line and "m-few-shot" in line
    line = error_line(capsys, ["show", "L1-001", "--report", str(report), "--cell", "nope"])
    assert "nope" in line and "m-zero-shot" in line
    missing = tmp_path / "missing.json"
    assert str(missing) in error_line(capsys, ["show", "L1-001", "--report", str(missing)])
    bad = tmp_path / "bad.json"
    bad.write_text("{'cells': [", encoding="utf-8")
    assert str(bad) in error_line(capsys, ["show", "L1-001", "--report", str(bad)])


def test_show_needs_report(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["show", "L1-001"])
    assert exc.value.code == 2 and "--report" in capsys.readouterr().err


@pytest.mark.slow
def test_show_as_a_command_writes_no_control_bytes(tmp_path: Path) -> None:
    report = write(tmp_path / "r.json", [failed_item()])
    proc = subprocess.run([sys.executable, "-m", "pytest_graphinstruct", "show", "L1-001",
                           "--report", str(report)], capture_output=True, check=False,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    assert b"\x1b" not in proc.stdout and b"\r" not in proc.stdout
    assert json.loads(report.read_text(encoding="utf-8"))  # the report itself is untouched


def test_show_prints_expected_observed_and_gap_of_each_violated_constraint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    details = (ViolationDetail("num_edges=3", "count", 2.0, expected="3", observed="5"),
               ViolationDetail("graph_type=tree", "structural", None, expected="a tree",
                               observed="a cycle 1-2-3\x1b[2J"))
    sample = SampleResult(parsed=True, refusal=False,
                          violations=("graph_type=tree", "num_edges=3"),
                          violation_details=details)
    report = write(tmp_path / "r.json",
                   [item("m", "zero-shot", "L1-001", outcome="failed", samples=(sample,))])
    assert main(["show", "L1-001", "--report", str(report)]) == 0
    out = capsys.readouterr().out
    assert "num_edges=3 (count): expected 3, observed 5, gap +2" in out
    assert "graph_type=tree (structural): expected a tree, observed a cycle 1-2-3\\x1b[2J" in out
    assert "\x1b" not in out
