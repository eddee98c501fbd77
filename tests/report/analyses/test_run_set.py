"""The set of runs the analyses read (report/analyses/run_set.py): how a cell is classified
(model, variant, condition), and how files and run stores are read."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.models_table import load_models_table
from pytest_graphinstruct.report.analyses.run_set import (
    load_runs,
    method_base,
    read_runs,
    split_condition,
    store_paths,
)
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    Coverage,
    ItemResult,
    ReportError,
    RunReport,
)
from pytest_graphinstruct.run.records.writer import write_report

from .analyses_data import uniform, write_cell


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
    assert method_base("mystery-T5") == "mystery-T5"  # not a method: returned whole


def _our_report(method: str = "vgig-fine@T2", partial: bool = False) -> RunReport:
    meta = CellMetadata("m", "zero-shot", method=method)
    items = [ItemResult(instruction_id=f"L0-00{k}", level=0, cell=meta.label, model="m",
                        strategy="zero-shot", level_score=s, outcome="failed")
             for k, s in ((1, 0.25), (2, 0.75))]
    report = with_pareto([build_cell(meta, items)])
    return replace(report, coverage=Coverage.partial("stopped early")) if partial else report


def test_a_release_file_names_its_variant_and_condition_in_the_strategy(tmp_path: Path) -> None:
    files = [write_cell(tmp_path, "qwen3535ba3b", "nothink-caap", uniform(0.5)),
             write_cell(tmp_path, "qwen3535ba3b", "nothink-few-cot", uniform(0.5)),
             write_cell(tmp_path, "gpt4o", "zero-shot", uniform(0.5))]
    caap, few_cot, plain = read_runs(files, load_models_table())
    assert (caap.variant, caap.condition, caap.is_baseline) == ("nothink", "caap", False)
    assert (few_cot.variant, few_cot.condition, few_cot.is_baseline) == \
        ("nothink", "few-cot", True)
    assert caap.group == f"{caap.model} (nothink)" and caap.display.endswith(" (nothink)")
    # the file's name and the API id are one model: the table's key
    assert (plain.model, plain.group, plain.display, plain.variant) == \
        ("gpt-4o", "gpt-4o", "GPT-4o", None)


def test_our_report_names_the_method_and_a_partial_run_says_so(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    write_report(_our_report(partial=True), path)
    (run,) = read_runs([path], load_models_table())
    assert (run.condition, run.variant, run.is_baseline) == ("vgig-fine@T2", None, False)
    assert run.partial is not None and "stopped early" in run.partial
    assert run.model == "m" and not run.info.known  # unknown model: the name as given
    assert run.quality == pytest.approx(0.5)  # the one level's mean, over the levels run
    assert run.level_items(0) == {"L0-001": 0.25, "L0-002": 0.75} and run.level_items(1) == {}
    assert run.level_score(3) is None
    point = run.point()
    assert (point.model, point.strategy, point.method) == ("m", "vgig-fine@T2", "vgig-fine@T2")


def test_a_baseline_cells_point_has_the_baseline_method(tmp_path: Path) -> None:
    (run,) = read_runs([write_cell(tmp_path, "gpt4o", "few-shot", uniform(0.5), tpv=800)],
                       load_models_table())
    point = run.point()
    assert (point.method, point.strategy, point.cost) == ("baseline", "few-shot", 800.0)
    assert run.partial is None


def test_a_label_in_two_files_is_an_error_unless_they_are_a_store(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    first = write_cell(tmp_path, "gpt4o", "zero-shot", uniform(0.5))
    second = write_cell(tmp_path / "b", "gpt4o", "zero-shot", uniform(0.9))
    table = load_models_table()
    with pytest.raises(ReportError, match=r"cell gpt4o-zero-shot is also in .*gpt4o-zero-shot"):
        read_runs([first, second], table)
    (run,) = read_runs([first, second], table, store=True)  # the later run counts
    assert run.quality == pytest.approx(0.9)


def test_load_runs_takes_files_or_a_store_not_both_nor_neither(tmp_path: Path) -> None:
    path = str(write_cell(tmp_path, "gpt4o", "zero-shot", uniform(0.5)))
    with pytest.raises(GraphInstructError, match="not both"):
        load_runs([path], store=tmp_path)
    with pytest.raises(GraphInstructError, match=r"^no runs: give report files"):
        load_runs([])
    assert [r.label for r in load_runs([path])] == ["gpt4o-zero-shot"]


def test_a_store_that_is_missing_or_empty_is_named(tmp_path: Path) -> None:
    with pytest.raises(GraphInstructError, match="no such folder"):
        store_paths(tmp_path / "absent")
    with pytest.raises(GraphInstructError, match="holds no runs"):
        store_paths(tmp_path)
    with pytest.raises(GraphInstructError, match="holds no runs"):
        load_runs([], store=tmp_path)
