"""A cell's consistency rows: counted from the items' recorded verdicts, errors left out and
counted, one k for the cell, flaky items in order; and how aggregation writes them (only with
two or more samples)."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.run.aggregate import build_cell
from pytest_graphinstruct.run.consistency import measure, tally
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    FlakyItem,
    ItemResult,
    SampleResult,
)

_OK = SampleResult(parsed=True, refusal=False)
_BAD = SampleResult(parsed=True, refusal=False, violations=("num_nodes=3",))
_NO_PARSE = SampleResult(parsed=False, refusal=False, error="no graph")


def _item(iid: str, *samples: SampleResult, outcome: str = "failed",
          passing: int | None = None) -> ItemResult:
    return ItemResult(instruction_id=iid, level=int(iid[1]), cell="m-zero-shot", model="m",
                      strategy="zero-shot", outcome=outcome, samples=samples,
                      level_score=0.5 if outcome in ("passed", "failed") else None,
                      passing_samples=passing)


def test_a_tally_reads_the_kept_count_else_the_recorded_samples() -> None:
    assert tally(_item("L1-001", _OK, _BAD, _OK, passing=2)) is not None
    t = tally(_item("L1-001", _OK, _BAD, _NO_PARSE))
    assert t is not None and (t.n, t.c) == (3, 1)
    kept = tally(_item("L1-001", _OK, _BAD, _NO_PARSE, passing=2))  # the verdicts' own count
    assert kept is not None and kept.c == 2
    assert tally(_item("L1-002", outcome="error")) is None
    assert tally(_item("L1-003", outcome="skipped")) is None


def test_a_cells_rows_flaky_items_and_left_out_errors() -> None:
    items = [_item("L1-001", _OK, _OK, _OK, outcome="passed"),
             _item("L1-002", _OK, _BAD, _BAD),
             _item("L1-003", outcome="error"),
             _item("L2-001", _BAD, _BAD, _BAD),
             _item("L2-002", _OK, _OK, _BAD, outcome="passed")]
    got = measure(items)
    assert got is not None and got.k == 3
    l1, l2, cell = got.levels[1], got.levels[2], got.cell
    assert (l1.items, l1.left_out, l1.flaky) == (2, 1, 1)
    assert (l1.pass_at_1, l1.pass_at_k, l1.pass_all_k) == pytest.approx((2 / 3, 1.0, 0.5))
    assert (l2.items, l2.left_out, l2.flaky) == (2, 0, 1)
    assert (l2.pass_at_1, l2.pass_at_k, l2.pass_all_k) == pytest.approx((1 / 3, 0.5, 0.0))
    assert (cell.items, cell.left_out, cell.flaky, cell.k) == (4, 1, 2, 3)
    assert (cell.pass_at_1, cell.pass_at_k, cell.pass_all_k) == pytest.approx((0.5, 0.75, 0.25))
    assert got.flaky == (FlakyItem("L1-002", 1, 1, 3), FlakyItem("L2-002", 2, 2, 3))
    assert cell.pass_all_k_ci95[0] <= cell.pass_all_k <= cell.pass_all_k_ci95[1]


def test_nothing_to_measure_without_samples() -> None:
    assert measure([_item("L1-001", outcome="error")]) is None
    assert measure([]) is None


def test_aggregation_writes_the_rows_only_with_two_or_more_samples() -> None:
    meta = CellMetadata("m", "zero-shot")
    one = build_cell(meta, [_item("L1-001", _OK, outcome="passed"), _item("L1-002", _BAD)])
    assert one.flaky is None and one.summary.consistency is None
    assert all(row.consistency is None for row in one.per_level.values())
    assert "flaky" not in one.to_json() and "consistency" not in one.to_json()["summary"]
    three = build_cell(meta, [_item("L1-001", _OK, _BAD, _OK, passing=2),
                              _item("L2-001", _OK, _OK, _OK, passing=3, outcome="passed")])
    assert three.flaky == (FlakyItem("L1-001", 1, 2, 3),)
    assert three.summary.consistency is not None and three.summary.consistency.k == 3
    row = three.per_level[2].consistency
    assert row is not None and row.pass_all_k == 1.0
    assert type(three).from_json(three.to_json()) == three


def test_a_cell_without_flaky_items_writes_an_empty_list() -> None:
    cell = build_cell(CellMetadata("m", "zero-shot"),
                      [_item("L1-001", _OK, _OK, passing=2, outcome="passed")])
    assert cell.flaky == ()
    assert cell.to_json()["flaky"] == []
