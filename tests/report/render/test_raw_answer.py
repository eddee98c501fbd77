"""The model's raw answer in the report (bounded) and in the failure text (bounded, escaped).

The report keeps the first :data:`RAW_ANSWER_LIMIT` characters of each sample's answer plus a
marker saying how many were cut; older reports without the field still read.  Model output is
untrusted: wherever it is shown, control characters and ANSI escapes are neutralised.
"""

from __future__ import annotations

import json

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.report.render.failures import format_failure
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.evaluate import check, evaluate
from pytest_graphinstruct.run.records.results import (
    RAW_ANSWER_LIMIT,
    CellMetadata,
    ItemResult,
    RunReport,
    SampleResult,
    bounded_answer,
)
from pytest_graphinstruct.run.records.writer import report_json
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import instruction_from_record
from tests.report.schema_check import assert_valid_report

TREE = ("Graph[name='t', nodes=4] { node_list = ['0','1','2','3']; "
        "edge_list = [('0','1'), ('1','2'), ('1','3')]; }")
CYCLE = ("Graph[name='c', nodes=4] { node_list = ['0','1','2','3']; "
         "edge_list = [('0','1'), ('1','2'), ('2','3'), ('3','0')]; }")
HOSTILE = "\x1b[2J\x1b[31mPASSED\x1b[0m\rall good\u202egnp\x07\x00" + CYCLE


def tree_instruction() -> Instruction:
    inst = instruction_from_record({
        "id": "L1-001", "level": 1, "instruction": "Generate a tree with 4 nodes.",
        "explicit_constraints": ["graph_type=tree", "num_nodes=4"],
        "implicit_constraints": ["num_edges=3"], "graph_sizes": ["small"]})
    assert inst is not None
    return inst


# -- the bound ---------------------------------------------------------------------------------


def test_a_short_answer_is_kept_whole() -> None:
    assert bounded_answer(TREE) == TREE
    assert bounded_answer("x" * RAW_ANSWER_LIMIT) == "x" * RAW_ANSWER_LIMIT
    assert bounded_answer(None) is None


def test_a_long_answer_keeps_its_head_and_says_how_much_was_cut() -> None:
    text = "a" * RAW_ANSWER_LIMIT + "b" * 1234
    kept = bounded_answer(text)
    assert kept is not None
    assert kept.startswith("a" * RAW_ANSWER_LIMIT) and "b" not in kept
    assert kept.endswith("[1234 more characters cut]")
    assert len(kept) < RAW_ANSWER_LIMIT + 60


def test_a_lone_surrogate_cannot_break_the_report_file() -> None:
    kept = bounded_answer("edge \ud800 list")
    assert kept is not None
    kept.encode("utf-8")  # no UnicodeEncodeError when the report is written


# -- the report field --------------------------------------------------------------------------


def test_sample_round_trips_with_and_without_raw_answer() -> None:
    with_raw = SampleResult(parsed=True, refusal=False, raw_answer=TREE)
    assert with_raw.to_json()["raw_answer"] == TREE
    assert SampleResult.from_json(with_raw.to_json()) == with_raw
    without = SampleResult(parsed=False, refusal=False)
    assert without.to_json()["raw_answer"] is None
    assert SampleResult.from_json(without.to_json()) == without


def test_an_older_report_without_raw_answers_still_reads() -> None:
    old = SampleResult(parsed=True, refusal=False).to_json()
    del old["raw_answer"]
    assert SampleResult.from_json(old).raw_answer is None


def test_evaluate_puts_the_bounded_answer_into_each_sample() -> None:
    long = CYCLE + " " * 10 + "z" * (RAW_ANSWER_LIMIT + 5)
    result = evaluate(tree_instruction(), [Answer(text=TREE), Answer(text=long),
                                           Answer(text=HOSTILE)])
    raws = [s.raw_answer for s in result.samples]
    assert raws[0] == TREE and raws[2] == HOSTILE  # stored as is: JSON escapes it
    assert raws[1] == bounded_answer(long) and raws[1] != long
    report = with_pareto([build_cell(CellMetadata("m", "zero-shot"), [result])])
    data = json.loads(report_json(report))
    assert_valid_report(data)
    assert "\x1b" not in report_json(report)  # JSON escapes control characters
    assert RunReport.from_json(data) == report
    (item,) = RunReport.from_json(data).cells[0].per_instruction
    assert item.samples[2].raw_answer == HOSTILE


def test_a_report_whose_items_lack_raw_answers_validates_and_reads() -> None:
    item = ItemResult(instruction_id="L1-001", level=1, cell="m-zero-shot", model="m",
                      strategy="zero-shot", samples=(SampleResult(parsed=True, refusal=False),))
    data = with_pareto([build_cell(CellMetadata("m", "zero-shot"), [item])]).to_json()
    assert_valid_report(data)
    del data["cells"][0]["per_instruction"][0]["samples"][0]["raw_answer"]
    assert RunReport.from_json(data).cells[0].per_instruction[0].samples[0].raw_answer is None


# -- the failure text --------------------------------------------------------------------------


def test_failure_text_shows_the_escaped_answer_only_when_verbose() -> None:
    checked = check(tree_instruction(), [Answer(text=TREE), Answer(text=HOSTILE)],
                    cell=Cell("m", "zero-shot"))
    quiet = format_failure(checked, "all")
    assert "raw answer" not in quiet and "PASSED" not in quiet
    loud = format_failure(checked, "all", raw=True)
    assert "\x1b" not in loud and "\r" not in loud and "\u202e" not in loud
    assert "\\x1b[31mPASSED\\x1b[0m\\rall good" in loud
    sample1 = loud.split("  sample 1:")[1]
    assert "raw answer" in sample1
    assert "raw answer" not in loud.split("  sample 1:")[0]  # a passing sample shows none


def test_failure_text_bounds_a_long_answer() -> None:
    long = "garbage " * 1000
    checked = check(tree_instruction(), [Answer(text=long)], cell=Cell("m", "zero-shot"))
    loud = format_failure(checked, "all", raw=True)
    assert len(loud) < RAW_ANSWER_LIMIT + 1000
    assert f"[{len(long) - RAW_ANSWER_LIMIT} more characters cut]" in loud


def test_violation_values_from_the_answer_are_escaped() -> None:
    hostile_names = ("Graph[name='t', nodes=3] { node_list = ['\x1b[2Ja','b','c']; "
                     "edge_list = [('\x1b[2Ja','b')]; }")
    checked = check(tree_instruction(), [Answer(text=hostile_names)],
                    cell=Cell("m", "zero-shot"))
    assert "\x1b" not in format_failure(checked, "all")
