"""Inputs that used to be silently misread are usage errors with one clear line, and -n 2 says
what -n 0 says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphinstruct import __version__
from tests.report.schema_check import load_valid_report

from ._suite import EMPTY3, suite_records

pytest_plugins = ["pytester"]


def _answers(path: Path) -> Path:
    path.write_text("".join(json.dumps({"instruction_id": iid, "level": int(iid[1]),
                                        "samples": [{"raw_output": EMPTY3}]}) + "\n"
                            for iid in ("L0-001", "L1-001")))
    return path


def _one_line_usage_error(result: pytest.RunResult, *needles: str) -> None:
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    for needle in needles:
        assert needle in err, err
    assert "Traceback" not in err + result.stdout.str()
    assert "INTERNALERROR" not in err + result.stdout.str()


def test_replay_with_a_model_is_a_contradiction(pytester: pytest.Pytester,
                                                suite_dir: Path) -> None:
    answers = _answers(pytester.path / "a.jsonl")
    result = pytester.runpytest(f"--gi-suite={suite_dir}", f"--gi-replay={answers}",
                                "--gi-model=oracle", "-p", "no:cacheprovider")
    _one_line_usage_error(result, "contradict", "--gi-replay-label")


def test_replay_label_names_the_cell(pytester: pytest.Pytester, suite_dir: Path) -> None:
    answers = _answers(pytester.path / "a.jsonl")
    report = pytester.path / "r.json"
    result = pytester.runpytest(f"--gi-suite={suite_dir}", f"--gi-replay={answers}",
                                "--gi-replay-label=gpt-4o", f"--gi-report={report}",
                                "-p", "no:cacheprovider")
    assert result.ret in (0, 1)
    assert [c["metadata"]["model"] for c in load_valid_report(report)["cells"]] == ["gpt-4o"]
    result.stdout.fnmatch_lines(["*gpt-4o-zero-shot*"])


@pytest.mark.parametrize("flag", ["--gi-model=", "--gi-replay="])
def test_an_empty_source_option_is_explained(pytester: pytest.Pytester, flag: str) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest(flag, "-p", "no:cacheprovider")
    _one_line_usage_error(result, f"{flag.rstrip('=')} was given no value")


def test_an_empty_suite_is_explained(pytester: pytest.Pytester) -> None:
    root = pytester.path / "suite"
    root.mkdir()
    (root / "level_0.json").write_text("[]")
    result = pytester.runpytest(f"--gi-suite={root}", "--gi-model=oracle",
                                "-p", "no:cacheprovider")
    _one_line_usage_error(result, "holds no instructions")


def test_a_record_in_the_wrong_level_file_is_rejected(pytester: pytest.Pytester) -> None:
    root = pytester.path / "suite"
    root.mkdir()
    records = suite_records()
    (root / "level_0.json").write_text(json.dumps(records[0] + records[1][:1]))
    result = pytester.runpytest(f"--gi-suite={root}", "--gi-model=oracle", "--gi-levels=0",
                                "-p", "no:cacheprovider")
    _one_line_usage_error(result, "L1-001: level 1 in level_0.json")


def test_an_empty_folder_runs_the_suite_the_package_ships(pytester: pytest.Pytester) -> None:
    report = pytester.path / "r.json"
    # a subprocess: the shipped pools bring D3's scoring (its GCNs and pools), which an
    # in-process run would load into this worker again and again
    result = pytester.runpytest_subprocess("--gi-model=oracle", "--gi-per-level=1", "-p",
                                           "no:cacheprovider", f"--gi-report={report}")
    result.assert_outcomes(passed=6)
    run = json.loads(report.read_text(encoding="utf-8"))["run"]
    assert (run["suite_name"], run["suite_version"]) == ("pytest-graphinstruct", __version__)
    assert run["pools"] is not None  # the shipped L3/L4 pools: D1's MMD and D3 are computed


def test_a_named_suite_that_is_not_there_says_how_to_get_one(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--gi-model=oracle", "--gi-suite=nowhere", "-p",
                                "no:cacheprovider")
    _one_line_usage_error(result, "no GraphInstruct suite", "build suite", "--gi-suite")


@pytest.mark.slow
@pytest.mark.parametrize("case", ["missing key", "bad suite"])
def test_xdist_names_the_cause_like_a_single_process(pytester: pytest.Pytester,
                                                      suite_dir: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      case: str) -> None:
    monkeypatch.delenv("GI_UNSET_KEY", raising=False)
    if case == "bad suite":
        (suite_dir / "level_2.json").write_text("{not json")
        args = [f"--gi-suite={suite_dir}", "--gi-model=oracle"]
        needle = "not valid JSON"
    else:
        # a remote host, never contacted (a loopback one would get a placeholder key)
        args = [f"--gi-suite={suite_dir}", "--gi-model=fake-model",
                "--gi-base-url=http://gi.invalid:9/v1", "--gi-api-key-env=GI_UNSET_KEY"]
        needle = "GI_UNSET_KEY"
    for n in ("0", "2"):
        result = pytester.runpytest_subprocess(*args, "-n", n, "-p", "no:cacheprovider")
        _one_line_usage_error(result, needle)


@pytest.mark.slow
def test_a_dead_endpoint_stops_before_the_run(pytester: pytest.Pytester, suite_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess(
        f"--gi-suite={suite_dir}", "--gi-model=fake-model",
        "--gi-base-url=http://127.0.0.1:9/v1", "--gi-api-key-env=GI_TEST_KEY",
        f"--gi-report={report}", "-p", "no:cacheprovider")
    _one_line_usage_error(result, "cannot reach http://127.0.0.1:9/v1")
    coverage = load_valid_report(report)["coverage"]
    assert coverage["complete"] is False and "cannot reach" in coverage["reason"]
