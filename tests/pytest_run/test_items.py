"""The run's items: one marked item per (instruction, cell); setup waits for the answers (one
that could not be obtained is an error, a stopped run's or a spent budget's a skip), the call
verifies them, and the outcome is recorded for scoring."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

# Imported before pytester's snapshot of sys.modules: the items import them on first use.
import pytest_graphinstruct.models.scheduling.scheduler
import pytest_graphinstruct.plugin
import pytest_graphinstruct.report.render.failures
from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.scheduling.circuit import CIRCUIT_OPEN
from pytest_graphinstruct.models.scheduling.scheduler import BUDGET_EXHAUSTED
from pytest_graphinstruct.pytest_run.items import (
    BASELINE_FAILURE,
    CIRCUIT_SKIP_REASON,
    GraphInstructFailure,
    GraphInstructItem,
    InfraError,
    baseline_xfail,
    is_item_id,
    item_done,
    item_id,
    make_items,
    record_outcome,
)
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import load_suite
from tests.plugin._suite import write_suite

pytest_plugins = ["pytester"]

CELL = Cell("m", "zero-shot")


# -- node ids and reports ----------------------------------------------------------------------

@pytest.mark.parametrize(("nodeid", "is_item"), [
    ("L1-001[m-zero-shot]", True), ("L1-001[m-few-shot-vgig@T2]", True),
    ("tests/test_x.py::test_y[1]", False), ("L1-001", False), ("graphinstruct", False),
])
def test_an_item_id_is_id_and_cell_without_a_file(nodeid: str, is_item: bool) -> None:
    assert is_item_id(nodeid) is is_item


@pytest.mark.parametrize("inst_id", ["L1-001", "L1 tree #1", "L1-[002]", "ünïcode"])
def test_the_node_id_is_the_suites_id_as_written_and_its_cell(inst_id: str) -> None:
    inst = Instruction(id=inst_id, level=1, text="t", explicit=())
    assert item_id(inst, CELL) == f"{inst_id}[m-zero-shot]"
    assert is_item_id(item_id(inst, CELL))


@pytest.mark.parametrize(("when", "passed", "done"), [
    ("setup", True, False), ("setup", False, True), ("call", True, True),
    ("call", False, True), ("teardown", False, False),
])
def test_the_report_that_decides_an_item(when: str, passed: bool, done: bool) -> None:
    assert item_done(SimpleNamespace(when=when, passed=passed)) is done


def test_a_baseline_xfail_is_told_from_a_benchmark_one() -> None:
    assert baseline_xfail(SimpleNamespace(wasxfail="x", user_properties=[
        ("gi_samples", 1), (BASELINE_FAILURE, True)]))
    # the reason's text decides nothing
    assert not baseline_xfail(SimpleNamespace(wasxfail="failed in the baseline too:\nx",
                                              user_properties=[]))
    assert not baseline_xfail(SimpleNamespace())


# -- recording an outcome ----------------------------------------------------------------------

class RecordingBench:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, dict[str, Any]]] = []

    def record(self, checked: Any, **kw: Any) -> None:
        self.calls.append(("record", checked, kw))

    def record_error(self, instruction: Any, cell: Any, answers: Any, **kw: Any) -> None:
        self.calls.append(("record_error", answers, kw))


def _fake_item(**kw: Any) -> Any:
    given = {"stopped": False, "unsent": None, "instruction": "inst", "cell": CELL,
             "answers": ("a",), "checked": None, "expected_failure": False}
    return SimpleNamespace(**{**given, **kw})


def _recorded(item: Any, when: str, outcome: str = "passed", error: str | None = None) -> list[
        tuple[str, Any, dict[str, Any]]]:
    bench = RecordingBench()
    report = SimpleNamespace(when=when, outcome=outcome, skipped=outcome == "skipped")
    excinfo = None if error is None else SimpleNamespace(value=ValueError(error))
    record_outcome(bench, item, report, SimpleNamespace(excinfo=excinfo))
    return bench.calls


def test_a_verified_call_is_recorded_with_its_expected_failure() -> None:
    assert _recorded(_fake_item(checked="C", expected_failure=True), "call") == [
        ("record", "C", {"expected_failure": True})]


def test_a_failed_setup_is_an_error_and_a_skipped_one_a_skip() -> None:
    assert _recorded(_fake_item(), "setup", "failed", "no answer") == [
        ("record_error", ("a",), {"outcome": "error", "error": "no answer"})]
    assert _recorded(_fake_item(), "setup", "skipped", "budget") == [
        ("record_error", ("a",), {"outcome": "skipped", "error": "budget"})]
    assert _recorded(_fake_item(), "setup", "passed") == []
    assert _recorded(_fake_item(), "teardown", "failed", "x") == []


def test_an_unsent_item_is_an_error_with_the_breakers_reason() -> None:
    assert _recorded(_fake_item(unsent="circuit open: 5 errors"), "setup", "skipped") == [
        ("record_error", ("a",), {"outcome": "error", "error": "circuit open: 5 errors"})]


def test_a_harness_fault_in_the_call_is_an_error_not_the_models() -> None:
    assert _recorded(_fake_item(), "call", "failed", "KeyError") == [
        ("record_error", ("a",), {"outcome": "error", "error": "KeyError"})]
    assert _recorded(_fake_item(), "call", "failed")[0][2]["error"] == "unknown"


def test_an_item_the_stop_skipped_records_nothing() -> None:
    assert _recorded(_fake_item(stopped=True, checked="C"), "call") == []
    assert _recorded(_fake_item(stopped=True), "setup", "skipped", "stopped") == []


# -- the items themselves ----------------------------------------------------------------------

class FakeBench:
    """Answers and checks given by the test."""

    def __init__(self, answers: tuple[Answer, ...] = (), checked: Any = None) -> None:
        self._answers = answers
        self._checked = checked

    def answers(self, instruction: Instruction, cell: Cell) -> tuple[Answer, ...]:
        return self._answers

    def check(self, instruction: Instruction, cell: Cell, answers: Any) -> Any:
        return self._checked


def _driver(bench: FakeBench, *, stopped: str | None = None, expected: bool = False,
            gated: bool = False, strict: bool = False, benchmark: bool = False) -> Any:
    return SimpleNamespace(
        bench=bench, stopper=SimpleNamespace(reason=stopped),
        run=SimpleNamespace(cells=(CELL, Cell("m", "few-shot")), pass_rule="all",
                            strict=strict, benchmark=benchmark),
        expected_failures={(CELL.label, "L1-001")} if expected else set(),
        plan=SimpleNamespace(gated=gated))


@pytest.fixture
def instructions(tmp_path: Path) -> list[Instruction]:
    return list(load_suite(write_suite(tmp_path / "suite")))


@pytest.fixture
def session(pytester: pytest.Pytester) -> pytest.Session:
    return pytest.Session.from_config(pytester.parseconfigure("-p", "no:cacheprovider"))


def _item(session: pytest.Session, instructions: list[Instruction], driver: Any,
          iid: str = "L1-001") -> GraphInstructItem:
    (inst,) = [i for i in instructions if i.id == iid]
    item = make_items(session, driver, [inst])[0]
    assert isinstance(item, GraphInstructItem)
    return item


def test_one_marked_item_per_cell_and_instruction_cell_by_cell(
        session: pytest.Session, instructions: list[Instruction]) -> None:
    items = make_items(session, _driver(FakeBench()), instructions[:2])
    assert [it.nodeid for it in items] == [
        "L0-001[m-zero-shot]", "L1-001[m-zero-shot]", "L0-001[m-few-shot]", "L1-001[m-few-shot]"]
    assert {m.name for m in items[1].iter_markers()} == {"graphinstruct", "level1", "small"}
    infeasible = make_items(session, _driver(FakeBench()), instructions[-1:])[0]
    assert {"level2", "infeasible"} <= {m.name for m in infeasible.iter_markers()}


def test_setup_keeps_the_answers(session: pytest.Session,
                                 instructions: list[Instruction]) -> None:
    answers = (Answer(text="Graph[] {}"),)
    item = _item(session, instructions, _driver(FakeBench(answers)))
    item.setup()
    assert item.answers == answers and not item.stopped and item.unsent is None


def test_an_answer_that_could_not_be_obtained_is_one_line_error(
        session: pytest.Session, instructions: list[Instruction]) -> None:
    answers = (Answer(text="ok"), Answer(error="HTTP 500"), Answer(error="timeout"))
    item = _item(session, instructions, _driver(FakeBench(answers)))
    with pytest.raises(InfraError) as info:
        item.setup()
    assert str(info.value) == "2 of 3 answer(s) could not be obtained: HTTP 500"
    assert item.repr_failure(info) == str(info.value)


def test_a_stopped_run_skips_items_never_asked(session: pytest.Session,
                                               instructions: list[Instruction]) -> None:
    never = (Answer(error="stopped", calls=0),)
    item = _item(session, instructions, _driver(FakeBench(never), stopped="Ctrl+C"))
    with pytest.raises(pytest.skip.Exception, match=r"not asked: the run stopped \(Ctrl\+C\)"):
        item.setup()
    assert item.stopped
    asked = (Answer(error="stopped", calls=1),)  # a call was made: an error, not missing
    item = _item(session, instructions, _driver(FakeBench(asked), stopped="Ctrl+C"))
    with pytest.raises(InfraError):
        item.setup()
    assert not item.stopped


def test_the_budget_and_the_breaker_skip(session: pytest.Session,
                                         instructions: list[Instruction]) -> None:
    spent = (Answer(error=f"{BUDGET_EXHAUSTED} (100 tokens)", calls=0, failure_kind="budget"),)
    item = _item(session, instructions, _driver(FakeBench(spent)))
    with pytest.raises(pytest.skip.Exception, match="not asked: token budget exhausted"):
        item.setup()
    assert item.stopped  # like the cost cap: no result, so the run is partial
    one_of_two = (Answer(text="a", calls=1), *spent)
    item = _item(session, instructions, _driver(FakeBench(one_of_two)))
    with pytest.raises(pytest.skip.Exception, match="not asked: token budget exhausted"):
        item.setup()
    assert item.stopped
    unsent = (Answer(error=f"{CIRCUIT_OPEN}: 5 errors", calls=0, failure_kind="circuit_open"),)
    item = _item(session, instructions, _driver(FakeBench((Answer(
        error=f"{CIRCUIT_OPEN}: a text like the breaker's is not the breaker", calls=0),))))
    with pytest.raises(InfraError):  # the kind decides, never the text
        item.setup()
    item = _item(session, instructions, _driver(FakeBench(unsent)))
    with pytest.raises(pytest.skip.Exception) as info:
        item.setup()
    assert str(info.value.msg) == CIRCUIT_SKIP_REASON
    assert item.unsent == f"{CIRCUIT_OPEN}: 5 errors"


def _checked(passed: bool) -> Any:
    return SimpleNamespace(passed=passed, passing_samples=1 if passed else 0,
                           verifications=("v", "w"),
                           answers=(Answer(text="a", calls=2), Answer(text="b")))


@pytest.fixture
def failure_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pytest_graphinstruct.report.render.failures, "format_failure",
                        lambda checked, rule, raw: f"violations ({rule})")


def test_a_passing_call_records_its_properties(session: pytest.Session,
                                               instructions: list[Instruction]) -> None:
    checked = _checked(True)
    item = _item(session, instructions, _driver(FakeBench(checked=checked)))
    item.runtest()
    assert item.checked is checked and not item.expected_failure
    assert item.user_properties == [("gi_passed_samples", 1), ("gi_samples", 2),
                                    ("gi_api_calls", 3)]


@pytest.mark.usefixtures("failure_text")
def test_violations_fail_the_item(session: pytest.Session,
                                  instructions: list[Instruction]) -> None:
    item = _item(session, instructions, _driver(FakeBench(checked=_checked(False))))
    with pytest.raises(GraphInstructFailure, match=r"^violations \(all\)$") as info:
        item.runtest()
    assert item.repr_failure(info) == "violations (all)"  # no traceback


@pytest.mark.usefixtures("failure_text")
@pytest.mark.parametrize(("kw", "reason"), [
    ({"expected": True}, "failed in the baseline too:\nviolations (all)"),
    ({"gated": True}, "newly failing against the baseline"),
    ({"benchmark": True}, "model violations (--gi-violations=report: shown, not failed)"),
])
def test_violations_the_run_expects_are_xfails(session: pytest.Session,
                                               instructions: list[Instruction],
                                               kw: dict[str, bool], reason: str) -> None:
    item = _item(session, instructions, _driver(FakeBench(checked=_checked(False)), **kw))
    with pytest.raises(pytest.xfail.Exception) as info:
        item.runtest()
    assert str(info.value.msg).startswith(reason)
    assert item.expected_failure is kw.get("expected", False)


@pytest.mark.usefixtures("failure_text")
def test_strict_fails_a_newly_failing_item(session: pytest.Session,
                                           instructions: list[Instruction]) -> None:
    driver = _driver(FakeBench(checked=_checked(False)), gated=True, strict=True)
    with pytest.raises(GraphInstructFailure):
        _item(session, instructions, driver).runtest()
