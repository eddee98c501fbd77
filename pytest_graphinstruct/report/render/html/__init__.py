"""The per-run HTML report: one self-contained page (tables, charts, every item).

``build_page`` renders reports into a :class:`~.page.Page`; ``write_page`` writes it.  See
docs/REPORTS.md ("The HTML report").
"""

from pytest_graphinstruct.report.render.html.cells import NamedReport
from pytest_graphinstruct.report.render.html.page import Page, build_page, write_page

__all__ = ["NamedReport", "Page", "build_page", "write_page"]
