"""run.model_schedulers: one scheduler per model, built on first use, the run's stop, and what a
batch still in flight at the stop adds to what was sent and the notes."""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.run.model_schedulers import ModelSchedulers
from pytest_graphinstruct.run.requests import RequestBuilder
from pytest_graphinstruct.run.session_inputs import SessionInputs
from pytest_graphinstruct.testing.batch_server import FakeBatchAPI
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.plugin._suite import write_suite


def _models(tmp_path: Path) -> tuple[ModelSchedulers, RequestBuilder]:
    root = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "oracle", "suite": str(root), "no_cache": True,
                            "pools": "none"}, rootdir=tmp_path)
    assert run is not None
    inputs = SessionInputs(run, worker=None, inputs=None, served=None)
    return ModelSchedulers(inputs, worker=None, local=None, stop_check=None), \
        RequestBuilder(inputs)


def test_nothing_is_built_until_asked_and_then_once(tmp_path: Path) -> None:
    models, _ = _models(tmp_path)
    assert models.notes() == [] and models.cache_sources() == {}
    assert models.tokens_spent() == 0
    models.close(cancel=True)  # nothing built: nothing to close
    built = models.schedulers
    assert list(built) == ["oracle"] and models.schedulers is built
    models.close()


def test_a_stop_resolves_every_later_request_to_its_reason(tmp_path: Path) -> None:
    models, requests = _models(tmp_path)
    scheduler = models.schedulers["oracle"]
    inst = requests.inputs.suite["L1-001"]
    cell = requests.inputs.config.cells[0]
    assert scheduler.submit(requests.request(inst, cell, 0)).result().error is None
    models.stop("interrupted (SIGINT)", grace_s=0.01)
    models.stop("again")  # the first reason stays
    answer = scheduler.submit(requests.request(inst, cell, 1)).result()
    models.close(cancel=True)
    assert models.stopped == "interrupted (SIGINT)"
    assert (answer.error, answer.calls) == ("interrupted (SIGINT)", 0)


def test_threads_asking_first_together_share_one_build(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """An iterative method's chains start on threads of their own and each asks for the
    schedulers first: one set is built (one backend, budget and batch runner per model)."""
    models, _ = _models(tmp_path)
    builds: list[int] = []
    inside = threading.Barrier(2, timeout=0.5)  # a second builder would meet the first here
    real = models._build

    def slow_build() -> dict[str, Any]:
        builds.append(1)
        with contextlib.suppress(threading.BrokenBarrierError):
            inside.wait()
        return real()

    monkeypatch.setattr(models, "_build", slow_build)
    with ThreadPoolExecutor(8) as pool:
        seen = list(pool.map(lambda _: models.schedulers, range(8)))
    assert builds == [1] and all(s is seen[0] for s in seen)
    assert models.sent() == {}  # the oracle has no endpoint: nothing to count
    models.close()


def test_a_spent_token_budget_says_so_in_one_note(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "oracle", "suite": str(root), "no_cache": True,
                            "pools": "none", "max_tokens_total": "10"}, rootdir=tmp_path)
    assert run is not None
    inputs = SessionInputs(run, worker=None, inputs=None, served=None)
    models = ModelSchedulers(inputs, worker=None, local=None, stop_check=None)
    requests = RequestBuilder(inputs)
    scheduler = models.schedulers["oracle"]
    assert models.notes() == []  # nothing refused yet
    scheduler.budget.spend(12)
    inst, cell = inputs.suite["L1-001"], run.cells[0]
    refused = [scheduler.submit(requests.request(inst, cell, k)).result() for k in (0, 1)]
    models.close()
    assert all(a.calls == 0 and (a.error or "").startswith("token budget exhausted")
               for a in refused)
    assert models.notes() == [
        "token budget exhausted (--gi-max-tokens-total=10): 12 token(s) spent, 2 request(s) "
        "not issued; the run is partial: rerun with a larger budget (answers already cached "
        "are not asked again)"]


def test_a_batch_still_in_flight_at_a_stop_is_counted_and_named_not_a_bare_zero(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32 §4: an interrupted batch run said "0 requests … 0 USD" while its batch was
    live (and will be billed)."""
    monkeypatch.setenv("GI_SCHED_KEY", "sk-test")
    root = write_suite(tmp_path / "suite")
    with FakeOpenAIServer() as server:
        api = FakeBatchAPI(server, hold=True)
        run = build_run_config({"model": "fake-model", "suite": str(root), "pools": "none",
                                "base_url": server.base_url, "api_key_env": "GI_SCHED_KEY",
                                "cache": str(tmp_path / "cache"), "batch": True,
                                "batch_poll": "0.02", "batch_quiet": "0.05"},
                               rootdir=tmp_path)
        assert run is not None
        inputs = SessionInputs(run, worker=None, inputs=None, served=None)
        models = ModelSchedulers(inputs, worker=None, local=None, stop_check=None)
        requests = RequestBuilder(inputs)
        scheduler = models.schedulers["fake-model"]
        cell = run.cells[0]
        asked = [scheduler.submit(requests.request(inputs.suite[i], cell, 0))
                 for i in ("L1-001", "L1-002")]
        assert api.wait_for_polls("batch_1", 1, 60)
        models.stop("interrupted (SIGINT)", grace_s=0.0)
        assert all(not f.result().ok for f in asked)
        models.close(cancel=True)
    sent = models.sent()["fake-model"]
    assert (sent.requests, sent.batch_in_flight) == (0, 2)
    assert models.notes() == [
        "fake-model: 1 batch still in flight at the endpoint (batch_1: 2 request(s)), not "
        "counted in what was sent: a rerun with --gi-batch on this cache collects its answers"]
