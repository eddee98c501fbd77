"""``RunLifecyclePlugin``: the run's start and end in one process; the fixtures' ``bench``,
``query`` and ``evaluate`` are the state's."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_graphinstruct.pytest_run.lifecycle import RunLifecyclePlugin
from pytest_graphinstruct.pytest_run.state import RunState
from pytest_graphinstruct.run.payload import OUTPUT_KEY, WorkerPayload

from .fakes import FakeConfig, FakeSession, run_config, worker_config


def _state(tmp_path: Path, config: Any = None, **raw: Any) -> RunState:
    return RunState(config or FakeConfig(tmp_path), run_config(tmp_path, **raw))


# -- end_session -------------------------------------------------------------------------------

def test_a_worker_ships_its_payload_at_the_end(tmp_path: Path) -> None:
    config = worker_config(tmp_path)
    state = _state(tmp_path, config)
    RunLifecyclePlugin(state).pytest_sessionfinish(FakeSession(config), pytest.ExitCode.OK)
    assert WorkerPayload.from_json(config.workeroutput[OUTPUT_KEY]) == WorkerPayload()
    assert state.report is None  # the controller writes the report


def test_a_stop_turns_a_finished_run_into_an_interrupted_one(tmp_path: Path) -> None:
    config = FakeConfig(tmp_path, collectonly=True)  # collect-only: nothing is written
    state = _state(tmp_path, config, report=str(tmp_path / "r.json"))
    state.stopper.reason = "terminated (SIGTERM)"
    session = FakeSession(config)
    RunLifecyclePlugin(state).pytest_sessionfinish(session, pytest.ExitCode.TESTS_FAILED)
    assert session.exitstatus == pytest.ExitCode.INTERRUPTED
    assert state.report is None and not (tmp_path / "r.json").exists()
    session = FakeSession(config, exitstatus=pytest.ExitCode.USAGE_ERROR)
    RunLifecyclePlugin(state).pytest_sessionfinish(session, pytest.ExitCode.USAGE_ERROR)
    assert session.exitstatus == pytest.ExitCode.USAGE_ERROR  # kept: it says more


class RecordingState:
    """A state whose ``query``/``evaluate`` record what they are handed."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.bench = "the session"

    def query(self, *args: Any) -> str:
        self.calls.append(("query", args))
        return "query answered"

    def evaluate(self, *args: Any) -> str:
        self.calls.append(("evaluate", args))
        return "evaluate answered"


def test_the_fixtures_ask_the_state() -> None:
    state = RecordingState()
    plugin = RunLifecyclePlugin(state)  # type: ignore[arg-type]
    assert plugin.run_session() == "the session"
    assert plugin.query("inst", "few-shot", 2, "m") == "query answered"  # type: ignore[arg-type]
    assert plugin.evaluate("inst", ["a"], "zero-cot") == "evaluate answered"  # type: ignore[arg-type]
    assert plugin.query("inst") == "query answered"  # type: ignore[arg-type]
    assert state.calls == [("query", ("inst", "few-shot", 2, "m")),
                           ("evaluate", ("inst", ["a"], "zero-cot")),
                           ("query", ("inst", "zero-shot", 0, None))]


def test_a_collect_only_start_claims_nothing(tmp_path: Path) -> None:
    config = FakeConfig(tmp_path, collectonly=True)
    state = _state(tmp_path, config, report=str(tmp_path / "r.json"))
    RunLifecyclePlugin(state).pytest_sessionstart(FakeSession(config))
    assert state.started is not None and state.inputs is None
    assert not (tmp_path / "r.json").exists()
    assert state.stopper.signal is not None
    folder = state.stopper.signal.folder
    assert folder.exists()
    RunLifecyclePlugin(state).pytest_unconfigure(config)
    assert not folder.exists()  # the controller's stop file is removed


# -- the collector while a run is active -------------------------------------------------------

