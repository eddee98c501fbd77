"""A run that failed never passes a gate or replaces a baseline, and its report says so."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.report.schema_check import load_valid_report
from tests.signals import take_sigint

from ._suite import EMPTY3

pytest_plugins = ["pytester"]


def _oracle_baseline(pytester: pytest.Pytester, suite_dir: Path, path: Path) -> bytes:
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle",
                                f"--gi-baseline={path}", "--gi-update-baseline",
                                "-p", "no:cacheprovider")
    assert result.ret == 0
    assert load_valid_report(path)["coverage"]["complete"] is True
    return path.read_bytes()


def test_a_usage_error_writes_a_partial_report_and_keeps_the_baseline(
        pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    baseline = pytester.path / "base.json"
    before = _oracle_baseline(pytester, suite_dir, baseline)
    monkeypatch.delenv("GI_UNSET_KEY", raising=False)
    report = pytester.path / "r.json"
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=fake-model",
                                # not a loopback host: a loopback one gets a placeholder key
                                "--gi-base-url=http://gi-test.invalid:9/v1",
                                "--gi-api-key-env=GI_UNSET_KEY", f"--gi-baseline={baseline}",
                                "--gi-update-baseline", f"--gi-report={report}",
                                "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert baseline.read_bytes() == before  # a 0-item run never becomes the baseline
    coverage = load_valid_report(report)["coverage"]
    assert coverage["complete"] is False and "GI_UNSET_KEY" in coverage["reason"]


def test_a_stopped_run_is_partial_fails_its_gate_and_writes_no_baseline(
        pytester: pytest.Pytester, suite_dir: Path) -> None:
    baseline = pytester.path / "base.json"
    before = _oracle_baseline(pytester, suite_dir, baseline)
    answers = pytester.path / "a.jsonl"
    answers.write_text("".join(json.dumps({"instruction_id": iid, "level": int(iid[1]),
                                           "samples": [{"raw_output": EMPTY3}]}) + "\n"
                               for iid in ("L0-001", "L1-001", "L1-002", "L2-001")))
    report = pytester.path / "r.json"
    result = pytester.runpytest(f"--gi-suite={suite_dir}", f"--gi-replay={answers}", "-x",
                                f"--gi-report={report}", f"--gi-baseline={baseline}",
                                "--gi-update-baseline", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "INCOMPLETE RUN" in out and "baseline NOT written" in out
    data = load_valid_report(report)
    assert data["partial"] is True and "stopped early" in data["coverage"]["reason"]
    assert data["coverage"]["selected"] == 4 and data["coverage"]["missing_count"] == 2
    assert baseline.read_bytes() == before


def test_a_report_path_that_cannot_be_written_is_a_usage_error_at_start(
        pytester: pytest.Pytester, suite_dir: Path) -> None:
    (pytester.path / "adir").mkdir()
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle",
                                f"--gi-report={pytester.path / 'adir'}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cannot write a report to*adir: it is a directory*"])
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
    assert not list(pytester.path.glob("*.tmp"))


def test_a_late_write_failure_still_prints_the_summary(pytester: pytest.Pytester,
                                                       suite_dir: Path) -> None:
    report = pytester.path / "out" / "r.json"
    # after the last item, something puts a directory where the report goes
    pytester.makeconftest(f"""
import shutil
from pathlib import Path

def pytest_runtest_logfinish(nodeid, location):
    if nodeid.startswith("L2-001"):
        p = Path({str(report)!r})
        p.unlink(missing_ok=True)
        p.mkdir()
