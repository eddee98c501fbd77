"""The page's cells: every cell of every report, under unique keys."""

from __future__ import annotations

from pytest_graphinstruct.report.html.cells import NamedReport, page_cells
from tests.report.html_fixtures import two_cell_report


def test_one_report_keeps_its_labels() -> None:
    cells = page_cells([NamedReport("a.json", two_cell_report())])
    assert [c.key for c in cells] == ["m-zero-shot", "m-few-shot"]
    assert {c.source for c in cells} == {"a.json"}


def test_a_label_in_several_reports_names_its_report() -> None:
    r = two_cell_report()
    cells = page_cells([NamedReport("a.json", r), NamedReport("b.json", r),
                        NamedReport("b.json", r)])
    assert [c.key for c in cells][:4] == ["m-zero-shot [a.json]", "m-few-shot [a.json]",
                                          "m-zero-shot [b.json]", "m-few-shot [b.json]"]
    assert len({c.key for c in cells}) == 6
