"""--gi-dry-run and --gi-max-cost end to end, against the fake server counting tokens with the
package's own counter: the estimate's input tokens are what the real run sends, a capped run
stops within its cap and its rerun asks only for what is missing."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

from ._suite import tree_server, write_prices

pytestmark = pytest.mark.slow  # whole pytester runs: the full tier (.ci/run)

pytest_plugins = ["pytester"]

@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with tree_server() as srv:
        yield srv


@pytest.fixture
def prices(pytester: pytest.Pytester) -> Path:
    return write_prices(pytester.path / "prices.json")


def args(suite_dir: Path, server: FakeOpenAIServer, cache: Path, *extra: str) -> list[str]:
    return [f"--gi-suite={suite_dir}", "--gi-model=fake-model", f"--gi-base-url={server.base_url}",
            "--gi-api-key-env=GI_TEST_KEY", f"--gi-cache={cache}", "--override-ini=gi_backoff=0.01",
            "--override-ini=gi_max_retries=0", "-p", "no:cacheprovider", *extra]


def totals(output: str) -> tuple[int, int]:
    """The dry run's total requests and input tokens."""
    found = re.search(r"^total\s+(\d+)\s+(\d+)\s", output, re.MULTILINE)
    assert found is not None, output
    return int(found[1]), int(found[2])


def test_the_dry_run_counts_what_the_run_then_sends(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer, prices: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    run = args(suite_dir, server, pytester.path / "c", "--gi-samples=2",
               "--gi-strategy=zero-shot,few-shot", f"--gi-prices={prices}")
    dry = pytester.runpytest(*run, "--gi-dry-run")
    assert dry.ret == pytest.ExitCode.OK
    assert server.request_count == 0 and not server.probes  # nothing was sent
    out = dry.stdout.str()
    requests, input_tokens = totals(out)
    assert "nothing was sent" in out and "fake-model-few-shot" in out
    assert not (pytester.path / "c").exists()  # no cache written either
    real = pytester.runpytest(*run)
    assert real.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    assert server.request_count == requests
    assert server.tokens_counted[0] == input_tokens


def test_a_capped_run_stops_within_the_cap_and_its_rerun_asks_only_what_is_missing(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer, prices: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    cache, report = pytester.path / "c", pytester.path / "r.json"
    run = args(suite_dir, server, cache, "--gi-samples=2", f"--gi-prices={prices}",
               "--gi-max-tokens=100", "--gi-concurrency=1", f"--gi-report={report}")
    requests, input_tokens = totals(pytester.runpytest(*run, "--gi-dry-run").stdout.str())
    cap = input_tokens / 2
    capped = pytester.runpytest(*run, f"--gi-max-cost={cap}")
    sent_in, sent_out = server.tokens_counted
    asked = server.request_count
    assert 0 < asked < requests
    assert sent_in + 2 * sent_out <= cap  # the server's bill agrees: spent ≤ cap
    assert len(re.findall("cost cap reached .*the run is partial", capped.stdout.str())) == 1
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    assert data["coverage"]["complete"] is False and data["coverage"]["missing_count"] > 0
    rerun = pytester.runpytest(*run, f"--gi-max-cost={input_tokens * 100}")
    assert server.request_count - asked == requests - asked  # only the missing ones
    assert "cost cap reached" not in rerun.stdout.str()
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["coverage"]["complete"] is True


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["n0", "n2"])
def test_timed_out_calls_keep_their_worst_case_so_the_servers_bill_stays_within_the_cap(
        pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer, prices: Path,
        monkeypatch: pytest.MonkeyPatch, workers: list[str]) -> None:
    # Every call is held unanswered past its deadline and retried; a provider finishes (and
    # bills) an abandoned call, which the held server does once released.  Before the fix an
    # abandoned call was settled as free: each request reserved one worst case and spent three.
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    run = args(suite_dir, server, pytester.path / "c", "--gi-samples=2",
               f"--gi-prices={prices}", "--gi-max-tokens=100", "--gi-concurrency=1")
    _, input_tokens = totals(pytester.runpytest(*run, "--gi-dry-run").stdout.str())
    cap = input_tokens / 2
    server.hold()
    ran = pytester.runpytest_subprocess(*run, "--override-ini=gi_timeout=0.5",
                                        "--override-ini=gi_max_retries=2",
                                        f"--gi-max-cost={cap}", *workers)
    sent = server.request_count
    server.release()
    assert sent > 0 and server.wait_for_answers(sent)  # the provider finished every call
    sent_in, sent_out = server.tokens_counted
    assert sent_in + 2 * sent_out <= cap, ran.stdout.str()  # the server's bill: spent ≤ cap
    out = ran.stdout.str()
    assert "cost cap reached" in out and "abandoned" in out, out
