"""run.session_inputs: what a session reads, and how many samples each item gets."""

from __future__ import annotations

from pathlib import Path

from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.run.session_inputs import SessionInputs, runs_method
from tests.plugin._suite import write_suite


def _inputs(tmp_path: Path, **extra: str) -> SessionInputs:
    root = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "oracle", "suite": str(root), "no_cache": True,
                            "pools": "none", **extra}, rootdir=tmp_path)
    assert run is not None
    return SessionInputs(run, worker=None, inputs=None, served=None)


def test_without_recorded_answers_every_instruction_is_asked(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path, samples="3")
    assert inputs.recorded_ids is None and inputs.replay_check is None
    assert inputs.replay_problems == ()
    assert inputs.select(inputs.suite.instructions) == list(inputs.suite.instructions)
    assert inputs.samples(inputs.suite["L1-001"]) == 3
    assert inputs.cache is None and inputs.pools is None
    inputs.flush_pools()  # never loaded: nothing to write


def test_a_method_cell_asks_one_sample_per_chain(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path, method="none,retry", samples="3", chains="2")
    plain, method = inputs.config.cells
    assert not runs_method(plain) and runs_method(method)
    inst = inputs.suite["L1-001"]
    assert (inputs.samples(inst, plain), inputs.samples(inst, method)) == (3, 2)


def test_an_xdist_worker_opens_no_answer_cache(tmp_path: Path) -> None:
    # only the controller's answer service asks endpoints (run.answer_service)
    root = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "oracle", "suite": str(root), "cache": str(tmp_path / "c"),
                            "pools": "none"}, rootdir=tmp_path)
    assert run is not None
    alone = SessionInputs(run, worker=None, inputs=None, served=None)
    worker = SessionInputs(run, worker=(0, 2), inputs=None, served=None)
    assert alone.cache is not None and worker.cache is None
