"""The run's estimate: requests and input tokens counted on the requests the run builds,
output tokens from a baseline or the defaults, cost, time."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.answers import MethodStep
from pytest_graphinstruct.models.backends.tokens import TokenCounter
from pytest_graphinstruct.models.cost.prices import ModelPrice, PriceTable
from pytest_graphinstruct.run.config import Cell, RunConfig, build_run_config
from pytest_graphinstruct.run.estimate import (
    ASSUMED_OVERHEAD_S,
    ASSUMED_TOKENS_PER_S,
    DEFAULT_OUTPUT_TOKENS,
    estimate_run,
    output_averages,
)
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    CellReport,
    CellSummary,
    ItemResult,
    RunReport,
    SampleResult,
)
from pytest_graphinstruct.run.requests import RequestBuilder
from pytest_graphinstruct.run.session_inputs import SessionInputs
from pytest_graphinstruct.suite.instruction import Instruction
from tests.plugin._suite import write_suite

PRICES = PriceTable("USD", "2025-01-01", {"m": ModelPrice(1_000_000, 2_000_000, 0.5)},
                    origin="test.json")


def _setup(tmp_path: Path, **raw: object) -> tuple[RunConfig, SessionInputs, RequestBuilder]:
    suite = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "m", "suite": str(suite), "no_cache": True, **raw},
                           rootdir=tmp_path)
    assert run is not None
    inputs = SessionInputs(run, worker=None, inputs=None, served=None)
    return run, inputs, RequestBuilder(inputs)


def _items(run: RunConfig, inputs: SessionInputs) -> list[tuple[Instruction, Cell]]:
    return [(inst, cell) for cell in run.cells for inst in inputs.suite]


def test_input_tokens_are_counted_on_the_requests_the_run_sends(tmp_path: Path) -> None:
    run, inputs, builder = _setup(tmp_path, samples="2", strategy="zero-shot,few-shot",
                                  max_tokens="300", concurrency="2")
    items = _items(run, inputs)
    est = estimate_run(run, items, builder, inputs.samples, PRICES)
    counter = TokenCounter("cl100k_base")
    expected = sum(counter.count_messages((m.role, m.content)
                                          for m in builder.request(inst, cell, k).messages)
                   for inst, cell in items for k in range(2))
    assert est.requests == len(items) * 2 and est.input_tokens == expected
    assert [c.cell for c in est.cells] == ["m-zero-shot", "m-few-shot"]
    outs = sum(min(300, DEFAULT_OUTPUT_TOKENS[inst.level]) * 2 for inst, _ in items)
    assert est.output_tokens == outs and not any(c.from_baseline for c in est.cells)
    assert est.total() == pytest.approx(est.input_tokens + 2 * est.output_tokens)
    assert est.total(batch=True) == pytest.approx(est.total() / 2)
    seconds = est.requests * ASSUMED_OVERHEAD_S + outs / ASSUMED_TOKENS_PER_S
    assert est.time_s == pytest.approx(seconds / 2)


def test_the_rate_limit_bounds_the_time_below(tmp_path: Path) -> None:
    run, inputs, builder = _setup(tmp_path, rate_limit="0.1")
    est = estimate_run(run, _items(run, inputs), builder, inputs.samples, PRICES)
    assert est.time_s == pytest.approx(est.requests / 0.1)


def test_an_iterative_cell_counts_first_calls_and_shares_only_identical_requests(
        tmp_path: Path) -> None:
    run, inputs, builder = _setup(tmp_path, method="none,vgig", chains="3")
    items = _items(run, inputs)
    est = estimate_run(run, items, builder, inputs.samples, PRICES)
    plain, vgig = est.cells
    assert not plain.follow_ups and vgig.follow_ups
    n = len(inputs.suite)
    assert plain.requests == n
    # a chain's first call is at the chain's temperature, so chain 0's is not the plain cell's
    # sample 0 (the run sends both: tests/plugin/test_spend_run.py)
    assert vgig.requests == 3 * n
    run, inputs, builder = _setup(tmp_path, method="vgig,retry", chains="3")
    first, second = estimate_run(run, _items(run, inputs), builder, inputs.samples,
                                 PRICES).cells
    # retry's chains start with the same calls as vgig's (one cache key each): sent once
    assert (first.requests, second.requests) == (3 * n, 0)


def test_a_model_without_a_price_has_no_cost(tmp_path: Path) -> None:
    run, inputs, builder = _setup(tmp_path)
    table = PriceTable("USD", "2025-01-01", {"other": ModelPrice(1, 1)})
    est = estimate_run(run, _items(run, inputs), builder, inputs.samples, table)
    assert est.unpriced == ("m",) and est.total() is None and est.cells[0].cost is None
    assert est.input_tokens > 0


def _baseline(cell_model: str, outputs: dict[int, list[int]]) -> RunReport:
    items = tuple(
        ItemResult(instruction_id=f"L{level}-00{i}", level=level, cell=f"{cell_model}-zero-shot",
                   model=cell_model, strategy="zero-shot",
                   samples=(SampleResult(parsed=True, refusal=False, output_tokens=out),))
        for level, outs in outputs.items() for i, out in enumerate(outs))
    summary = CellSummary(items=len(items), passed=len(items), failed=0, error=0, skipped=0,
                          s_total=None, s_total_renormalized=None)
    return RunReport((CellReport(CellMetadata(model=cell_model, strategy="zero-shot"), summary,
                                 {}, items),))


def test_output_tokens_come_from_the_baseline_per_level(tmp_path: Path) -> None:
    baseline = _baseline("m", {1: [10, 30]})
    assert output_averages(baseline, "m-zero-shot") == {1: 20.0}
    assert output_averages(baseline, "absent-cell") == {1: 20.0}  # all cells pooled
    run, inputs, builder = _setup(tmp_path)
    items = _items(run, inputs)
    est = estimate_run(run, items, builder, inputs.samples, PRICES, baseline)
    assert est.cells[0].from_baseline
    expected = sum(20 if inst.level == 1 else DEFAULT_OUTPUT_TOKENS[inst.level]
                   for inst, _ in items)
    assert est.output_tokens == expected


def test_an_iterative_baseline_sample_counts_its_first_call() -> None:
    step = MethodStep(round=0, source="round0", temperature=0.7, input_tokens=5,
                      output_tokens=7, calls=1, d4=None, passed=False, kept=True)
    sample = SampleResult(parsed=True, refusal=False, output_tokens=70, steps=(step,))
    item = ItemResult(instruction_id="L2-001", level=2, cell="m-zero-shot-vgig", model="m",
                      strategy="zero-shot", method="vgig", samples=(sample,))
    summary = CellSummary(items=1, passed=1, failed=0, error=0, skipped=0, s_total=None,
                          s_total_renormalized=None)
    report = RunReport((CellReport(CellMetadata(model="m", strategy="zero-shot",
                                                method="vgig"), summary, {}, (item,)),))
    assert output_averages(report, None) == {2: 7.0}
