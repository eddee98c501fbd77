"""run.peers: an item another xdist worker owns carries the calls that worker made for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.run.session import BenchmarkSession
from tests.plugin._suite import write_suite


def test_calls_an_owner_made_for_an_item_another_worker_runs_are_counted_after_a_stop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Under xdist the worker that prefetches an item (its owner) need not be the one that
    # runs it.  Stopped with the owner's calls in flight, the runner used to give up at once
    # with 0 calls while the server had received them: the report counted fewer calls than
    # were sent (test_interrupt_counts, one run in a few under load).
    import threading

    from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

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
        runner.fetcher.owned = set()  # it prefetched nothing: it runs item 1, not its own
        for session in (owner, runner):
            session.stop("terminated (SIGTERM)", grace_s=0.2)  # the grace ends: cancelled
        answers = runner.answers(*items[1])
        sent = server.request_count
        release.set()
        owner.close(cancel=True)
        runner.close(cancel=True)
    assert [a.error for a in answers] == ["terminated (SIGTERM)"] * 2
    assert sent == 1 and sum(a.calls for a in answers) == sent
