"""The run's items: one :class:`GraphInstructItem` per (instruction, cell), whose setup waits for
its answers (one that could not be obtained is an *error*), whose call verifies them
(violations are *failures*, or xfails where the run says so), and whose outcome is recorded for
scoring (:func:`record_outcome`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from pytest_graphinstruct.answers import LIMIT_KINDS
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.vocab import Outcome

if TYPE_CHECKING:
    from pytest_graphinstruct.pytest_run.state import RunState
    from pytest_graphinstruct.run.evaluate import Checked
    from pytest_graphinstruct.run.session import BenchmarkSession

CIRCUIT_SKIP_REASON = ("not sent: the circuit breaker opened (an error in the report; the "
                       "summary's WARNING says why)")


class GraphInstructFailure(AssertionError):
    """Raised by an item whose answers break constraints; carries the formatted verdicts."""


class InfraError(pytest.fail.Exception):  # type: ignore[name-defined]
    """An answer could not be obtained (the item errors in its setup; the model is not
    blamed).  A failure without a traceback (``pytrace=False``), so pytest shows the one line
    itself, through its public API."""

    def __init__(self, message: str) -> None:
        super().__init__(message, pytrace=False)


class GraphInstructItem(pytest.Item):
    """One instruction in one cell; its assertions are the verifier's verdicts."""

    def __init__(self, *, instruction: Instruction, cell: Cell, state: RunState,
                 **kw: Any) -> None:
        super().__init__(**kw)
        self.instruction = instruction
        self.cell = cell
        self.state = state
        self.answers: tuple[Any, ...] = ()
        self.checked: Checked | None = None
        self.expected_failure = False
        self.stopped = False  # skipped unasked because the run was stopped (no result)
        self.unsent: str | None = None  # the circuit breaker's error: never sent (an error)

    def setup(self) -> None:
        answers = self.state.bench.answers(self.instruction, self.cell)  # at once if stopped
        stopped = self.state.stopper.reason
        if stopped is not None and all(a.error is not None and a.calls == 0 for a in answers):
            self.stopped = True  # never asked: no result (the report counts it missing)
            pytest.skip(f"not asked: the run stopped ({stopped})")
        capped = next((a.error for a in answers if a.failure_kind in LIMIT_KINDS), None)
        if capped is not None:  # not run: no result, so the run is partial and a rerun asks
            self.stopped = True
            pytest.skip(f"not asked: {capped}")
        self.answers = answers
        errors = [a.error for a in answers if a.error is not None]
        if errors:
            if all(a.failure_kind == "circuit_open" and a.calls == 0 for a in answers):
                # Never sent: the report records an error; the terminal shows one grouped
                # line for all of them (the breaker's reason is in the summary), not a block
                # per item.
                self.unsent = errors[0]
                pytest.skip(CIRCUIT_SKIP_REASON)
            raise InfraError(f"{len(errors)} of {len(answers)} answer(s) could not be "
                             f"obtained: {errors[0]}")

    def runtest(self) -> None:
        from pytest_graphinstruct.report.render.failures import format_failure

        state = self.state
        checked = state.bench.check(self.instruction, self.cell, self.answers)
        self.checked = checked
        self.user_properties.extend([
            ("gi_passed_samples", checked.passing_samples),
            ("gi_samples", len(checked.verifications)),
            ("gi_api_calls", sum(a.calls for a in checked.answers)),
        ])
        if checked.passed:
            return
        message = format_failure(checked, state.run.pass_rule,
                                 raw=self.config.getoption("verbose") > 0)
        if (self.cell.label, self.instruction.id) in state.expected_failures:
            self.expected_failure = True
            self.user_properties.append((BASELINE_FAILURE, True))
            pytest.xfail("failed in the baseline too:\n" + message)
        if state.plan.gated and not state.run.strict:
            pytest.xfail("newly failing against the baseline (the statistical gate judges its "
                         "level; --gi-violations=fail fails on it):\n" + message)
        if state.run.benchmark:
            pytest.xfail("model violations (--gi-violations=report: shown, not failed):\n"
                         + message)
        raise GraphInstructFailure(message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str | Any:
        if isinstance(excinfo.value, GraphInstructFailure | InfraError | pytest.xfail.Exception):
            return str(excinfo.value)  # the verdicts say it all: no Python traceback
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name


def _markers(inst: Instruction) -> list[str]:
    marks = ["graphinstruct", f"level{inst.level}"]
    if inst.size:
        marks.append(inst.size)
    if not inst.feasible:
        marks.append("infeasible")
    if inst.domain:
        marks.append(inst.domain)
    return marks


def make_items(session: pytest.Session, state: RunState,
               chosen: Sequence[Instruction]) -> list[pytest.Item]:
    """One marked item per cell of the run and instruction of ``chosen``, cell by cell, node id
    ``ID[cell]``."""
    new: list[pytest.Item] = []
    for cell in state.run.cells:
        for inst in chosen:
            item = GraphInstructItem.from_parent(
                session, name=item_id(inst, cell), instruction=inst, cell=cell,
                state=state, nodeid=item_id(inst, cell))
            for marker in _markers(inst):
                item.add_marker(marker)
            new.append(item)
    return new


def record_outcome(bench: BenchmarkSession, item: GraphInstructItem, report: pytest.TestReport,
                   call: pytest.CallInfo[None]) -> None:
    """Record what ``report`` decides about ``item`` for scoring: a setup that did not pass is
    an error (or a skip) with the answers it got; a call is the verified answers, or a harness
    error when ``runtest`` raised something unexpected.  An item skipped unasked because the
    run stopped records nothing (the report counts it missing)."""
    if item.stopped:
        return
    if report.when == "setup" and item.unsent is not None:
        bench.record_error(item.instruction, item.cell, item.answers, outcome="error",
                           error=item.unsent)
    elif report.when == "setup" and report.outcome != "passed":
        outcome: Outcome = "skipped" if report.skipped else "error"
        error = str(call.excinfo.value) if call.excinfo is not None else None
        bench.record_error(item.instruction, item.cell, item.answers, outcome=outcome,
                           error=error)
    elif report.when == "call":
        if item.checked is not None:  # passed, failed, or xfailed
            bench.record(item.checked, expected_failure=item.expected_failure)
        else:  # an unexpected exception inside runtest: a harness error, not the model's
            error = str(call.excinfo.value) if call.excinfo is not None else "unknown"
            bench.record_error(item.instruction, item.cell, item.answers,
                               outcome="error", error=error)


def item_id(inst: Instruction, cell: Cell) -> str:
    """The node id (and name) of the item of ``inst`` in ``cell``: ``ID[cell label]``.  The
    suite's loader admits only ids shown as they are (no control or format character:
    :func:`~pytest_graphinstruct.suite.loader.check_id`), so a node id never acts on a
    terminal."""
    return f"{inst.id}[{cell.label}]"


def is_item_id(nodeid: str) -> bool:
    """Whether ``nodeid`` is a GraphInstruct item's (``ID[cell]``, no file part)."""
    return nodeid.endswith("]") and "[" in nodeid and "::" not in nodeid


def item_done(report: pytest.TestReport) -> bool:
    """Whether ``report`` is the one that decides its item's outcome (the call, or a setup
    that did not pass: no answer, or skipped)."""
    return report.when == "call" or (report.when == "setup" and not report.passed)


BASELINE_FAILURE: Final = "gi_failed_in_baseline"
"""The user property an item carries when it failed in the baseline too (its xfail is then
expected, not a violation to rerun); JUnit XML shows it."""


def baseline_xfail(report: pytest.TestReport) -> bool:
    """An xfail because the item failed in the baseline too (not a benchmark violation)."""
    return any(name == BASELINE_FAILURE for name, _ in getattr(report, "user_properties", ()))
