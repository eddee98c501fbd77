"""Two runs on one answer cache at once (issue 47 §7: two CI jobs on one runner, a second
terminal), end to end against the fake endpoints: an answer one run is asking is not asked
again by the other.

* Two ordinary runs: the second waits for the first's claims and reads its answers from the
  cache — the endpoint answers each request once, and the second run says how many it awaited.
* Two ``--gi-batch`` runs (one after the other, or started together): the second is refused up
  front in one line naming the first; one batch, each line submitted once, and the ledger keeps
  it (before, both submitted and ``batches.json`` kept one of the two).
* A batch run and an ordinary one: the one that comes second is refused, naming the other.

The first run is a subprocess the fake endpoint holds in its requests (or its batch), so the
second certainly comes while it asks: events, never a sleep."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.testing.batch_server import FakeBatchAPI
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.plugin._batch import BATCH, ITEMS
from tests.plugin._batch import run_args as args
from tests.report.schema_check import load_valid_report

pytestmark = pytest.mark.slow  # whole runs, some in subprocesses

pytest_plugins = ["pytester"]

WAIT_S = 300.0  # a safety net for a broken run, never the point of a test
REFUSAL_S = 120.0  # the same, for a run that should be refused at its start
RUN_ENDS = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    with FakeOpenAIServer(latency_s=0.0) as srv:
        yield srv


_started: list[subprocess.Popen[bytes]] = []


def start(cwd: Path, run_args: list[str]) -> subprocess.Popen[bytes]:
    """A run in a subprocess (killed at the test's end if it is still running)."""
    proc = subprocess.Popen([sys.executable, "-m", "pytest", *run_args], cwd=cwd,
                            env={**os.environ}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    _started.append(proc)
    return proc


@pytest.fixture(autouse=True)
def _no_run_left() -> Iterator[None]:
    yield
    while _started:
        proc = _started.pop()
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)


def ended(proc: subprocess.Popen[bytes]) -> tuple[int, str]:
    """Wait for ``proc`` (killed past the safety net); its exit status and output."""
    try:
        out, _ = proc.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate(timeout=30)
    return proc.returncode, out.decode(errors="replace")


def until(*conditions: Callable[[], bool], done: threading.Event) -> threading.Thread:
    """A thread that waits until one of ``conditions`` holds (asked in turn; the last is an
    event's wait of a few milliseconds, which paces the loop) and then sets ``done``."""
    def watch() -> None:
        while not done.is_set():
            if any(condition() for condition in conditions):
                done.set()
    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def outcomes(report: Path) -> list[str]:
    data = load_valid_report(report)
    return [r["outcome"] for cell in data["cells"] for r in cell["per_instruction"]]


@pytest.fixture
def claim_waits(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Set once every item of the tiny suite waits for another run's claim in this process
    (the second run, run in process); never set where runs take no claims."""
    waiting = threading.Event()
    try:
        from pytest_graphinstruct.models.caching.claims import ClaimBoard
    except ImportError:  # a tree without claims: the second run asks for itself
        return waiting
    count, lock, wait = [0], threading.Lock(), ClaimBoard.wait

    def counted(self: Any, key: str, halted: Any) -> Any:
        with lock:
            count[0] += 1
            if count[0] >= ITEMS:
                waiting.set()
        return wait(self, key, halted)

    monkeypatch.setattr(ClaimBoard, "wait", counted)
    return waiting


def test_a_second_run_awaits_the_answers_the_first_is_asking(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer,
        claim_waits: threading.Event) -> None:
    cache = pytester.path / "shared"
    first_report, second_report = pytester.path / "first.json", pytester.path / "second.json"
    server.hold()
    first = start(pytester.path, args(suite_dir, server, cache, f"--gi-report={first_report}"))
    try:
        assert server.wait_for_requests(ITEMS, WAIT_S), "the first run asked nothing"
        released = threading.Event()  # when the second run waits for every claim (or, in a
        until(lambda: claim_waits.wait(0.01),  # tree without claims, asked for itself)
              lambda: server.wait_for_requests(2 * ITEMS, 0.01), done=released)
        def release_when_waited() -> None:
            if released.wait(WAIT_S):
                server.release()

        threading.Thread(target=release_when_waited, daemon=True).start()
        second = pytester.runpytest(*args(suite_dir, server, cache,
                                          f"--gi-report={second_report}"))
    finally:
        server.release()
    status, out = ended(first)
    assert status in RUN_ENDS, out
    assert second.ret in RUN_ENDS, second.stdout.str()
    assert server.request_count == ITEMS  # each answer asked once, by the first run
    assert ("WARNING: fake-model: 4 answer(s) awaited from another run asking the same cache "
            "at the same time, not asked again") in second.stdout.lines
    (sent,) = [x for x in second.stdout.lines if x.startswith("sent to the endpoints:")]
    assert sent.startswith("sent to the endpoints: 0 request(s), ")
    assert outcomes(second_report) == outcomes(first_report)
    assert not list((cache / "claims").iterdir())  # every claim given back


def batch_run_held(cwd: Path, run_args: list[str], api: FakeBatchAPI
                   ) -> subprocess.Popen[bytes]:
    """A batch run in a subprocess, once its batch is created and polled (the endpoint holds
    it in progress)."""
    proc = start(cwd, run_args)
    assert api.wait_for_batches(1, WAIT_S), ended(proc)[1]
    assert api.wait_for_polls(api.batch_ids()[0], 1, WAIT_S), ended(proc)[1]
    return proc


def test_a_second_batch_run_is_refused_naming_the_first_and_the_ledger_keeps_its_batch(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer) -> None:
    api = FakeBatchAPI(server, hold=True)
    cache = pytester.path / "shared"
    report = pytester.path / "first.json"
    first = batch_run_held(pytester.path, args(suite_dir, server, cache,
                                               f"--gi-report={report}", *BATCH), api)
    second = start(pytester.path, args(suite_dir, server, cache, *BATCH))
    try:  # refused before its requests (a tree without the lease: it waits for the batch)
        out = second.communicate(timeout=REFUSAL_S)[0].decode(errors="replace")
    except subprocess.TimeoutExpired:
        second.kill()
        out = "the second batch run was not refused: " + ended(second)[1]
    assert second.returncode == pytest.ExitCode.USAGE_ERROR, out
    (line,) = [x for x in out.splitlines() if "answer cache" in x]
    assert (f"another run is using the answer cache {cache} (pid {first.pid}: ") in line
    assert line.endswith("a --gi-batch run asks for its answers alone, since a batch's "
                         "requests wait for hours and another run asking them meanwhile "
                         "would submit (and pay for) them again; nothing was sent. Wait for "
                         "it to end, or give this run another --gi-cache")
    assert api.batch_ids() == ["batch_1"] and set(api.submitted.values()) == {1}
    ledger = json.loads((cache / "batches.json").read_text(encoding="utf-8"))
    assert [b["batch_id"] for b in ledger["batches"]] == ["batch_1"]

    api.finish("batch_1")
    status, out = ended(first)
    assert status in RUN_ENDS, out
    after = pytester.runpytest(*args(suite_dir, server, cache, *BATCH))  # as the line says
    assert after.ret in RUN_ENDS, after.stdout.str()
    assert api.batch_ids() == ["batch_1"] and set(api.submitted.values()) == {1}
    assert server.request_count == 0


def test_two_batch_runs_started_together_submit_once(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer) -> None:
    api = FakeBatchAPI(server, hold=True)
    cache = pytester.path / "shared"
    runs = [start(pytester.path, args(suite_dir, server, cache, *BATCH)) for _ in range(2)]
    try:
        assert api.wait_for_batches(1, WAIT_S), "no run made a batch"
        went = threading.Event()  # one run was refused (or, in a tree without the lease,
        until(lambda: any(r.poll() is not None for r in runs),
              lambda: api.wait_for_batches(2, 0.01), done=went)  # both submitted)
        assert went.wait(WAIT_S)
    finally:
        for batch in api.batch_ids():
            api.finish(batch)
    (refused_status, refused_out), (status, out) = sorted(
        (ended(r) for r in runs), key=lambda r: r[0] != pytest.ExitCode.USAGE_ERROR)
    ledger = json.loads((cache / "batches.json").read_text(encoding="utf-8"))
    assert [(b["batch_id"], b["collected"]) for b in ledger["batches"]] == [("batch_1", True)]
    assert api.batch_ids() == ["batch_1"] and set(api.submitted.values()) == {1}
    assert len(api.submitted) == ITEMS
    assert refused_status == pytest.ExitCode.USAGE_ERROR, refused_out + out
    assert status in RUN_ENDS, out
    (winner,) = [r for r in runs if r.returncode in RUN_ENDS]
    assert f"(pid {winner.pid}: " in refused_out and "nothing was sent" in refused_out


def test_a_batch_run_and_an_ordinary_run_never_share_a_cache(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer) -> None:
    cache = pytester.path / "shared"
    server.hold()
    plain = start(pytester.path, args(suite_dir, server, cache))
    try:
        assert server.wait_for_requests(ITEMS, WAIT_S), "the ordinary run asked nothing"
        api = FakeBatchAPI(server)
        batch = pytester.runpytest(*args(suite_dir, server, cache, *BATCH))
    finally:
        server.release()
    assert batch.ret == pytest.ExitCode.USAGE_ERROR, batch.stdout.str()
    assert f"another run is using the answer cache {cache} (pid {plain.pid}: " \
        in batch.stderr.str()
    assert api.batch_ids() == []  # nothing submitted
    status, out = ended(plain)
    assert status in RUN_ENDS, out

    api.hold = True
    other = pytester.path / "other"
    held = batch_run_held(pytester.path, args(suite_dir, server, other, *BATCH), api)
    try:
        refused = pytester.runpytest(*args(suite_dir, server, other))
    finally:
        api.finish(api.batch_ids()[0])
    assert refused.ret == pytest.ExitCode.USAGE_ERROR, refused.stdout.str()
    assert f"a --gi-batch run is using the answer cache {other} (pid {held.pid}: " \
        in refused.stderr.str()
    assert server.request_count == ITEMS  # the first ordinary run's only
    status, out = ended(held)
    assert status in RUN_ENDS, out