""")
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle",
                                f"--gi-report={report}", "-p", "no:cacheprovider")
    out = result.stdout.str()
    assert "GraphInstruct" in out and "S_total" in out
    assert f"report NOT written to {report}" in out
    assert "Traceback" not in out
    assert not list(report.parent.glob("*.tmp"))


# -- signals (subprocesses) ---------------------------------------------------------------------

def _slow_server() -> FakeOpenAIServer:
    return FakeOpenAIServer(latency_s=0.4, responder=lambda body: EMPTY3)


def _start(cwd: Path, suite_dir: Path, server: FakeOpenAIServer, report: Path,
           *extra: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "GI_TEST_KEY": "sk-test"}
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", f"--gi-suite={suite_dir}", "--gi-model=fake-model",
         f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY", "--gi-cache=none",
         "--gi-concurrency=4", "--gi-samples=40", f"--gi-report={report}",
         "-p", "no:cacheprovider", *extra],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        preexec_fn=take_sigint)


def _wait_for_requests(server: FakeOpenAIServer, n: int, timeout: float = 120.0) -> None:
    """Block until the run has sent ``n`` requests (the timeout is a safety net only)."""
    assert server.wait_for_requests(n, timeout), "the run never reached the server"


def _in_its_calls(server: FakeOpenAIServer, n: int = 4) -> None:
    """With the server's answers held, block until the run has ``n`` calls in flight: it is
    then certainly mid-run (nothing answered yet, so no item can have finished)."""
    assert server.holding
    _wait_for_requests(server, n)


def _old_report(pytester: pytest.Pytester, suite_dir: Path, report: Path) -> None:
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle",
                                f"--gi-report={report}", "-p", "no:cacheprovider")
    assert result.ret == 0 and load_valid_report(report)["coverage"]["complete"] is True


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "reason"), [(signal.SIGINT, "interrupted"),
                                             (signal.SIGTERM, "terminated (SIGTERM)")])
def test_an_interrupted_run_writes_a_partial_report(pytester: pytest.Pytester, suite_dir: Path,
                                                    sig: int, reason: str) -> None:
    report = pytester.path / "r.json"
    _old_report(pytester, suite_dir, report)
    with _slow_server() as server:
        server.hold()
        proc = _start(pytester.path, suite_dir, server, report)
        _in_its_calls(server)  # --gi-concurrency=4: four calls in flight, none answered
        proc.send_signal(sig)
        server.release()  # only now can any answer arrive: the run was mid-run at the signal
        out, _ = proc.communicate(timeout=120)
    text = out.decode()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, text
    data = load_valid_report(report)
    assert data["partial"] is True and reason in data["coverage"]["reason"], text
    assert data["coverage"]["missing_count"] >= 1


@pytest.mark.slow
def test_a_killed_run_leaves_no_report_that_looks_current(pytester: pytest.Pytester,
                                                          suite_dir: Path) -> None:
    report = pytester.path / "r.json"
    _old_report(pytester, suite_dir, report)
    with _slow_server() as server:
        server.hold()
        proc = _start(pytester.path, suite_dir, server, report)
        _in_its_calls(server)
        proc.kill()
        proc.communicate(timeout=120)
    data = load_valid_report(report)
    assert data["partial"] is True and data["cells"] == []
    assert "has not finished" in data["coverage"]["reason"]


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True,
                         text=True, check=False).stdout
    return [int(x) for x in out.split()]


def _start_xdist(cwd: Path, suite_dir: Path, server: FakeOpenAIServer,
                 report: Path) -> tuple[subprocess.Popen[bytes], list[int]]:
    """A ``-n 2`` run whose controller (the run's one client: its answer service) has its four
    calls in flight (the server holds the answers), and the pids of its workers."""
    server.hold()
    proc = _start(cwd, suite_dir, server, report, "-n", "2")
    _in_its_calls(server, 4)
    workers = _children(proc.pid)
    assert len(workers) == 2, f"xdist workers found: {workers}"
    return proc, workers


def _wait_gone(pids: list[int], timeout: float) -> list[int]:
    """Wait until every process in ``pids`` has exited (an event: its pidfd becomes readable),
    at most ``timeout`` seconds in all; the pids still running then."""
    import select

    deadline = time.monotonic() + timeout
    alive = []
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue  # already gone (and reaped)
        try:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                alive.append(pid)
        finally:
            os.close(fd)
    return alive


@pytest.mark.slow
def test_sigterm_under_xdist_stops_the_workers(pytester: pytest.Pytester,
                                               suite_dir: Path) -> None:
    report = pytester.path / "r.json"
    with _slow_server() as server:
        proc, workers = _start_xdist(pytester.path, suite_dir, server, report)
        proc.send_signal(signal.SIGTERM)
        server.release()
        proc.communicate(timeout=120)
        settled = server.request_count  # the run has ended
        # Workers exit within a second or two of the controller; 120 s is a generous bound,
        # and a worker still running then is an orphan.
        alive = _wait_gone(workers, 120)
        assert server.request_count == settled  # nobody spent after the run ended
    assert not alive, f"orphaned workers: {alive}"
    data = load_valid_report(report)
    assert data["partial"] is True


@pytest.mark.slow
def test_workers_of_a_killed_controller_stop(pytester: pytest.Pytester, suite_dir: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    report = pytester.path / "r.json"
    tmp = pytester.path / "tmp"  # where the controller makes the run's stop folder
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    with _slow_server() as server:
        proc, workers = _start_xdist(pytester.path, suite_dir, server, report)
        proc.kill()  # no chance to clean up: the workers must notice on their own
        proc.communicate(timeout=120)
        # The answers stay held: a worker that did not notice would wait for its answers (the
        # calls' timeout is minutes) and still run after the generous 120 s bound (a worker
        # that noticed ends itself 15 s after the loss, run.stop.ORPHAN_EXIT_S, or at once
        # when its question to the gone controller's answer service fails).
        alive = _wait_gone(workers, 120)
        spent = server.request_count
    assert spent == 4  # the controller's calls only: no worker ever asks the endpoint
    for w in alive:
        os.kill(w, signal.SIGKILL)
    assert not alive, f"orphaned workers: {alive}"
    # the workers saw it themselves (their stop watcher follows the parent) and stopped the run
    stops = [p.read_text() for p in tmp.glob("gi-run-*/stop")]
    assert stops == [f"the run's controller (pid {proc.pid}) is gone"]


def test_answers_that_could_not_be_cached_are_said_in_the_summary(
        pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_graphinstruct.models.caching.writer as cache_module

    def full_disk(fd: int, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_module, "_write_all", full_disk)
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    with FakeOpenAIServer(latency_s=0.0, responder=lambda body: EMPTY3) as server:
        result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=fake-model",
                                    f"--gi-base-url={server.base_url}",
                                    "--gi-api-key-env=GI_TEST_KEY",
                                    f"--gi-cache={pytester.path / 'cache'}",
                                    "-p", "no:cacheprovider", "-W", "ignore")
    out = result.stdout.str()
    assert "WARNING: 4 answer(s) not cached" in out and "No space left on device" in out


@pytest.mark.slow
def test_an_endpoint_that_always_fails_costs_little_and_says_it_in_one_line_per_item(
        pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_graphinstruct.testing.openai_server import Fault

    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    report = pytester.path / "r.json"
    with FakeOpenAIServer(latency_s=0.0, fault_for=lambda body: Fault.server_error()) as server:
        result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=fake-model",
                                    f"--gi-base-url={server.base_url}",
                                    "--gi-api-key-env=GI_TEST_KEY", "--gi-cache=none",
                                    "--gi-samples=5", "--override-ini=gi_backoff=0.01",
                                    "--gi-concurrency=1", f"--gi-report={report}", "-rs",
                                    "-p", "no:cacheprovider")
        requests = server.request_count
    # 8 consecutive failed calls open the circuit (heard per attempt) during the first item:
    # it is an error; the other three were never sent — errors in the report, one grouped
    # SKIPPED line on the terminal
    result.assert_outcomes(errors=1, skipped=3)
    assert requests == 8
    out = result.stdout.str()
    assert "WARNING: fake-model: circuit open: 8 consecutive calls" in out
    assert "(18 request(s) not sent; their items are errors)" in out  # 20 samples, 2 sent
    assert len(re.findall(r"SKIPPED \[3\] .*not sent: the circuit breaker opened", out)) == 1
    cells = load_valid_report(report)["cells"]
    assert [cell["summary"]["error"] for cell in cells] == [4]
    # the ERRORS section runs to the next section header (warnings, or the GraphInstruct one)
    lines = out[out.index("= ERRORS ="):].splitlines()[1:]
    errors = lines[:next(i for i, line in enumerate(lines) if re.fullmatch(r"=+ .+ =+", line))]
    assert len(errors) == 2, errors  # the one item: its header and one line
    assert "Traceback" not in out and "InfraError" not in out.split("short test summary")[0]
