"""``run_coverage``: complete only when nothing stopped the run and every selected item has a
result; else partial with the first reason that applies."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_graphinstruct.pytest_run.coverage import run_coverage
from pytest_graphinstruct.run.records.results import Coverage, ItemResult

from .fakes import FakeSession


def _result(iid: str, cell: str = "oracle-zero-shot") -> ItemResult:
    return ItemResult(instruction_id=iid, level=int(iid[1]), cell=cell, model="oracle",
                      strategy="zero-shot")


SELECTED = ["L0-001[oracle-zero-shot]", "L1-001[oracle-zero-shot]"]
RESULTS = [_result("L0-001"), _result("L1-001")]


def _coverage(session: FakeSession | None = None, results: list[ItemResult] = RESULTS,
              **kw: Any) -> Coverage:
    given: dict[str, Any] = {"selected": SELECTED, "usage_error": None, "terminated": False,
                             "worker_errors": ()}
    given.update(kw)
    return run_coverage(session or FakeSession(), results, **given)


def test_every_selected_item_with_a_result_is_complete() -> None:
    assert _coverage() == Coverage(selected=2)
    assert _coverage(results=[], selected=[]) == Coverage(selected=0)


def test_selected_items_without_a_result_are_named() -> None:
    got = _coverage(results=[_result("L1-001"), _result("L0-001", "other-cell")])
    assert got == Coverage.partial("1 selected item(s) have no result", selected=2,
                                   missing=["L0-001[oracle-zero-shot]"])


def test_items_a_limit_did_not_ask_say_which_limit() -> None:
    limits = ("token budget exhausted (--gi-max-tokens-total=10)",
              "cost cap reached (--gi-max-cost=0.5 USD)")  # as BenchmarkSession.limits names them
    got = _coverage(results=[_result("L0-001")], limits=limits[:1])
    assert got == Coverage.partial("not asked: token budget exhausted (--gi-max-tokens-total=10)",
                                   selected=2, missing=["L1-001[oracle-zero-shot]"])
    assert got.describe().endswith("; 1 of 2 items have no result")
    assert _coverage(limits=limits).complete  # every item has a result: the limits do not matter


def test_items_never_collected() -> None:
    got = _coverage(selected=None)
    assert got == Coverage.partial("the run stopped before its items were collected")
    assert got.selected is None


@pytest.mark.parametrize(("session", "kw", "reason"), [
    (FakeSession(), {"usage_error": "bad --gi-x"}, "usage error: bad --gi-x"),
    (FakeSession(), {"terminated": True}, "terminated (SIGTERM)"),
    (FakeSession(exitstatus=pytest.ExitCode.INTERRUPTED), {}, "interrupted (Ctrl+C)"),
    (FakeSession(exitstatus=pytest.ExitCode.INTERNAL_ERROR), {},
     "pytest stopped with INTERNAL_ERROR"),
    (FakeSession(exitstatus=pytest.ExitCode.USAGE_ERROR), {}, "pytest stopped with USAGE_ERROR"),
    (FakeSession(), {"worker_errors": ["gw0 died", "gw1 died"]},
     "a worker crashed: gw0 died; gw1 died"),
    (FakeSession(shouldfail="stopping after 1 failures"), {},
     "stopped early: stopping after 1 failures"),
    (FakeSession(shouldstop="Interrupted"), {}, "stopped early: Interrupted"),
])
def test_what_stopped_the_run_makes_it_partial(session: FakeSession, kw: dict[str, Any],
                                               reason: str) -> None:
    got = _coverage(session, **kw)  # every selected item has a result
    assert got == Coverage.partial(reason, selected=2)


def test_the_first_reason_that_applies_wins() -> None:
    stopped = FakeSession(exitstatus=pytest.ExitCode.INTERRUPTED, shouldstop="x")
    everything = {"usage_error": "u", "terminated": True, "worker_errors": ["w"],
                  "selected": None}
    assert _coverage(stopped, **everything).reason == "usage error: u"
    everything.pop("usage_error")
    assert _coverage(stopped, **everything).reason == "terminated (SIGTERM)"
    everything.pop("terminated")
    assert _coverage(stopped, **everything).reason == "interrupted (Ctrl+C)"
    assert _coverage(FakeSession(shouldstop="x"), **everything).reason == "a worker crashed: w"
    everything.pop("worker_errors")
    assert _coverage(FakeSession(shouldstop="x"), **everything).reason == "stopped early: x"
    # a stopped run keeps the missing items it knows of
    got = _coverage(FakeSession(shouldstop="x"), results=[])
    assert got.missing == tuple(SELECTED) and got.missing_count == 2
