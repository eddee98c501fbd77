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

    from pytest_graphinstruct.run.results import Coverage

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
