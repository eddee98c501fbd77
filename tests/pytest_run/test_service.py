"""``AnswerServicePlugin``: the xdist controller's service is opened only where a model has an
endpoint, told the run's selection and asked once for the first worker's items (in collection
order, each mapped to its instruction and cell), and closed at the end, where what it refused
is said."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_graphinstruct.pytest_run.service import AnswerServicePlugin, serve
from pytest_graphinstruct.run.config import Cell

from .fakes import FakeConfig, FakeSession

INST0, INST1, ODD = (SimpleNamespace(id=i) for i in ("L0-001", "L1-001", "L2-[x]::y"))


class FakeService:
    """A service that records the selection it is told, and the looks it is asked to run."""

    def __init__(self, steps: list[str] | None = None) -> None:
        self.expected: list[list[tuple[Any, Cell]]] = []
        self.looked: list[tuple[list[tuple[Any, Cell]], Any]] = []
        self.intruders = self.refused = 0
        self.steps = [] if steps is None else steps

    def expect(self, items: list[tuple[Any, Cell]]) -> None:
        self.expected.append(items)
        self.steps.append("expect")

    def run_looks(self, items: list[tuple[Any, Cell]], baselines: Any) -> None:
        self.looked.append((items, baselines))
        self.steps.append("looks")

    def close(self) -> None:
        pass


class FakeBench:
    """A session whose suite knows three instructions and which records what it prefetches."""

    def __init__(self, steps: list[str] | None = None) -> None:
        self.suite = [INST0, INST1, ODD]
        self.prefetched: list[list[tuple[Any, Cell]]] = []
        self.steps = [] if steps is None else steps
        self.schedulers: dict[str, Any] = {}

    def prefetch(self, chosen: list[tuple[Any, Cell]]) -> None:
        self.prefetched.append(chosen)
        self.steps.append("prefetch")


def _state(service: Any = None, *, controller: bool = True, models: tuple[str, ...]
           = ("gpt-4o",), auto: int | None = None, steps: list[str] | None = None) -> Any:
    cells = tuple(Cell(m, "zero-shot") for m in models)
    return SimpleNamespace(service=service, bench=FakeBench(steps), controller=controller,
                           notes=[], plan=SimpleNamespace(cells={"gpt-4o-zero-shot": "base"}),
                           run=SimpleNamespace(cells=cells, models=models, dry_run=False,
                                               replay=None, auto_samples=auto))


def test_the_first_workers_items_are_the_selection_asked_for_once_in_their_order() -> None:
    state = _state(FakeService())
    plugin = AnswerServicePlugin(state)
    ids = ["L1-001[gpt-4o-zero-shot]", "tests/t.py::test_x", "L9-999[gpt-4o-zero-shot]",
           "L0-001[other-zero-shot]", "L2-[x]::y[gpt-4o-zero-shot]", "L0-001[gpt-4o-zero-shot]"]
    plugin.pytest_xdist_node_collection_finished(SimpleNamespace(), ids)
    plugin.pytest_xdist_node_collection_finished(SimpleNamespace(), ids)  # gw1: asked already
    cell = Cell("gpt-4o", "zero-shot")
    chosen = [(INST1, cell), (ODD, cell), (INST0, cell)]  # an id with "[" or "::" matched whole
    assert state.bench.prefetched == [chosen]
    assert state.service.expected == [chosen]


def test_without_a_service_nothing_is_asked() -> None:
    state = _state(service=None)
    serve(state, ["L0-001[gpt-4o-zero-shot]"])
    assert state.bench.prefetched == []


def test_what_the_service_refused_is_said_at_the_end(tmp_path: Path) -> None:
    service = FakeService()
    service.intruders, service.refused = 2, 1
    state = _state(service)
    AnswerServicePlugin(state).pytest_sessionfinish(FakeSession(FakeConfig(tmp_path)), 0)
    (note,) = state.notes
    assert note.startswith("the run's answer service refused 2 connection(s) that did not give "
                           "the run's key (another local process tried to use it) and 1 "
                           "question(s) for items or samples outside the run's plan")
    quiet = _state(FakeService())
    AnswerServicePlugin(quiet).pytest_sessionfinish(FakeSession(FakeConfig(tmp_path)), 0)
    assert quiet.notes == []


def test_no_service_outside_the_controller_or_without_an_endpoint(tmp_path: Path) -> None:
    session = FakeSession(FakeConfig(tmp_path))
    for state in (_state(None, controller=False), _state(None, models=("oracle",))):
        AnswerServicePlugin(state).pytest_sessionstart(session)
        assert state.service is None


def test_the_service_closes_at_the_end(tmp_path: Path) -> None:
    closed: list[bool] = []
    state = _state(SimpleNamespace(close=lambda: closed.append(True), intruders=0, refused=0))
    AnswerServicePlugin(state).pytest_sessionfinish(FakeSession(FakeConfig(tmp_path)), 0)
    AnswerServicePlugin(_state(None)).pytest_sessionfinish(FakeSession(FakeConfig(tmp_path)), 0)
    assert closed == [True]


# -- --gi-samples=auto under -n (issue 48) ------------------------------------------------------

def test_under_auto_the_service_runs_the_looks_once_the_first_samples_are_asked() -> None:
    """The controller's service runs the looks over the selection, against the baseline's
    cells, after it was told the selection and its first samples were asked — inside the
    hook, so before xdist hands out any item; a fixed count runs none."""
    steps: list[str] = []
    state = _state(FakeService(steps), auto=5, steps=steps)
    plugin = AnswerServicePlugin(state)
    ids = ["L1-001[gpt-4o-zero-shot]", "L0-001[gpt-4o-zero-shot]"]
    plugin.pytest_xdist_node_collection_finished(SimpleNamespace(), ids)
    plugin.pytest_xdist_node_collection_finished(SimpleNamespace(), ids)  # gw1: once only
    cell = Cell("gpt-4o", "zero-shot")
    assert steps == ["expect", "prefetch", "looks"]
    assert state.service.looked == [([(INST1, cell), (INST0, cell)], state.plan.cells)]
    fixed = _state(FakeService())
    serve(fixed, ids)
    assert fixed.service.looked == []


@pytest.mark.parametrize(("auto", "looks"), [(5, True), (None, False)], ids=["auto", "fixed"])
def test_the_service_is_opened_to_wait_for_looks_only_under_auto(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, auto: int | None, looks: bool) -> None:
    opened: list[dict[str, Any]] = []

    def service(bench: Any, folder: Path, **kw: Any) -> Any:
        opened.append({"folder": folder, **kw})
        return SimpleNamespace()
    monkeypatch.setattr("pytest_graphinstruct.pytest_run.service.AnswerService", service)
    state = _state(None, auto=auto)
    state.stopper = SimpleNamespace(signal=SimpleNamespace(folder=tmp_path))
    AnswerServicePlugin(state).pytest_sessionstart(FakeSession(FakeConfig(tmp_path)))
    assert opened == [{"folder": tmp_path, "looks": looks}]
