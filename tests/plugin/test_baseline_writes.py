"""What a run writes at its end is what it says (issue 47 §6, §8, §9):

* ``-n 2 --dist each`` would run every item on every worker — a report holding each
  instruction twice, which ``gate`` refuses as damaged — so a benchmark run refuses it up
  front, and no such report becomes the baseline;
* ``--gi-update-baseline`` replaces only a readable report of this plugin (or writes a missing
  file): a TOML file, another JSON document, a truncated report, a Git LFS pointer or a file
  with merge-conflict markers is left byte-identical and the run is a usage error;
* an output the run asked for that cannot be written (a full disk) fails the run with one line
  naming the file and the OS error, and the report's start-of-run placeholder ("has not
  finished") does not stay behind to lie about a run that finished.

The runs answer with the oracle (no server); a full disk is ``/dev/full``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.report.schema_check import load_valid_report

pytest_plugins = ["pytester"]

FULL = Path("/dev/full")
needs_full_disk = pytest.mark.skipif(not FULL.exists(), reason="no /dev/full here")


def _run(pytester: pytest.Pytester, suite_dir: Path, *extra: str) -> pytest.RunResult:
    return pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle", "--gi-cache=none",
                              "-p", "no:cacheprovider", *extra)


def _usage_line(result: pytest.RunResult) -> str:
    lines = [line for line in result.stderr.lines if "pytest-graphinstruct:" in line]
    assert len(lines) == 1, result.stderr.str() + result.stdout.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
    return lines[0]


# -- --dist each (§6) ---------------------------------------------------------------------------

@pytest.mark.slow
def test_dist_each_is_refused_and_writes_no_baseline(pytester: pytest.Pytester,
                                                     suite_dir: Path) -> None:
    base = pytester.path / "base.json"
    result = pytester.runpytest_subprocess(
        f"--gi-suite={suite_dir}", "--gi-model=oracle", "--gi-cache=none", "-p",
        "no:cacheprovider", "-n", "2", "--dist", "each", f"--gi-baseline={base}",
        "--gi-update-baseline")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    line = _usage_line(result)
    assert "--dist each runs every item on every xdist worker" in line
    assert "use -n N with xdist's default --dist load" in line
    assert not base.exists()
    # the run xdist shares out makes a baseline a later gated run accepts
    made = pytester.runpytest_subprocess(
        f"--gi-suite={suite_dir}", "--gi-model=oracle", "--gi-cache=none", "-p",
        "no:cacheprovider", "-n", "2", f"--gi-baseline={base}", "--gi-update-baseline")
    assert made.ret == pytest.ExitCode.OK, made.stdout.str()
    assert len(load_valid_report(base)["cells"][0]["per_instruction"]) == 4
    assert _run(pytester, suite_dir, f"--gi-baseline={base}").ret == pytest.ExitCode.OK


# -- what --gi-update-baseline may replace (§8) -------------------------------------------------

@pytest.fixture
def report_text(pytester: pytest.Pytester, suite_dir: Path) -> str:
    """A complete report of this plugin (the oracle's run of the tiny suite)."""
    path = pytester.path / "made" / "r.json"
    assert _run(pytester, suite_dir, f"--gi-report={path}").ret == pytest.ExitCode.OK
    return path.read_text(encoding="utf-8")


NOT_REPORTS = {
    "toml": '[tool.graphinstruct]\nmodel = "gpt-4o"\n',
    "other json": json.dumps({"name": "my-package", "version": "1.0.0"}),
    "lfs pointer": ("version https://git-lfs.github.com/spec/v1\noid sha256:"
                    + "4d7a" * 16 + "\nsize 812345\n"),
}


@pytest.mark.parametrize("kind", [*NOT_REPORTS, "truncated report", "merge conflict"])
def test_an_update_leaves_a_file_that_is_not_a_report_alone(
        pytester: pytest.Pytester, suite_dir: Path, report_text: str, kind: str) -> None:
    text = NOT_REPORTS.get(kind) or (
        report_text[:len(report_text) // 2] if kind == "truncated report"
        else f"<<<<<<< HEAD\n{report_text}=======\n{report_text}>>>>>>> other\n")
    base = pytester.path / "base.json"
    base.write_text(text, encoding="utf-8")
    report = pytester.path / "r.json"
    result = _run(pytester, suite_dir, f"--gi-baseline={base}", "--gi-update-baseline",
                  f"--gi-report={report}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    line = _usage_line(result)
    assert f"--gi-update-baseline: refusing to overwrite {base}: " in line
    assert "only a readable report of this plugin" in line
    assert base.read_text(encoding="utf-8") == text
    assert "passed" not in result.stdout.str()  # refused before any item ran
    assert "usage error: --gi-update-baseline" in load_valid_report(report)["coverage"]["reason"]


def test_an_update_still_replaces_a_report_and_writes_a_missing_file(
        pytester: pytest.Pytester, suite_dir: Path, report_text: str) -> None:
    base = pytester.path / "base.json"
    base.write_text(report_text, encoding="utf-8")
    result = _run(pytester, suite_dir, f"--gi-baseline={base}", "--gi-update-baseline")
    assert result.ret == pytest.ExitCode.OK
    assert load_valid_report(base)["gate"]["baseline_update"].startswith("baseline updated: ")
    new = pytester.path / "new" / "base.json"
    assert _run(pytester, suite_dir, f"--gi-baseline={new}",
                "--gi-update-baseline").ret == pytest.ExitCode.OK
    assert load_valid_report(new)["coverage"]["complete"] is True


# -- outputs that cannot be written (§9) --------------------------------------------------------

# The disk fills up while the run works: the temporary file the report is written through
# becomes /dev/full once the start-of-run placeholder is in place (collection comes after it).
FILL_UP = """
import os

def pytest_collection_finish(session):
    os.symlink("/dev/full", {tmp!r})
"""


@needs_full_disk
def test_a_report_the_full_disk_refuses_fails_the_run_and_leaves_no_placeholder(
        pytester: pytest.Pytester, suite_dir: Path) -> None:
    report = pytester.path / "r.json"
    summary = pytester.path / "summary.md"
    pytester.makeconftest(FILL_UP.format(tmp=str(report) + ".tmp"))
    result = _run(pytester, suite_dir, f"--gi-report={report}", f"--gi-markdown={summary}")
    result.assert_outcomes(passed=4)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"report NOT written to {report}: No space left on device "
                                 "(the start-of-run placeholder there was removed)"])
    assert not report.exists()  # no "has not finished" about a run that finished
    # the summary written after it agrees with the exit status, and says why
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## GraphInstruct: ❌ failed\n"), text
    assert "report NOT written to" in text and "an output it asked for was not written" in text


@needs_full_disk
def test_a_baseline_the_full_disk_refuses_fails_the_run(pytester: pytest.Pytester,
                                                        suite_dir: Path) -> None:
    base = pytester.path / "base.json"
    Path(str(base) + ".tmp").symlink_to(FULL)
    result = _run(pytester, suite_dir, f"--gi-baseline={base}", "--gi-update-baseline")
    result.assert_outcomes(passed=4)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"baseline NOT written to {base}: No space left on device"])
    assert not base.exists()


@needs_full_disk
def test_a_markdown_summary_the_full_disk_refuses_fails_the_run(pytester: pytest.Pytester,
                                                                suite_dir: Path) -> None:
    summary = pytester.path / "summary.md"
    summary.symlink_to(FULL)
    result = _run(pytester, suite_dir, f"--gi-markdown={summary}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"markdown summary NOT written to {summary}: No space left "
                                 "on device"])


@needs_full_disk
def test_a_report_the_full_disk_refuses_at_the_start_is_a_usage_error(
        pytester: pytest.Pytester, suite_dir: Path) -> None:
    report = pytester.path / "r.json"
    Path(str(report) + ".tmp").symlink_to(FULL)
    result = _run(pytester, suite_dir, f"--gi-report={report}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert _usage_line(result).endswith(f"--gi-report: cannot write {report}: No space left "
                                        "on device")
    assert "passed" not in result.stdout.str()
