"""The batch ledger across runs, end to end against the fake Batch API (issue 32 §4): a ledger
batch the endpoint no longer knows (HTTP 404) is said once, marked gone and its requests go in a
new batch (never an error for every item on every rerun); a plain rerun on a cache whose ledger
holds a live batch is refused before anything is sent (``--gi-batch`` resumes it); an
interrupted batch run's spend line says its batch is in flight and not counted (no bare zero).

Each scenario starts from a real batch run stopped while its batch is held at the fake endpoint
(SIGKILL, as a crash; SIGTERM, as an interrupt) — events, never a sleep."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.testing.batch_server import FakeBatchAPI
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.plugin._batch import BATCH, ITEMS
from tests.plugin._batch import run_args as args
from tests.report.schema_check import load_valid_report
from tests.signals import take_sigint

pytestmark = pytest.mark.slow  # each starts a batch run in a subprocess

pytest_plugins = ["pytester"]

WAIT_S = 300.0  # a safety net for a broken run, never the point of a test


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    with FakeOpenAIServer(latency_s=0.0) as srv:
        yield srv


def outcomes(report: Path) -> list[str]:
    data = load_valid_report(report)
    return [r["outcome"] for cell in data["cells"] for r in cell["per_instruction"]]


def stopped_batch_run(cwd: Path, run_args: list[str], api: FakeBatchAPI,
                      sig: int) -> tuple[int, str]:
    """Run a batch run in a subprocess, send it ``sig`` once its one batch is created and was
    polled (held in progress at the fake endpoint), and wait for it to end; its exit status
    and output."""
    proc = subprocess.Popen([sys.executable, "-m", "pytest", *run_args], cwd=cwd,
                            env={**os.environ}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, preexec_fn=take_sigint)
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.communicate()[0]), daemon=True)
    reader.start()
    try:
        assert api.wait_for_batches(1, WAIT_S), "the run created no batch"
        assert api.wait_for_polls(api.batch_ids()[0], 1, WAIT_S), "the run never polled"
        proc.send_signal(sig)
        proc.wait(WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    reader.join(30)
    return proc.returncode, b"".join(out).decode(errors="replace")


def live_ledger(cache: Path) -> list[dict[str, Any]]:
    data = json.loads((cache / "batches.json").read_text(encoding="utf-8"))
    return [b for b in data["batches"] if not b["collected"]]


def test_a_ledger_batch_the_endpoint_forgot_is_said_once_and_its_requests_go_in_a_new_batch(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer) -> None:
    # issue 32 §4: a 404 for a ledger batch errored every item on every rerun, with no hint
    api = FakeBatchAPI(server, hold=True)
    cache, report = pytester.path / "cache", pytester.path / "r.json"
    run_args = args(suite_dir, server, cache, f"--gi-report={report}", *BATCH)
    status, out = stopped_batch_run(pytester.path, run_args, api, signal.SIGKILL)
    assert status == -signal.SIGKILL, out
    (gone,) = api.batch_ids()
    api.forget(gone)  # deleted at the endpoint (or a ledger from another account): 404
    api.hold = False

    rerun = pytester.runpytest(*run_args)
    assert rerun.ret == pytest.ExitCode.TESTS_FAILED, rerun.stdout.str()  # echo: all fail
    lines = [x for x in rerun.stdout.lines if gone in x]
    assert lines == [f"WARNING: fake-model: batch {gone} of the batch ledger "
                     f"{cache / 'batches.json'} is unknown to the endpoint (HTTP 404: deleted, "
                     f"or made with another account or endpoint): marked gone in the ledger, "
                     f"its answers never to be read; of its {ITEMS} request(s), {ITEMS} were "
                     "asked again, in a new batch, within the run's limits like any other "
                     "request"]
    assert "error" not in outcomes(report)  # every item answered, none errored
    (new,) = api.batch_ids()
    assert new != gone and len(api.batches[new].lines) == ITEMS
    assert set(api.submitted.values()) == {2}  # once in the forgotten batch, once in the new
    assert live_ledger(cache) == []  # the forgotten batch is no longer live
    (entry,) = [b for b in json.loads((cache / "batches.json").read_text())["batches"]
                if b["batch_id"] == gone]
    assert entry["state"] == "gone"

    again = pytester.runpytest(*run_args)  # the next rerun: answered from the cache, no word
    assert again.ret == pytest.ExitCode.TESTS_FAILED, again.stdout.str()
    assert not [x for x in again.stdout.lines if gone in x or "unknown to the endpoint" in x]
    assert api.batch_ids() == [new]  # nothing submitted: no batch made
    assert set(api.submitted.values()) == {2}  # the forgotten batch's lines, and the new one's


def test_a_plain_rerun_on_a_live_ledger_batch_is_refused_and_gi_batch_resumes_it(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer) -> None:
    # issue 32 §4: a plain rerun paid again, without a word, for requests in a live batch
    api = FakeBatchAPI(server, hold=True)
    cache, report = pytester.path / "cache", pytester.path / "r.json"
    plain = args(suite_dir, server, cache, f"--gi-report={report}")
    status, out = stopped_batch_run(pytester.path, [*plain, *BATCH], api, signal.SIGKILL)
    assert status == -signal.SIGKILL, out
    (live,) = api.batch_ids()
    chats = server.request_count  # the run's preflight probe

    result = pytester.runpytest(*plain)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    ledger = cache / "batches.json"
    (line,) = [x for x in result.stderr.lines if "batch ledger" in x]
    assert f"the batch ledger {ledger} names 1 batch still live for fake-model " in line
    assert f"({live}: {ITEMS} request(s))" in line
    assert "Rerun with --gi-batch to resume it;" in line
    assert f"mv {ledger} {ledger}.set-aside" in line  # paying twice is asked for in so many words
    assert server.request_count == chats  # nothing sent: not one chat completion more

    api.finish(live)
    resumed = pytester.runpytest(*plain, *BATCH)  # as the line says
    assert resumed.ret == pytest.ExitCode.TESTS_FAILED, resumed.stdout.str()  # echo: all fail
    assert api.batch_ids() == [live] and set(api.submitted.values()) == {1}
    assert "error" not in outcomes(report)
    assert live_ledger(cache) == []
    after = pytester.runpytest(*plain)  # nothing live: a plain run goes, from the cache
    assert after.ret == pytest.ExitCode.TESTS_FAILED, after.stdout.str()


def test_an_interrupted_batch_run_says_its_batch_is_in_flight_not_a_bare_zero(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer) -> None:
    # issue 32 §4: "0 requests … 0 USD" while the batch was live (and will be billed)
    api = FakeBatchAPI(server, hold=True)
    cache, report = pytester.path / "cache", pytester.path / "r.json"
    run_args = args(suite_dir, server, cache, f"--gi-report={report}", *BATCH)
    status, out = stopped_batch_run(pytester.path, run_args, api, signal.SIGTERM)
    assert status == pytest.ExitCode.INTERRUPTED, out
    (live,) = api.batch_ids()
    (line,) = [x for x in out.splitlines() if x.startswith("sent to the endpoints:")]
    assert line.startswith("sent to the endpoints: 0 request(s), "), line
    assert (f"; {ITEMS} request(s) in batch(es) still in flight at the endpoint, not counted "
            "above (billed when they finish; a rerun with --gi-batch on this cache collects "
            "them)") in line
    assert (f"WARNING: fake-model: 1 batch still in flight at the endpoint ({live}: {ITEMS} "
            "request(s)), not counted in what was sent: a rerun with --gi-batch on this cache "
            "collects its answers") in out.splitlines()
    spent = load_valid_report(report)["run"]["spend"]["fake-model"]
    assert spent["requests"] == 0 and spent["in_flight"] == ITEMS
