"""End to end: a recorded-answers file holding every kind of bad record — each is named with its
line number in the output and in the report's ``run.replay_problems``, under ``--gi-replay``
(one process and ``-n 2``) and through ``score``, which share one reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.__main__ import main
from tests.report.schema_check import load_valid_report

from ._suite import EMPTY3, TREE4

pytest_plugins = ["pytester"]


def _record(iid: str, raw: str, level: int | None, **sample: Any) -> str:
    rec: dict[str, Any] = {"instruction_id": iid, "samples": [
        {"raw_output": raw, "input_tokens": 10, "output_tokens": 5, **sample}]}
    if level is not None:
        rec["level"] = level
    return json.dumps(rec)


def bad_replay_file(path: Path) -> Path:
    """Eight lines over the tiny suite (L0-001, L1-001, L1-002, L2-001): two usable records
    and one of each bad kind; line 8 is torn (no newline)."""
    lines = [
        _record("L1-001", "an early answer", 1),                  # 1 replaced by line 6
        _record("L9-999", TREE4, 9),                              # 2 unknown id
        _record("L1-002", TREE4, 2),                              # 3 level contradiction
        _record("L0-001", EMPTY3, 0, output_tokens=-5),           # 4 impossible usage
        '{"instruction_id": "L2-001", "samples": [{"raw_o',       # 5 malformed (mid-file)
        _record("L1-001", TREE4, 1),                              # 6 wins
        _record("L0-001", EMPTY3, 0),                             # 7 good
    ]
    path.write_text("\n".join(lines) + "\n" + _record("L2-001", "x", 2)[:30], encoding="utf-8")
    return path


EXPECTED_KINDS = {1: "duplicate", 2: "unknown_id", 3: "level_contradiction",
                  4: "impossible_usage", 5: "malformed", 8: "torn_last_line"}
COUNT = ("8 lines, 2 records used; skipped 6: 1 unknown id, 1 level contradiction, "
         "1 duplicate (later lines win), 1 impossible usage, 1 torn last line, 1 malformed "
         "— see the report's run.replay_problems")


def expected_lines(replay: Path) -> list[str]:
    """What the output must say, one fragment per bad line (with its file and line)."""
    return [
        f"replay {replay}: {COUNT}",
        f"{replay}:1: L1-001: replaced by line 6 (lines 1, 6 hold this id; the last wins)",
        f"{replay}:2: unknown instruction id 'L9-999': not in the suite",
        f"{replay}:3: L1-002: the record says level 2, the suite says level 1",
        f"{replay}:4: L0-001: samples[0]: 'output_tokens' is impossible: -5 (negative)",
        f"{replay}:5: malformed: not valid JSON (",
        f"{replay}:8: torn last line: not valid JSON (",
    ]


def check_report(report: Path, replay: Path) -> None:
    problems = load_valid_report(report)["run"]["replay_problems"]
    assert {p["line"]: p["kind"] for p in problems["problems"]} == EXPECTED_KINDS
    assert {p["line"]: p["instruction_id"] for p in problems["problems"]} == {
        1: "L1-001", 2: "L9-999", 3: "L1-002", 4: "L0-001", 5: None, 8: None}
    assert (problems["path"], problems["lines"], problems["used"], problems["total"]) == (
        str(replay), 8, 2, 6)
    assert problems["by_kind"] == {kind: 1 for kind in EXPECTED_KINDS.values()}


@pytest.mark.parametrize("workers", [
    pytest.param([], id="single"),
    pytest.param(["-n", "2"], id="xdist", marks=pytest.mark.slow),  # ~25 s: workers start
])
def test_replay_names_every_bad_record(pytester: pytest.Pytester, suite_dir: Path,
                                       workers: list[str]) -> None:
    replay = bad_replay_file(pytester.path / "r.jsonl")
    report = pytester.path / "report.json"
    args = (f"--gi-suite={suite_dir}", f"--gi-replay={replay}", f"--gi-report={report}",
            "-p", "no:cacheprovider")
    result = (pytester.runpytest_subprocess(*args, *workers, timeout=300) if workers
              else pytester.runpytest(*args))
    result.assert_outcomes(passed=2)  # L0-001 (line 7) and L1-001 (line 6), nothing else
    out = result.stdout.str()
    for fragment in expected_lines(replay):
        assert fragment in out, (fragment, out[-4000:])
    assert f"WARNING: replay {replay}: {COUNT}" in out
    check_report(report, replay)


def test_a_clean_replay_says_so_in_one_line(pytester: pytest.Pytester, suite_dir: Path) -> None:
    replay = pytester.path / "r.jsonl"
    replay.write_text(_record("L1-001", TREE4, 1) + "\n", encoding="utf-8")
    report = pytester.path / "report.json"
    result = pytester.runpytest(f"--gi-suite={suite_dir}", f"--gi-replay={replay}",
                                f"--gi-report={report}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"replay {replay}: 1 line, 1 record used; nothing skipped"])
    problems = load_valid_report(report)["run"]["replay_problems"]
    assert (problems["total"], problems["problems"], problems["by_kind"]) == (0, [], {})


def test_score_names_every_bad_record(tmp_path: Path, suite_dir: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    replay = bad_replay_file(tmp_path / "r.jsonl")
    report = tmp_path / "report.json"
    assert main(["score", "--suite", str(suite_dir), "--responses", str(replay),
                 "--report", str(report), "--pools", "none"]) == 0
    captured = capsys.readouterr()
    for fragment in expected_lines(replay):
        assert f"warning: {fragment}" in captured.err, (fragment, captured.err)
    assert "scored 2 of 4 instructions (2 without answers, 1 unknown ids)" in captured.out
    check_report(report, replay)
