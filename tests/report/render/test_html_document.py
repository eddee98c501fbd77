"""The data document: one JSON object with the cells, every item, verdicts and drawings."""

from __future__ import annotations

import json
from dataclasses import replace

from pytest_graphinstruct.report.render.html.cells import NamedReport, page_cells
from pytest_graphinstruct.report.render.html.document import DOCUMENT_SCHEMA, document
from pytest_graphinstruct.report.render.html.taxonomy import taxonomy
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records.results import CellReport, RunReport, SampleResult
from tests.report.html_fixtures import instructions, two_cell_report


def _doc(report: RunReport, **kw: object) -> dict:
    named = [NamedReport("r.json", report)]
    cells = page_cells(named)
    return document(cells, [taxonomy(c.cell.per_instruction) for c in cells], reports=named,
                    **kw)  # type: ignore[arg-type]


def test_cells_items_and_verdicts() -> None:
    doc = _doc(two_cell_report())
    assert doc["schema"] == DOCUMENT_SCHEMA and doc["partial"] is False
    assert [c["key"] for c in doc["cells"]] == ["m-zero-shot", "m-few-shot"]
    assert len(doc["items"]) == 8 and doc["instructions"] == {}
    first = doc["items"][0]
    assert (first["cell"], first["id"], first["outcome"]) == (0, "L1-001", "failed")
    assert first["categories"] == ["count", "structural"]
    verdict = first["samples"][0]["verdicts"][0]
    assert verdict["constraint"] == "graph_type=tree" and verdict["expected"] == "tree"
    assert verdict["where"]["cycle"] == [["0", "1"], ["1", "4"], ["4", "0"]]
    assert first["samples"][0]["steps"][0]["source"] == "round0"
    assert first["samples"][0]["drawing"]["marked_nodes"]
    levels = doc["cells"][0]["levels"]
    assert [row["level"] for row in levels] == [1] and levels[0]["items"] == 4
    assert doc["cells"][0]["taxonomy"]["classes"]["refusal"] == 1
    json.dumps(doc, allow_nan=False)  # plain JSON: no NaN, no objects


def test_instruction_texts_only_for_items_shown() -> None:
    doc = _doc(two_cell_report(), instructions=instructions())
    assert set(doc["instructions"]) == {"L1-001", "L1-002", "L1-003", "L1-004"}
    assert "tree" in doc["instructions"]["L1-001"]


def test_items_whose_outcome_differs_from_the_baseline() -> None:
    report = two_cell_report()
    doc = _doc(report, baseline=NamedReport("b.json", report))
    assert doc["baseline"] == "b.json" and not any(i["differs"] for i in doc["items"])
    # a baseline of one cell answers for every cell: only few-shot's L1-001 passed
    one = RunReport((report.cells[0],))
    doc = _doc(report, baseline=NamedReport("b.json", one))
    assert [(i["cell"], i["id"]) for i in doc["items"] if i["differs"]] == [(1, "L1-001")]


def test_at_most_two_samples_of_an_item_are_drawn() -> None:
    report = two_cell_report()
    cell = report.cells[1]
    item = cell.per_instruction[0]
    ok = item.samples[0]
    bad = report.cells[0].per_instruction[0].samples[0]
    five = replace(item, samples=(ok, ok, bad, ok, bad))
    cell = replace(cell, per_instruction=(five,))
    doc = _doc(RunReport((cell,)))
    drawn = ["omitted" not in s["drawing"] for s in doc["items"][0]["samples"]]
    assert drawn == [True, False, True, False, False]


def test_a_partial_report_is_marked() -> None:
    from pytest_graphinstruct.run.records.results import Coverage

    report = replace(two_cell_report(), coverage=Coverage.partial("stopped early"))
    doc = _doc(report)
    assert doc["partial"] is True and "stopped early" in doc["coverage"][0]


def test_a_sample_without_text_has_no_drawing_and_says_why() -> None:
    cell = two_cell_report().cells[0]
    item = replace(cell.per_instruction[0], samples=(SampleResult(parsed=False, refusal=False),))
    doc = _doc(RunReport((replace(cell, per_instruction=(item,)),)))
    assert "no answer text" in doc["items"][0]["samples"][0]["drawing"]["omitted"]


def test_no_reports_give_an_empty_document() -> None:
    doc = document([], [], reports=[])
    assert (doc["cells"], doc["items"], doc["sources"], doc["partial"]) == ([], [], [], False)
    assert doc["baseline"] is None and doc["title"] == "GraphInstruct report"
    json.dumps(doc, allow_nan=False)


