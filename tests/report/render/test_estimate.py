"""The dry run's table and its notes."""

from __future__ import annotations

from pytest_graphinstruct.report.render.estimate import estimate_lines
from pytest_graphinstruct.run.estimate import CellEstimate, RunEstimate


def _estimate(*cells: CellEstimate, time_s: float = 42.0,
              rate_limit: float | None = None) -> RunEstimate:
    return RunEstimate(cells, "USD", "2025-04-15", "prices.json", time_s, 8, rate_limit)


def test_one_row_per_cell_and_a_total_with_both_prices() -> None:
    lines = estimate_lines(_estimate(
        CellEstimate("m-zero-shot", "m", 10, 1000, 500, 0.25, 0.125, from_baseline=True),
        CellEstimate("m-few-shot", "m", 10, 3000, 500, 0.5, 0.25, from_baseline=True)))
    assert lines[0] == "GraphInstruct dry run: nothing was sent"
    header = lines[1]
    for column in ("requests", "input tokens", "output tokens (est.)", "cost (list)",
                   "cost (batch)"):
        assert column in header
    total = next(line for line in lines if line.startswith("total"))
    assert total.split()[:4] == ["total", "20", "4000", "~1000"]
    assert "0.7500 USD" in total and "0.3750 USD" in total
    assert any(line.startswith("time: ~42s (concurrency 8;") for line in lines)
    assert any("taken 2025-04-15" in line and "change" in line for line in lines)
    assert not any("default per level" in line or "iterative" in line for line in lines)


def test_what_is_left_out_or_assumed_is_said() -> None:
    lines = estimate_lines(_estimate(
        CellEstimate("x-zero-shot-vgig", "x", 3, 300, 90, None, None, follow_ups=True),
        time_s=3725, rate_limit=2.0))
    text = "\n".join(lines)
    assert "x-zero-shot-vgig *" in text and "no price" in text
    assert "no price for x: give one with --gi-prices=FILE" in text
    assert "follow-up calls depend on the answers and are not included" in text
    assert "output tokens: default per level" in text
    assert "time: ~1h02m (concurrency 8, at most 2 requests/s;" in text
