"""run.schedulers: one scheduler per model, built on first use, and the run's stop."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.run.requests import RequestBuilder
from pytest_graphinstruct.run.schedulers import ModelSchedulers
from pytest_graphinstruct.run.session_inputs import SessionInputs
from tests.plugin._suite import write_suite


def _models(tmp_path: Path) -> tuple[ModelSchedulers, RequestBuilder]:
    root = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "oracle", "suite": str(root), "no_cache": True,
                            "pools": "none"}, rootdir=tmp_path)
    assert run is not None
    inputs = SessionInputs(run, worker=None, inputs=None, served=None, share_dir=None)
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


def test_threads_asking_first_at_once_share_one_build(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Method chains' threads may be the first to ask: one set of schedulers, not one each
    (each would count, cap and close its own)."""
    models, _ = _models(tmp_path)
    build, calls = models._build, []

    def slow_build() -> dict[str, Any]:
        calls.append(1)
        time.sleep(0.05)  # every thread is in the property by now
        return build()

    monkeypatch.setattr(models, "_build", slow_build)
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(models.schedulers))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(seen) == 4 and all(x is seen[0] for x in seen)
    assert models.sent() == {}  # the oracle has no endpoint: nothing to count
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
