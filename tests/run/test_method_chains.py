"""run.method_chains: a method's chain is one sample, and a harness fault is its error."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.run import method_runner
from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.run.session import BenchmarkSession
from tests.plugin._suite import write_suite


@pytest.fixture
def bench(tmp_path: Path) -> BenchmarkSession:
    root = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "oracle", "suite": str(root), "no_cache": True,
                            "pools": "none", "method": "retry"}, rootdir=tmp_path)
    assert run is not None
    return BenchmarkSession(run)


def test_a_chain_answers_with_the_calls_it_made(bench: BenchmarkSession) -> None:
    cell = bench.config.cells[0]
    answer = bench.chains.submit(bench.suite["L1-001"], cell, 0).result()
    bench.close()
    assert answer.error is None and answer.calls >= 1 and answer.steps


def test_a_chain_that_breaks_is_an_infrastructure_error(
        bench: BenchmarkSession, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(method_runner, "run_chain", broken)
    answer = bench.chains.submit(bench.suite["L1-001"], bench.config.cells[0], 0).result()
    bench.close(cancel=True)
    assert answer.error == "method retry failed: RuntimeError: boom"
