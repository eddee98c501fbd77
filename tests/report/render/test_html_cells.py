"""The page's cells: every cell of every report, under unique keys."""

from __future__ import annotations

from pytest_graphinstruct.report.render.html.cells import NamedReport, page_cells
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


def test_cells_from_several_reports_are_compared_with_each_other() -> None:
    from dataclasses import replace

    from pytest_graphinstruct.run.aggregate import with_pareto

    both = two_cell_report()
    # the same two cells, each in a report of its own: each file's marks see only itself
    alone = [with_pareto([c]) for c in both.cells]
    assert all(r.cells[0].summary.pareto_optimal is None for r in alone)
    cells = page_cells([NamedReport(f"{i}.json", r) for i, r in enumerate(alone)])
    assert [c.cell.summary for c in cells] == [c.summary for c in both.cells]
    # cells of one report keep that report's marks
    odd = replace(both.cells[0].summary, s_final=0.123)
    one = replace(both, cells=(replace(both.cells[0], summary=odd), both.cells[1]))
    assert page_cells([NamedReport("a.json", one)])[0].cell.summary.s_final == 0.123


def test_a_label_twice_in_one_report_gets_a_number_and_keeps_its_marks() -> None:
    from dataclasses import replace

    both = two_cell_report()
    odd = replace(both.cells[0].summary, s_final=0.123)
    twice = replace(both, cells=(replace(both.cells[0], summary=odd), both.cells[0]))
    cells = page_cells([NamedReport("a.json", twice), NamedReport("b.json", both)])
    assert [c.key for c in cells] == [
        "m-zero-shot [a.json]", "m-zero-shot [a.json] #2", "m-zero-shot [b.json]",
        "m-few-shot"]
    # labels repeat: the marks are each report's own, not compared across the files
    assert cells[0].cell.summary.s_final == 0.123


def test_no_reports_make_no_cells() -> None:
    assert page_cells([]) == ()
