"""run.fetcher: each sample asked once, every item answered; an xdist worker's answers of a
model with an endpoint come from the controller's answer service, the oracle's from itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from pytest_graphinstruct.run.answer_service import AnswerService
from pytest_graphinstruct.run.config import Cell, build_run_config
from pytest_graphinstruct.run.session import BenchmarkSession
from tests.plugin._suite import write_suite


def test_every_sample_is_asked_once_and_counted(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "oracle", "suite": str(root), "no_cache": True,
                            "pools": "none", "samples": "2"}, rootdir=tmp_path)
    assert run is not None
    bench = BenchmarkSession(run)
    cell = run.cells[0]
    items = [(inst, cell) for inst in bench.suite]
    assert bench.prefetch(items) == 2 * len(items)
    first = bench.answers(*items[0])
    assert len(first) == 2 and first == bench.answers(*items[0])  # the same futures
    assert bench.tally.counts(tokens=0).requested == 2 * len(items)
    bench.close()


class Controller:
    """The controller's session as its service reads it: every answer a marked echo."""

    def __init__(self, bench: BenchmarkSession) -> None:
        self.suite = bench.suite
        self.inputs = bench.inputs
        self.asked: list[tuple[str, str]] = []
        self.fetcher = bench.fetcher

    def answers(self, inst: Any, cell: Cell) -> Any:
        from pytest_graphinstruct.answers import Answer

        self.asked.append((inst.id, cell.label))
        return (Answer(text=f"from the controller: {inst.id}"),)


def test_a_worker_asks_the_service_for_endpoint_models_and_answers_the_oracle_itself(
        tmp_path: Path) -> None:
    root = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "oracle,gpt-x", "suite": str(root), "no_cache": True,
                            "pools": "none", "base_url": "http://127.0.0.1:9/v1"},
                           rootdir=tmp_path)
    assert run is not None
    plain = BenchmarkSession(run)
    controller = Controller(plain)
    service = AnswerService(cast(Any, controller), tmp_path)
    try:
        worker = BenchmarkSession(run, worker=(0, 2), service=service.address,
                                  service_key=service.key)
        oracle, endpoint = (next(c for c in run.cells if c.model == m) for m in ("oracle", "gpt-x"))
        inst = worker.suite["L1-001"]
        service.expect([(inst, endpoint)])
        assert worker.prefetch([(inst, oracle), (inst, endpoint)]) == 1  # the oracle's only
        (got,) = worker.answers(inst, endpoint)
        assert got.text == "from the controller: L1-001"
        assert worker.answers(inst, oracle)[0].ok  # the worker's own oracle
        assert controller.asked == [("L1-001", endpoint.label)]
        assert set(worker.models.schedulers) == {"oracle"}  # no backend for the endpoint
        worker.close()
    finally:
        service.close()
        plain.close()


def test_a_service_that_is_gone_makes_each_sample_an_error(tmp_path: Path) -> None:
    root = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "gpt-x", "suite": str(root), "no_cache": True,
                            "pools": "none", "samples": "3",
                            "base_url": "http://127.0.0.1:9/v1"}, rootdir=tmp_path)
    assert run is not None
    worker = BenchmarkSession(run, worker=(0, 2), service=f"unix:{tmp_path / 'gone.sock'}")
    got = worker.answers(worker.suite["L1-001"], run.cells[0])
    assert len(got) == 3 and all(a.failure_kind == "error" and a.calls == 0 for a in got)
    assert "answer service" in (got[0].error or "") and "cannot be reached" in (got[0].error or "")
    worker.close()
