"""``contamination``: the documented workflow end to end — build a fresh suite, run the oracle on
the committed suite and on the fresh one with pytest, compare — and its one-line errors.

The oracle answers every instruction from its references, so it cannot have memorized the
committed suite: its verdict must be "no real gap".  A report whose fresh-suite scores are pulled
down (what a model that saw the public suite looks like) must be called a real gap."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records.reader import read_report
from pytest_graphinstruct.run.records.results import CellReport
from pytest_graphinstruct.run.records.writer import write_report

# builds a fresh suite and runs the oracle on both suites in subprocesses (36-140 s): the fast
# tier has the probe's rules in tests/report/analyses/test_contamination.py
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RUN = ["-p", "no:cacheprovider", "-q", "--gi-model=oracle", "--gi-levels=0,1",
       "--gi-per-level=16", "--gi-cache=none"]


def _pytest(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.fixture(scope="module")
def workflow(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """docs/CONTAMINATION.md's commands: a seed-12345 suite (L0, L1), the oracle on both."""
    tmp = tmp_path_factory.mktemp("contamination")
    fresh = tmp / "fresh"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["build", "suite", "--seed", "12345", "--out", str(fresh), "--levels", "0,1",
                     "--no-pools"]) == 0
    seed0, fresh_report = tmp / "seed0.json", tmp / "fresh.json"
    _pytest("instructions", *RUN, f"--gi-report={seed0}")
    _pytest(str(fresh / "instructions"), "--rootdir=.", f"--gi-suite={fresh / 'instructions'}",
            *RUN, f"--gi-report={fresh_report}")
    return {"tmp": tmp, "suite": fresh / "instructions", "seed0": seed0, "fresh": fresh_report}


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    status = main(["analyze", "contamination", *map(str, argv)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def rescored(cell: CellReport, drop: float) -> CellReport:
    """``cell`` with every other scored item's level score lowered by ``drop``."""
    items = [replace(r, level_score=max(0.0, r.level_score - drop))
             if r.level_score is not None and n % 2 == 0 else r
             for n, r in enumerate(cell.per_instruction)]
    return build_cell(cell.metadata, items)


def test_the_oracle_shows_no_real_gap(workflow: dict[str, Path],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, workflow["seed0"], workflow["fresh"])
    assert status == 0 and err == "", err
    lines = out.splitlines()
    assert lines[1].startswith("  committed: cell oracle-zero-shot — ")
    assert lines[1].endswith(f"suite {ROOT / 'instructions'} (seed 0)")
    assert lines[2].endswith(f"suite {workflow['suite']} (seed 12345)")
    rows = {line.split()[0]: line.split() for line in lines if line[:3] in ("L0 ", "L1 ", "all")}
    assert rows["L0"][1:3] == ["4", "16/16"]  # L0's four templates, 16 items on each side
    assert rows["all"][2] == "32/32"
    assert lines[-1].startswith("verdict: no real gap (seed0 − fresh = ")


def test_higher_scores_on_the_committed_suite_are_called_a_real_gap(
        workflow: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    fresh = read_report(workflow["fresh"]).cells[0]
    lowered = workflow["tmp"] / "fresh-lowered.json"
    write_report(with_pareto([rescored(fresh, 0.08)]), lowered)
    status, out, err = run(capsys, workflow["seed0"], lowered, "--resamples", "1000")
    assert status == 0 and err == "", err
    verdict = out.splitlines()[-1]
    assert verdict.startswith("verdict: real gap — the model scores higher on the committed "
                              "suite (seed0 − fresh = +0.0")
    assert "a sign of contamination" in verdict
    assert "(1000 resamples, 95% CI, seed 0)" in out
    # the same reports the other way round: a gap, but not contamination
    status, out, _ = run(capsys, lowered, workflow["seed0"], "--suite-seed0", workflow["suite"],
                         "--suite-fresh", ROOT / "instructions")
    assert status == 0 and out.splitlines()[-1].startswith("verdict: real gap the other way")


def test_one_suite_on_both_sides_and_unlike_runs_are_warned_about(
        workflow: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, workflow["seed0"], workflow["seed0"])
    assert status == 0 and out.splitlines()[-1].startswith("verdict: no real gap")
    assert err.startswith("warning: both reports ran on the same suite")
    fresh = read_report(workflow["fresh"]).cells[0]
    no_d1 = [replace(r, dimension_scores={**r.dimension_scores, "D1": None}) if r.level == 1
             else r for r in fresh.per_instruction]
    odd = workflow["tmp"] / "fresh-no-d1.json"
    write_report(with_pareto([build_cell(fresh.metadata, no_d1)]), odd)
    status, _, err = run(capsys, workflow["seed0"], odd)
    assert status == 0
    assert "warning: the two runs were scored differently (L1: D1 only in the committed " \
           "run)" in err


def _one_line_error(status: int, out: str, err: str) -> str:
    assert status == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


def test_errors_are_one_line_with_status_2(workflow: dict[str, Path],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    seed0, fresh = workflow["seed0"], workflow["fresh"]
    cell = read_report(fresh).cells[0]
    other = build_cell(replace(cell.metadata, model="other"),
                       [replace(r, model="other", cell="other-zero-shot")
                        for r in cell.per_instruction])
    two = workflow["tmp"] / "two.json"
    write_report(with_pareto([cell, other]), two)
    err = _one_line_error(*run(capsys, seed0, two))
    assert f"{two} holds 2 cells; pick one with --cell (oracle-zero-shot, other-zero-shot)" in err
    err = _one_line_error(*run(capsys, seed0, two, "--cell", "nobody-zero-shot"))
    assert "no cell 'nobody-zero-shot'" in err

    # a suite that lacks an item the report scored
    part = workflow["tmp"] / "part"
    part.mkdir()
    for lv in (0, 1):
        records = json.loads((workflow["suite"] / f"level_{lv}.json").read_text())
        (part / f"level_{lv}.json").write_text(json.dumps(records[:3] if lv else records))
    err = _one_line_error(*run(capsys, seed0, fresh, "--suite-fresh", part))
    assert f"{fresh}: item L1-004 of cell oracle-zero-shot is not in the suite {part}" in err

    err = _one_line_error(*run(capsys, seed0, fresh, "--suite-seed0", part / "gone"))
    assert f"suite not found: {part / 'gone'}; pass --suite-seed0=DIR" in err
    err = _one_line_error(*run(capsys, seed0, fresh, "--resamples", "0"))
    assert "--resamples must be at least 1" in err
    err = _one_line_error(*run(capsys, seed0, workflow["tmp"] / "missing.json"))
    assert "missing.json" in err
