"""run.tally: the answer counts of the progress line are exact (requested, received, cached,
errors, tokens), for a session against a fake OpenAI-compatible server."""

from __future__ import annotations

import json
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.run.records.codec import ShapeError, decode, encode
from pytest_graphinstruct.run.session import BenchmarkSession
from pytest_graphinstruct.run.tally import AnswerTally, ProgressCounts
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer, Fault
from tests.plugin._suite import write_suite


def test_tally_counts_each_future_once_it_resolves() -> None:
    tally = AnswerTally()
    futures: list[Future[Answer]] = [Future() for _ in range(4)]
    for f in futures:
        tally.watch(f)
    assert tally.counts() == ProgressCounts(requested=4)
    futures[0].set_result(Answer(text="a", usage=Usage(3, 4)))
    futures[1].set_result(Answer(text="b", cached=True))
    futures[2].set_result(Answer(error="HTTP 500"))
    futures[3].cancel()  # a dropped request is never received
    assert tally.counts(tokens=7) == ProgressCounts(requested=4, received=3, cached=1,
                                                    errors=1, tokens=7)


def test_counts_add_up_and_survive_json() -> None:
    a = ProgressCounts(10, 8, 2, 1, 500)
    b = ProgressCounts(5, 5, 0, 0, 100)
    assert a + b == ProgressCounts(15, 13, 2, 1, 600)
    assert decode(ProgressCounts, json.loads(json.dumps(encode(a)))) == a
    with pytest.raises(ShapeError):
        decode(ProgressCounts, {"requested": 3, "received": "x"})


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    root = tmp_path / "suite"
    return write_suite(root)


def _session(tmp_path: Path, suite: Path, server: FakeOpenAIServer, **extra: Any,
             ) -> BenchmarkSession:
    raw = {"model": "fake-model", "suite": str(suite), "base_url": server.base_url,
           "api_key_env": "GI_TEST_KEY", "cache": str(tmp_path / "cache"), "pools": "none",
           "max_retries": "0", "backoff": "0.01", **extra}
    run = build_run_config(raw, rootdir=tmp_path)
    assert run is not None
    return BenchmarkSession(run)


def _run(bench: BenchmarkSession) -> tuple[ProgressCounts, list[Answer]]:
    cell = bench.config.cells[0]
    items = [(inst, cell) for inst in bench.suite]
    bench.prefetch(items)
    answers = [a for inst, c in items for a in bench.answers(inst, c)]
    counts = bench.progress()
    bench.close()
    return counts, answers


def test_session_counts_are_exact(tmp_path: Path, suite: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")

    def faults(body: dict[str, Any]) -> Fault | None:
        return Fault.server_error() if "3 nodes" in body["messages"][-1]["content"] else None

    with FakeOpenAIServer(fault_for=faults) as server:
        counts, answers = _run(_session(tmp_path, suite, server, samples="2"))
        n = len(answers)
        failed = sum(a.error is not None for a in answers)
        spent = sum((a.usage.input_tokens or 0) + (a.usage.output_tokens or 0)
                    for a in answers if a.usage is not None)
        assert n >= 4 and 0 < failed < n and spent > 0
        assert counts == ProgressCounts(requested=n, received=n, cached=0, errors=failed,
                                        tokens=spent)

        # the same run again: the answers come from the cache, which spends nothing
        counts, answers = _run(_session(tmp_path, suite, server, samples="2"))
        assert counts == ProgressCounts(requested=n, received=n, cached=n - failed,
                                        errors=failed,
                                        tokens=sum((a.usage.input_tokens or 0)
                                                   + (a.usage.output_tokens or 0)
                                                   for a in answers if a.usage is not None
                                                   and not a.cached))
        assert counts.tokens == 0  # the failed ones failed again, without usage
