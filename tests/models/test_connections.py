"""OpenAIBackend owns its connections: an abandoned call's socket is closed, and no thread is left.

Connections are counted from the kernel's table (``/proc/net/tcp``: client sockets in state
ESTABLISHED whose remote port is the fake server's), threads by name.  A dripping server
(``Fault.drip`` of an answer that takes hours) would keep every abandoned connection open until
the server stops; the backend must close each at its deadline or at ``cancel()``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.backends.bounded_calls import LOOP_THREAD_NAME
from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
from tests.models.fake_openai import FakeOpenAIServer, Fault
from tests.models.helpers import req

CONCURRENCY = 8
SLACK = 2  # the bound: never more than concurrency + 2 connections
DRIP_S = 0.2  # one byte per 0.2 s
ENDLESS = "x " * 100_000  # an answer that, dripped a byte per 0.05 s or more, takes hours
WAIT_S = 60.0  # a safety net for a broken call or a socket never closed, never a measurement


def established_sockets(port: int) -> set[tuple[str, str]]:
    """Client sockets in state ESTABLISHED connected to ``127.0.0.1:port``, as (local, remote)
    address pairs from the kernel's table (a read of a long, changing table may list an entry
    twice: the set counts it once)."""
    # the remote end as the kernel lists it: 127.0.0.1 (little-endian hex), and the same
    # address mapped into IPv6 in tcp6; any other address with this port is someone else's
    remotes = {f"0100007F:{port:04X}", f"0000000000000000FFFF00000100007F:{port:04X}"}
    seen: set[tuple[str, str]] = set()
    for table in (Path("/proc/net/tcp"), Path("/proc/net/tcp6")):
        if not table.exists():
            continue
        for line in table.read_text().splitlines()[1:]:
            fields = line.split()
            if fields[2] in remotes and fields[3] == "01":  # 01 = TCP_ESTABLISHED
                seen.add((fields[1], fields[2]))
    return seen


def established_to(port: int) -> int:
    """How many :func:`established_sockets` there are."""
    return len(established_sockets(port))


def wait_until(condition: Callable[[], bool], timeout_s: float = WAIT_S) -> bool:
    """Poll ``condition`` every 50 ms until it holds or ``timeout_s`` passes."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


