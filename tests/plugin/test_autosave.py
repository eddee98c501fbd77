"""``--gi-autosave`` and ``gi_store``: every run's report kept as a numbered file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.run.records.reader import read_report
from pytest_graphinstruct.run.store import RunStore
from tests.report.schema_check import load_valid_report

from ._suite import CYCLE4, EMPTY3, TREE4

pytest_plugins = ["pytester"]


# -- configuration -----------------------------------------------------------------------------

def _config(tmp_path: Path, **raw: object) -> Path | None:
    suite = tmp_path / "suite"
    suite.mkdir(exist_ok=True)
    (suite / "level_0.json").write_text("[]", encoding="utf-8")
    run = build_run_config({"model": "oracle", "suite": str(suite), **raw}, rootdir=tmp_path)
    assert run is not None
    return run.store


def test_store_is_set_only_with_autosave(tmp_path: Path) -> None:
    assert _config(tmp_path) is None
    assert _config(tmp_path, store="elsewhere") is None  # a setting nothing uses
    assert _config(tmp_path, autosave=True) == tmp_path / ".graphinstruct" / "runs"
    assert _config(tmp_path, autosave=True, store="runs") == tmp_path / "runs"
    assert _config(tmp_path, autosave=True, store=str(tmp_path / "abs")) == tmp_path / "abs"


# -- end to end --------------------------------------------------------------------------------

def _args(suite_dir: Path, *extra: str) -> list[str]:
    return [f"--gi-suite={suite_dir}", "--gi-model=oracle", "-p", "no:cacheprovider", *extra]


def test_autosave_without_report_writes_into_the_store(pytester: pytest.Pytester,
                                                       suite_dir: Path) -> None:
    store = pytester.path / ".graphinstruct" / "runs"
    first = pytester.runpytest(*_args(suite_dir, "--gi-autosave"))
    first.assert_outcomes(passed=4)
    first.stdout.fnmatch_lines([f"saved as run 0001 in {store}"])
    second = pytester.runpytest(*_args(suite_dir, "--gi-autosave", "-k", "L1"))
    second.stdout.fnmatch_lines([f"saved as run 0002 in {store}"])
    runs = RunStore(store).runs()
    assert [r.number for r in runs] == [1, 2]
    for run in runs:
        load_valid_report(run.path)
    one, two = (read_report(r.path) for r in runs)
    assert one.cells[0].summary.items == 4 and two.cells[0].summary.items == 2
    assert two.run is not None and two.run.filter.keyword == "L1"
    assert not list(pytester.path.glob("*.json"))  # no report anywhere else


def test_autosave_keeps_the_report_s_bytes(pytester: pytest.Pytester, suite_dir: Path) -> None:
    report = pytester.path / "r.json"
    result = pytester.runpytest(*_args(suite_dir, "--gi-autosave", "--override-ini=gi_store=kept",
                                       f"--gi-report={report}", "--gi-levels=1"))
    result.stdout.fnmatch_lines([f"report written to {report}",
                                 f"saved as run 0001 in {pytester.path / 'kept'}"])
    (saved,) = RunStore(pytester.path / "kept").runs()
    assert saved.path.read_bytes() == report.read_bytes()


def test_autosave_from_an_ini_file(pytester: pytest.Pytester, suite_dir: Path) -> None:
    pytester.makeini("[pytest]\ngi_autosave = true\ngi_store = ini-runs\n")
    result = pytester.runpytest(*_args(suite_dir, "--gi-levels=0"))
    result.stdout.fnmatch_lines(["saved as run 0001 in *ini-runs"])
    assert len(RunStore(pytester.path / "ini-runs").runs()) == 1


def test_a_partial_run_is_saved_and_says_so(pytester: pytest.Pytester, suite_dir: Path) -> None:
    replay = pytester.path / "a.jsonl"
    answers = {"L0-001": EMPTY3, "L1-001": CYCLE4, "L1-002": CYCLE4, "L2-001": TREE4}
    replay.write_text("".join(json.dumps({"instruction_id": i, "level": int(i[1]), "samples": [
        {"raw_output": a, "input_tokens": 1, "output_tokens": 1, "api_calls": 1}]}) + "\n"
        for i, a in answers.items()), encoding="utf-8")
    result = pytester.runpytest(f"--gi-suite={suite_dir}", f"--gi-replay={replay}", "-x",
                                "--gi-autosave", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["saved as run 0001 in * (a partial run)"])
    (saved,) = RunStore(pytester.path / ".graphinstruct" / "runs").runs()
    report = read_report(saved.path)
    assert report.partial and "stopped early" in (report.coverage.reason or "")


def test_an_unwritable_store_is_a_usage_error_before_the_run(pytester: pytest.Pytester,
                                                               suite_dir: Path) -> None:
    (pytester.path / "blocked").write_text("a file, not a folder", encoding="utf-8")
    result = pytester.runpytest(*_args(suite_dir, "--gi-autosave",
                                       "--override-ini=gi_store=blocked"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--gi-autosave: the run store * is not a folder*"])
    assert "PASSED" not in result.stdout.str()


def test_store_option_without_autosave_saves_nothing(pytester: pytest.Pytester,
                                                     suite_dir: Path) -> None:
    result = pytester.runpytest(*_args(suite_dir, "--override-ini=gi_store=runs", "--gi-levels=0"))
    result.assert_outcomes(passed=1)
    assert "saved as run" not in result.stdout.str()
    assert not (pytester.path / "runs").exists()



def test_a_run_without_results_is_not_saved(pytester: pytest.Pytester, suite_dir: Path) -> None:
    result = pytester.runpytest(*_args(suite_dir, "--gi-autosave", "-k", "no-such-item"))
    result.stdout.fnmatch_lines(["run NOT saved in *runs: no item has a result (no item was "
                                 "selected)"])
    assert RunStore(pytester.path / ".graphinstruct" / "runs").runs() == []
