"""The plugin against a local OpenAI-compatible server: faults, retries, cache, key secrecy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer, Fault
from tests.report.schema_check import load_valid_report, without_provenance

from ._suite import EMPTY3, TREE4

pytestmark = pytest.mark.slow  # subprocesses / whole-suite runs: the full tier (.ci/run)

pytest_plugins = ["pytester"]

SECRET = "sk-test-SECRET-0123456789"


def answer_for(body: dict[str, Any]) -> str:
    """A model that answers the tree and the 3-node graph right and the cycle wrong."""
    user = body["messages"][-1]["content"]
    if "tree with 4 nodes" in user:
        return "Here you go:\n```\n" + TREE4 + "\n```"
    if "cycle with 4 nodes" in user:
        return TREE4  # wrong: a tree is not a cycle
    if "3-regular" in user:
        return "No such graph exists: 3*5 is odd, so this is impossible."
    return EMPTY3


@pytest.fixture
def server() -> Any:
    with FakeOpenAIServer(latency_s=0.0, responder=answer_for) as srv:
        yield srv


def args(suite_dir: Path, server: FakeOpenAIServer, cache: Path, *extra: str) -> list[str]:
    return [f"--gi-suite={suite_dir}", "--gi-model=fake-model", f"--gi-base-url={server.base_url}",
            "--gi-api-key-env=GI_TEST_KEY", f"--gi-cache={cache}", "--override-ini=gi_backoff=0.01",
            "--override-ini=gi_max_retries=2", "-p", "no:cacheprovider", *extra]


def test_outcomes_retries_and_cache(pytester: pytest.Pytester, suite_dir: Path,
                                    server: FakeOpenAIServer,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", SECRET)
    cache = pytester.path / "cache"
    report = pytester.path / "r.json"
    xml = pytester.path / "junit.xml"

    def faults(body: dict[str, Any]) -> Fault | None:
        user = body["messages"][-1]["content"]
        return Fault.server_error() if "3 nodes" in user else None

    server.fault_for = faults
    server.script(Fault.rate_limited(retry_after="0.2"), Fault.malformed(), Fault.hang(5.0),
                  Fault.truncated())
    result = pytester.runpytest(*args(suite_dir, server, cache, f"--gi-report={report}",
                                      f"--junitxml={xml}", "--override-ini=gi_max_error_rate=0.5",
                                      "-v", "--override-ini=gi_timeout=1",
                                      "--override-ini=gi_max_retries=4"))
    # L0 always 500s -> error (not a failure); the cycle answer is wrong -> failure
    result.assert_outcomes(passed=2, failed=1, errors=1)
    out = result.stdout.str()
    assert "L0-001[fake-model-zero-shot] ERROR" in out
    data = load_valid_report(report)
    assert data["cells"][0]["summary"]["infra_errors"] == 1
    l0 = next(r for r in data["cells"][0]["per_instruction"] if r["instruction_id"] == "L0-001")
    assert l0["outcome"] == "error" and "500" in (l0["error"] or "")
    # L0 was tried 1 + 2 retries times; the scripted 429 and malformed body were retried too,
    # and every HTTP call is accounted for in the report
    assert l0["api_calls"] == 5
    assert server.request_count == data["cells"][0]["summary"]["api_calls"] >= 3 + 5 + 1
    assert 'name="gi_passed_samples"' in xml.read_text(encoding="utf-8")
    # nothing leaks the key
    for path in [report, xml, *cache.rglob("*")]:
        if path.is_file():
            assert SECRET not in path.read_text(encoding="utf-8", errors="replace")
    assert SECRET not in out

    # rerun: every obtained answer comes from the cache; only the failed one is asked again
    before = server.request_count
    server.fault_for = None
    rerun = pytester.runpytest(*args(suite_dir, server, cache))
    rerun.assert_outcomes(passed=3, failed=1)
    assert server.request_count - before == 1


def test_error_rate_gate_fails_the_session(pytester: pytest.Pytester, suite_dir: Path,
                                           server: FakeOpenAIServer,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", SECRET)
    server.fault_for = lambda body: Fault.unauthorized()
    result = pytester.runpytest(*args(suite_dir, server, pytester.path / "c", "-k", "L1"))
    result.assert_outcomes(errors=2, deselected=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*infrastructure error rate 100.0% exceeds*"])
    # 401 is not retried: exactly one call per item
    assert server.request_count == 2


def test_missing_api_key_is_a_usage_error(pytester: pytest.Pytester, suite_dir: Path,
                                          server: FakeOpenAIServer,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # a remote host (a loopback one gets a placeholder key: docs/MODELS.md); it is never
    # contacted, the key is checked first
    monkeypatch.delenv("GI_TEST_KEY", raising=False)
    remote = [a if not a.startswith("--gi-base-url=") else "--gi-base-url=http://gi.invalid/v1"
              for a in args(suite_dir, server, pytester.path / "c")]
    result = pytester.runpytest(*remote)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "GI_TEST_KEY" in result.stderr.str()
    assert server.request_count == 0


def test_xdist_workers_share_answers_and_match_single_process(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", SECRET)
    server.latency_s = 0.05
    r2, r0 = pytester.path / "r2.json", pytester.path / "r0.json"
    run2 = pytester.runpytest_subprocess(*args(suite_dir, server, pytester.path / "c2",
                                               "-n", "2", "--gi-samples=3",
                                               f"--gi-report={r2}"))
    run2.assert_outcomes(passed=3, failed=1)
    # every (instruction, sample) was requested exactly once across both workers
    assert server.request_count == 4 * 3
    server.reset()
    run0 = pytester.runpytest_subprocess(*args(suite_dir, server, pytester.path / "c0",
                                               "-n", "0", "--gi-samples=3",
                                               f"--gi-report={r0}"))
    run0.assert_outcomes(passed=3, failed=1)
    assert without_provenance(r0) == without_provenance(r2)


def test_token_budget_stops_requests_and_keeps_results(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", SECRET)
    result = pytester.runpytest(*args(suite_dir, server, pytester.path / "c",
                                      "--gi-concurrency=1", "--gi-max-tokens-total=1",
                                      "-rs"))
    outcomes = result.parseoutcomes()
    assert outcomes.get("skipped", 0) >= 1
    assert server.request_count == 4 - outcomes["skipped"]
    result.stdout.fnmatch_lines(["*token budget exhausted*"])


def test_sigkill_mid_run_then_rerun_requests_only_missing_answers(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import signal
    import subprocess
    import sys

    from pytest_graphinstruct.models.caching.cache import AnswerCache

    monkeypatch.setenv("GI_TEST_KEY", SECRET)
    # Five answers come back, then the server holds them: the run is killed mid-run, with
    # some answers cached and others not, however fast or slow the machine is.
    server.hold(after=5)
    cache = pytester.path / "cache"
    argv = [sys.executable, "-m", "pytest", *args(suite_dir, server, cache, "--gi-samples=3",
                                                  "--gi-concurrency=2")]
    proc = subprocess.Popen(argv, cwd=pytester.path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        # --gi-concurrency=2: two held calls in flight; a new call is issued only after an
        # earlier answer was handled (and cached), so the five answers are in the cache now
        assert server.wait_for_requests(5 + 2, timeout=120)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    kept = len(AnswerCache(cache).entries())
    assert 0 < kept < 12, kept
    before = server.request_count
    server.release()
    rerun = pytester.runpytest(*args(suite_dir, server, cache, "--gi-samples=3"))
    rerun.assert_outcomes(passed=3, failed=1)
    assert server.request_count - before == 12 - kept
