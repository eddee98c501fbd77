"""An interrupt stops spending in every process, and the partial report counts what happened.

The server answers the first requests at once and holds every later answer until the test
releases it, so the run is certainly mid-way when the signal is sent (no race with the clock):
the signal goes out once the server has seen held requests, and the held answers are released
only after the run's stop file exists (the run's processes check it before every request).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.report.schema_check import load_valid_report
from tests.signals import take_sigint

from ._suite import EMPTY3

pytestmark = pytest.mark.slow
pytest_plugins = ["pytester"]

ANSWERED_AT_ONCE = 6
STOP_LINE = "no new requests"
WAIT_S = 120.0  # a safety net for a broken run, never the point of a test


class _HeldServer:
    """A FakeOpenAIServer whose answers after the first ``ANSWERED_AT_ONCE`` wait for
    :meth:`release`."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self._lock = threading.Lock()
        self._seen = 0
        self.held = threading.Semaphore(0)  # one release per request that is being held
        self.server = FakeOpenAIServer(responder=self._answer)

    def _answer(self, body: dict[str, Any]) -> str:
        with self._lock:
            self._seen += 1
            hold = self._seen > ANSWERED_AT_ONCE
        if hold:
            self.held.release()
            self.released.wait(WAIT_S)
        return EMPTY3

    def wait_held(self, n: int) -> None:
        for _ in range(n):
            assert self.held.acquire(timeout=WAIT_S), "the run never reached the held answers"


class _Output:
    """A process's merged output, read by a thread (so a full pipe never blocks the run)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.text = ""
        self._thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._thread.start()

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            self.text += raw.decode(errors="replace")

    def finish(self) -> str:
        self._thread.join(WAIT_S)
        return self.text


def _wait_for_stop_file(tmp: Path) -> None:
    """Wait until the run wrote its stop file (run/stop.py: ``$TMPDIR/gi-run-*/stop``)."""
    deadline = time.monotonic() + WAIT_S
    while not list(tmp.glob("gi-run-*/stop")):
        assert time.monotonic() < deadline, "the run never wrote its stop file"
        time.sleep(0.02)


def _start(cwd: Path, suite_dir: Path, base_url: str, report: Path, *extra: str,
           cache: Path | None = None) -> subprocess.Popen[bytes]:
    tmp = cwd / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "GI_TEST_KEY": "sk-test", "TMPDIR": str(tmp)}
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", f"--gi-suite={suite_dir}", "--gi-model=fake-model",
         f"--gi-base-url={base_url}", "--gi-api-key-env=GI_TEST_KEY",
         "--gi-cache=none" if cache is None else f"--gi-cache={cache}",
         "--gi-concurrency=2", "--gi-samples=6", f"--gi-report={report}",
         "-p", "no:cacheprovider", *extra],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        preexec_fn=take_sigint)


def _interrupt(proc: subprocess.Popen[bytes], held: _HeldServer, sig: int,
               tmp: Path) -> tuple[str, float]:
    """Send ``sig`` once two calls are held in flight, release their answers once the run's
    stop file exists, and wait for the run to end; its output, and when the signal went."""
    try:
        output = _Output(proc)
        held.wait_held(2)  # the run is mid-way: answers obtained, calls in flight
        signalled = time.monotonic()
        proc.send_signal(sig)
        _wait_for_stop_file(tmp)  # the run has stopped issuing
        held.released.set()  # the calls in flight now get their answers (in the grace period)
        proc.wait(WAIT_S)
    finally:
        held.released.set()
        if proc.poll() is None:
            proc.kill()
    return output.finish(), signalled


def _report_calls(data: dict[str, Any]) -> int:
    return sum(int(cell["summary"]["api_calls"]) for cell in data["cells"])


@pytest.mark.parametrize("workers", [("-n", "2"), ("-p", "no:xdist")], ids=["n2", "no-xdist"])
def test_sigterm_stops_every_process_and_the_report_counts_the_truth(
        pytester: pytest.Pytester, suite_dir: Path, workers: tuple[str, str]) -> None:
    report = pytester.path / "r.json"
    held = _HeldServer()
    with held.server as server:
        proc = _start(pytester.path, suite_dir, server.base_url, report, *workers)
        text, signalled = _interrupt(proc, held, signal.SIGTERM, pytester.path / "tmp")
        arrivals = [r.arrived for r in server.requests]
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, text
    # Workers see the stop file within 50 ms; a request that arrives later than that was
    # started after the signal.  (0.5 s: generous for a loaded machine, far below a request.)
    late = [t - signalled for t in arrivals if t > signalled + 0.5]
    assert late == [], text
    data = load_valid_report(report)
    assert data["partial"] is True and "terminated (SIGTERM)" in data["coverage"]["reason"]
    # Every call the server received is in the report, none more.
    assert _report_calls(data) == len(arrivals), text
    results = sum(len(cell["per_instruction"]) for cell in data["cells"])
    # Every selected item has a result or is named missing.  How many are missing is a race
    # the test does not own: under -n 2 a worker may still turn its last items into
    # "terminated (SIGTERM)" errors (results) before the controller ends the session.
    coverage = data["coverage"]
    assert results >= 1 and results + coverage["missing_count"] == coverage["selected"], text
    assert STOP_LINE in text and "Traceback" not in text


def test_ctrl_c_caches_the_answers_of_calls_in_flight(pytester: pytest.Pytester,
                                                      suite_dir: Path) -> None:
    """One Ctrl+C without xdist: nothing new is asked, and the answers of the calls already in
    flight — paid for — arrive within the grace period and are cached for the rerun."""
    report = pytester.path / "r.json"
    cache = pytester.path / "answers"
    held = _HeldServer()
    with held.server as server:
        proc = _start(pytester.path, suite_dir, server.base_url, report, "-p", "no:xdist",
                      cache=cache)
        text, _ = _interrupt(proc, held, signal.SIGINT, pytester.path / "tmp")
        asked = len(server.requests)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, text
    cached = [line for line in (cache / "answers.jsonl").read_text().splitlines()
              if '"text"' in line]
    assert asked == ANSWERED_AT_ONCE + 2, text  # nothing asked after the interrupt
    assert len(cached) == asked, text  # every answer the server gave is in the cache
    data = load_valid_report(report)
    assert data["partial"] is True and "interrupted" in data["coverage"]["reason"]
