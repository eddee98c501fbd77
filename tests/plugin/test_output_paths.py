"""An output named at the baseline's file is refused before anything is written: the baseline a
run is compared with is never overwritten by the run's report, HTML page or Markdown summary,
whether the path is the same text, another spelling of it or a symlink to it (issue 32 §4).
Nor are the answer cache's files (its answers, batch ledger, pool features; the baseline too
may not be one of them) or the recorded answers the run replays (issue 47 §5)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_graphinstruct.options import DEFAULT_CACHE_DIR
from tests.report.schema_check import load_valid_report

pytest_plugins = ["pytester"]


def _run(pytester: pytest.Pytester, suite_dir: Path, *extra: str) -> pytest.RunResult:
    return pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle", "--gi-cache=none",
                              "-p", "no:cacheprovider", *extra)


@pytest.fixture
def baseline(pytester: pytest.Pytester, suite_dir: Path) -> tuple[Path, bytes]:
    """A complete run's report, kept as the baseline, and its bytes."""
    path = pytester.path / "base" / "baseline.json"
    assert _run(pytester, suite_dir, f"--gi-report={path}").ret == pytest.ExitCode.OK
    assert load_valid_report(path)["partial"] is False
    return path, path.read_bytes()


def _the_line(result: pytest.RunResult) -> str:
    lines = [line for line in result.stderr.lines if "pytest-graphinstruct:" in line]
    assert len(lines) == 1, result.stderr.str() + result.stdout.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
    return lines[0]


@pytest.mark.parametrize("option", ["--gi-report", "--gi-html", "--gi-markdown"])
@pytest.mark.parametrize("spelling", ["same", "dotted", "symlink"])
def test_an_output_on_the_baseline_is_refused_and_the_baseline_is_untouched(
        pytester: pytest.Pytester, suite_dir: Path, baseline: tuple[Path, bytes],
        option: str, spelling: str) -> None:
    path, before = baseline
    named = {"same": path, "dotted": path.parent / ".." / "base" / path.name,
             "symlink": pytester.path / "link.json"}[spelling]
    if spelling == "symlink":
        named.symlink_to(path)
    result = _run(pytester, suite_dir, f"--gi-baseline={path}", f"{option}={named}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    line = _the_line(result)
    assert option in line and "overwrite the baseline" in line, line
    assert path.read_bytes() == before
    assert nothing_ran(result)


def nothing_ran(result: pytest.RunResult) -> bool:
    """Nothing ran: no item was collected for the run."""
    return "passed" not in result.stdout.str()


def test_with_another_usage_error_the_baseline_is_untouched_too(
        pytester: pytest.Pytester, suite_dir: Path, baseline: tuple[Path, bytes]) -> None:
    # a bad value is refused before the run exists; its "usage error" report must not land on
    # the baseline either
    path, before = baseline
    result = _run(pytester, suite_dir, f"--gi-baseline={path}", f"--gi-report={path}",
                  "--gi-samples=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert path.read_bytes() == before


def test_an_update_of_the_baseline_with_the_report_on_it_is_refused(
        pytester: pytest.Pytester, suite_dir: Path, baseline: tuple[Path, bytes]) -> None:
    path, before = baseline
    result = _run(pytester, suite_dir, f"--gi-baseline={path}", f"--gi-report={path}",
                  "--gi-update-baseline")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--gi-report" in _the_line(result)
    assert path.read_bytes() == before


# -- the answer cache's files and the run's other inputs (issue 47 §5) --------------------------

CACHED = '{"a cached answer": true}\n'


@pytest.fixture
def cache(pytester: pytest.Pytester) -> Path:
    """An answer cache folder whose answers file holds one (made-up) line."""
    folder = pytester.path / "c"
    folder.mkdir()
    (folder / "answers.jsonl").write_text(CACHED, encoding="utf-8")
    return folder


def _cached_run(pytester: pytest.Pytester, suite_dir: Path, cache: Path,
                *extra: str) -> pytest.RunResult:
    return pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle",
                              f"--gi-cache={cache}", "-p", "no:cacheprovider", *extra)


@pytest.mark.parametrize("option", ["--gi-report", "--gi-html", "--gi-markdown"])
@pytest.mark.parametrize("spelling", ["same", "symlink", "hardlink"])
def test_an_output_on_the_cache_file_is_refused_and_the_cache_is_untouched(
        pytester: pytest.Pytester, suite_dir: Path, cache: Path, option: str,
        spelling: str) -> None:
    answers = cache / "answers.jsonl"
    named = {"same": answers, "symlink": pytester.path / "link.json",
             "hardlink": pytester.path / "hard.json"}[spelling]
    if spelling == "symlink":
        named.symlink_to(answers)
    elif spelling == "hardlink":
        os.link(answers, named)
    result = _cached_run(pytester, suite_dir, cache, f"{option}={named}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    line = _the_line(result)
    assert f"{option} names the answer cache's answers.jsonl" in line, line
    assert answers.read_text(encoding="utf-8") == CACHED
    assert nothing_ran(result)


def test_the_default_cache_folder_is_guarded_too(pytester: pytest.Pytester,
                                                 suite_dir: Path) -> None:
    folder = pytester.path / DEFAULT_CACHE_DIR
    folder.mkdir(parents=True)
    (folder / "answers.jsonl").write_text(CACHED, encoding="utf-8")
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle",
                                "-p", "no:cacheprovider",
                                f"--gi-report={folder / 'answers.jsonl'}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--gi-report names the answer cache's answers.jsonl" in _the_line(result)
    assert (folder / "answers.jsonl").read_text(encoding="utf-8") == CACHED


@pytest.mark.parametrize("name", ["batches.json", "pools/features.json"])
def test_a_baseline_among_the_cache_files_is_refused(pytester: pytest.Pytester,
                                                     suite_dir: Path, cache: Path,
                                                     name: str) -> None:
    # a missing baseline is written from the run: in the cache folder it would be read back as
    # the batch ledger (or lie among the pool features)
    result = _cached_run(pytester, suite_dir, cache, f"--gi-baseline={cache / name}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert _the_line(result).startswith("ERROR: pytest-graphinstruct: --gi-baseline ")
    assert not (cache / name).exists()


def test_with_another_usage_error_the_cache_file_is_untouched_too(
        pytester: pytest.Pytester, suite_dir: Path, cache: Path) -> None:
    # a bad value is refused before the run exists; its "usage error" report must not land on
    # the cache file either
    result = _cached_run(pytester, suite_dir, cache, f"--gi-report={cache / 'answers.jsonl'}",
                         "--gi-samples=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (cache / "answers.jsonl").read_text(encoding="utf-8") == CACHED


def test_the_report_on_the_recorded_answers_is_refused(pytester: pytest.Pytester,
                                                       suite_dir: Path) -> None:
    answers = pytester.path / "answers.jsonl"
    answers.write_text(json.dumps({"instruction_id": "L0-001", "level": 0,
                                   "samples": [{"raw_output": "no graph"}]}) + "\n",
                       encoding="utf-8")
    before = answers.read_bytes()
    result = pytester.runpytest(f"--gi-suite={suite_dir}", f"--gi-replay={answers}",
                                "-p", "no:cacheprovider", f"--gi-report={answers}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--gi-report names the recorded answers of --gi-replay" in _the_line(result)
    assert answers.read_bytes() == before
