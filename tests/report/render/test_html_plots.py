"""Charts: matplotlib SVG, deterministic, escaped, and only where they apply."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree

import pytest

from pytest_graphinstruct.report.render.html.cells import NamedReport, PageCell, page_cells
from pytest_graphinstruct.report.render.html.plots import (
    all_plots,
    delta_heatmap,
    level_bars,
    pareto_scatter,
    profiles,
    taxonomy_bars,
)
from pytest_graphinstruct.report.render.html.taxonomy import taxonomy
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


def _drawn(monkeypatch: pytest.MonkeyPatch, make: Any) -> Any:
    """The matplotlib figure ``make()`` renders, drawn (its SVG conversion intercepted)."""
    from pytest_graphinstruct.report.render.html import plots

    figures = []

    def keep(fig: Any) -> str:
        figures.append(fig)
        return "<svg/>"

    monkeypatch.setattr(plots, "to_svg", keep)
    assert make() is not None
    (fig,) = figures
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    return fig


def _overlaps(a: Any, b: Any) -> bool:
    return bool(a.width and b.width and a.overlaps(b))


@pytest.mark.parametrize("rows", [1, 2, 4, 8])
def test_the_stacked_bar_legend_clears_the_axis_label_and_ticks(
        rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    cells = list(_cells()) * 4
    taxes = [taxonomy(c.cell.per_instruction) for c in cells]
    fig = _drawn(monkeypatch, lambda: taxonomy_bars(cells[:rows], taxes[:rows]))
    (ax,) = fig.axes
    renderer = fig.canvas.get_renderer()
    legends = [*fig.legends, *([ax.get_legend()] if ax.get_legend() else [])]
    assert len(legends) == 1
    box = legends[0].get_window_extent(renderer)
    assert not _overlaps(box, ax.xaxis.label.get_window_extent(renderer))
    for tick in ax.get_xticklabels():
        assert not _overlaps(box, tick.get_window_extent(renderer))
    assert box.y1 <= ax.xaxis.label.get_window_extent(renderer).y0  # below the label
    assert box.y0 >= 0  # inside the figure, not cut off


@pytest.mark.parametrize("make", [level_bars, profiles])
def test_the_legends_below_other_charts_clear_their_ticks(
        make: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fig = _drawn(monkeypatch, lambda: make(_cells()))
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    legends = [*fig.legends, *([ax.get_legend()] if ax.get_legend() else [])]
    box = legends[0].get_window_extent(renderer)
    for text in [ax.xaxis.label, *ax.get_xticklabels()]:
        assert not _overlaps(box, text.get_window_extent(renderer))
    assert box.y0 >= 0


def test_no_cells_no_plots() -> None:
    assert all_plots([], []) == ()
    assert level_bars([]) is None and profiles([]) is None and pareto_scatter([]) is None


def test_many_cells_show_the_best_and_say_so() -> None:
    from pytest_graphinstruct.report.render.html.plots import MAX_SERIES

    zero, few = _cells()
    many = [PageCell(f"c{k}", few.cell, "r.json") for k in range(MAX_SERIES)] + [zero]
    plot = profiles(many)
    assert plot is not None
    assert plot.note == f"the {MAX_SERIES} cells with the highest S_total of {MAX_SERIES + 1}"
    assert "c0" in plot.svg and zero.key not in plot.svg  # m-zero-shot scores lowest
    assert profiles(many[:MAX_SERIES]).note == ""  # type: ignore[union-attr]


def test_cells_without_samples_are_left_off_the_taxonomy_bars() -> None:
    from pytest_graphinstruct.report.render.html.taxonomy import Taxonomy

    cells = _cells()
    taxes = [taxonomy(c.cell.per_instruction) for c in cells]
    plot = taxonomy_bars(cells, [taxes[0], Taxonomy({})])
    assert plot is not None and cells[0].key in plot.svg and cells[1].key not in plot.svg
    assert taxonomy_bars(cells, [Taxonomy({}), Taxonomy({})]) is None


@pytest.mark.parametrize("make", ["pareto", "heatmap", "taxonomy"])
def test_a_hostile_cell_label_is_text_in_every_chart(make: str) -> None:
    zero, few = _cells()
    evil = PageCell("<script>alert(1)</script>", few.cell, "r.json")
    plot = {"pareto": lambda: pareto_scatter([zero, evil]),
            "heatmap": lambda: delta_heatmap([zero, evil]),
            "taxonomy": lambda: taxonomy_bars([evil], [taxonomy(few.cell.per_instruction)]),
            }[make]()
    assert plot is not None and "<script>" not in plot.svg and "&lt;script&gt;" in plot.svg
    ElementTree.fromstring(plot.svg)
