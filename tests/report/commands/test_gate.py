"""``gate`` (report/commands/gate.py): a saved report judged as its run would have been, and
every unusable input an error of one line, never a silent comparison."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.commands.gate import gate
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    Coverage,
    ItemResult,
    RunInfo,
    RunReport,
    SampleResult,
)
from pytest_graphinstruct.run.records.writer import write_report

IDS = [f"L{lv}-{k:03d}" for lv in (0, 2) for k in range(60)]
HASHES = {0: "sha256:" + "0" * 64, 2: "sha256:" + "2" * 64}


def _report(*, errors: int = 0, bad_levels: tuple[int, ...] = (), complete: bool = True,
            strategy: str = "zero-shot", hashes: dict[int, str] = HASHES) -> RunReport:
    """One cell, 60 items at L0 and L2: every other item scores 0.8, the rest 1.0 (0.1 on
    ``bad_levels``); the first ``errors`` items have no answer."""
    items = []
    for n, iid in enumerate(IDS):
        lv, error = int(iid[1]), n < errors
        s = 0.1 if lv in bad_levels else (0.8 if n % 2 else 1.0)
        items.append(ItemResult(
            instruction_id=iid, level=lv, cell=f"m-{strategy}", model="m", strategy=strategy,
            level_score=None if error else s, cluster=f"t{n % 6}",
            outcome="error" if error else ("passed" if s == 1.0 else "failed"),
            error="HTTP 500" if error else None))
    run = with_pareto([build_cell(CellMetadata("m", strategy, samples_per_instruction=1),
                                  items)])
    coverage = Coverage() if complete else Coverage.partial("interrupted (Ctrl+C)")
    return replace(run, coverage=coverage, run=RunInfo(level_hashes=hashes))


def _save(report: RunReport, path: Path) -> Path:
    write_report(report, path)
    return path


@pytest.fixture
def baseline(tmp_path: Path) -> Path:
    return _save(_report(), tmp_path / "baseline.json")


def test_a_report_without_a_baseline_passes_its_gates(tmp_path: Path) -> None:
    result = gate(_save(_report(), tmp_path / "r.json"), None)
    assert not result.failed and result.lines() == ["every gate passed"]
    assert result.markdown.startswith("## GraphInstruct: ✅ passed")


def test_an_unchanged_report_passes_and_says_what_it_compared(tmp_path: Path,
                                                              baseline: Path) -> None:
    result = gate(_save(_report(), tmp_path / "r.json"), baseline)
    lines = result.lines()
    assert not result.failed and lines[-1] == "every gate passed"
    assert lines[0].startswith(f"compared with baseline {baseline}: m-zero-shot: "
                               "120 instructions paired")


def test_a_real_drop_fails(tmp_path: Path, baseline: Path) -> None:
    result = gate(_save(_report(bad_levels=(2,)), tmp_path / "r.json"), baseline)
    assert result.failed
    assert any(line.startswith("GATE FAILED (regression): m-zero-shot: L2 dropped (level score")
               for line in result.lines())
    # the same drop within a looser threshold passes
    assert not gate(tmp_path / "r.json", baseline, max_regression=0.95).failed


def test_a_partial_report_fails_whatever_else(tmp_path: Path) -> None:
    result = gate(_save(_report(complete=False), tmp_path / "r.json"), None)
    assert result.failed
    assert "FAILED: incomplete run (interrupted (Ctrl+C)): no gate passes on a partial run" \
        in result.lines()


def test_fail_under_and_the_error_rate(tmp_path: Path) -> None:
    path = _save(_report(), tmp_path / "r.json")  # S_total 0.9 over the levels run
    low = gate(path, None, fail_under=0.95)
    assert low.failed and low.lines() == [
        "GATE FAILED (fail_under): m-zero-shot: S_total 0.9000 is below --gi-fail-under=0.95"]
    errors = _save(_report(errors=12), tmp_path / "e.json")  # 10 %
    assert gate(errors, None).lines() == [
        "FAILED: infrastructure error rate 10.0% exceeds gi_max_error_rate=0.05"]
    assert not gate(errors, None, max_error_rate=0.2).failed


def test_strict_fails_on_what_was_not_compared(tmp_path: Path, baseline: Path) -> None:
    path = _save(_report(errors=12), tmp_path / "r.json")
    assert not gate(path, baseline, max_error_rate=0.2).failed
    strict = gate(path, baseline, max_error_rate=0.2, strict=True)
    assert strict.failed


def test_a_baseline_cell_compares_across_cells_on_purpose(tmp_path: Path,
                                                          baseline: Path) -> None:
    path = _save(_report(strategy="few-shot"), tmp_path / "r.json")
    with pytest.raises(GraphInstructError, match=r"has no cell m-few-shot \(it has: "
                                                 r"m-zero-shot\)"):
        gate(path, baseline)
    result = gate(path, baseline, baseline_cell="m-zero-shot")
    assert not result.failed and "m-few-shot vs baseline cell m-zero-shot" in result.lines()[0]


@pytest.mark.parametrize("option", ["strict", "baseline_cell"])
def test_options_that_need_a_baseline(tmp_path: Path, option: str) -> None:
    path = _save(_report(), tmp_path / "r.json")
    flag = "--strict" if option == "strict" else "--baseline-cell"
    value: object = True if option == "strict" else "m-zero-shot"
    with pytest.raises(GraphInstructError, match=f"^{flag} needs --baseline$"):
        gate(path, None, **{option: value})  # type: ignore[arg-type]


def test_unusable_inputs_are_one_line_errors(tmp_path: Path, baseline: Path) -> None:
    path = _save(_report(), tmp_path / "r.json")
    with pytest.raises(GraphInstructError, match=r"^baseline not found: "):
        gate(path, tmp_path / "absent.json")
    other = {**HASHES, 0: "sha256:" + "1" * 64}
    with pytest.raises(GraphInstructError, match="was made on another suite"):
        gate(_save(_report(hashes=other), tmp_path / "o.json"), baseline)
    partial = _save(_report(complete=False), tmp_path / "p.json")
    with pytest.raises(GraphInstructError, match="is from an incomplete run"):
        gate(path, partial)
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(GraphInstructError) as err:
        gate(tmp_path / "bad.json", None)
    assert "bad.json" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(GraphInstructError):
        gate(tmp_path / "missing.json", None)


def test_min_pass_all_judges_a_saved_report_of_several_samples(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = SampleResult(parsed=True, refusal=False)
    items = [ItemResult(instruction_id=f"L2-{k:03d}", level=2, cell="m-zero-shot", model="m",
                        strategy="zero-shot", level_score=1.0, outcome="passed",
                        passing_samples=2 if k else 3, samples=(sample,) * 3)
             for k in range(4)]
    path = _save(with_pareto([build_cell(CellMetadata("m", "zero-shot"), items)]),
                 tmp_path / "r.json")
    assert not gate(path, None, min_pass_all=0.25).failed
    assert gate(path, None, min_pass_all=0.3).lines() == [
        "GATE FAILED (min_pass_all): m-zero-shot: L2 pass^3 0.2500 (items whose every one of 3 "
        "samples passes; 4 items) is below --gi-min-pass-all=0.3"]
    assert main(["gate", str(path), "--min-pass-all", "0.3"]) == 1
    assert main(["gate", str(path), "--min-pass-all", "1.5"]) == 2
    assert "--min-pass-all must be within 0..1, got 1.5" in capsys.readouterr().err
