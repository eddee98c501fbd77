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


def test_calls_an_owner_made_for_an_item_another_worker_runs_are_counted_after_a_stop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Under xdist the worker that prefetches an item (its owner) need not be the one that
    # runs it.  Stopped with the owner's calls in flight, the runner used to give up at once
    # with 0 calls while the server had received them: the report counted fewer calls than
    # were sent (test_interrupt_counts, one run in a few under load).
    import threading

    from pytest_graphinstruct.models.testserver import FakeOpenAIServer

    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", "run-xyz")
    held = threading.Semaphore(0)
    release = threading.Event()

    def hold(body: object) -> str:
        held.release()
        release.wait(30)
        return "nodes: 0"

    root = write_suite(tmp_path / "suite")
    with FakeOpenAIServer(responder=hold) as server:
        run = build_run_config({"model": "fake-model", "base_url": server.base_url,
                                "api_key_env": "GI_TEST_KEY", "suite": str(root),
                                "cache": str(tmp_path / "cache"), "pools": "none",
                                "samples": "2", "concurrency": "1"}, rootdir=tmp_path)
        assert run is not None
        owner = BenchmarkSession(run, worker=(1, 2))
        runner = BenchmarkSession(run, worker=(0, 2))
        cell = run.cells[0]
        items = [(inst, cell) for inst in owner.suite.instructions[:2]]
        assert owner.prefetch(items) == 2  # item 1, both samples, one call in flight
        assert held.acquire(timeout=30)
        runner._owned = set()  # it prefetched nothing: it runs item 1 though it does not own it
        for session in (owner, runner):
            session.stop("terminated (SIGTERM)", grace_s=0.2)  # the grace ends: cancelled
        answers = runner.answers(*items[1])
        sent = server.request_count
        release.set()
        owner.close(cancel=True)
        runner.close(cancel=True)
    assert [a.error for a in answers] == ["terminated (SIGTERM)"] * 2
    assert sent == 1 and sum(a.calls for a in answers) == sent
