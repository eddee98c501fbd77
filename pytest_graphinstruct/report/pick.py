"""Choosing the cell of a report a command is about (``--cell``, or the report's only one)."""

from __future__ import annotations

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.untrusted import escape
from pytest_graphinstruct.run.records.results import CellReport, RunReport


def pick_cell(report: RunReport, path: str, label: str | None, *,
              hint: str = "pick one with --cell ({labels})") -> CellReport:
    """The cell called ``label``, or the report's only cell (``hint``: how to choose one, for
    the error; ``{labels}`` in it lists the report's cells, escaped).

    Raises:
        GraphInstructError: no such cell, or several cells and no ``label`` (lists them).
    """
    if label is not None:
        try:
            return report.cell(label)
        except KeyError as exc:
            raise GraphInstructError(f"{path}: {exc.args[0]}") from None
    if len(report.cells) != 1:
        labels = ", ".join(escape(x) for x in report.labels) or "none"
        raise GraphInstructError(f"{path} holds {len(report.cells)} cells; "
                                 + hint.format(labels=labels))
    return report.cells[0]
