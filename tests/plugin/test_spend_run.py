"""The report's ``run.spend`` end to end, against the fake server counting tokens with the
package's own counter: what the run really sent (each request once, however many cells asked
for it) equals what the server received and billed, while the cells' charges still count a
shared request in each cell; a rerun from the cache sends nothing and says so."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer, Fault
from tests.report.schema_check import load_valid_report

from ._suite import tree_server, write_prices

pytest_plugins = ["pytester"]

@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    # TREE4 passes L1-001 only: the other items' vgig chains ask for one refinement each
    with tree_server() as srv:
        yield srv


def _args(pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer,
          *extra: str) -> list[str]:
    """A run of two method cells at one refinement round, ``vgig`` and ``retry``, whose round
    0 is the same request (shared; a plain cell shares nothing with them: their round 0 is at
    the methods' base temperature), with a price table, a cache and a report."""
    prices = write_prices(pytester.path / "prices.json")
    return [f"--gi-suite={suite_dir}", "--gi-model=fake-model",
            f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY",
            f"--gi-cache={pytester.path / 'cache'}", f"--gi-prices={prices}",
            f"--gi-report={pytester.path / 'r.json'}", "--gi-method=vgig,retry",
            "--gi-vgig-rounds=1", "--override-ini=gi_chains=1", "--override-ini=gi_backoff=0.01",
            "-p", "no:cacheprovider", *extra]


def _report(pytester: pytest.Pytester) -> dict[str, Any]:
    data: dict[str, Any] = load_valid_report(pytester.path / "r.json")
    return data


def _charged(data: dict[str, Any]) -> int:
    """The API calls the cells charge, all cells added (a shared request once per cell)."""
    return sum(s["api_calls"] for c in data["cells"] for r in c["per_instruction"]
               for s in r["samples"])


def _expected(server: FakeOpenAIServer, *, retries: int = 0, cached: int = 0) -> dict[str, Any]:
    """The spend record the server's own counts make (at _suite.PRICES)."""
    sent_in, sent_out = server.tokens_counted
    return {"requests": server.request_count, "retries": retries, "input_tokens": sent_in,
            "output_tokens": sent_out, "cost": pytest.approx(sent_in + 2 * sent_out),
            "currency": "USD", "cached": cached}


def _first_run_spent(first: pytest.RunResult, pytester: pytest.Pytester,
                     server: FakeOpenAIServer) -> int:
    """Check a first run's report: its spend is the server's counts, and the cells, which share
    round 0, charge more than was sent (each cell charges it, the endpoint got it once).
    Returns the requests sent."""
    assert first.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    data = _report(pytester)
    sent = server.request_count
    assert data["run"]["spend"] == {"fake-model": _expected(server)}
    assert _charged(data) > sent > 0
    return sent


def test_spend_is_what_the_server_received_and_a_cached_rerun_sent_nothing(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    args = _args(pytester, suite_dir, server)
    first = pytester.runpytest(*args)
    sent = _first_run_spent(first, pytester, server)
    line = next(x for x in first.stdout.lines if x.startswith("sent to the endpoints:"))
    assert line.startswith(f"sent to the endpoints: {sent} request(s), ")
    assert "USD at list price; 0 answer(s) from the cache" in line

    server.reset()
    again = pytester.runpytest(*args)
    assert again.ret == first.ret
    assert server.request_count == 0
    data = _report(pytester)
    assert data["run"]["spend"] == {"fake-model": {
        "requests": 0, "retries": 0, "input_tokens": 0, "output_tokens": 0, "cost": 0.0,
        "currency": "USD", "cached": sent}}
    assert _charged(data) > sent  # the cells' charges are the same as the first run's
    assert (f"sent to the endpoints: 0 request(s), 0 input + 0 output tokens, 0 USD at list "
            f"price; {sent} answer(s) from the cache") in again.stdout.str()


def test_the_dry_run_counts_a_plain_and_an_iterative_cell_as_the_run_sends_them(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An iterative chain's first call is asked at the chain's temperature, so it is not the
    plain cell's sample: the estimate must not count the two as one request."""
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    args = [*_args(pytester, suite_dir, server), "--gi-method=none,vgig",
            "--gi-vgig-rounds=0"]  # round 0 alone: the estimate is exact
    dry = pytester.runpytest(*args, "--gi-dry-run").stdout.str()
    found = re.search(r"^total\s+(\d+)\s+(\d+)\s", dry, re.MULTILINE)
    assert found is not None, dry
    pytester.runpytest(*args)
    spend = _report(pytester)["run"]["spend"]["fake-model"]
    assert int(found[1]) == server.request_count == spend["requests"] == 8
    assert int(found[2]) == server.tokens_counted[0] == spend["input_tokens"]


def test_retries_are_requests_sent_and_only_answers_are_billed(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    server.script(Fault.server_error(), Fault.server_error())
    pytester.runpytest(*_args(pytester, suite_dir, server, "--override-ini=gi_max_retries=2",
                              "--gi-concurrency=1"))
    data = _report(pytester)
    assert data["run"]["spend"] == {"fake-model": _expected(server, retries=2)}


def test_an_oracle_run_records_no_spend(pytester: pytest.Pytester, suite_dir: Path) -> None:
    report = pytester.path / "r.json"
    result = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle",
                                f"--gi-report={report}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK
    assert "spend" not in json.loads(report.read_text(encoding="utf-8"))["run"]
    assert "sent to the endpoints" not in result.stdout.str()


@pytest.mark.slow  # two xdist sessions of subprocess workers
def test_spend_under_xdist_is_the_workers_sum(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    args = _args(pytester, suite_dir, server, "-n", "2")
    sent = _first_run_spent(pytester.runpytest_subprocess(*args), pytester, server)
    server.reset()
    pytester.runpytest_subprocess(*args)
    assert server.request_count == 0
    spend = _report(pytester)["run"]["spend"]["fake-model"]
    # both workers may read one answer from the cache (a peer's item waits for the owner's):
    # the controller counts the distinct cache keys, each answer once
    assert spend["requests"] == spend["input_tokens"] == spend["output_tokens"] == 0
    assert spend["cached"] == sent
