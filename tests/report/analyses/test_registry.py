"""The analysis registry: every entry loads its module's ``analyze``, the command line's
choices and formats come from it, and an option an analysis does not take is refused."""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses import registry
from pytest_graphinstruct.report.analyses.registry import (
    ANALYSES,
    AnalysisOptions,
    AnalysisRequest,
)

from .analyses_data import family, uniform, write_cell


@pytest.mark.parametrize("analysis", ANALYSES, ids=lambda a: a.name)
def test_each_entry_names_a_module_with_analyze(analysis: registry.Analysis) -> None:
    module = importlib.import_module(f"pytest_graphinstruct.report.analyses.{analysis.module}")
    assert list(inspect.signature(module.analyze).parameters) == ["request"]


def test_names_are_unique_within_a_command() -> None:
    keys = [(a.command, a.name) for a in ANALYSES]
    assert len(keys) == len(set(keys))


def test_the_command_lines_choices_and_formats() -> None:
    assert [a.name for a in registry.choices()] == [
        "cot", "frontier", "methods", "scaling", "sensitivity", "strategy-effects", "tier-gap"]
    assert registry.commands() == ("analyze", "leaderboard", "contamination")
    assert registry.formats("analyze") == ("markdown", "csv", "json")
    assert registry.formats("leaderboard") == ("markdown", "csv", "json", "html")
    assert registry.analyze_help().startswith("cot: F4, CoT deltas by family (Tab. 14); ")


def test_find() -> None:
    assert registry.find("analyze", "tier-gap").module == "tier_gap"
    assert registry.find("leaderboard").name == "leaderboard"
    with pytest.raises(GraphInstructError, match=r"unknown analysis 'nope'.*cot, frontier"):
        registry.find("analyze", "nope")


def test_run_renders_and_refuses_rule_elsewhere(tmp_path: Path) -> None:
    files = tuple(str(write_cell(tmp_path, "gpt4o", s, uniform(0.7)))
                  for s in ("zero-shot", "few-shot", "zero-cot", "few-cot"))
    cot = registry.find("analyze", "cot")
    text = cot.run(AnalysisRequest(files, options=AnalysisOptions())).text
    assert text.startswith("# ")
    with pytest.raises(GraphInstructError, match=r"^--rule applies to tier-gap only$"):
        cot.run(AnalysisRequest(files, options=AnalysisOptions(rule="all-cells")))
    board = registry.find("leaderboard").run(
        AnalysisRequest(files, options=AnalysisOptions(format="csv")))
    assert board.text.splitlines()[0].startswith("rank_total,rank_final,label")
    assert board.warnings == ()


def test_cli_analyze(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(p) for p in family(tmp_path)]
    for name in ("tier-gap", "strategy-effects", "cot", "frontier"):
        assert main(["analyze", name, *files, "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["analysis"] == name
    assert main(["analyze", "scaling", "--resamples", "50", *files]) == 0
    assert "GPT-4o-mini" in capsys.readouterr().out
    assert main(["analyze", "methods", *files]) == 2  # no method cell: one line
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["analyze", "cot", "--rule", "all-cells", *files]) == 2