def test_the_run_collects_garbage_less_often_and_gives_the_thresholds_back(
        tmp_path: Path) -> None:
    import gc

    from pytest_graphinstruct.run.gc_policy import THRESHOLDS

    before = gc.get_threshold()
    gc.set_threshold(123, 4, 5)
    try:
        config = FakeConfig(tmp_path)
        plugin = RunLifecyclePlugin(_state(tmp_path, config))
        plugin.pytest_configure(config)  # type: ignore[arg-type]
        assert gc.get_threshold() == THRESHOLDS
        plugin.pytest_unconfigure(config)  # type: ignore[arg-type]
        assert gc.get_threshold() == (123, 4, 5)
    finally:
        gc.set_threshold(*before)


def test_reading_every_attribute_of_the_plugin_opens_no_session(tmp_path: Path) -> None:
    # pytest (8.0) reads every attribute of a registered plugin while it looks for fixtures,
    # at session start in every process: nothing read that way may open the run's session.
    state = _state(tmp_path)
    plugin = RunLifecyclePlugin(state)
    for name in dir(plugin):
        getattr(plugin, name)
    assert state.opened is None
    assert plugin.run_session() is state.opened is not None


# -- what --gi-samples=auto needs --------------------------------------------------------------

def test_auto_against_a_one_sample_baseline_is_a_usage_problem(tmp_path: Path) -> None:
    from pytest_graphinstruct.pytest_run.lifecycle import _auto_problem
    from pytest_graphinstruct.run.gate.plan import BaselinePlan
    from pytest_graphinstruct.run.records.results import RunReport
    from tests.run.test_adaptive import baseline

    run = run_config(tmp_path, model="m", base_url="http://127.0.0.1:9/v1", samples="auto",
                     baseline=str(tmp_path / "b.json"))
    one = baseline({"L1-001": (True,), "L1-002": (False,)})
    plan = BaselinePlan(tmp_path / "b.json", RunReport(()), {"m-zero-shot": one})
    said = _auto_problem(run, plan)
    assert said is not None and said.startswith(
        f"--gi-samples=auto needs a baseline of several samples per instruction, but "
        f"{tmp_path / 'b.json'} holds 1 sample per instruction (cell m-zero-shot)")
    several = baseline({"L1-001": (True, True)})
    assert _auto_problem(run, BaselinePlan(tmp_path / "b.json", RunReport(()),
                                           {"m-zero-shot": several})) is None


def test_auto_under_xdist_is_started_not_refused(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 48: the xdist controller's answer service runs the looks, so ``-n`` with
    ``--gi-samples=auto`` starts like one process (before, it was a usage error: "runs in one
    process"); a missing baseline is still refused, with ``-n`` as without."""
    from pytest_graphinstruct.run.gate.plan import BaselinePlan
    from pytest_graphinstruct.run.records.results import RunReport
    from tests.run.test_adaptive import baseline

    monkeypatch.setattr("pytest_graphinstruct.run.preflight.preflight",
                        lambda run, **kw: SimpleNamespace(notes=[], served=None))
    run = run_config(tmp_path, model="m", base_url="http://127.0.0.1:9/v1", samples="auto",
                     baseline=str(tmp_path / "b.json"))
    several = baseline({"L1-001": (True, True)})
    plans = {"found": BaselinePlan(tmp_path / "b.json", RunReport(()), {"m-zero-shot": several}),
             "missing": BaselinePlan(tmp_path / "b.json", missing=True)}
    said: dict[str, str | None] = {}
    for name, plan in plans.items():
        config = FakeConfig(tmp_path, numprocesses=2)
        state = RunState(config, run)
        state.plan = plan
        try:
            RunLifecyclePlugin(state).pytest_sessionstart(FakeSession(config))
        except pytest.UsageError:
            pass
        finally:
            state.stopper.close()
        said[name] = state.usage_error
    assert said["found"] is None
    assert said["missing"] is not None and "needs an existing --gi-baseline" in said["missing"]
