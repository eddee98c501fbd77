"""Tab. 19, methods against zero-shot and the per-level Oracle (report/analyses/methods.py):
the Oracle and the deltas by hand, the oracle cell preferred, and the paper's Tab. 19/30."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.methods import methods_table, per_level_oracle
from pytest_graphinstruct.report.analyses.models_table import load_models_table
from pytest_graphinstruct.report.analyses.run_set import read_runs
from pytest_graphinstruct.report.analyses.select import complete_models

from .analyses_data import HALF, family, number, paper_table, published_runs, uniform, write_cell


def test_methods_table_uses_the_oracle_cell_or_the_per_level_best(tmp_path: Path) -> None:
    files = family(tmp_path)
    files.append(write_cell(tmp_path, "gpt4omini", "combined", uniform(0.7)))
    row = methods_table(read_runs(files, load_models_table())).data["rows"][0]
    # per-level best: 0.6 everywhere but L4 (0.7, few-shot)
    assert row["oracle_per_level"] == pytest.approx(0.6 + 0.25 * 0.1)
    assert row["oracle_cell"] is None
    assert row["combined_minus_oracle"] == pytest.approx(0.7 - 0.625)


def test_the_oracle_cell_is_preferred_and_the_long_table_by_hand(tmp_path: Path) -> None:
    files = family(tmp_path)  # mini's zero-shot: 0.6 at TPV 500
    files += [write_cell(tmp_path, "gpt4omini", "combined", uniform(0.7), tpv=2000),
              write_cell(tmp_path, "gpt4omini", "oracle", uniform(0.65), tpv=700),
              write_cell(tmp_path, "gpt4omini", "vgig", uniform(0.68), tpv=1000)]
    result = methods_table(read_runs(files, load_models_table()))
    (row,) = result.data["rows"]
    assert row["zs"] == pytest.approx(0.6) and row["oracle_cell"] == pytest.approx(0.65)
    assert row["vgig"] == pytest.approx(0.68) and row["caap"] is None
    assert row["combined_minus_oracle"] == pytest.approx(0.7 - 0.65)  # the cell's, not 0.625
    long = {r[1]: r for r in result.tables[1].rows}
    _, _, q, vs_zs, vs_oracle, tpv, multiple = long["combined"]
    assert (q, tpv) == pytest.approx((0.7, 2000.0))
    assert (vs_zs, vs_oracle, multiple) == pytest.approx((0.1, 0.05, 4.0))
    assert set(long) == {"combined", "oracle", "vgig"}


def test_a_model_without_plain_cells_has_no_zero_shot_or_oracle(tmp_path: Path) -> None:
    files = [write_cell(tmp_path, "gpt4o", "caap", uniform(0.7))]
    ((display, zs, computed, cell, *rest),) = methods_table(
        read_runs(files, load_models_table())).tables[0].rows
    assert (display, zs, computed, cell) == ("GPT-4o", None, None, None)
    assert rest[1] == pytest.approx(0.7) and rest[-1] is None  # CAAP; no Δ without oracle


def test_a_variant_of_the_methods_is_named(tmp_path: Path) -> None:
    files = [write_cell(tmp_path, "qwen3535ba3b", "zero-shot", uniform(0.5)),
             write_cell(tmp_path, "qwen3535ba3b", "nothink-caap", uniform(0.6))]
    (row,) = methods_table(read_runs(files, load_models_table())).tables[0].rows
    assert str(row[0]).endswith(" (methods: nothink)")


def test_per_level_oracle_by_hand(tmp_path: Path) -> None:
    files = [write_cell(tmp_path, "gpt4o", "zero-shot", {0: [0.2], 1: [0.9]}),
             write_cell(tmp_path, "gpt4o", "few-shot", {0: [0.6], 1: [0.3]})]
    cells = {r.condition: r for r in read_runs(files, load_models_table())}
    # best per level 0.6 (L0) and 0.9 (L1), weights 0.05 and 0.10, over the levels run
    assert per_level_oracle(cells) == pytest.approx((0.05 * 0.6 + 0.10 * 0.9) / 0.15)
    assert per_level_oracle({}) is None


def test_no_method_or_oracle_cell_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(GraphInstructError, match="no method or oracle cell"):
        methods_table(read_runs(family(tmp_path), load_models_table()))
    with pytest.raises(GraphInstructError, match="no method or oracle cell"):
        methods_table([])


@pytest.mark.slow
def test_methods_reproduce_tab_19_where_the_files_do() -> None:
    result = methods_table(published_runs())
    rows = {r["model"].split(" (")[0]: r for r in result.data["rows"]}
    for cells in paper_table("Table 19:", "Mechanism")[1:]:
        model = load_models_table().info(cells[0].replace("-A3B", "")).display
        row = rows[model]
        zs, oracle, vgig, caap, combined = (number(c) for c in cells[1:6])
        assert f"{row['zs']:.4f}" == f"{zs:.4f}"
        assert f"{row['oracle_cell']:.4f}" == f"{oracle:.4f}"
        assert f"{row['combined']:.4f}" == f"{combined:.4f}"
        assert abs(row["combined_minus_oracle"] - number(cells[6])) <= HALF
        # Tab. 19's VGIG and CAAP columns are not in the released files (their vgig/caap
        # files give App. H.2 Tab. 32's values instead): pinned as different
        assert abs(row["vgig"] - vgig) > 0.005 and abs(row["caap"] - caap) > 0.0004
    # the released vgig/caap/retry/sc files are Tab. 32 (H.2) and Tab. 20
    expect = {"GPT-4o-mini": (0.810, 0.800, 0.7488, 0.7510),
              "DeepSeek-V3": (0.863, 0.855, 0.8273, 0.8203)}
    for model, (vgig, caap, retry, sc) in expect.items():
        row = rows[model]
        assert (round(row["vgig"], 3), round(row["caap"], 3)) == (vgig, caap)
        assert (round(row["retry"], 4), round(row["sc"], 4)) == (retry, sc)


def test_the_per_level_oracle_is_app_h1s_full_data_oracle() -> None:
    """Tab. 30's "Full-data Oracle Q" is the per-level best of the four files, Eq. 2."""
    models = complete_models(published_runs(baseline_only=True))
    table = load_models_table()
    by_display = {next(iter(c.values())).display: c for c in models.values()}
    for cells in paper_table("Table 30:", "Table 31:")[1:]:
        name = cells[0].replace(" (target)", "")
        ours = per_level_oracle(by_display[table.info(name).display])
        assert ours is not None and abs(ours - float(cells[1])) <= 0.00051, name
