"""``compare``: the paired bootstrap per level, and what a reader needs to act on it — a verdict
with its rule, both cells, the cost change (TPV), the items that newly fail or pass, a warning
when the two cells were not produced alike, ``--fail-on-regression``, and a cell per side."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records.results import CellMetadata, CellReport, ItemResult
from pytest_graphinstruct.run.records.writer import write_report

IDS = [f"L2-{n:03d}" for n in range(40)]
TOOL = "pytest-graphinstruct"


def cell(model: str, strategy: str, score: float, *, tokens: int | None = 100,
         failing: Collection[str] = (), **meta: Any) -> CellReport:
    """40 L2 items scoring ``score`` (``failing``: the ids whose item failed), each costing
    ``tokens`` for one valid sample."""
    items = [ItemResult(instruction_id=i, level=2, cell=f"{model}-{strategy}", model=model,
                        strategy=strategy, outcome="failed" if i in failing else "passed",
                        level_score=score, tokens=tokens, d5_valid=1, api_calls=1)
             for i in IDS]
    return build_cell(CellMetadata(model, strategy, **meta), items)


def write(path: Path, *cells: CellReport) -> str:
    write_report(with_pareto(list(cells)), path)
    return str(path)


RETIRED = ("warning: 'compare' is deprecated and goes in the next release: use runs compare "
           "(it takes report files; 'gate' for an exit status)\n")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The retired ``compare`` (it works for one release): its status, stdout and stderr after
    the one deprecation note it always starts with."""
    status = main(["compare", *argv])
    captured = capsys.readouterr()
    assert captured.err.startswith(RETIRED), captured.err
    return status, captured.out, captured.err.removeprefix(RETIRED)


@pytest.fixture()
def worse(tmp_path: Path) -> tuple[str, str]:
    """A baseline and a candidate that is worse on every item and dearer."""
    base = write(tmp_path / "base.json", cell("m", "zero-shot", 0.9, failing={"L2-010"}))
    cand = write(tmp_path / "cand.json",
                 cell("m", "few-shot", 0.6, tokens=300, failing={"L2-001", "L2-007"}))
    return base, cand


def test_a_regression_is_called_one_and_lists_what_changed(
        worse: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, *worse)
    assert status == 0 and err == "", err
    assert out.startswith("candidate m-few-shot - baseline m-zero-shot")
    assert "L2 level score -0.300 [-0.300, -0.300]; Holm p(no drop)=" in out
    assert f"baseline:  cell m-zero-shot ({worse[0]})" in out
    assert f"candidate: cell m-few-shot ({worse[1]})" in out
    assert "TPV 100.0 -> 300.0 (+200.0, +200.0%)" in out
    assert "newly failing (2): L2-001, L2-007" in out
    assert "newly passing (1): L2-010" in out
    verdict = [line for line in out.splitlines() if line.startswith("verdict: ")]
    assert len(verdict) == 1 and verdict[0].startswith("verdict: regression")
    assert "L2" in verdict[0] and "0.02" in verdict[0]  # the rule is stated


