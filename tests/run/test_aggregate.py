"""Item results → cell reports → the run report: counts, per-level rows, S_total, cost and usage
sources over scored items only, the Pareto marks (none for a lone cell), suite order."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_graphinstruct.run.aggregate import (
    build_cell,
    build_run_report,
    cell_point,
    cost_of,
    usage_sources,
    with_pareto,
)
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    Coverage,
    ItemResult,
    SampleResult,
)


def _item(iid: str, outcome: str = "passed", score: float | None = 0.5, cell: str = "m-zero-shot",
          **kw: Any) -> ItemResult:
    model, _, strategy = cell.partition("-")
    return ItemResult(instruction_id=iid, level=int(iid[1]), cell=cell, model=model,
                      strategy=strategy, outcome=outcome, level_score=score, **kw)


def test_errors_and_skips_are_counted_never_scored() -> None:
    items = [_item("L1-001", score=1.0, tokens=100, d5_valid=1, api_calls=1),
             _item("L1-002", "failed", score=0.0, tokens=50, d5_valid=0, api_calls=2),
             _item("L1-003", "error", score=None, tokens=999, api_calls=3),
             _item("L2-001", "skipped", score=None)]
    cell = build_cell(CellMetadata("m", "zero-shot"), items)
    s = cell.summary
    assert (s.items, s.passed, s.failed, s.error, s.skipped) == (4, 1, 1, 1, 1)
    assert s.api_calls == 6 and s.tokens_total == 150  # the error's tokens are not the model's
    row = cell.per_level[1]
    assert (row.items, row.pass_rate, row.level_score, row.scored_items) == (3, 0.5, 0.5, 2)
    assert cell.per_level[2].pass_rate is None and cell.per_level[2].level_score is None
    assert s.levels_present == (1,) and 2 in s.levels_missing
    assert cell.per_instruction == tuple(items)


def test_a_cell_without_scores_has_no_intervals() -> None:
    cell = build_cell(CellMetadata("m", "zero-shot"), [_item("L0-001", "error", score=None)])
    assert cell.summary.s_total_ci95 is None and cell.per_level[0].level_score_ci95 is None
    assert build_cell(CellMetadata("m", "zero-shot"), []).summary.items == 0


def test_the_missing_dimensions_are_those_of_scored_items() -> None:
    items = [_item("L0-001", missing_dimensions=("D3",)),
             _item("L0-002", "error", score=None, missing_dimensions=("D5",))]
    assert build_cell(CellMetadata("m", "zero-shot"), items).metadata.missing_dimensions == (
        "D3",)


def test_usage_sources_count_samples_of_scored_items_sorted() -> None:
    def sample(source: str | None) -> SampleResult:
        return SampleResult(parsed=True, refusal=False, usage_source=source)

    items = [_item("L0-001", samples=(sample("tiktoken:o200k"), sample(None))),
             _item("L0-002", samples=(sample("provider"), sample("provider"))),
             _item("L0-003", "error", score=None, samples=(sample("recorded"),))]
    assert list(usage_sources(items).items()) == [("none", 1), ("provider", 2),
                                                  ("tiktoken:o200k", 1)]


def test_cost_is_tokens_per_valid_output_over_scored_items() -> None:
    cost = cost_of([_item("L0-001", tokens=300, d5_valid=2), _item("L0-002", tokens=100,
                                                                    d5_valid=1),
                    _item("L0-003", "skipped", score=None, tokens=5000, d5_valid=9)])
    assert (cost.tokens, cost.valid, cost.tpv) == (400, 3, pytest.approx(400 / 3))


def test_a_lone_cell_compares_with_nothing() -> None:
    report = with_pareto([build_cell(CellMetadata("m", "zero-shot"),
                                     [_item("L0-001", score=0.8, tokens=10, d5_valid=1)])])
    s = report.cells[0].summary
    assert s.pareto_optimal is None and s.pareto_bonus is None
    assert s.frontier_distance is None and s.s_final == s.s_total
    assert report.tool is not None and report.tool.startswith("pytest-graphinstruct ")


def test_two_cells_get_their_frontier_marks() -> None:
    good = build_cell(CellMetadata("m", "zero-shot"),
                      [_item("L0-001", score=0.9, tokens=10, d5_valid=1)])
    poor = build_cell(CellMetadata("m", "few-shot"),
                      [_item("L0-001", score=0.2, tokens=90, d5_valid=1, cell="m-few-shot")])
    report = with_pareto([good, poor], partial=True, tool=None)
    a, b = (c.summary for c in report.cells)
    assert a.pareto_optimal is True and b.pareto_optimal is False
    assert a.pareto_compared_cells == b.pareto_compared_cells == 2
    assert report.partial and report.tool is None
    assert cell_point(good).quality == good.summary.s_total_renormalized
    assert cell_point(good).cost == good.summary.tpv


def test_the_run_report_puts_items_in_suite_order() -> None:
    order = {"L0-001": 0, "L1-001": 1, "L2-001": 2}
    items = [_item("L2-001"), _item("L0-001"), _item("L1-001")]
    report = build_run_report([(CellMetadata("m", "zero-shot"), items)], suite_order=order)
    assert [r.instruction_id for r in report.cells[0].per_instruction] == [
        "L0-001", "L1-001", "L2-001"]
    assert report.coverage == Coverage()
    partial = Coverage.partial("stopped")
    assert build_run_report([], suite_order=order, coverage=partial).coverage == partial
