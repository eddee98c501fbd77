"""The analyses' tables and their writers (report/analyses/table.py): digits per column,
absent and non-finite values, escaping of names from files for Markdown and CSV, full
precision in CSV and JSON."""

from __future__ import annotations

import json
import math

import pytest

from pytest_graphinstruct.report.analyses.table import (
    AnalysisResult,
    Table,
    csv_rows,
    markdown_table,
    render,
    signed,
    to_csv,
)


def test_table_writers_escape_and_keep_precision() -> None:
    result = AnalysisResult("x", "X", (Table("t", ("name", "v"), (("a|b", 0.123456),
                                                                  ("=1", None)), (None, 2)),))
    md = render(result, "markdown")
    assert "a\\|b" in md and "0.12" in md and "—" in md
    assert "'=1" in render(result, "csv") and "0.123456" in render(result, "csv")
    assert json.loads(render(result, "json"))["tables"][0]["rows"][0] == ["a|b", 0.123456]


def test_each_column_shows_its_digits_and_sign() -> None:
    table = Table("t", ("a", "b", "c", "d", "e", "f"),
                  ((0.12345, 0.012, -0.5, 3, True, 1234.5),), (2, signed(3), signed(1), 2, None))
    cells = markdown_table(table).splitlines()[2].split("|")[1:-1]
    # ints and bools ignore digits; a column past ``digits`` shows the float as is
    assert [c.strip() for c in cells] == ["0.12", "+0.012", "-0.5", "3", "yes", "1234.5"]
    assert signed(3) == -3


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, None])
def test_absent_and_non_finite_values(value: float | None) -> None:
    table = Table("t", ("v",), ((value,),), (2,))
    assert markdown_table(table).splitlines()[2] == "| —   |"
    assert csv_rows(table) == [("v",), ("",)]
    result = AnalysisResult("x", "X", (table,))
    assert json.loads(render(result, "json"))["tables"][0]["rows"] == [[None]]


def test_names_from_files_cannot_inject_markdown_or_formulas() -> None:
    hostile = "<img src=x onerror=alert(1)>|[l](http://x)\x1b[2J"
    result = AnalysisResult("x", f"title {hostile}", (Table(f"t {hostile}", ("name",),
                                                            ((hostile,), ("@SUM(A1)",))),),
                            (f"note {hostile}",))
    md = render(result, "markdown")
    for active in ("<", ">", "[", "]"):  # every one escaped (the cell's | is checked below)
        assert md.count(active) == md.count("\\" + active)
    assert "\x1b" not in md
    assert md.count(r"\<img src=x onerror=alert(1)\>\|\[l\](http://x)\\x1b\[2J") == 4
    assert md.startswith("# title ") and "\n- note " in md
    # CSV: the cells (titles are the analyses' own words)
    assert csv_rows(result.tables[0])[1:] == [
        ("<img src=x onerror=alert(1)>|[l](http://x)\\x1b[2J",), ("'@SUM(A1)",)]


def test_csv_gives_each_table_a_title_row_and_a_blank_row() -> None:
    result = AnalysisResult("x", "X", (Table("one", ("a",), ((1,),)),
                                       Table("two", ("b",), ((0.5,),))))
    assert to_csv(result) == "# one\na\n1\n\n# two\nb\n0.5\n\n"


def test_an_empty_table_has_its_header_only() -> None:
    table = Table("t", ("a", "b"), ())
    assert markdown_table(table).splitlines() == ["| a   | b   |", "|-----|-----|"]
    assert csv_rows(table) == [("a", "b")]


def test_json_holds_the_schema_notes_and_data() -> None:
    result = AnalysisResult("x", "X", (), ("n",), {"k": [1, None]})
    assert json.loads(render(result, "json")) == {
        "schema": "graphinstruct-analysis/1", "analysis": "x", "title": "X", "notes": ["n"],
        "tables": [], "data": {"k": [1, None]}}


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^unknown format 'html' \(markdown, csv, json\)$"):
        render(AnalysisResult("x", "X", ()), "html")