def test_untrusted_text_is_kept_as_data_exactly() -> None:
    from tests.report.html_fixtures import HOSTILE

    cell = two_cell_report().cells[0]
    item = replace(cell.per_instruction[2], error=HOSTILE, instruction_id="L1-<b>3</b>")
    doc = _doc(RunReport((replace(cell, per_instruction=(item,)),)), title=HOSTILE)
    shown = doc["items"][0]
    assert (shown["id"], shown["error"], doc["title"]) == ("L1-<b>3</b>", HOSTILE, HOSTILE)
    assert shown["samples"][0]["raw"] == HOSTILE  # escaping is the page's (json_script)


def test_numbers_are_rounded_to_four_decimals() -> None:
    cell = two_cell_report().cells[0]
    item = replace(cell.per_instruction[0], level_score=0.123456789,
                   dimension_scores={"D1": 1 / 3})
    doc = _doc(RunReport((replace(cell, per_instruction=(item,)),)))
    shown = doc["items"][0]
    assert shown["score"] == 0.1235 and shown["dims"][0] == 0.3333
    assert shown["dims"][1:] == [None] * 4  # a dimension the item has no score for


def _relabelled(cell: CellReport, strategy: str) -> CellReport:
    return replace(cell, metadata=replace(cell.metadata, strategy=strategy))


def test_a_baseline_of_several_cells_answers_by_label_only() -> None:
    report = two_cell_report()
    zero, few = report.cells
    doc = _doc(report, baseline=NamedReport("b.json", RunReport((zero,
                                                                 _relabelled(few, "x")))))
    items = doc["items"]
    assert all(i["baseline"] == i["outcome"] for i in items if i["cell"] == 0)
    # no m-few-shot in the baseline (and it has two cells): nothing to compare
    assert all(i["baseline"] is None and not i["differs"] for i in items if i["cell"] == 1)


def test_the_same_answer_in_two_cells_is_drawn_alike() -> None:
    few = two_cell_report().cells[1]
    doc = _doc(RunReport((few, _relabelled(few, "copy"))))
    a, b = (i["samples"][0]["drawing"] for i in doc["items"] if i["id"] == "L1-001")
    assert a == b and "labels" in a


def test_consistency_is_in_the_document_only_with_several_samples() -> None:
    report = two_cell_report()
    assert all("consistency" not in c for c in _doc(report)["cells"])
    ok = SampleResult(parsed=True, refusal=False)
    cell = report.cells[0]
    items = tuple(replace(r, samples=(ok,) * 2, passing_samples=1) if r.scored else r
                  for r in cell.per_instruction)
    sampled = with_pareto([build_cell(cell.metadata, items)])
    (doc_cell,) = _doc(sampled)["cells"]
    rows, flaky = doc_cell["consistency"]["rows"], doc_cell["consistency"]["flaky"]
    assert rows[-1]["level"] == "all" and rows[-1]["k"] == 2
    assert rows[-1]["pass_at_1"][0] == 0.5 and rows[-1]["pass_all_k"][0] == 0.0
    assert [x["id"] for x in flaky] == [r.instruction_id for r in items if r.scored]


def test_a_gated_levels_texts_are_the_reports_own() -> None:
    """Issue 48 §6: the page shows what the terminal and the Markdown print — the record's
    texts, the p-value labelled Holm-adjusted — and a report from before issue 48 its
    unadjusted p-value, labelled so."""
    from pytest_graphinstruct.run.records.results import CellGate, GateRecord, LevelChange

    new = LevelChange(2, 30, -0.059, -0.133, 0.015, 6e-8, True, pass_change=-0.1,
                      pass_low=-0.214, pass_high=0.014, p_drop_holm=1.2e-7, tests=2,
                      verdict="regressed", note="both intervals reach 0")
    old = LevelChange(0, 30, -0.2, -0.3, -0.1, 0.0001, True)
    gate = GateRecord(passed=False, baseline="b.json",
                      cells=(CellGate("m-zero-shot", "m-zero-shot", levels=(old, new)),))
    doc = _doc(replace(two_cell_report(), gate=gate))
    first, second = doc["gate"]["cells"][0]["levels"]
    assert (first["p"], first["p_text"], first["verdict"]) == (
        0.0001, "p(no drop)=0.0001 unadjusted", "regressed")
    assert second["p"] == 1.2e-7 and second["p_text"] == "Holm p(no drop)=1.2e-07"
    assert second["changes"] == new.changes_text()
    assert second["verdict"] == "regressed (both intervals reach 0)"
