"""run.score_recorded: the ``score`` command is a session over recorded answers — the same results
as ``pytest --gi-replay`` on the same answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.run import score_recorded as sr
from pytest_graphinstruct.run.config import RunConfig, build_run_config
from pytest_graphinstruct.run.score_recorded import score_recorded
from pytest_graphinstruct.suite.loader import load_suite
from tests.plugin._suite import CYCLE4, TREE4, write_suite
from tests.report.schema_check import load_valid_report

ROOT = Path(__file__).resolve().parents[2]
REFUSAL = "No such graph exists: the constraints are infeasible."


def references_as_answers(suite_dir: Path, path: Path, k: int = 2) -> Path:
    """Every instruction answered by its references (a refusal when it has none), k samples
    cycling them, with recorded token counts."""
    with path.open("w", encoding="utf-8") as f:
        for inst in load_suite(suite_dir):
            raws = list(inst.references) or [REFUSAL]
            f.write(json.dumps({"instruction_id": inst.id, "level": inst.level, "samples": [
                {"raw_output": raws[i % len(raws)], "input_tokens": 300,
                 "output_tokens": 20 + len(raws[i % len(raws)]) // 4, "api_calls": 1}
                for i in range(k)]}) + "\n")
    return path


def test_only_recorded_instructions_are_scored(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    answers = tmp_path / "m.jsonl"
    answers.write_text(json.dumps({"instruction_id": "L1-001", "samples": [
        {"raw_output": TREE4}, {"raw_output": CYCLE4}]}) + "\n" + json.dumps(
        {"instruction_id": "L7-404", "samples": []}) + "\n", encoding="utf-8")
    run = build_run_config({"replay": str(answers), "suite": str(suite), "pools": "none"},
                           rootdir=tmp_path)
    assert run is not None and run.samples is None  # as many samples as recorded
    scored = score_recorded(run)
    (cell,) = scored.report.cells
    assert cell.label == "m-zero-shot"
    (item,) = cell.per_instruction
    assert item.instruction_id == "L1-001" and len(item.samples) == 2
    assert item.outcome == "failed"  # the cycle sample breaks graph_type=tree
    assert scored.missing == ("L0-001", "L1-002", "L2-001")
    assert scored.unknown == ("L7-404",)


def _recorded_run(tmp_path: Path) -> RunConfig:
    suite = write_suite(tmp_path / "suite")
    answers = references_as_answers(suite, tmp_path / "refs.jsonl", k=3)
    with answers.open("a", encoding="utf-8") as f:  # an item without its third sample: error
        f.write(json.dumps({"instruction_id": "L2-001", "samples": [
            {"raw_output": TREE4}, {"raw_output": CYCLE4}]}) + "\n")
    run = build_run_config({"replay": str(answers), "suite": str(suite), "pools": "none",
                            "samples": "3"}, rootdir=tmp_path)
    assert run is not None
    return run


@pytest.mark.skipif(not sr.can_fork(), reason="parts are forked on Linux only")
def test_scoring_in_parts_gives_the_report_of_one_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _recorded_run(tmp_path)
    alone = score_recorded(run)
    monkeypatch.setattr(sr, "MIN_ITEMS_PER_JOB", 1)  # the tiny suite still splits
    forked: list[int] = []
    in_parts = sr._in_parts
    monkeypatch.setattr(sr, "_in_parts", lambda b, i, j: forked.append(j) or in_parts(b, i, j))
    parted = score_recorded(run, jobs=3)
    assert forked == [3]
    a, b = alone.report.to_json(), parted.report.to_json()
    run_a, run_b = a.pop("run"), b.pop("run")
    assert a == b
    assert {k: v for k, v in run_a.items() if k not in ("started", "finished")} == \
        {k: v for k, v in run_b.items() if k not in ("started", "finished")}
    outcomes = {r.instruction_id: r.outcome for r in parted.report.cells[0].per_instruction}
    assert outcomes["L2-001"] == "error" and "passed" in outcomes.values()
    assert (parted.missing, parted.unknown) == (alone.missing, alone.unknown)


@pytest.mark.skipif(not sr.can_fork(), reason="parts are forked on Linux only")
def test_a_process_of_the_pool_that_scores_several_parts_returns_each_part_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the pool hands a part to whichever process is free: one may score two or all of them
    # (its queue then holds every result it recorded), which happened at random before
    run = _recorded_run(tmp_path)
    alone = score_recorded(run).report.to_json()
    monkeypatch.setattr(sr, "MIN_ITEMS_PER_JOB", 1)
    pool = sr.ProcessPoolExecutor
    monkeypatch.setattr(sr, "ProcessPoolExecutor",
                        lambda jobs, mp_context: pool(1, mp_context=mp_context))
    parted = score_recorded(run, jobs=3).report.to_json()
    alone.pop("run"), parted.pop("run")
    assert parted == alone


@pytest.mark.skipif(not sr.can_fork(), reason="parts are forked on Linux only")
def test_a_part_that_fails_or_dies_fails_the_command_saying_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _recorded_run(tmp_path)
    monkeypatch.setattr(sr, "MIN_ITEMS_PER_JOB", 1)
    parent = os.getpid()
    score_items = sr._score_items

    def failing(bench, items):  # type: ignore[no-untyped-def]
        if os.getpid() != parent:
            raise GraphInstructError("pools changed under the run")
        return score_items(bench, items)

    monkeypatch.setattr(sr, "_score_items", failing)
    with pytest.raises(GraphInstructError, match="pools changed under the run"):
        score_recorded(run, jobs=2)

    def dying(bench, items):  # type: ignore[no-untyped-def]
        if os.getpid() != parent:
            os._exit(3)
        return score_items(bench, items)

    monkeypatch.setattr(sr, "_score_items", dying)
    with pytest.raises(GraphInstructError, match=r"a scoring process died.*--jobs 1"):
        score_recorded(run, jobs=2)
    assert score_recorded(run, jobs=1).report.cells[0].summary.items == 4  # in this process


@pytest.mark.parametrize("jobs", ["0", "-2", "two", ""])
def test_jobs_must_be_a_positive_number_or_auto(tmp_path: Path, jobs: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    run = _recorded_run(tmp_path)
    assert main(["score", "--suite", str(run.suite), "--responses", str(run.replay),
                 "--report", str(tmp_path / "r.json"), f"--jobs={jobs}"]) == 2
    assert "--jobs must be a number >= 1 or 'auto'" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
    assert sr.auto_jobs() >= 1


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=1800)


@pytest.mark.slow
def test_score_and_replay_agree_on_the_official_suite(official_suite_dir: Path,
                                                      tmp_path: Path) -> None:
    """Every instruction of the official suite, its references as answers (2 samples), scored
    by ``score`` and by ``pytest --gi-replay`` with the project's pools as the default of both:
    identical reports but for the times and the machine in their ``run`` records."""
    answers = references_as_answers(official_suite_dir, tmp_path / "refs.jsonl")
    by_score, by_replay = tmp_path / "score.json", tmp_path / "replay.json"
    proc = _run("-m", "pytest_graphinstruct", "score", "--suite", str(official_suite_dir),
                "--responses", str(answers), "--report", str(by_score), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    proc = _run("-m", "pytest", "instructions", f"--gi-suite={official_suite_dir}",
                f"--gi-replay={answers}", f"--gi-report={by_replay}", "--gi-violations=report",
                "-q", "-p", "no:cacheprovider", "-p", "no:randomly", cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:]
    a = load_valid_report(by_score)
    b = load_valid_report(by_replay)
    (cell_a,), (cell_b,) = a["cells"], b["cells"]
    assert cell_a["summary"]["items"] == len(load_suite(official_suite_dir)) == 800
    assert {r["instruction_id"] for r in cell_a["per_instruction"] if r["level"] >= 3
            and r["details"].get("pool_references")}, "the pools default was not applied"
    for ra, rb in zip(cell_a["per_instruction"], cell_b["per_instruction"], strict=True):
        assert ra == rb, ra["instruction_id"]
    run_a, run_b = a.pop("run"), b.pop("run")
    assert b.pop("gate")["passed"] and a.pop("gate") is None  # score judges nothing
    assert a == b
    same = ("suite", "suite_hash", "endpoints", "pools", "replay", "cache", "git")
    assert {k: run_a[k] for k in same} == {k: run_b[k] for k in same}
    assert run_a["suite_hash"] is not None and run_a["replay"] == str(answers)
    assert run_a["filter"]["selected"] == run_b["filter"]["selected"] == 800
