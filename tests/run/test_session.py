"""run.session: batched scoring that loses nothing when scoring itself breaks."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.run import evaluate
from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.run.session import BenchmarkSession
from tests.plugin._suite import CYCLE4, TREE4, write_suite


@pytest.fixture
def bench(tmp_path: Path) -> BenchmarkSession:
    root = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "oracle", "suite": str(root), "no_cache": True,
                            "pools": "none"}, rootdir=tmp_path)
    assert run is not None
    return BenchmarkSession(run)


def test_batched_results_equal_one_by_one(bench: BenchmarkSession) -> None:
    cell = bench.config.cells[0]
    inst = bench.suite["L1-001"]
    for text in (TREE4, CYCLE4):
        bench.record(bench.check(inst, cell, [Answer(text=text)]))
    batched = bench.flush()
    alone = [bench.evaluate(inst, cell, [Answer(text=t)]) for t in (TREE4, CYCLE4)]
    assert batched == alone
    assert [r.outcome for r in batched] == ["passed", "failed"]


def test_an_item_that_breaks_scoring_is_an_error_and_the_others_survive(
        bench: BenchmarkSession, monkeypatch: pytest.MonkeyPatch) -> None:
    cell = bench.config.cells[0]
    good, bad = bench.suite["L1-001"], bench.suite["L1-002"]
    real = evaluate.score

    def fragile(items, pools=None):  # type: ignore[no-untyped-def]
        if any(c.instruction.id == bad.id for c in items):
            raise RuntimeError("boom")
        return real(items, pools)

    monkeypatch.setattr("pytest_graphinstruct.run.session.score", fragile)
    bench.record(bench.check(good, cell, [Answer(text=TREE4)]))
    bench.record(bench.check(bad, cell, [Answer(text=CYCLE4)]))
    first, second = bench.flush()
    assert first.instruction_id == good.id and first.outcome == "passed"
    assert first.level_score is not None
    assert second.instruction_id == bad.id and second.outcome == "error"
    assert second.error == "scoring failed: RuntimeError: boom"
