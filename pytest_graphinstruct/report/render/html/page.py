"""The HTML page: the data document, the charts and the static script and style, rendered
into one self-contained file by a Jinja2 template (:mod:`..jinja`, autoescape on).

The document is embedded once, as JSON in a ``<script type="application/json">`` element
(:func:`~..jinja.json_script`: every ``<`` escaped, so no string in it can close the
element).  The charts are matplotlib's SVG; the script and style are the package's own files,
inlined.  Nothing is fetched when the page opens.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from pytest_graphinstruct.report.render.html.cells import NamedReport, page_cells
from pytest_graphinstruct.report.render.html.document import document
from pytest_graphinstruct.report.render.html.plots import all_plots
from pytest_graphinstruct.report.render.html.taxonomy import taxonomy
from pytest_graphinstruct.report.render.jinja import environment
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.vocab import DIMENSIONS

_PACKAGE = "pytest_graphinstruct.report.render.html"


@dataclass(frozen=True)
class Page:
    """A rendered page: its HTML text and the counts a caller may print."""

    html: str
    cells: int
    items: int


def _static(name: str) -> str:
    text = resources.files(_PACKAGE).joinpath("static").joinpath(name).read_text(encoding="utf-8")
    closing = "</script" if name.endswith(".js") else "</style"
    if closing in text.lower():  # it would end its element early
        raise ValueError(f"static/{name} must not contain {closing!r}")
    return text


def build_page(reports: Sequence[NamedReport], *, baseline: NamedReport | None = None,
               instructions: Mapping[str, Instruction] | None = None,
               title: str | None = None) -> Page:
    """The page of every cell of ``reports`` (see :mod:`.document` for what it holds)."""
    cells = page_cells(reports)
    taxonomies = [taxonomy(pc.cell.per_instruction) for pc in cells]
    if title is None:
        title = "GraphInstruct report" + (f": {reports[0].name}" if len(reports) == 1 else "")
    doc = document(cells, taxonomies, reports=reports, baseline=baseline,
                   instructions=instructions, title=title)
    html = environment().get_template("report.html.j2").render(
        doc=doc, plots=all_plots(cells, taxonomies), dimensions=DIMENSIONS,
        script=_static("report.js"), style=_static("report.css"))
    return Page(html, len(cells), len(doc["items"]))


def write_page(page: Page, path: str | Path) -> None:
    """Write ``page`` to ``path`` through a temporary file renamed into place (a crash never
    leaves half a page); the folder is created when missing."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + f".{os.getpid()}.tmp")
    try:
        tmp.write_text(page.html, encoding="utf-8")
        tmp.replace(p)
    finally:
        tmp.unlink(missing_ok=True)
