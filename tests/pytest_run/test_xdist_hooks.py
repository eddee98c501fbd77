"""``XdistHooks``: the controller hands each worker its input, keeps the first worker's item
ids, adds up each worker's payload as it goes down, and keeps the answer counts a worker ships
with its items' reports."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pytest_graphinstruct.pytest_run.items import GraphInstructItem
from pytest_graphinstruct.pytest_run.xdist_hooks import PROGRESS_ATTR, XdistHooks, worker_input
from pytest_graphinstruct.run.payload import (
    INPUT_KEY,
    OUTPUT_KEY,
    WorkerInput,
    WorkerPayload,
    WorkerTotals,
)
from pytest_graphinstruct.run.records.codec import encode
from pytest_graphinstruct.run.records.results import ItemResult
from pytest_graphinstruct.run.served import Served
from pytest_graphinstruct.run.stop import StopSignal
from pytest_graphinstruct.run.tally import ProgressCounts

from .fakes import FakeConfig, FakePluginManager


def _state(tmp_path: Path, *, worker: tuple[int, int] | None = None,
            winput: WorkerInput | None = None, progress: str = "off", **kw: Any) -> Any:
    given: dict[str, Any] = {
        "config": FakeConfig(tmp_path, plugins=FakePluginManager(
            terminalreporter=SimpleNamespace(isatty=True, hasmarkup=True))),
        "run": SimpleNamespace(progress=progress), "worker": worker, "winput": winput,
        "selected": None, "totals": WorkerTotals(), "notes": [], "limits": [],
        "local_info": None,
        "served": None, "stopper": SimpleNamespace(signal=None), "service": None,
        "bench": SimpleNamespace(progress=lambda: ProgressCounts(5, 4, 1, 0, 99))}
    given.update(kw)
    return SimpleNamespace(**given)


def _node(workerid: str, output: dict[str, Any] | None = None) -> Any:
    return SimpleNamespace(workerinput={"workerid": workerid}, workeroutput=output)


def _item() -> GraphInstructItem:
    return GraphInstructItem.__new__(GraphInstructItem)  # only its type is asked


def _made(hooks: XdistHooks, item: Any, report: Any) -> Any:
    gen: Generator[None, Any, Any] = hooks.pytest_runtest_makereport(item, None)
    next(gen)
    try:
        gen.send(report)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("the wrapper yielded twice")


def test_worker_input_tells_the_server_the_preflight_the_live_line_stop_folder_and_service(
        tmp_path: Path) -> None:
    served = Served(cache_mark=3)
    state = _state(tmp_path, local_info={"base_url": "http://127.0.0.1:1/v1"}, served=served,
                     progress="on", stopper=SimpleNamespace(signal=StopSignal(tmp_path)),
                     service=SimpleNamespace(address="unix:/tmp/gi-run-x/answers.sock",
                                             key="k3y"))
    assert worker_input(state) == WorkerInput(local={"base_url": "http://127.0.0.1:1/v1"},
                                               served=served, progress=True,
                                               stop_folder=str(tmp_path),
                                               answers="unix:/tmp/gi-run-x/answers.sock",
                                               answers_key="k3y")
    assert worker_input(_state(tmp_path)) == WorkerInput()


def test_each_node_gets_the_input_as_one_json_document(tmp_path: Path) -> None:
    state = _state(tmp_path, progress="on")
    node = SimpleNamespace(workerinput={"workerid": "gw0"})
    XdistHooks(state).pytest_configure_node(node)
    assert set(node.workerinput) == {"workerid", INPUT_KEY}
    assert WorkerInput.from_json(node.workerinput[INPUT_KEY]) == WorkerInput(progress=True)


def test_the_first_workers_item_ids_are_the_selection(tmp_path: Path) -> None:
    state = _state(tmp_path)
    hooks = XdistHooks(state)
    hooks.pytest_xdist_node_collection_finished(
        _node("gw0"), ["L0-001[m-zero-shot]", "test_x.py::test_y", "L1-001[m-zero-shot]"])
    hooks.pytest_xdist_node_collection_finished(_node("gw1"), ["other[m-zero-shot]"])
    assert state.selected == ["L0-001[m-zero-shot]", "L1-001[m-zero-shot]"]


def test_a_worker_that_goes_down_adds_its_payload_and_its_new_notes(tmp_path: Path) -> None:
    state = _state(tmp_path, notes=["seen before"])
    result = ItemResult(instruction_id="L0-001", level=0, cell="m-zero-shot", model="m",
                        strategy="zero-shot")
    payload = WorkerPayload(results=(result,), notes=("seen before", "new"),
                            progress=ProgressCounts(2, 2), cached={"m-zero-shot": 1})
    XdistHooks(state).pytest_testnodedown(_node("gw3", {OUTPUT_KEY: payload.to_json()}), None)
    assert state.totals.results == [result] and state.totals.errors == []
    assert state.totals.progress == {"gw3": ProgressCounts(2, 2)}
    assert state.totals.cached == {"m-zero-shot": 1}
    assert state.notes == ["seen before", "new"]


def test_a_crashed_or_silent_worker_is_a_worker_error(tmp_path: Path) -> None:
    state = _state(tmp_path)
    hooks = XdistHooks(state)
    good = {OUTPUT_KEY: WorkerPayload().to_json()}
    hooks.pytest_testnodedown(_node("gw0", good), "segfault")  # an error wins over output
    hooks.pytest_testnodedown(_node("gw1", {}), None)
    hooks.pytest_testnodedown(SimpleNamespace(), None)  # no workeroutput at all
    assert state.totals.errors == ["segfault", "worker sent no results",
                                    "worker sent no results"]
    assert state.totals.results == []


def test_a_worker_ships_its_counts_with_the_report_that_decides_an_item(tmp_path: Path) -> None:
    state = _state(tmp_path, worker=(0, 2), winput=WorkerInput(progress=True))
    hooks = XdistHooks(state)
    call = SimpleNamespace(when="call", passed=True)
    assert _made(hooks, _item(), call) is call
    assert getattr(call, PROGRESS_ATTR) == encode(ProgressCounts(5, 4, 1, 0, 99))
    for report, item, winput in [
            (SimpleNamespace(when="setup", passed=True), _item(), WorkerInput(progress=True)),
            (SimpleNamespace(when="call", passed=True), object(), WorkerInput(progress=True)),
            (SimpleNamespace(when="call", passed=True), _item(), WorkerInput(progress=False)),
            (SimpleNamespace(when="call", passed=True), _item(), None)]:
        state.winput = winput
        _made(hooks, item, report)
        assert not hasattr(report, PROGRESS_ATTR), (report, item, winput)


def test_the_controller_keeps_each_workers_latest_counts(tmp_path: Path) -> None:
    state = _state(tmp_path)
    hooks = XdistHooks(state)

    def shipped(counts: ProgressCounts, nodeid: str = "L0-001[m-zero-shot]",
                worker: str = "gw0") -> Any:
        return SimpleNamespace(nodeid=nodeid, node=_node(worker),
                               **{PROGRESS_ATTR: encode(counts)})

    hooks.pytest_runtest_logreport(shipped(ProgressCounts(4, 1)))
    hooks.pytest_runtest_logreport(shipped(ProgressCounts(4, 2)))
    hooks.pytest_runtest_logreport(shipped(ProgressCounts(3, 3), worker="gw1"))
    hooks.pytest_runtest_logreport(shipped(ProgressCounts(9, 9), nodeid="t.py::test_x"))
    hooks.pytest_runtest_logreport(SimpleNamespace(nodeid="L0-001[m-zero-shot]"))  # none
    hooks.pytest_runtest_logreport(SimpleNamespace(  # counts that do not read: dropped
        nodeid="L0-001[m-zero-shot]", node=_node("gw2"), **{PROGRESS_ATTR: {"requested": "x"}}))
    assert state.totals.counts() == ProgressCounts(7, 5)
    worker = _state(tmp_path, worker=(0, 2))
    XdistHooks(worker).pytest_runtest_logreport(shipped(ProgressCounts(1, 1)))
    assert worker.totals.progress == {}
