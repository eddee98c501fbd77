"""Charts: matplotlib SVG, deterministic, escaped, and only where they apply."""

from __future__ import annotations

from xml.etree import ElementTree

import pytest

from pytest_graphinstruct.report.html.cells import NamedReport, PageCell, page_cells
from pytest_graphinstruct.report.html.plots import (
    all_plots,
    delta_heatmap,
    level_bars,
    pareto_scatter,
)
from pytest_graphinstruct.report.html.taxonomy import taxonomy
from tests.report.html_fixtures import two_cell_report


def _cells() -> tuple[PageCell, ...]:
    return page_cells([NamedReport("r.json", two_cell_report())])


@pytest.mark.slow
def test_every_plot_is_one_well_formed_svg_element() -> None:
    cells = _cells()
    plots = all_plots(cells, [taxonomy(c.cell.per_instruction) for c in cells])
    assert [p.key for p in plots] == ["level-bars", "pareto", "profiles", "heatmap",
                                      "taxonomy"]
    for p in plots:
        assert p.svg.startswith("<svg")
        root = ElementTree.fromstring(p.svg)
        assert root.tag.endswith("svg")
        assert "Date" not in p.svg and "<dc:date>" not in p.svg


def test_the_same_report_gives_the_same_bytes() -> None:
    a = level_bars(_cells())
    b = level_bars(_cells())
    assert a is not None and b is not None and a.svg == b.svg


def test_the_heatmap_needs_a_zero_shot_cell_and_another_of_its_model() -> None:
    cells = _cells()
    heat = delta_heatmap(cells)
    assert heat is not None and "m-few-shot" in heat.svg
    assert delta_heatmap(cells[:1]) is None
    assert delta_heatmap(cells[1:]) is None


def test_cells_labelled_on_the_scatter_and_unknown_cost_left_out() -> None:
    zero, few = _cells()
    assert zero.cell.summary.tpv is None and few.cell.summary.tpv is not None  # no valid output
    plot = pareto_scatter([zero, few])
    assert plot is not None and "m-few-shot" in plot.svg
    assert plot.note == "left out, cost unknown: m-zero-shot"
    assert pareto_scatter([zero]) is None


def test_a_hostile_cell_label_is_text_in_the_svg() -> None:
    cell = _cells()[0]
    hostile = PageCell("<script>alert(1)</script>", cell.cell, "r.json")
    plot = level_bars([hostile])
    assert plot is not None and "<script>" not in plot.svg
    assert "&lt;script&gt;" in plot.svg


def test_heatmap_values_on_dark_cells_are_written_in_white() -> None:
    heat = delta_heatmap(_cells())
    assert heat is not None
    # the largest change is at the end of the colour scale, the darkest cell: its text (not a
    # background patch) is white
    assert "text-anchor: middle; fill: #ffffff" in heat.svg
