"""The analyses on small synthetic runs (no shared data): classification of cells, each
analysis' arithmetic, the table writers, and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.cot import cot_deltas
from pytest_graphinstruct.report.analyses.methods import methods_table
from pytest_graphinstruct.report.analyses.models_table import load_models_table
from pytest_graphinstruct.report.analyses.run_set import method_base, read_runs, split_condition
from pytest_graphinstruct.report.analyses.scaling import scaling, unpaired_interval
from pytest_graphinstruct.report.analyses.sensitivity import bootstrap_slopes, ols
from pytest_graphinstruct.report.analyses.strategy_effects import dominant, effects
from pytest_graphinstruct.report.analyses.table import AnalysisResult, Table, render
from pytest_graphinstruct.report.analyses.tier_gap import tier_means

from .analyses_data import uniform, write_cell

STRATS = ("zero-shot", "few-shot", "zero-cot", "few-cot")


@pytest.mark.parametrize(("strategy", "expected"), [
    ("zero-shot", (None, "zero-shot")), ("nothink-caap", ("nothink", "caap")),
    ("vgig-T5", (None, "vgig-T5")), ("oracle", (None, "oracle")),
    ("nothink-few-cot", ("nothink", "few-cot")), ("mystery", (None, "mystery")),
])
def test_split_condition(strategy: str, expected: tuple[str | None, str]) -> None:
    assert split_condition(strategy) == expected


def test_method_base() -> None:
    assert [method_base(c) for c in ("vgig-T5", "vgig-fine@T2", "caap", "zero-shot")] == \
        ["vgig", "vgig", "caap", "zero-shot"]


def _family(tmp_path: Path) -> list[Path]:
    """GPT-4o (T2) and GPT-4o-mini (T3) with four strategies; few-shot lifts L4 only."""
    files = []
    for model, base in (("gpt4o", 0.8), ("gpt4omini", 0.6)):
        for s in STRATS:
            levels = uniform(base)
            if s == "few-shot":
                levels[4] = [base + 0.1] * 4
            if s == "zero-cot":
                levels[2] = [base + (0.02 if model == "gpt4o" else -0.04)] * 4
            files.append(write_cell(tmp_path, model, s, levels, tpv=500 if s == "zero-shot"
                                    else 1500))
    return files


def test_tier_gap_rules_on_known_numbers(tmp_path: Path) -> None:
    runs = read_runs(_family(tmp_path), load_models_table())
    per_level, members, _ = tier_means(runs, "best-per-level")
    assert members["T2"] == ["GPT-4o"] and members["T3"] == ["GPT-4o-mini"]
    assert per_level[4]["T2"] == pytest.approx(0.9) and per_level[2]["T3"] == pytest.approx(0.6)
    cells, _, _ = tier_means(runs, "all-cells")
    assert cells[4]["T2"] == pytest.approx((0.8 * 3 + 0.9) / 4)
    with pytest.raises(GraphInstructError, match="unknown tier-gap rule"):
        tier_means(runs, "median")


def test_strategy_effects_and_cot(tmp_path: Path) -> None:
    runs = read_runs(_family(tmp_path), load_models_table())
    eff = effects(runs)
    assert eff[4]["few-shot"] == pytest.approx((0.1, 2, 0, 0))
    assert eff[2]["zero-cot"][1:] == (1, 1, 0) and eff[2]["zero-cot"][0] == pytest.approx(-0.01)
    assert dominant(6, 5, 11) == "MIXED" and dominant(11, 0, 11) == "POS 11/11 (robust)"
    assert dominant(2, 7, 11) == "NEG 7/11"
    rows = {r["model"]: r for r in cot_deltas(runs).data["rows"]}
    assert rows["GPT-4o"]["zc_minus_zs"] == pytest.approx(0.15 * 0.02)
    assert rows["GPT-4o-mini"]["fc_minus_zs"] == pytest.approx(0.0)


def test_ols_and_bootstrap() -> None:
    fit = ols([1.0, 2.0, 3.0, 4.0], [3.0, 5.0, 7.0, 9.0])
    assert (fit.slope, fit.intercept, fit.r2) == pytest.approx((2.0, 1.0, 1.0))
    slopes = bootstrap_slopes([1.0, 2.0, 3.0, 4.0], [3.0, 5.0, 7.0, 9.0], b=200, seed=1)
    assert slopes.shape == (200,) and np.allclose(slopes, 2.0)
    with pytest.raises(ValueError, match="three points"):
        ols([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    lo, hi = unpaired_interval([1.0] * 10, [0.0] * 10, resamples=100, seed=0)
    assert (lo, hi) == (1.0, 1.0)


def test_scaling_pairs_same_family_models(tmp_path: Path) -> None:
    runs = read_runs(_family(tmp_path), load_models_table())
    result = scaling(runs, resamples=200, table=load_models_table())
    row = next(r for r in result.data["rows"] if r["strategy"] == "ZS" and r["level"] == "L0")
    assert (row["a"], row["b"], row["n"]) == ("GPT-4o", "GPT-4o-mini", 4)
    assert row["delta"] == pytest.approx(0.2) and row["paired_low"] == pytest.approx(0.2)
    assert row["paired_crosses_zero"] is False
    with pytest.raises(GraphInstructError, match="no plain cells"):
        scaling(runs, pair=("gpt4o", "llama"), table=load_models_table())


def test_methods_table_uses_the_oracle_cell_or_the_per_level_best(tmp_path: Path) -> None:
    files = _family(tmp_path)
    files.append(write_cell(tmp_path, "gpt4omini", "combined", uniform(0.7)))
    row = methods_table(read_runs(files, load_models_table())).data["rows"][0]
    # per-level best: 0.6 everywhere but L4 (0.7, few-shot)
    assert row["oracle_per_level"] == pytest.approx(0.6 + 0.25 * 0.1)
    assert row["oracle_cell"] is None
    assert row["combined_minus_oracle"] == pytest.approx(0.7 - 0.625)


def test_table_writers_escape_and_keep_precision() -> None:
    result = AnalysisResult("x", "X", (Table("t", ("name", "v"), (("a|b", 0.123456),
                                                                  ("=1", None)), (None, 2)),))
    md = render(result, "markdown")
    assert "a\\|b" in md and "0.12" in md and "—" in md
    assert "'=1" in render(result, "csv") and "0.123456" in render(result, "csv")
    assert json.loads(render(result, "json"))["tables"][0]["rows"][0] == ["a|b", 0.123456]


def test_cli_analyze(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(p) for p in _family(tmp_path)]
    for name in ("tier-gap", "strategy-effects", "cot", "frontier"):
        assert main(["analyze", name, *files, "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["analysis"] == name
    assert main(["analyze", "scaling", "--resamples", "50", *files]) == 0
    assert "GPT-4o-mini" in capsys.readouterr().out
    assert main(["analyze", "methods", *files]) == 2  # no method cell: one line
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["analyze", "cot", "--rule", "all-cells", *files]) == 2
