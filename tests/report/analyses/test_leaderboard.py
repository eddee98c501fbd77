"""The leaderboard: ranks, cross-cell numbers, formats and escaping, the command line, the run
store, and (when ../shared is there) the paper's 45-row leaderboard, Tab. 16 and the top 15."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.report.analyses.leaderboard import (
    CSV_COLUMNS,
    build_leaderboard,
    render,
)
from pytest_graphinstruct.report.analyses.models_table import load_models_table
from pytest_graphinstruct.report.analyses.run_set import read_runs
from pytest_graphinstruct.run.store import RunStore

from .analyses_data import (
    TOP15,
    number,
    paper_table,
    published_files,
    published_runs,
    uniform,
    write_cell,
)

ABBREV = {"ZS": "zero-shot", "FS": "few-shot", "ZC": "zero-cot", "FC": "few-cot"}


def _three(tmp_path: Path) -> list[Path]:
    return [write_cell(tmp_path, "gpt4o", "zero-shot", uniform(0.8), tpv=500),
            write_cell(tmp_path, "gpt4o", "few-shot", uniform(0.9), tpv=2000),
            write_cell(tmp_path, "gpt4omini", "zero-shot", uniform(0.7), tpv=800)]


def test_rows_are_ranked_by_s_total_and_by_s_final(tmp_path: Path) -> None:
    board = build_leaderboard(read_runs(_three(tmp_path), load_models_table()))
    assert [(r.model, r.condition, r.rank_total) for r in board.rows] == [
        ("GPT-4o", "few-shot", 1), ("GPT-4o", "zero-shot", 2), ("GPT-4o-mini", "zero-shot", 3)]
    by = {r.label: r for r in board.rows}
    # GPT-4o-mini is dominated (dearer and worse than GPT-4o zero-shot): no bonus
    assert by["gpt4omini-zero-shot"].pareto_optimal is False
    assert by["gpt4o-zero-shot"].s_final == pytest.approx(0.8 * 1.15)
    assert by["gpt4o-few-shot"].s_final == pytest.approx(0.9 * 1.15)
    assert [r.label for r in board.by_final()] == ["gpt4o-few-shot", "gpt4o-zero-shot",
                                                   "gpt4omini-zero-shot"]
    assert by["gpt4o-zero-shot"].q_per_ktpv == pytest.approx(0.8 / 0.5)
    # q* interpolates the frontier in log TPV (paper §3.3): 0.8 + 0.1·ln(800/500)/ln(2000/500)
    expected = 0.8 + 0.1 * math.log(800 / 500) / math.log(2000 / 500) - 0.7
    assert by["gpt4omini-zero-shot"].frontier_distance == pytest.approx(expected)
    assert by["gpt4o-zero-shot"].levels[3] == pytest.approx(0.8)
    assert by["gpt4o-zero-shot"].dimensions["D4"] == pytest.approx(0.8)
    costs = {c.model: c for c in board.cost_at_q}
    assert costs["GPT-4o"].cost == 500 and costs["GPT-4o"].cell == "gpt4o-zero-shot"
    assert costs["GPT-4o-mini"].cost is None


def test_a_cell_without_cost_is_ranked_by_quality_only(tmp_path: Path) -> None:
    files = [*_three(tmp_path), write_cell(tmp_path, "gpt41", "zero-shot", uniform(0.95),
                                           tpv=None)]
    board = build_leaderboard(read_runs(files, load_models_table()))
    row = next(r for r in board.rows if r.label == "gpt41-zero-shot")
    assert (row.rank_total, row.s_final, row.rank_final, row.tpv) == (1, None, None, None)
    assert board.unknown_cost == ("gpt41-zero-shot",)
    assert "gpt41-zero-shot" not in [r.label for r in board.by_final()]


def test_formats_agree_and_escape_names(tmp_path: Path) -> None:
    evil = "<script>x</script>|=cmd"
    files = [*_three(tmp_path),
             write_cell(tmp_path, evil, "zero-shot", uniform(0.5), name="evil.quality.json")]
    board = build_leaderboard(read_runs(files, load_models_table()))
    md = render(board, "markdown")
    assert "<script>" not in md and "\\<script\\>x\\</script\\>\\|=cmd" in md
    page = render(board, "html")
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert page.startswith("<!DOCTYPE html>") and "http" not in page.lower()
    rows = list(csv.reader(io.StringIO(render(board, "csv"))))
    assert tuple(rows[0]) == CSV_COLUMNS and len(rows) == 5
    assert [r[CSV_COLUMNS.index("model")] for r in rows[1:]][-1] == evil
    data = json.loads(render(board, "json"))
    assert data["schema"] == "graphinstruct-leaderboard/1"
    assert [r["label"] for r in data["rows"]] == [r.label for r in board.rows]


def test_csv_guards_against_formulas(tmp_path: Path) -> None:
    files = [write_cell(tmp_path, "=HYPERLINK(1)", "zero-shot", uniform(0.5),
                        name="formula.quality.json")]
    rows = list(csv.reader(io.StringIO(render(build_leaderboard(
        read_runs(files, load_models_table())), "csv"))))
    assert rows[1][CSV_COLUMNS.index("model")] == "'=HYPERLINK(1)"


def test_cli_writes_every_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(p) for p in _three(tmp_path)]
    for fmt in ("markdown", "csv", "json", "html"):
        out = tmp_path / f"board.{fmt}"
        assert main(["analyze", "leaderboard", *files, "--format", fmt, "--out", str(out)]) == 0
        assert out.read_text(encoding="utf-8").strip()
    assert main(["analyze", "leaderboard", "--format", "csv", *files]) == 0  # files after options
    assert capsys.readouterr().out.count("\n") >= 4


@pytest.mark.parametrize("argv", [["analyze", "leaderboard"],
                                  ["analyze", "leaderboard", "nope.json"],
                                  ["analyze", "leaderboard", "--store", "absent-store"],
                                  ["analyze", "leaderboard", "x.json", "--store", "s"]])
def test_cli_errors_are_one_line(argv: list[str], tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_the_store_keeps_the_latest_run_of_a_cell(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    store = RunStore(tmp_path / "runs")
    src = tmp_path / "src"
    src.mkdir()
    store.save(write_cell(src, "gpt4o", "zero-shot", uniform(0.6), name="a.json"))
    store.save(write_cell(src, "gpt4omini", "zero-shot", uniform(0.7), name="b.json"))
    store.save(write_cell(src, "gpt4o", "zero-shot", uniform(0.8), name="c.json"))
    assert main(["analyze", "leaderboard", "--store", str(tmp_path / "runs"),
                 "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [(r["label"], round(r["s_total"], 4)) for r in rows] == [
        ("gpt4o-zero-shot", 0.8), ("gpt4omini-zero-shot", 0.7)]


# -- the published score files -----------------------------------------------------------------

def _key(model: str, strategy: str) -> tuple[str, str]:
    return (load_models_table().info(model.rstrip("†")).key,
            ABBREV.get(strategy, strategy.lower()))


@pytest.mark.slow
def test_reproduces_the_45_row_leaderboard() -> None:
    """App. G, Tab. 29: rank, model, strategy, S_total and L0–L5, to the paper's 3 decimals."""
    board = build_leaderboard([r for r in published_runs() if r.is_baseline])
    paper = [r for r in paper_table("Table 29:", "Appendix H") if r[0].isdigit()]
    assert len(board.rows) == len(paper) == 45
    for row, cells in zip(board.rows, paper, strict=True):
        run_key = (load_models_table().info(row.model).key, row.condition)
        assert run_key == _key(cells[1], cells[2]), cells
        assert row.rank_total == int(cells[0])
        for ours, theirs in zip([row.s_total, *row.levels.values()], cells[3:10], strict=True):
            assert abs(ours - number(theirs)) <= 0.0005 + 1e-9, (cells, ours)


