"""F5, same-family scaling per level (report/analyses/scaling.py): the paired difference by
hand over the instructions both scored, the pairs chosen, errors, and the paper's Tab. 35/15."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.models_table import load_models_table
from pytest_graphinstruct.report.analyses.run_set import read_runs
from pytest_graphinstruct.report.analyses.scaling import scaling, unpaired_interval

from .analyses_data import HALF, family, number, paper_table, published_runs, uniform, write_cell


def test_unpaired_interval() -> None:
    lo, hi = unpaired_interval([1.0] * 10, [0.0] * 10, resamples=100, seed=0)
    assert (lo, hi) == (1.0, 1.0)
    a, b = [0.0, 1.0, 0.5, 0.2], [0.3, 0.1]
    assert unpaired_interval(a, b, resamples=300, seed=4) == \
        unpaired_interval(a, b, resamples=300, seed=4)
    lo, hi = unpaired_interval(a, b, resamples=300, seed=4)
    assert min(a) - max(b) <= lo <= hi <= max(a) - min(b)


def test_scaling_pairs_same_family_models(tmp_path: Path) -> None:
    runs = read_runs(family(tmp_path), load_models_table())
    result = scaling(runs, resamples=200, table=load_models_table())
    row = next(r for r in result.data["rows"] if r["strategy"] == "ZS" and r["level"] == "L0")
    assert (row["a"], row["b"], row["n"]) == ("GPT-4o", "GPT-4o-mini", 4)
    assert row["delta"] == pytest.approx(0.2) and row["paired_low"] == pytest.approx(0.2)
    assert row["paired_crosses_zero"] is False
    assert len(result.data["rows"]) == 4 * 6  # four strategies, six levels
    with pytest.raises(GraphInstructError, match="no plain cells"):
        scaling(runs, pair=("gpt4o", "llama"), table=load_models_table())


def test_the_paired_difference_by_hand_over_common_items(tmp_path: Path) -> None:
    files = [write_cell(tmp_path, "gpt4o", "zero-shot", {0: [0.5, 0.7, 0.9]}),
             write_cell(tmp_path, "gpt4omini", "zero-shot", {0: [0.4, 0.7, 0.6, 0.1]})]
    runs = read_runs(files, load_models_table())
    (row,) = scaling(runs, resamples=500, seed=1).data["rows"]
    # L0-004 only in mini: paired over 001..003, differences 0.1, 0.0, 0.3
    assert row["n"] == 3 and row["delta"] == pytest.approx(0.4 / 3)
    assert 0.0 <= row["paired_low"] <= row["delta"] <= row["paired_high"] <= 0.3 + 1e-9
    assert row["paired_crosses_zero"] is (row["paired_low"] <= 0)
    # a named pair is taken in the order given (A − B), by file name or key
    (swapped,) = scaling(runs, pair=("gpt4omini", "gpt-4o"), resamples=500, seed=1,
                         table=load_models_table()).data["rows"]
    assert (swapped["a"], swapped["b"]) == ("GPT-4o-mini", "GPT-4o")
    assert swapped["delta"] == pytest.approx(-0.4 / 3)


def test_strategies_narrow_the_rows(tmp_path: Path) -> None:
    runs = read_runs(family(tmp_path), load_models_table())
    result = scaling(runs, strategies=("few-shot",), resamples=50)
    assert {r["strategy"] for r in result.data["rows"]} == {"FS"}
    assert result.notes == ("50 resamples, seed 0; paired over the instructions both scored",)


def test_bad_inputs_are_one_line_errors(tmp_path: Path) -> None:
    runs = read_runs(family(tmp_path), load_models_table())
    with pytest.raises(GraphInstructError, match="unknown strategy 'fewshot'"):
        scaling(runs, strategies=("fewshot",))
    with pytest.raises(GraphInstructError, match="--resamples must be at least 1"):
        scaling(runs, resamples=0)
    with pytest.raises(GraphInstructError, match="no two models of one family"):
        scaling([])
    apart = [write_cell(tmp_path, "gpt4o", "zero-shot", uniform(0.5), name="a.quality.json"),
             write_cell(tmp_path, "gpt4omini", "few-shot", uniform(0.5), name="b.quality.json")]
    with pytest.raises(GraphInstructError, match="share no strategy"):
        scaling(read_runs(apart, load_models_table()), resamples=10)


def test_scaling_reproduces_tab_35_and_tab_15() -> None:
    runs = published_runs(baseline_only=True)
    result = scaling(runs, pair=("qwen3535ba3b", "qwen35397ba17b"), resamples=1000, seed=0,
                     table=load_models_table())
    rows = {(r["strategy"], r["level"]): r for r in result.data["rows"]}
    for strategy, delta, paired, unpaired, crosses in paper_table("Table 35:", "The paper")[1:]:
        key = {"zero-shot": "ZS", "few-shot": "FS", "zero-CoT": "ZC", "few-CoT": "FC"}[strategy]
        row = rows[(key, "L5")]
        assert abs(row["delta"] - number(delta)) <= HALF, strategy
        low, high = (number(x) for x in paired.replace("$", "").split(","))
        assert abs(row["paired_low"] - low) <= 0.005 and abs(row["paired_high"] - high) <= 0.005
        ulow, uhigh = (number(x) for x in unpaired.replace("$", "").split(","))
        assert abs(row["unpaired_low"] - ulow) <= 0.01
        assert abs(row["unpaired_high"] - uhigh) <= 0.01
        assert row["paired_crosses_zero"] == crosses.startswith("Yes"), strategy
    # Tab. 15's Qwen rows are few-CoT level scores (397B − 35B)
    for level, delta in (("L3", 0.032), ("L4", 0.024), ("L5", -0.005)):
        assert abs(-rows[("FC", level)]["delta"] - delta) <= 0.0006, level
