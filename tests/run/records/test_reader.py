"""``read_report``: our reports, the older shapes handed to :mod:`~.run.migrations` (whose own
tests are tests/run/records/test_migrations.py), and one clear error line for anything else."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records.migrations import RELEASE_SOURCE
from pytest_graphinstruct.run.records.reader import (
    contradiction,
    parse_report,
    read_cells,
    read_report,
    read_whole_report,
)
from pytest_graphinstruct.run.records.results import (
    PREVIOUS_SCHEMA,
    SCHEMA,
    CellMetadata,
    Coverage,
    ItemResult,
    PromptSet,
    ReportError,
    RunReport,
)
from pytest_graphinstruct.run.records.writer import write_report
from tests.run.old_reports import quality, v1_cell, v1_score


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# -- each shape to its reader ------------------------------------------------------------------


def test_each_older_shape_goes_to_its_migration(tmp_path: Path) -> None:
    (v1,) = read_report(write(tmp_path / "v1.json", v1_cell("m", "zero-shot"))).cells
    assert v1.label == "m-zero-shot" and v1.metadata.source == PREVIOUS_SCHEMA
    (score,) = parse_report(v1_score()).cells
    assert score.label == "gpt4o-unknown" and score.metadata.source == PREVIOUS_SCHEMA
    (release,) = read_report(write(tmp_path / "x-few-cot.quality.json", quality())).cells
    assert release.label == "x-few-cot" and release.metadata.source == RELEASE_SOURCE


# -- our own reports -------------------------------------------------------------------------


def our_report(*labels: tuple[str, str]) -> RunReport:
    cells = []
    for model, strategy in labels:
        items = [ItemResult(instruction_id=f"L2-{k:03d}", level=2, cell=f"{model}-{strategy}",
                            model=model, strategy=strategy, level_score=0.5 + k / 20,
                            tokens=100 + k, d5_valid=1, api_calls=1)
                 for k in range(6)]
        cells.append(build_cell(CellMetadata(model, strategy), items))
    return with_pareto(cells)


def test_our_report_reads_back_equal(tmp_path: Path) -> None:
    report = our_report(("m", "zero-shot"), ("m", "few-shot"))
    write_report(report, tmp_path / "r.json")
    assert read_report(tmp_path / "r.json") == report
    assert read_report(str(tmp_path / "r.json")) == report


def test_read_cells_refuses_a_label_twice(tmp_path: Path) -> None:
    write_report(our_report(("m", "zero-shot")), tmp_path / "a.json")
    write_report(our_report(("m", "zero-shot"), ("n", "few-cot")), tmp_path / "b.json")
    with pytest.raises(ReportError) as info:
        read_cells([tmp_path / "a.json", tmp_path / "b.json"])
    assert str(info.value) == (f"{tmp_path / 'b.json'}: cell m-zero-shot is also in "
                               f"{tmp_path / 'a.json'}")


# -- a report that contradicts itself ---------------------------------------------------------


def test_a_report_that_contradicts_itself_is_refused_for_a_verdict(tmp_path: Path) -> None:
    report = replace(our_report(("m", "zero-shot")), coverage=Coverage(selected=6))
    assert contradiction(report) is None
    write_report(report, tmp_path / "fine.json")
    assert read_whole_report(tmp_path / "fine.json") == report
    cell = report.cells[0]
    fewer = replace(report, coverage=Coverage(selected=7))
    assert contradiction(fewer) == ("its coverage says 7 item(s) selected and complete, but its "
                                    "cells hold 6 result(s)")
    assert contradiction(replace(fewer, coverage=Coverage.partial("x", selected=7))) is None
    twice = replace(report, cells=(replace(cell, per_instruction=(
        *cell.per_instruction, replace(cell.per_instruction[0], outcome="failed"))),))
    assert contradiction(twice) == ("cell m-zero-shot holds instruction "
                                    f"{cell.per_instruction[0].instruction_id} more than once")
    write_report(fewer, tmp_path / "fewer.json")
    assert read_report(tmp_path / "fewer.json") == fewer  # what other commands read
    with pytest.raises(ReportError) as info:
        read_whole_report(tmp_path / "fewer.json")
    assert str(info.value).startswith(f"{tmp_path / 'fewer.json'}: the report contradicts "
                                      "itself: its coverage says 7 item(s)")


# -- malformed input: one line, starting with the path ------------------------------------------


def _v2_without(field: str) -> dict[str, Any]:
    data = our_report(("m", "zero-shot")).to_json()
    del data["cells"][0]["summary"][field]
    return data


def _v2_with(path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    data: Any = our_report(("m", "zero-shot")).to_json()
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return copy.deepcopy(data)


MALFORMED: dict[str, tuple[Any, str]] = {
    # name: (file content: bytes as written, else JSON; a fragment of the message)
    "empty file": (b"", "the file is empty"),
    "whitespace only": (b" \n\t \n", "the file is empty"),
    "not JSON": (b"{'schema': 1", "not JSON"),
    "truncated JSON": (b'{"schema": "graphinstruct-report/2", "cells": [', "not JSON"),
    "not UTF-8": (b"\xff\xfe{}", "cannot be read"),
    "JSON array": ([1, 2], "a JSON array, expected an object"),
    "JSON string": ("graphinstruct-report/2", "a JSON string, expected an object"),
    "JSON null": (None, "a JSON null, expected an object"),
    "JSON number": (3, "a JSON number, expected an object"),
    "empty object": ({}, "not a GraphInstruct report (no 'schema'"),
    "v2 missing field": (_v2_without("items"), "missing field 'items'"),
    "v2 missing cells": ({"schema": SCHEMA}, "missing field 'cells'"),
    "v2 cells not a list": ({"schema": SCHEMA, "cells": 7}, "malformed"),
    "v2 TPV a string": (_v2_with(("cells", 0, "summary", "tpv"), "cheap"),
                        "cells[0].summary.tpv: is not a finite number: 'cheap'"),
    "v2 negative TPV": (_v2_with(("cells", 0, "summary", "tpv"), -3),
                        "cells[0].summary.tpv: -3 is below 0"),
    "v2 S_total a list": (_v2_with(("cells", 0, "summary", "s_total_renormalized"), [1]),
                          "summary.s_total_renormalized: is not a finite number"),
    "v2 level score a string": (_v2_with(("cells", 0, "per_instruction", 0, "level_score"), "x"),
                                "per_instruction[0].level_score: is not a finite number"),
    "v2 level score above 1": (_v2_with(("cells", 0, "per_instruction", 0, "level_score"), 1.5),
                               "per_instruction[0].level_score: 1.5 is above 1"),
    "v2 unknown field": (_v2_with(("cells", 0, "summary", "bonus"), 1),
                         "cells[0].summary: unknown field 'bonus'"),
    "v2 unknown outcome": (_v2_with(("cells", 0, "per_instruction", 0, "outcome"), "boom"),
                           "per_instruction[0].outcome: expected one of 'passed'"),
    "v2 level 9": (_v2_with(("cells", 0, "per_instruction", 0, "level"), 9),
                   "per_instruction[0].level: expected one of 0, 1, 2, 3, 4, 5, got a number 9"),
    "v2 level 2.5": (_v2_with(("cells", 0, "per_instruction", 0, "level"), 2.5),
                     "per_instruction[0].level: expected one of 0, 1"),
    "unknown schema": ({"schema": "graphinstruct-report/9", "cells": []},
                       "unknown report schema 'graphinstruct-report/9'"),
    "v1 score report without metadata": ({"schema": PREVIOUS_SCHEMA, "per_instruction": []},
                                         "missing field 'metadata'"),
    "v1 cell without summary": ({k: v for k, v in v1_cell("m", "zero-shot").items()
                                 if k != "summary"}, "missing field 'summary'"),
    "quality.json total_score a string": (quality(total_score="0.8"),
                                          "total_score is not a finite number: '0.8'"),
    "quality.json final_score true": (quality(final_score=True), "final_score is not a finite"),
    "quality.json level 9": (quality(per_level_scores={"0": 0.5, "9": 0.5}),
                             "per_level_scores names levels outside 0-5: [0, 9]"),
    "quality.json level x": (quality(per_level_scores={"x": 0.5}), "ValueError"),
    "quality.json level score a string": (quality(per_level_scores={"1": "high"}), "Error"),
    "quality.json per_instruction a string": (quality(per_instruction="all"), "Error"),
    "quality.json item without level": (quality(per_instruction=[{"instruction_id": "a"}]),
                                        "missing field 'level'"),
    "quality.json item level 9": (quality(per_instruction=[{"instruction_id": "a", "level": 9}]),
                                  "unknown level 9 (one of 0, 1, 2, 3, 4, 5)"),
    "quality.json metadata a list": (quality(metadata=[1]), "'metadata' is not an object"),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_input_is_one_line_naming_the_file(tmp_path: Path, name: str) -> None:
    content, fragment = MALFORMED[name]
    path = tmp_path / "in.quality.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        write(path, content)
    assert_one_line_error(path, fragment)


def test_a_missing_file(tmp_path: Path) -> None:
    assert_one_line_error(tmp_path / "nope.json", "no such file")


def test_a_directory(tmp_path: Path) -> None:
    assert_one_line_error(tmp_path, "is a directory")


def assert_one_line_error(path: Path, fragment: str) -> None:
    with pytest.raises(ReportError) as info:
        read_report(path)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    assert "\n" not in message and fragment in message, message


def test_read_cells_tells_two_prompt_sets_apart(tmp_path: Path) -> None:
    plain = our_report(("m", "zero-shot"))
    terse = PromptSet("terse", "sha256:" + "ef" * 32)
    other = replace(plain, cells=tuple(replace(c, metadata=replace(c.metadata, prompts=terse))
                                       for c in plain.cells))
    write_report(plain, tmp_path / "a.json")
    write_report(other, tmp_path / "b.json")
    cells = read_cells([tmp_path / "a.json", tmp_path / "b.json"])
    assert list(cells) == ["m-zero-shot", "m-zero-shot [prompts terse (sha256:efefefefefef…)]"]
    write_report(other, tmp_path / "c.json")
    with pytest.raises(ReportError, match=r"cell m-zero-shot \[prompts terse .* is also in"):
        read_cells([tmp_path / "b.json", tmp_path / "c.json"])
