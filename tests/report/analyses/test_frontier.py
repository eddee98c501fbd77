"""F6, the cost-aware view (report/analyses/frontier.py): the frontier, frontier distance,
Q/kTPV and Cost@Q, checked by hand on three cells and against the paper's Tab. 18."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.frontier import frontier
from pytest_graphinstruct.report.analyses.models_table import load_models_table
from pytest_graphinstruct.report.analyses.run_set import Run, read_runs
from pytest_graphinstruct.report.analyses.table import render

from .analyses_data import paper_table, published_runs, uniform, write_cell


def _three(tmp_path: Path, mini_tpv: float | None = 1000) -> list[Run]:
    """GPT-4o ZS (0.8 at TPV 500), FS (0.9 at 2000); GPT-4o-mini ZS (0.7 at ``mini_tpv``)."""
    files = [write_cell(tmp_path, "gpt4o", "zero-shot", uniform(0.8), tpv=500),
             write_cell(tmp_path, "gpt4o", "few-shot", uniform(0.9), tpv=2000),
             write_cell(tmp_path, "gpt4omini", "zero-shot", uniform(0.7), tpv=mini_tpv)]
    return read_runs(files, load_models_table())


def test_three_cells_by_hand(tmp_path: Path) -> None:
    result = frontier(_three(tmp_path))
    front, fd, top, cost = result.tables
    # on the frontier, by TPV: S_final = S_total · (1 + 0.15)
    assert [r[:4] for r in front.rows] == [("GPT-4o", "ZS", 500.0, 0.8),
                                           ("GPT-4o", "FS", 2000.0, 0.9)]
    assert [r[4] for r in front.rows] == pytest.approx([0.92, 1.035])
    # mini at TPV 1000, halfway between 500 and 2000 on the log scale: the frontier there is
    # 0.85, so its FD is 0.85 − 0.7
    ((model, cond, distance, near),) = fd.rows
    assert (model, cond, near) == ("GPT-4o-mini", "ZS", "")
    assert distance == pytest.approx(0.15) and result.data["median_fd"] == pytest.approx(0.15)
    # Q/kTPV = S_total / (TPV / 1000)
    assert [(r[0], r[1]) for r in top.rows] == [("GPT-4o", "ZS"), ("GPT-4o-mini", "ZS"),
                                                ("GPT-4o", "FS")]
    assert [r[2] for r in top.rows] == pytest.approx([1.6, 0.7, 0.45])
    # Cost@Q=0.8: GPT-4o's ZS and FS reach it, the cheaper is its best; mini never does
    assert cost.rows == (("GPT-4o", "T2", 500.0, 2000.0, None, None, "500"),
                         ("GPT-4o-mini", "T3", None, None, None, None, "never"))
    assert result.notes == ("median FD off the frontier: 0.1500",)


def test_a_cell_near_the_frontier_is_marked(tmp_path: Path) -> None:
    files = [write_cell(tmp_path, "gpt4o", "zero-shot", uniform(0.8), tpv=500),
             write_cell(tmp_path, "gpt4omini", "zero-shot", uniform(0.79), tpv=600)]
    (row,) = frontier(read_runs(files, load_models_table())).tables[1].rows
    assert row[0] == "GPT-4o-mini" and row[2] == pytest.approx(0.01) and row[3] == "near"


def test_the_threshold_moves_cost_at_q(tmp_path: Path) -> None:
    result = frontier(_three(tmp_path), threshold=0.85)
    assert result.tables[3].title.startswith("Cost@Q=0.85")
    assert result.tables[3].rows[0] == ("GPT-4o", "T2", None, 2000.0, None, None, "2000")


def test_a_cell_of_unknown_cost_is_left_out_and_named(tmp_path: Path) -> None:
    result = frontier(_three(tmp_path, mini_tpv=None))
    assert result.notes == ("every cell is on the frontier",
                            "unknown cost, left out: gpt4omini-zero-shot")
    assert result.data["median_fd"] is None


def test_no_cell_with_a_known_cost_is_an_error(tmp_path: Path) -> None:
    files = [write_cell(tmp_path, "gpt4o", "zero-shot", uniform(0.8), tpv=None)]
    with pytest.raises(GraphInstructError, match="no cell has a known cost"):
        frontier(read_runs(files, load_models_table()))
    with pytest.raises(GraphInstructError, match="no cell has a known cost"):
        frontier([])


def test_one_cell_is_its_own_frontier(tmp_path: Path) -> None:
    files = [write_cell(tmp_path, "<b>x</b>", "zero-shot", uniform(0.5), tpv=100,
                        name="x.quality.json")]
    result = frontier(read_runs(files, load_models_table()))
    assert len(result.tables[0].rows) == 1 and result.tables[1].rows == ()
    md = render(result, "markdown")
    assert "<b>" not in md and "\\<b\\>x\\</b\\>" in md


@pytest.mark.slow
def test_frontier_reproduces_tab_18_cost_at_q() -> None:
    result = frontier(published_runs(baseline_only=True))
    matrix = {row[0]: row for row in result.tables[-1].rows}
    table = load_models_table()
    for cells in paper_table("Table 18:", "Mechanism")[1:]:
        row = matrix[table.info(cells[0]).display]
        assert row[1] == cells[1]
        for ours, theirs in zip(row[2:6], cells[2:6], strict=True):
            assert (None if theirs == "—" else int(theirs)) == \
                (None if ours is None else round(float(ours)))
        assert row[6] == cells[6]
    assert result.data["median_fd"] == pytest.approx(0.062, abs=5e-4)