class Sampler:
    """Samples the established connections to a port every 50 ms while running, and keeps
    what it saw at the peak (for a failure message: when, which local ports, which threads)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.peak = 0
        self.samples = 0
        self.at_peak = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="conn-sampler", daemon=True)
        self._start = time.monotonic()

    def _run(self) -> None:
        while not self._stop.is_set():
            sockets = established_sockets(self.port)
            if len(sockets) > self.peak:
                self.peak = len(sockets)
                local_ports = sorted(int(local.rsplit(":", 1)[1], 16) for local, _ in sockets)
                threads = threading.active_count()
                self.at_peak = (f"{self.peak} at {time.monotonic() - self._start:.2f} s "
                                f"(local ports {local_ports}; {threads} threads alive)")
            self.samples += 1
            self._stop.wait(0.05)

    def __enter__(self) -> Sampler:
        self._start = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def new_call_threads(before: set[threading.Thread]) -> int:
    """Live threads that were not among ``before``, but the process's one call loop (and its
    resolver) and the fake server's handlers (a dripping handler ends at its next byte to a
    closed socket)."""
    return sum(not t.name.startswith(LOOP_THREAD_NAME) and "process_request" not in t.name
               and t not in before for t in threading.enumerate())


@pytest.fixture
def dripping() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(fault_for=lambda body: Fault.drip(DRIP_S),
                          responder=lambda body: ENDLESS) as server:
        yield server


pytestmark = pytest.mark.skipif(not Path("/proc/net/tcp").exists(),
                                reason="counts connections from Linux's /proc/net/tcp")


def test_abandoned_calls_close_their_connections_and_end_their_threads(
        dripping: FakeOpenAIServer, api_key: str) -> None:
    # Faster bytes here: each read must succeed within the 1 s timeout (a gap would have to be
    # 20x the interval, not 5x, under load), so that only the whole-call deadline ends a call;
    # the whole answer (ENDLESS) still takes hours.
    dripping.fault_for = lambda body: Fault.drip(0.05)
    before = set(threading.enumerate())
    backend = OpenAIBackend(dripping.base_url, "fake-model", api_key_env=api_key,
                            timeout_s=1.0, max_retries=0)
    with Sampler(dripping.port) as sampler, ThreadPoolExecutor(CONCURRENCY) as pool:
        # Two waves of eight: the second wave's calls must not find the first's still open.
        answers = list(pool.map(lambda i: backend.complete(req(f"drip {i}")),
                                range(2 * CONCURRENCY)))
    assert all(not a.ok and "deadline of 1 s" in (a.error or "") for a in answers), answers
    assert dripping.request_count == 2 * CONCURRENCY
    assert sampler.samples > 5 and sampler.peak <= CONCURRENCY + SLACK, sampler.at_peak
    assert wait_until(lambda: established_to(dripping.port) == 0), (
        f"{established_to(dripping.port)} connections still established")
    assert wait_until(lambda: new_call_threads(before) == 0), (
        f"{new_call_threads(before)} new threads still alive")


def test_cancel_with_a_reason_ends_every_call_at_once_and_closes_its_socket(
        dripping: FakeOpenAIServer, api_key: str) -> None:
    # The answers would drip for hours and the calls' deadline is an hour away, and the server
    # keeps dripping until it stops (after the answers are in): only the cancel can have ended
    # the calls, and it did while the server still held them.
    before = set(threading.enumerate())
    backend = OpenAIBackend(dripping.base_url, "fake-model", api_key_env=api_key,
                            timeout_s=3600.0, max_retries=3)
    reason = "circuit open: 8 consecutive endpoint faults (HTTP 500)"
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(backend.complete, req(f"c{i}")) for i in range(4)]
        try:
            # Synchronise on the server: all four calls are in flight (and dripping).
            assert wait_until(lambda: dripping.request_count == 4 and
                              established_to(dripping.port) == 4)
            backend.cancel(reason)
            answers: list[Answer] = [f.result(timeout=WAIT_S) for f in futures]
        except BaseException:
            dripping.stop()  # a broken cancel must not keep the pool waiting for hours
            raise
    assert [a.error for a in answers] == [reason] * 4
    assert all(a.calls == 1 for a in answers)  # no retry after the cancel
    assert wait_until(lambda: established_to(dripping.port) == 0)
    assert wait_until(lambda: new_call_threads(before) == 0)
    assert dripping.request_count == 4
    # Irreversible: a later call is not even sent, and says the same reason.
    later = backend.complete(req("after"))
    assert later.error == reason and later.calls == 0 and dripping.request_count == 4


def test_calls_one_after_another_reuse_one_connection(fake_openai: FakeOpenAIServer,
                                                      api_key: str) -> None:
    backend = OpenAIBackend(fake_openai.base_url, "fake-model", api_key_env=api_key,
                            timeout_s=60.0, max_retries=0)
    assert all(backend.complete(req(f"one {i}")).ok for i in range(5))
    assert fake_openai.request_count == 5
    assert established_to(fake_openai.port) == 1  # kept alive, not one per call


def test_cancel_without_a_reason_still_says_cancelled(dripping: FakeOpenAIServer,
                                                      api_key: str) -> None:
    backend = OpenAIBackend(dripping.base_url, "fake-model", api_key_env=api_key,
                            timeout_s=60.0, max_retries=0)
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(backend.complete, req())
        assert wait_until(lambda: dripping.request_count == 1)
        backend.cancel()
        answer = future.result(timeout=WAIT_S)
    assert answer.error is not None and answer.error.startswith("cancelled: ")
    assert wait_until(lambda: established_to(dripping.port) == 0)