def test_fail_on_regression_sets_exit_status_1(worse: tuple[str, str],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--fail-on-regression", *worse)
    assert status == 1 and "verdict: regression" in out
    status, out, _ = run(capsys, "--fail-on-regression", worse[1], worse[0])
    assert status == 0 and "verdict: improvement" in out
    assert "TPV 300.0 -> 100.0 (-200.0, -66.7%)" in out


def test_max_regression_sets_the_threshold(worse: tuple[str, str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--fail-on-regression", "--max-regression", "0.5", *worse)
    assert status == 0 and "verdict: no significant change" in out and "0.5" in out


def test_no_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write(tmp_path / "a.json", cell("m", "zero-shot", 0.8))
    b = write(tmp_path / "b.json", cell("m", "zero-shot", 0.8))
    status, out, err = run(capsys, "--fail-on-regression", a, b)
    assert status == 0 and err == ""
    assert "verdict: no significant change" in out
    assert "newly failing (0)" in out and "newly passing (0)" in out
    assert "TPV 100.0 -> 100.0 (+0.0, +0.0%)" in out


def test_unknown_cost_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write(tmp_path / "a.json", cell("m", "zero-shot", 0.8))
    b = write(tmp_path / "b.json", cell("n", "zero-shot", 0.8, tokens=None))
    _, out, _ = run(capsys, a, b)
    assert "TPV 100.0 -> unknown" in out


def test_a_cell_for_each_side(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    both = write(tmp_path / "both.json", cell("m", "zero-shot", 0.9),
                 cell("m", "few-shot", 0.6))
    status, out, _ = run(capsys, "--baseline-cell", "m-zero-shot", "--candidate-cell",
                         "m-few-shot", both, both)
    assert status == 0 and "candidate m-few-shot - baseline m-zero-shot" in out
    assert "verdict: regression" in out
    # --cell still names both sides; a side's own option overrides it for that side
    status, out, _ = run(capsys, "--cell", "m-few-shot", "--baseline-cell", "m-zero-shot",
                         both, both)
    assert status == 0 and "candidate m-few-shot - baseline m-zero-shot" in out
    status, out, _ = run(capsys, "--cell", "m-few-shot", both, both)
    assert status == 0 and "verdict: no significant change" in out
    status, _, err = run(capsys, "--baseline-cell", "m-zero-shot", both, both)
    assert status == 2 and err.startswith("error: ") and "--candidate-cell" in err
    status, _, err = run(capsys, "--candidate-cell", "nope", "--baseline-cell", "m-zero-shot",
                         both, both)
    assert status == 2 and "nope" in err and len(err.splitlines()) == 1


def test_a_warning_when_the_cells_were_not_produced_alike(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write(tmp_path / "a.json", cell("m", "zero-shot", 0.8, tool=TOOL,
                                        suite="instructions", samples_per_instruction=5,
                                        decoding={"temperature": 0.0}))
    b = write(tmp_path / "b.json", cell("m", "zero-shot", 0.8, tool=TOOL,
                                        suite="other-suite", samples_per_instruction=1,
                                        decoding={"temperature": 0.7}))
    status, _, err = run(capsys, a, b)
    assert status == 0
    (line,) = err.splitlines()
    assert line.startswith("warning: ")
    assert "suite (instructions vs other-suite)" in line
    assert "samples per instruction (5 vs 1)" in line
    assert "decoding" in line and "0.7" in line
    same = write(tmp_path / "same.json", cell("m", "zero-shot", 0.8, tool=TOOL,
                                              suite="instructions", samples_per_instruction=5,
                                              decoding={"temperature": 0.0}))
    assert run(capsys, a, same)[2] == ""
    unknown = write(tmp_path / "unknown.json", cell("m", "zero-shot", 0.8))  # nothing recorded
    assert run(capsys, a, unknown)[2] == ""


def test_nothing_in_common_is_an_error(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    a = write(tmp_path / "a.json", cell("m", "zero-shot", 0.8))
    other = [ItemResult(instruction_id="L1-001", level=1, cell="n-zero-shot", model="n",
                        strategy="zero-shot", level_score=0.5)]
    b = write(tmp_path / "b.json", build_cell(CellMetadata("n", "zero-shot"), other))
    status, out, err = run(capsys, a, b)
    assert status == 2 and out == ""
    assert err.startswith("error: ") and "no instruction scored in both" in err


def test_an_id_on_two_levels_is_an_error(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    a = write(tmp_path / "a.json", cell("m", "zero-shot", 0.8))
    moved = [ItemResult(instruction_id="L2-000", level=3, cell="n-zero-shot", model="n",
                        strategy="zero-shot", level_score=0.5)]
    b = write(tmp_path / "b.json", build_cell(CellMetadata("n", "zero-shot"), moved))
    status, _, err = run(capsys, a, b)
    assert status == 2 and err.startswith("error: ") and "L2-000" in err
    assert len(err.splitlines()) == 1
