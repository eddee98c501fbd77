"""``--gi-batch`` runs beside the resumed one of test_batch_run.py, against the fake Batch API
(never a real provider): refused with ``-n`` and with a damaged ledger (nothing submitted),
``--override-ini=gi_batch_fallback=true`` (faulted lines become ordinary requests, once
each), a batch the endpoint failed or cancelled as a whole (its requests go in a later
batch, never lost), and the live progress line of a batch run showing its batch's state."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.testing.batch_server import FakeBatchAPI
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.plugin._batch import BATCH, ITEMS, run_args
from tests.report.schema_check import load_valid_report

from ._suite import write_prices

pytest_plugins = ["pytester"]



@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    with FakeOpenAIServer(latency_s=0.0) as srv:
        yield srv


def args(suite_dir: Path, server: FakeOpenAIServer, cache: Path, *extra: str) -> list[str]:
    return run_args(suite_dir, server, cache, *BATCH, *extra)


def outcomes(report: Path) -> list[str]:
    data = load_valid_report(report)
    return [r["outcome"] for cell in data["cells"] for r in cell["per_instruction"]]


def test_with_n_the_controller_batches_and_the_workers_only_replay(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer) -> None:
    api = FakeBatchAPI(server)
    result = pytester.runpytest(*args(suite_dir, server, pytester.path / "c"), "-n", "2")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()  # echo: all fail
    result.assert_outcomes(failed=ITEMS)
    assert len(api.batches) == 1 and server.request_count == 0  # one batch, from one process
    assert len(api.submitted) == ITEMS and set(api.submitted.values()) == {1}


def test_a_damaged_ledger_refuses_the_run_before_anything_is_submitted(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer) -> None:
    api = FakeBatchAPI(server)
    cache = pytester.path / "cache"
    cache.mkdir()
    ledger = cache / "batches.json"
    ledger.write_text('{"v": 1, "batches": [{"endpoint": "torn', encoding="utf-8")
    result = pytester.runpytest(*args(suite_dir, server, cache))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    (line,) = [x for x in result.stderr.lines if "batch ledger" in x]
    assert str(ledger) in line and "cannot be read" in line
    assert f"move it aside (mv {ledger} {ledger}.damaged)" in line
    assert not api.batches and not api.files and server.request_count == 0
    assert ledger.read_text(encoding="utf-8").endswith("torn")  # left for the user
    ledger.rename(cache / "batches.json.damaged")  # as the line says: then it runs
    assert pytester.runpytest(*args(suite_dir, server, cache)).ret == pytest.ExitCode.TESTS_FAILED
    assert len(api.batches) == 1


def test_fallback_sends_the_faulted_lines_as_ordinary_requests_once(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer) -> None:
    faults = iter(["failed", "expired"])  # the first two lines the endpoint runs

    def line_fault(custom_id: str, submission: int) -> str | None:
        assert submission == 1, "a line was submitted to a batch twice"
        return next(faults, None)

    api = FakeBatchAPI(server, line_fault=line_fault)
    report = pytester.path / "r.json"
    prices = write_prices(pytester.path / "prices.json", batch_discount=0.5)
    result = pytester.runpytest(*args(suite_dir, server, pytester.path / "c",
                                      "--override-ini=gi_batch_fallback=true",
                                      f"--gi-report={report}", f"--gi-prices={prices}"))
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()  # echo: all fail
    (batch,) = api.batches.values()
    assert (batch.completed, batch.failed, len(batch.lines)) == (ITEMS - 2, 2, ITEMS)
    assert len(api.submitted) == ITEMS and set(api.submitted.values()) == {1}
    assert server.request_count == 2  # the failed and the expired line, once each
    ordinary = {r.body["messages"][-1]["content"] for r in server.requests}
    faulted = [x for x in batch.lines if x["body"]["messages"][-1]["content"] in ordinary]
    assert len(faulted) == 2
    assert "error" not in outcomes(report)
    # what it cost: 2 batch lines at half the list price, the 2 fallbacks at list price
    spent = load_valid_report(report)["run"]["spend"]["fake-model"]
    listed = spent["input_tokens"] + 2 * spent["output_tokens"]
    assert spent["batched"] == 2 and spent["requests"] == ITEMS
    assert listed / 2 < spent["cost"] < listed
    assert "batch price for the 2 batch line(s)" in result.stdout.str()


def test_a_request_answered_on_two_output_lines_is_said_once_and_keeps_its_first(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer) -> None:
    # issue 32 §4: duplicate custom_ids resolved first-wins without a word
    doubled: list[str] = []

    def line_fault(custom_id: str, submission: int) -> str | None:
        if not doubled:
            doubled.append(custom_id)
            return "duplicate"
        return None

    api = FakeBatchAPI(server, line_fault=line_fault)
    report = pytester.path / "r.json"
    result = pytester.runpytest(*args(suite_dir, server, pytester.path / "c",
                                      f"--gi-report={report}"))
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()  # echo: all fail
    (batch,) = api.batches.values()
    assert batch.completed == ITEMS and len(api.submitted) == ITEMS
    lines = [x for x in result.stdout.lines if "damaged line" in x]
    assert lines == [f"WARNING: fake-model: batch output: 1 damaged line(s) skipped, 1 of them "
                     f"naming a request another line already answered (first: custom_id "
                     f"{doubled[0]}; the first line was kept)"]
    assert "error" not in outcomes(report)  # every request answered once


@pytest.mark.parametrize("whole", ["failed", "cancelled"])
def test_a_batch_failed_or_cancelled_as_a_whole_goes_again_in_a_later_batch(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer,
        whole: str) -> None:
    api = FakeBatchAPI(server, batch_fault=lambda n: whole if n == 1 else None)
    report = pytester.path / "r.json"
    result = pytester.runpytest(*args(suite_dir, server, pytester.path / "c",
                                      f"--gi-report={report}"))
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    first, second = api.batches.values()
    assert first.status == whole and second.status == "completed"
    assert sorted(x["custom_id"] for x in first.lines) == \
        sorted(x["custom_id"] for x in second.lines)
    assert len(api.submitted) == ITEMS and set(api.submitted.values()) == {2}
    assert server.request_count == 0  # no ordinary request: batches only
    assert "error" not in outcomes(report)  # every request answered: none lost


def _read_until(stream: IO[bytes], needle: bytes, seen: threading.Event,
                out: list[bytes]) -> None:
    """Read ``stream`` to its end, setting ``seen`` once ``needle`` has appeared."""
    buffer = b""
    while chunk := stream.read1(4096):  # type: ignore[attr-defined]
        buffer += chunk
        if needle in buffer:
            seen.set()
    out.append(buffer)
    seen.set()  # the end: the waiting test looks at what came


def test_the_live_line_of_a_batch_run_shows_its_batch_state(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer) -> None:
    api = FakeBatchAPI(server, hold=True)
    needle = f"batch 1/1 in_progress 0/{ITEMS}".encode()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--override-ini=gi_progress=on",
         *args(suite_dir, server, pytester.path / "c")],
        cwd=pytester.path, env={**os.environ, "COLUMNS": "250"}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT)
    seen, out = threading.Event(), []
    reader = threading.Thread(target=_read_until, args=(proc.stdout, needle, seen, out),
                              daemon=True)
    reader.start()
    try:
        assert api.wait_for_batches(1, 120), "the run created no batch"
        assert seen.wait(120) and proc.poll() is None, "no batch state on the live line"
        api.finish("batch_1")  # the line said so while the batch was held
        assert proc.wait(120) == pytest.ExitCode.TESTS_FAILED
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    reader.join(30)
    text = b"".join(out)
    assert needle in text and b"GraphInstruct: answers 0/4" in text
