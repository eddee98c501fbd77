"""SerialGate: one request at a time across threads and processes; queued time is untimed."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pytest_graphinstruct.models.openai_backend import OpenAIBackend
from pytest_graphinstruct.models.serial import SerialGate, lock_path_for
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.models.helpers import req


def _overlaps(intervals: list[tuple[float, float]]) -> int:
    spans = sorted(intervals)
    return sum(1 for a, b in itertools.pairwise(spans) if b[0] < a[1])


def test_threads_and_another_process_never_hold_it_together(tmp_path: Path) -> None:
    lock = tmp_path / "gate.lock"
    log = tmp_path / "spans.jsonl"
    other = textwrap.dedent(f"""
        import json, time
        from pytest_graphinstruct.models.serial import SerialGate
        gate = SerialGate({str(lock)!r})
        for _ in range(5):
            with gate.hold():
                start = time.time(); time.sleep(0.02)
                with open({str(log)!r}, "a") as fh:
                    fh.write(json.dumps([start, time.time()]) + "\\n")
    """)
    proc = subprocess.Popen([sys.executable, "-c", other])
    gate = SerialGate(lock)
    guard = threading.Lock()

    def work() -> None:
        for _ in range(5):
            with gate.hold():
                start = time.time()
                time.sleep(0.02)
                with guard, open(log, "a") as fh:
                    fh.write(json.dumps([start, time.time()]) + "\n")

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert proc.wait() == 0
    spans = [tuple(json.loads(x)) for x in log.read_text().splitlines()]
    assert len(spans) == 20 and _overlaps(spans) == 0


def test_lock_path_is_shared_per_endpoint() -> None:
    a = lock_path_for("http://127.0.0.1:1/v1")
    assert a == lock_path_for("http://127.0.0.1:1/v1") != lock_path_for("http://127.0.0.1:2/v1")


@pytest.mark.slow
def test_queued_requests_do_not_time_out_behind_a_serial_server(api_key: str,
                                                                tmp_path: Path) -> None:
    # 12 answers of 0.2 s from a one-at-a-time server: the last waits ~2.4 s, more than twice
    # the 1 s timeout of one call.  Through the gate the wait is untimed; without it, it is
    # not.  One call has 5x headroom (0.2 s against 1 s), so a loaded machine cannot time it out.
    with FakeOpenAIServer(latency_s=0.2, serial=True) as server:
        def run(gate: SerialGate | None) -> list[str | None]:
            backend = OpenAIBackend(server.base_url, "m", api_key_env=api_key, timeout_s=1.0,
                                    max_retries=0, serial_gate=gate)
            with ThreadPoolExecutor(12) as pool:
                answers = list(pool.map(backend.complete,
                                        [req(f"q{k}") for k in range(12)]))
            return [a.error for a in answers]

        gated = run(SerialGate(tmp_path / "gate.lock"))
        assert gated == [None] * 12
        ungated = run(None)
        assert any(e is not None and "timed out" in e for e in ungated)