@pytest.mark.slow
def test_reproduces_the_top_15_csv() -> None:
    """tab1_quality_top15.csv: every column to its 4 decimals; TPV to the token."""
    published_files()
    board = build_leaderboard([r for r in published_runs() if r.is_baseline])
    with TOP15.open(encoding="utf-8") as f:
        top = list(csv.DictReader(f))
    for row, ref in zip(board.rows, top, strict=False):
        assert (load_models_table().info(row.model).key, row.condition) == \
            _key(ref["Model"], ref["Strategy"])
        assert row.rank_total == int(ref["Rank"])
        assert f"{row.s_total:.4f}" == ref["Quality (Total)"]
        for lv in range(6):
            assert f"{row.levels[lv]:.4f}" == ref[f"L{lv}"]
        assert round(row.tpv or 0) == int(ref["TPV"])
        # the file's "Final" is the release's final_score = S_total (no bonus: release notes
        # §7.17); ours is Eq. 3 over all 45 cells, equal off the frontier
        if not row.pareto_optimal:
            assert f"{row.s_final:.4f}" == ref["Final (Pareto-adj)"]


@pytest.mark.slow
def test_reproduces_the_frontier_of_tab_16_and_s_final_of_tab_17() -> None:
    board = build_leaderboard([r for r in published_runs() if r.is_baseline])
    front = sorted((r for r in board.rows if r.pareto_optimal), key=lambda r: r.tpv or 0)
    paper = [r for r in paper_table("Table 16:", "Figure 10") if r[0] != "Model"]
    assert len(front) == len(paper) == 6
    for row, cells in zip(front, paper, strict=True):
        assert (load_models_table().info(row.model).key, row.condition) == \
            _key(cells[0], cells[1])
        assert round(row.tpv or 0) == int(cells[2])
        assert f"{row.s_total:.4f}" == cells[3] and f"{row.s_final:.4f}" == cells[4]
    ranks = {(r.model, r.condition): (r.rank_final, r.rank_total) for r in board.rows}
    assert ranks[("GPT-4o", "zero-shot")] == (6, 24)       # the +18 climb of §5.3
    assert ranks[("Qwen3.5-397B", "few-cot")] == (7, 3)    # and the fall #3 → #7


