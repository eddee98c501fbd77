"""F4, chain-of-thought deltas by family (report/analyses/cot.py): by hand on the GPT family,
sign agreement, missing cells, and the paper's Tab. 14."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.cot import cot_deltas
from pytest_graphinstruct.report.analyses.models_table import load_models_table
from pytest_graphinstruct.report.analyses.run_set import read_runs
from pytest_graphinstruct.report.analyses.table import render

from .analyses_data import family, number, paper_table, published_runs, uniform, write_cell


def test_deltas_by_hand_ordered_by_scale_within_the_family(tmp_path: Path) -> None:
    result = cot_deltas(read_runs(family(tmp_path), load_models_table()))
    rows, fams = result.tables
    # zero-CoT moves L2 (weight 0.15) by +0.02 and −0.04; few-CoT changes nothing
    assert [r[:2] for r in rows.rows] == [("GPT", "GPT-4o-mini"), ("GPT", "GPT-4o")]
    assert [r[2] for r in rows.rows] == pytest.approx([0.15 * -0.04, 0.15 * 0.02])
    assert [r[3] for r in rows.rows] == pytest.approx([0.0, 0.0])
    ((fam, n, zc, zc_sign, fc, fc_sign),) = fams.rows
    assert (fam, n, zc_sign, fc_sign) == ("GPT", 2, "mixed or within band",
                                          "mixed or within band")
    assert zc == pytest.approx((0.003 - 0.006) / 2) and fc == pytest.approx(0.0)


@pytest.mark.parametrize(("zc", "expected"), [(0.1, "all positive"), (-0.1, "all negative"),
                                              (0.004, "mixed or within band")])
def test_sign_agreement_outside_the_band(tmp_path: Path, zc: float, expected: str) -> None:
    files = []
    for model in ("gpt4o", "gpt4omini"):
        files += [write_cell(tmp_path, model, "zero-shot", uniform(0.5)),
                  write_cell(tmp_path, model, "zero-cot", uniform(0.5 + zc))]
    result = cot_deltas(read_runs(files, load_models_table()))
    (fam,) = result.tables[1].rows
    assert fam[3] == expected
    assert fam[4:] == (None, "—")  # no few-CoT cell: no delta, no sign


def test_a_model_without_a_family_and_a_hostile_name(tmp_path: Path) -> None:
    evil = "<b>x</b>|y"
    files = [write_cell(tmp_path, evil, "zero-shot", uniform(0.5), name="a.quality.json"),
             write_cell(tmp_path, evil, "few-cot", uniform(0.6), name="b.quality.json")]
    result = cot_deltas(read_runs(files, load_models_table()))
    ((fam, model, zc, fc),) = result.tables[0].rows
    assert (fam, model, zc) == ("—", evil, None) and fc == pytest.approx(0.1)
    md = render(result, "markdown")
    assert evil not in md and "\\<b\\>x\\</b\\>\\|y" in md


def test_no_model_with_a_zero_shot_and_a_cot_cell_is_an_error(tmp_path: Path) -> None:
    only_cot = [write_cell(tmp_path, "gpt4o", "zero-cot", uniform(0.5))]
    only_zs = [write_cell(tmp_path, "gpt4omini", "zero-shot", uniform(0.5))]
    for files in (only_cot, only_zs, []):
        with pytest.raises(GraphInstructError, match="need a model with a zero-shot and a CoT"):
            cot_deltas(read_runs(files, load_models_table()))


def test_cot_deltas_reproduce_tab_14() -> None:
    result = cot_deltas(published_runs(baseline_only=True))
    ours = {row["model"]: row for row in result.data["rows"]}
    table = load_models_table()
    for family_name, model, zc, fc in paper_table("Table 14:", "Figure 8")[1:]:
        name = {"Qwen3.5": f"Qwen3.5-{model}", "GPT": f"GPT-{model}"}[family_name]
        row = ours[table.info(name.replace("-turbo", "")).display]
        # the paper rounds half away from zero from 4-decimal values (−0.0045 → −0.005)
        assert abs(row["zc_minus_zs"] - number(zc)) <= 0.0006, model
        assert abs(row["fc_minus_zs"] - number(fc)) <= 0.0006, model
