"""``RunState``: the run's state in one process (worker or controller, what the controller
sent), its progress and its usage errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.pytest_run.state import RunState
from pytest_graphinstruct.run.payload import (
    INPUT_KEY,
    WorkerInput,
)
from pytest_graphinstruct.run.tally import ProgressCounts

from .fakes import (
    FakeConfig,
    controller_config,
    run_config,
    worker_config,
)


def _state(tmp_path: Path, config: Any = None, **raw: Any) -> RunState:
    return RunState(config or FakeConfig(tmp_path), run_config(tmp_path, **raw))


def test_a_single_process_is_neither_worker_nor_controller(tmp_path: Path) -> None:
    state = _state(tmp_path)
    assert (state.worker, state.winput, state.controller) == (None, None, False)
    assert state.progress_counts() == ProgressCounts()  # no session opened yet


def test_a_worker_knows_its_index_and_what_its_controller_sent(tmp_path: Path) -> None:
    sent = WorkerInput(progress=True, stop_folder="/tmp/x")
    state = _state(tmp_path, worker_config(tmp_path, "gw3", 4, **{INPUT_KEY: sent.to_json()}))
    assert state.worker == (3, 4) and state.winput == sent and not state.controller
    plain = _state(tmp_path, worker_config(tmp_path, "odd", 2))
    assert plain.worker == (0, 2) and plain.winput == WorkerInput()


def test_the_controller_is_asked_late(tmp_path: Path) -> None:
    config = FakeConfig(tmp_path, numprocesses=2)
    state = _state(tmp_path, config)
    assert not state.controller  # xdist has not registered its session plugin yet
    config.pluginmanager.loaded.add("dsession")
    assert state.controller
    config.option.numprocesses = 0  # -n 0: no workers
    assert not state.controller


def test_the_controllers_progress_is_its_workers_added(tmp_path: Path) -> None:
    state = _state(tmp_path, controller_config(tmp_path))
    state.totals.counted("gw0", ProgressCounts(3, 1))
    state.totals.counted("gw1", ProgressCounts(2, 2))
    assert state.progress_counts() == ProgressCounts(5, 3)


def test_a_usage_error_is_remembered_and_written_to_the_report(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    state = _state(tmp_path, report=str(report))
    err = state.usage("a\nbad thing")
    assert isinstance(err, pytest.UsageError) and str(err) == "pytest-graphinstruct: a\nbad thing"
    assert state.usage_error == "a bad thing"
    coverage = json.loads(report.read_text(encoding="utf-8"))["coverage"]
    assert coverage["reason"] == "usage error: a bad thing"


def test_a_workers_usage_error_writes_nothing(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    state = _state(tmp_path, worker_config(tmp_path), report=str(report))
    state.usage("bad")
    assert state.usage_error == "bad" and not report.exists()


def test_a_workers_session_asks_the_service_with_the_key_its_controller_sent(
        tmp_path: Path) -> None:
    """The answer service's address and key reach the worker's client (issue 47 §9); the key
    is the one thing the service admits a connection by."""
    sent = WorkerInput(answers="unix:/tmp/gi-run-x/answers.sock", answers_key="k3y")
    state = _state(tmp_path, worker_config(tmp_path, "gw0", 2, **{INPUT_KEY: sent.to_json()}),
                   model="m", base_url="http://127.0.0.1:9/v1")
    client = state.bench.fetcher.service
    assert client is not None and client.address == sent.answers
    assert client._key == "k3y"
    state.bench.close()
