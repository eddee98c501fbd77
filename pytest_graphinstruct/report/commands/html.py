"""The ``html`` command: the HTML page of report files (:mod:`..render.html` renders it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pytest_graphinstruct.report.render.html import NamedReport, Page, build_page
from pytest_graphinstruct.run.records.reader import read_report
from pytest_graphinstruct.suite.loader import load_suite


def page_from_files(reports: Sequence[str | Path], *, baseline: str | Path | None = None,
                    suite: str | Path | None = None, title: str | None = None) -> Page:
    """The page of report files (each read by
    :func:`~pytest_graphinstruct.run.records.reader.read_report`, shown under its file name);
    ``suite`` gives instruction texts and L5 base graphs.

    Raises:
        GraphInstructError: a file that is not a report, or a suite that cannot be loaded (one
            line each).
    """
    named = [NamedReport(Path(p).name, read_report(p)) for p in reports]
    base = None if baseline is None else NamedReport(Path(baseline).name, read_report(baseline))
    instructions = None
    if suite is not None:
        instructions = {i.id: i for i in load_suite(suite)}
    return build_page(named, baseline=base, instructions=instructions, title=title)
