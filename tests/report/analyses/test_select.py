"""Choosing an analysis's cells (report/analyses/select.py): each model's plain cells by
strategy, and the models that ran all four."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.models_table import load_models_table
from pytest_graphinstruct.report.analyses.run_set import read_runs
from pytest_graphinstruct.report.analyses.select import baseline_by_model, complete_models

from .analyses_data import STRATS, uniform, write_cell


def test_plain_cells_by_model_and_strategy_in_first_seen_order(tmp_path: Path) -> None:
    files = [write_cell(tmp_path, "gpt4omini", "few-shot", uniform(0.5)),
             write_cell(tmp_path, "gpt4o", "zero-shot", uniform(0.5)),
             write_cell(tmp_path, "gpt4omini", "zero-shot", uniform(0.5)),
             write_cell(tmp_path, "gpt4o", "caap", uniform(0.9)),  # a method: left out
             write_cell(tmp_path, "gpt4o", "oracle", uniform(0.9)),
             write_cell(tmp_path, "qwen3535ba3b", "nothink-zero-shot", uniform(0.5))]
    by_model = baseline_by_model(read_runs(files, load_models_table()))
    assert list(by_model) == ["gpt-4o-mini", "gpt-4o", "qwen3.5-35b-a3b (nothink)"]
    assert list(by_model["gpt-4o-mini"]) == ["few-shot", "zero-shot"]
    assert list(by_model["gpt-4o"]) == ["zero-shot"]


def test_no_runs_select_nothing() -> None:
    assert baseline_by_model([]) == {} and complete_models([]) == {}


def test_two_cells_of_one_model_and_strategy_are_an_error(tmp_path: Path) -> None:
    # the release's file name and the API id of GPT-4o: two labels, one model
    files = [write_cell(tmp_path, "gpt4o", "zero-shot", uniform(0.5)),
             write_cell(tmp_path, "openai/gpt-4o", "zero-shot", uniform(0.6),
                        name="api.quality.json")]
    with pytest.raises(GraphInstructError,
                       match=r"^two zero-shot cells of gpt-4o: gpt4o-zero-shot and "
                             r"openai/gpt-4o-zero-shot; pass one$"):
        baseline_by_model(read_runs(files, load_models_table()))


def test_complete_models_ran_all_four_strategies(tmp_path: Path) -> None:
    files = [write_cell(tmp_path, "gpt4o", s, uniform(0.5)) for s in STRATS]
    files += [write_cell(tmp_path, "gpt4omini", s, uniform(0.5)) for s in STRATS[:3]]
    complete = complete_models(read_runs(files, load_models_table()))
    assert list(complete) == ["gpt-4o"] and set(complete["gpt-4o"]) == set(STRATS)
