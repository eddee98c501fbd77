"""A capped rerun of a killed batch run spends within its cap and says what became of the old
batch (issue 47 §2), end to end against the fake Batch API:

* the endpoint restarted (it forgot the batch: 404, and numbers its batches and files anew): the
  rerun asks again only what its ``--gi-max-cost`` lets it, says the batch is unknown to the
  endpoint and how many of its requests it asked again, and leaves no batch it believes in
  flight (the new batch got the old one's ids: before, the ledger mixed the two up);
* the killed run had uploaded its input file but made no batch of it: the rerun never makes
  one (before, it submitted every line of the file, past the cap, and counted none of them).

Each starts from a real batch run stopped by SIGKILL while the fake endpoint holds it: events,
never a sleep.  The endpoint's bill is its own count of tokens at the price table's batch
price."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
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

from ._suite import tree_server, write_prices

pytestmark = pytest.mark.slow  # each starts a batch run in a subprocess

pytest_plugins = ["pytester"]

WAIT_S = 300.0  # a safety net for a broken run, never the point of a test
MAX_TOKENS = 1000
CAP = 1500.0
"""The rerun's cap, in the test table's money (1 per input token, 2 per output token, half
that in a batch): one request's worst case (about 40 input tokens + 1000 output at the batch
price, 1020–1040) fits, two do not (the cap closes at the first refusal)."""


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    with tree_server() as srv:
        yield srv


def killed(cwd: Path, run_args: list[str], ready: Callable[[], bool]) -> str:
    """Run a batch run in a subprocess, SIGKILL it once ``ready()`` says so, and return its
    output."""
    proc = subprocess.Popen([sys.executable, "-m", "pytest", *run_args], cwd=cwd,
                            env={**os.environ}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, preexec_fn=take_sigint)
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.communicate()[0]), daemon=True)
    reader.start()
    try:
        assert ready(), "the run never got there"
        proc.send_signal(signal.SIGKILL)
        proc.wait(WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    reader.join(30)
    text = b"".join(out).decode(errors="replace")
    assert proc.returncode == -signal.SIGKILL, text
    return text


def billed(server: FakeOpenAIServer, since: tuple[int, int] = (0, 0)) -> float:
    """What the endpoint billed since ``since`` (its token counts then), at the batch price of
    the test table (half of 1 per input token and 2 per output token)."""
    tokens_in, tokens_out = server.tokens_counted
    return 0.5 * ((tokens_in - since[0]) + 2 * (tokens_out - since[1]))


def warnings_of(result: pytest.RunResult) -> list[str]:
    return [x for x in result.stdout.lines if x.startswith("WARNING:")]


def test_a_capped_rerun_after_the_endpoint_forgot_the_batch_spends_within_its_cap(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer) -> None:
    api = FakeBatchAPI(server, hold=True)
    cache, report = pytester.path / "cache", pytester.path / "r.json"
    prices = write_prices(pytester.path / "prices.json", batch_discount=0.5)
    run_args = args(suite_dir, server, cache, f"--gi-report={report}", *BATCH,
                    f"--gi-prices={prices}", f"--gi-max-tokens={MAX_TOKENS}")
    killed(pytester.path, run_args,
           lambda: api.wait_for_batches(1, WAIT_S) and api.wait_for_polls("batch_1", 1, WAIT_S))
    api.restart()  # the endpoint's process restarted: batch_1 answers 404, ids start again
    api.hold = False
    lines, since = sum(api.submitted.values()), server.tokens_counted

    rerun = pytester.runpytest(*run_args, f"--gi-max-cost={CAP:g}")
    out = rerun.stdout.str()
    assert rerun.ret == pytest.ExitCode.TESTS_FAILED, out  # partial: no gate passes
    assert sum(api.submitted.values()) - lines == 1  # one request fitted the cap
    assert 0 < billed(server, since) <= CAP  # the endpoint's own bill
    ledger = cache / "batches.json"
    assert warnings_of(rerun)[:2] == [
        f"WARNING: fake-model: batch batch_1 of the batch ledger {ledger} is unknown to the "
        "endpoint (HTTP 404: deleted, or made with another account or endpoint): marked gone in "
        f"the ledger, its answers never to be read; of its {ITEMS} request(s), 1 were asked "
        "again, in a new batch, within the run's limits like any other request; the other "
        f"{ITEMS - 1} were not asked again by this run (not needed, or not issued within its "
        "limits: a later run asks them as it needs them)",
        f"WARNING: cost cap reached (--gi-max-cost={CAP:g} USD): "
        f"{billed(server, since):.4f} spent, {ITEMS - 1} request(s) not issued; the run is "
        "partial and what was answered is cached: rerun with a higher cap to ask only for the "
        "rest"]
    assert "still in flight" not in out  # the new batch (batch_1 again) was read
    (sent,) = [x for x in rerun.stdout.lines if x.startswith("sent to the endpoints:")]
    assert sent.startswith("sent to the endpoints: 1 request(s), ")
    spend = load_valid_report(report)["run"]["spend"]["fake-model"]
    assert spend["requests"] == 1 and "in_flight" not in spend
    assert spend["cost"] == pytest.approx(billed(server, since))
    data = json.loads(ledger.read_text(encoding="utf-8"))
    assert [(b["batch_id"], b["state"], b["collected"]) for b in data["batches"]] == [
        ("batch_1", "gone", True), ("batch_1", "completed", True)]

    again = pytester.runpytest(*run_args)  # no cap: asks the rest, never the gone batch
    assert again.ret == pytest.ExitCode.TESTS_FAILED, again.stdout.str()
    assert sum(api.submitted.values()) - lines == ITEMS
    assert not [x for x in warnings_of(again) if "batch" in x]  # nothing more to say
    assert not any(b["collected"] is False
                   for b in json.loads(ledger.read_text(encoding="utf-8"))["batches"])


def test_a_capped_rerun_never_makes_a_batch_of_a_killed_runs_input_file(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer) -> None:
    api = FakeBatchAPI(server)
    api.hold_creates = True  # the run uploads its file, then dies before the batch is made
    cache, report = pytester.path / "cache", pytester.path / "r.json"
    prices = write_prices(pytester.path / "prices.json", batch_discount=0.5)
    run_args = args(suite_dir, server, cache, f"--gi-report={report}", *BATCH,
                    f"--gi-prices={prices}", f"--gi-max-tokens={MAX_TOKENS}")
    killed(pytester.path, run_args, lambda: api.wait_for_held_creates(1, WAIT_S))
    api.drop_creates()
    (orphan,) = json.loads((cache / "batches.json").read_text(encoding="utf-8"))["batches"]
    assert orphan["batch_id"] == "" and len(orphan["custom_ids"]) == ITEMS
    since = server.tokens_counted

    rerun = pytester.runpytest(*run_args, f"--gi-max-cost={CAP:g}")
    assert rerun.ret == pytest.ExitCode.TESTS_FAILED, rerun.stdout.str()
    assert [len(b.lines) for b in api.batches.values()] == [1]  # what the cap let it ask
    assert 0 < billed(server, since) <= CAP
    ledger = cache / "batches.json"
    assert warnings_of(rerun)[0] == (
        f"WARNING: fake-model: input file {orphan['input_file_id']} of the batch ledger "
        f"{ledger}, left by a run killed before it made its batch, has no batch at the "
        "endpoint (none was found by its input file): marked not created in the ledger, never "
        f"submitted; of its {ITEMS} request(s), 1 were asked again, in a new batch, within the "
        f"run's limits like any other request; the other {ITEMS - 1} were not asked again by "
        "this run (not needed, or not issued within its limits: a later run asks them as it "
        "needs them)")
    (sent,) = [x for x in rerun.stdout.lines if x.startswith("sent to the endpoints:")]
    assert sent.startswith("sent to the endpoints: 1 request(s), ")
    assert load_valid_report(report)["run"]["spend"]["fake-model"]["requests"] == 1
    states = [b["state"] for b in json.loads(ledger.read_text(encoding="utf-8"))["batches"]]
    assert states == ["not created", "completed"]
