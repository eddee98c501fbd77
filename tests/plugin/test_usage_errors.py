"""A usage error, wherever it is found, replaces the report with the partial "usage error" one;
every output path is checked before any work; ``--gi-shard`` counts are bounded (issue 20, items
6 and 7; docs/PLUGIN.md "What happens when things go wrong")."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.report.schema_check import load_valid_report

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]


def _run(pytester: pytest.Pytester, suite_dir: Path, report: Path,
         *extra: str) -> pytest.RunResult:
    return pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle", "--gi-cache=none",
                              "-p", "no:cacheprovider", f"--gi-report={report}", *extra)


def _assert_usage_report(report: Path, why: str) -> None:
    data = load_valid_report(report)
    assert data["partial"] is True, data["coverage"]
    reason = data["coverage"]["reason"]
    assert reason.startswith("usage error: ") and why in reason, reason
    assert "\n" not in reason


def _one_error_line(result: pytest.RunResult) -> str:
    lines = [line for line in result.stderr.lines if "pytest-graphinstruct:" in line]
    assert len(lines) == 1, result.stderr.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
    return lines[0]


@pytest.fixture
def complete(pytester: pytest.Pytester, suite_dir: Path) -> tuple[Path, bytes]:
    """A complete run's report file and its bytes."""
    report = pytester.path / "out" / "r.json"
    assert _run(pytester, suite_dir, report).ret == pytest.ExitCode.OK
    assert load_valid_report(report)["partial"] is False
    return report, report.read_bytes()


# Each bad option, and a word of the one line it must give (the same line the report keeps).
BAD_OPTIONS = [
    ("--gi-samples=0", "--gi-samples must be >= 1"),
    ("--gi-strategy=bogus", "unknown --gi-strategy 'bogus'"),
    ("--gi-levels=9", "--gi-levels must name levels 0-5"),
    ("--gi-shard=5/4", "--gi-shard"),
    # (1/10^20 runs in a memory-limited subprocess below: a regression must not take this one)
    ("--gi-shard=1/1000", "--gi-shard=1/1000"),
    ("--gi-pools=no-such-folder", "--gi-pools directory not found"),
    ("--gi-baseline-cell=x", "--gi-baseline-cell needs --gi-baseline"),
    ("--gi-api-key-env=GI_NO_SUCH_KEY_VARIABLE", "GI_NO_SUCH_KEY_VARIABLE"),
    # issue 32 §4: these ended with pytest's exit 5 and no word (a comma names no model), or
    # ran every level (an empty level list)
    ("--gi-model=,", "--gi-model=',' names no model"),
    ("--gi-model= , ", "names no model"),
    ("--gi-levels=", "--gi-levels was given no value"),
]


def test_a_usage_error_replaces_the_previous_complete_report(
        pytester: pytest.Pytester, suite_dir: Path, complete: tuple[Path, bytes]) -> None:
    report, before = complete
    for option, why in BAD_OPTIONS:
        report.write_bytes(before)
        extra = [option]
        if option.startswith("--gi-api-key-env"):  # checked by the preflight, for a model
            extra = ["--gi-model=gpt-4o", option]  # at an endpoint (later than the options)
        result = _run(pytester, suite_dir, report, *extra)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, (option, result.stdout.str())
        assert why in _one_error_line(result), option
        _assert_usage_report(report, why)


def test_an_empty_model_option_replaces_the_report(
        pytester: pytest.Pytester, suite_dir: Path, complete: tuple[Path, bytes]) -> None:
    report, _ = complete
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=", "-p",
                                "no:cacheprovider", f"--gi-report={report}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--gi-model was given no value" in _one_error_line(result)
    _assert_usage_report(report, "--gi-model was given no value")


def test_an_unwritable_output_is_a_usage_error_before_any_request(
        pytester: pytest.Pytester, suite_dir: Path, complete: tuple[Path, bytes],
        monkeypatch: pytest.MonkeyPatch) -> None:
    report, _ = complete
    blocker = pytester.path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    with FakeOpenAIServer(latency_s=0.0) as server:
        for option in (f"--gi-markdown={blocker / 'summary.md'}",
                       f"--gi-html={blocker / 'page.html'}"):
            result = pytester.runpytest(
                f"--gi-suite={suite_dir}", "--gi-model=fake-model", "--gi-cache=none",
                f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY",
                "-p", "no:cacheprovider", f"--gi-report={report}", option)
            assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
            flag = option.split("=")[0]
            line = _one_error_line(result)
            assert flag in line and str(blocker) in line, line
            assert server.request_count == 0 and not server.probes  # nothing was asked
            assert "collected" not in result.stdout.str()  # stopped before collection
            _assert_usage_report(report, flag)


