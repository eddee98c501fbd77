"""The page: one self-contained file; model output is inert text in it."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest

from pytest_graphinstruct.report.render.html import NamedReport, build_page, write_page
from pytest_graphinstruct.report.render.jinja import json_script
from tests.report.html_fixtures import HOSTILE, instructions, two_cell_report

_DATA = re.compile(r'<script type="application/json" id="gi-data">(.*?)</script>', re.S)

# What the page's script reads: a schema-like check of the embedded document.
DOCUMENT = {
    "type": "object",
    "required": ["schema", "title", "partial", "cells", "items", "instructions", "categories",
                 "classes", "baseline"],
    "properties": {
        "cells": {"type": "array", "items": {"type": "object", "required": [
            "key", "summary", "levels", "taxonomy"]}},
        "items": {"type": "array", "items": {
            "type": "object",
            "required": ["cell", "id", "level", "outcome", "score", "classes", "categories",
                         "differs", "samples"],
            "properties": {"samples": {"type": "array", "items": {"type": "object", "required": [
                "class", "raw", "verdicts", "steps", "drawing", "violations", "derived"]}}}}},
        "instructions": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)


def _page() -> str:
    return build_page([NamedReport("r.json", two_cell_report())],
                      instructions=instructions()).html


def test_the_embedded_document_parses_and_matches_its_shape() -> None:
    found = _DATA.findall(_page())
    assert len(found) == 1
    doc = json.loads(found[0])
    jsonschema.validate(doc, DOCUMENT)
    assert len(doc["items"]) == 8


def test_a_hostile_answer_is_inert_text() -> None:
    page = _page()
    parser = _Tags()
    parser.feed(page)
    # the page's own elements only: two scripts (data, code), no image, no injected tag
    assert parser.tags.count("script") == 2 and "img" not in parser.tags
    assert "alert(1)" not in page.replace(json_script(HOSTILE), "")
    assert "</script><script>" not in page
    assert "{{ 7*7 }}" in page  # no template ran it
    doc = json.loads(_DATA.findall(page)[0])
    raws = [s["raw"] for i in doc["items"] for s in i["samples"]]
    assert HOSTILE in raws  # and the text itself survives exactly


def test_json_script_escapes_every_angle_bracket_and_round_trips() -> None:
    value = {"a": "</script><!-- x", "b": [1, 2.5, None]}
    text = str(json_script(value))
    assert "<" not in text and json.loads(text) == value


def test_self_contained_no_external_reference() -> None:
    page = _page()
    assert not re.search(r'\b(?:src|href)="(?!#|data:)', page)
    assert "@import" not in page and "url(http" not in page
    assert page.count("<svg") >= 5  # the charts are inline


def test_a_hostile_cell_label_and_title_are_escaped() -> None:
    from dataclasses import replace

    report = two_cell_report()
    cell = report.cells[0]
    meta = replace(cell.metadata, model="<b>x</b>")
    page = build_page([NamedReport("<i>r</i>.json", replace(report, cells=(
        replace(cell, metadata=meta),)))]).html
    assert "<b>x</b>" not in page and "<i>r</i>" not in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page


@pytest.mark.slow
def test_partial_runs_say_so_at_the_top() -> None:
    from dataclasses import replace

    from pytest_graphinstruct.run.records.results import Coverage

    report = replace(two_cell_report(), coverage=Coverage.partial("stopped early"))
    page = build_page([NamedReport("r.json", report)]).html
    head = page[: page.index('id="summary"')]
    assert "PARTIAL RUN" in head and "stopped early" in head


@pytest.mark.slow
def test_write_page_replaces_the_file_whole(tmp_path: Path) -> None:
    page = build_page([NamedReport("r.json", two_cell_report())])
    out = tmp_path / "sub" / "r.html"
    write_page(page, out)
    assert out.read_text(encoding="utf-8") == page.html
    assert [p.name for p in out.parent.iterdir()] == ["r.html"]


def test_no_reports_give_a_page_without_cells() -> None:
    page = build_page([])
    assert (page.cells, page.items) == (0, 0)
    doc = json.loads(_DATA.findall(page.html)[0])
    assert doc["title"] == "GraphInstruct report" and doc["cells"] == []


def test_the_title_names_a_single_report_and_counts_are_given() -> None:
    page = build_page([NamedReport("r.json", two_cell_report())])
    assert (page.cells, page.items) == (2, 8)
    assert "<title>GraphInstruct report: r.json</title>" in page.html


def test_a_hostile_coverage_line_and_error_are_escaped() -> None:
    from dataclasses import replace

    from pytest_graphinstruct.run.records.results import Coverage

    report = two_cell_report()
    cell = report.cells[0]
    item = replace(cell.per_instruction[0], error=HOSTILE, instruction_id="<b>id</b>")
    hostile = replace(report, coverage=Coverage.partial(HOSTILE), cells=(
        replace(cell, per_instruction=(item, *cell.per_instruction[1:])),))
    page = build_page([NamedReport("r.json", hostile)]).html
    parser = _Tags()
    parser.feed(page)
    assert parser.tags.count("script") == 2 and "img" not in parser.tags and "b" not in parser.tags
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in page  # the coverage line, as text
    doc = json.loads(_DATA.findall(page)[0])
    assert doc["items"][0]["error"] == HOSTILE and doc["items"][0]["id"] == "<b>id</b>"


def test_a_static_file_that_would_close_its_element_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_graphinstruct.report.render.html import page as page_module

    class _Files:
        def joinpath(self, name: str) -> _Files:
            return self

        def read_text(self, encoding: str) -> str:
            return "let x = '</SCRIPT>';"

    monkeypatch.setattr(page_module.resources, "files", lambda package: _Files())
    with pytest.raises(ValueError, match="must not contain '</script'"):
        page_module._static("report.js")


def test_a_failed_write_leaves_the_old_page_and_no_temporary(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    from pytest_graphinstruct.report.render.html.page import Page

    out = tmp_path / "r.html"
    out.write_text("old", encoding="utf-8")

    def refuse(self: Path, target: Path) -> Path:
        raise OSError("disk full")

    monkeypatch.setattr(Path, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_page(Page("<html>new</html>", 0, 0), out)
    assert out.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
