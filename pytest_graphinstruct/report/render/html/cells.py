"""The cells one HTML page shows, gathered from one or more reports under unique names."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_graphinstruct.run.records.results import CellReport, RunReport


@dataclass(frozen=True)
class NamedReport:
    """A report and the name it is shown under (its file name, or ``this run``)."""

    name: str
    report: RunReport


@dataclass(frozen=True)
class PageCell:
    """One cell of the page: ``key`` is its label, followed by ``[source]`` when several
    reports hold a cell of that label."""

    key: str
    cell: CellReport
    source: str


def page_cells(reports: Sequence[NamedReport]) -> tuple[PageCell, ...]:
    """Every cell of ``reports`` in order, each under a unique key.

    Cells gathered from several reports are compared with each other: their Pareto marks
    (frontier, bonus, S_final, Q/kTPV, frontier distance) are recomputed over all of them with
    the run's own rule (:func:`~pytest_graphinstruct.run.aggregate.with_pareto`), as one run
    of those cells would have them — a file's own marks only compare it with itself.  When two
    reports hold a cell of the same label the marks stay each report's own.
    """
    from pytest_graphinstruct.run.aggregate import with_pareto

    counts = Counter(c.label for r in reports for c in r.report.cells)
    out: list[PageCell] = []
    seen: set[str] = set()
    for r in reports:
        for c in r.report.cells:
            key = c.label if counts[c.label] == 1 else f"{c.label} [{r.name}]"
            base, k = key, 2
            while key in seen:  # the same label twice in one report, or the same file twice
                key, k = f"{base} #{k}", k + 1
            seen.add(key)
            out.append(PageCell(key, c, r.name))
    if len(reports) > 1 and len(counts) == len(out):
        marked = with_pareto([pc.cell for pc in out]).cells
        out = [PageCell(pc.key, cell, pc.source) for pc, cell in zip(out, marked, strict=True)]
    return tuple(out)
