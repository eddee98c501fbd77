"""An output named at the baseline's file is refused before anything is written: the baseline a
run is compared with is never overwritten by the run's report, HTML page or Markdown summary,
whether the path is the same text, another spelling of it or a symlink to it (issue 32 §4)."""

from __future__ import annotations

from pathlib import Path

import pytest

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