def test_an_unwritable_report_path_names_the_option_and_writes_nothing(
        pytester: pytest.Pytester, suite_dir: Path) -> None:
    folder = pytester.path / "adir"
    folder.mkdir()
    result = _run(pytester, suite_dir, folder, "--gi-samples=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    _one_error_line(result)
    assert folder.is_dir() and not any(folder.iterdir())
    result = _run(pytester, suite_dir, folder)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--gi-report" in _one_error_line(result)
    assert folder.is_dir() and not any(folder.iterdir())


@pytest.mark.slow  # two subprocess runs with xdist (~6-12 s)
def test_under_xdist_the_controller_writes_the_usage_report(
        pytester: pytest.Pytester, suite_dir: Path, complete: tuple[Path, bytes]) -> None:
    report, before = complete
    for option, why in (("--gi-samples=0", "--gi-samples must be >= 1"),
                        ("--gi-shard=1/1000", "--gi-shard=1/1000")):
        report.write_bytes(before)
        result = pytester.runpytest_subprocess(
            f"--gi-suite={suite_dir}", "--gi-model=oracle", "--gi-cache=none", "-n", "2",
            "-p", "no:cacheprovider", f"--gi-report={report}", option)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
        assert why in _one_error_line(result)
        _assert_usage_report(report, why)


def test_a_shard_that_selects_nothing_says_so(pytester: pytest.Pytester,
                                              suite_dir: Path) -> None:
    report = pytester.path / "r.json"
    # the tiny suite holds 4 instructions: 1000 shards of them, 4 of only level 0's one, and
    # 4 shards of all 4, where no level fills every shard and hashing leaves shard 2 empty
    for args, words in ((["--gi-shard=1/1000"], ("1000 shards", "4 instructions")),
                        (["--gi-shard=2/4", "--gi-levels=0"], ("4 shards", "1 instruction")),
                        (["--gi-shard=2/4"], ("shard 2 of 4 shards holds none",
                                              "4 instructions"))):
        result = _run(pytester, suite_dir, report, *args)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
        line = _one_error_line(result)
        assert all(w in line for w in words), line
        _assert_usage_report(report, "--gi-shard")


def _limit_memory() -> None:  # pragma: no cover - runs in the child before exec
    four_gb = 4 * 1024**3
    resource.setrlimit(resource.RLIMIT_AS, (four_gb, four_gb))


@pytest.mark.slow  # a fresh Python process (2.5-5.5 s)
def test_an_absurd_shard_count_is_one_line_under_a_memory_limit(
        pytester: pytest.Pytester, suite_dir: Path) -> None:
    # 10**20 shards: anything that allocated per shard would hit the 4 GB limit, and anything
    # that counted them would never end (the 120 s timeout only stops such a run), so a run
    # that ends with the one usage line neither allocated nor counted.
    report = pytester.path / "r.json"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", f"--gi-suite={suite_dir}", "--gi-model=oracle",
         "--gi-cache=none", "-p", "no:cacheprovider", f"--gi-report={report}",
         f"--gi-shard=1/{10**20}", "-q"],
        cwd=pytester.path, env=env, capture_output=True, text=True, timeout=120,
        preexec_fn=_limit_memory)
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "pytest-graphinstruct:" in line]
    assert len(lines) == 1 and "--gi-shard" in lines[0], proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    _assert_usage_report(report, "--gi-shard")


def test_a_usage_error_at_collection_is_said_once_with_no_table_of_nothing(
        pytester: pytest.Pytester, suite_dir: Path) -> None:
    # e.g. another run holds the cache folder when this one builds its backends (issue 47 §7):
    # the terminal said the reason three times around an empty score table
    pytester.makeconftest("""
import pytest_graphinstruct.run.session as session
from pytest_graphinstruct.errors import ModelError

def refuse(self, *args, **kwargs):
    raise ModelError("the cache is busy; nothing was sent")

session.BenchmarkSession.prefetch = refuse
""")
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess(
        f"--gi-suite={suite_dir}", "--gi-model=oracle", "--gi-cache=none", "-p",
        "no:cacheprovider", f"--gi-report={report}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    out = result.stdout.str() + result.stderr.str()
    assert out.count("the cache is busy") == 1, out
    assert "S_total" not in out and "INCOMPLETE RUN" not in out
    assert f"report written to {report}" in out
    _assert_usage_report(report, "the cache is busy")