def test_markdown_says_when_s_total_is_over_the_levels_run(tmp_path: Path) -> None:
    from pytest_graphinstruct.report.analyses.leaderboard import to_markdown

    full = build_leaderboard(read_runs(_three(tmp_path), load_models_table()))
    assert "renormalized to those levels" not in to_markdown(full)
    some = write_cell(tmp_path, "gpt41", "zero-shot", {1: [0.9] * 4, 2: [0.8] * 4}, tpv=600)
    board = build_leaderboard(read_runs([*_three(tmp_path), some], load_models_table()))
    assert ("1 cell(s) did not run every level, and their S_total is renormalized to those "
            "levels") in to_markdown(board)


def _interrupted_one_item_run(folder: Path) -> Path:
    """Our report of a run interrupted after one item (coverage partial), scoring 0.95."""
    from dataclasses import replace

    from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
    from pytest_graphinstruct.run.records.results import CellMetadata, Coverage, ItemResult
    from pytest_graphinstruct.run.records.writer import report_json

    item = ItemResult(instruction_id="L1-001", level=1, cell="gpt41-zero-shot", model="gpt41",
                      strategy="zero-shot", outcome="passed", level_score=0.95, tokens=100,
                      d5_valid=1, api_calls=1)
    report = replace(with_pareto([build_cell(CellMetadata("gpt41", "zero-shot"), [item])]),
                     coverage=Coverage.partial("interrupted (Ctrl+C)", selected=30,
                                               missing=[f"L1-{n:03d}" for n in range(2, 31)]))
    path = folder / "interrupted.json"
    path.write_text(report_json(report), encoding="utf-8")
    return path


def test_a_partial_run_is_marked_in_every_format(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    store = RunStore(tmp_path / "runs")
    src = tmp_path / "src"
    src.mkdir()
    store.save(write_cell(src, "gpt4o", "zero-shot", uniform(0.8), name="a.json"))
    store.save(_interrupted_one_item_run(src))
    outputs = {}
    for fmt in ("markdown", "csv", "json", "html"):
        assert main(["analyze", "leaderboard", "--store", str(tmp_path / "runs"),
                     "--format", fmt]) == 0
        outputs[fmt] = capsys.readouterr().out
    md = outputs["markdown"].splitlines()
    ranked = [line for line in md if "gpt-4.1" in line or "GPT-4.1" in line]
    assert ranked and all("partial" in line for line in ranked[:2])
    assert any(line.startswith("Partial: ") and "interrupted (Ctrl+C); 29 of 30 items have no "
               "result" in line for line in md)
    rows = list(csv.DictReader(io.StringIO(outputs["csv"])))
    assert [r["partial"] for r in rows] == ["partial: interrupted (Ctrl+C); 29 of 30 items "
                                            "have no result", ""]
    data = json.loads(outputs["json"])
    assert [r["partial"] for r in data["rows"]] == [rows[0]["partial"], None]
    assert "partial run" in outputs["html"] and "29 of 30 items have no result" in outputs["html"]
