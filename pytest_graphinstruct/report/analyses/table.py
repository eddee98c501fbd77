"""Tables an analysis hands back, and how they are written (Markdown, CSV, JSON): the one
table renderer of the analyses and the leaderboard.

An analysis result is a title, tables of raw values and notes; numbers are formatted only when
written (``digits`` per column), so CSV and JSON keep full precision.  Text cells are names from
files and are escaped for Markdown and CSV.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_graphinstruct.report.untrusted import csv_safe, escape_markdown

Cell = str | int | float | bool | None


@dataclass(frozen=True)
class Table:
    """A titled table: ``digits[i]`` is how column ``i``'s floats are shown (``None``: as is)."""

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    digits: tuple[int | None, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "headers": list(self.headers),
                "rows": [[_json_value(v) for v in r] for r in self.rows]}


@dataclass(frozen=True)
class AnalysisResult:
    """What an analysis returns: its name, tables, notes and the same data as one JSON object."""

    name: str
    title: str
    tables: tuple[Table, ...]
    notes: tuple[str, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"schema": "graphinstruct-analysis/1", "analysis": self.name,
                "title": self.title, "notes": list(self.notes),
                "tables": [t.to_json() for t in self.tables], "data": self.data}


def _json_value(v: Cell) -> Cell:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _show(v: Cell, digits: int | None) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "—"
        if digits is None:
            return f"{v:g}"
        return f"{v:+.{-digits}f}" if digits < 0 else f"{v:.{digits}f}"
    if isinstance(v, int):
        return str(v)
    return escape_markdown(v)


def signed(digits: int) -> int:
    """A ``digits`` entry that shows the float with its sign (``+0.012``)."""
    return -digits


def markdown_table(table: Table) -> str:
    """``table``'s header and rows as a GitHub Markdown table (no title): floats shown with
    the column's ``digits``, absent and non-finite values as ``—``, text escaped for Markdown."""
    from tabulate import tabulate

    digits: Sequence[int | None] = table.digits or (None,) * len(table.headers)
    rows = [[_show(v, digits[i] if i < len(digits) else None) for i, v in enumerate(r)]
            for r in table.rows]
    return str(tabulate(rows, headers=list(table.headers), tablefmt="github",
                        disable_numparse=True))


def to_markdown(result: AnalysisResult) -> str:
    parts = [f"# {_show(result.title, None)}"]
    for t in result.tables:
        parts += ["", f"## {_show(t.title, None)}", "", markdown_table(t)]
    if result.notes:
        parts += [""] + [f"- {_show(n, None)}" for n in result.notes]
    return "\n".join(parts) + "\n"


def _csv_value(v: Cell) -> Cell:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    return csv_safe(v)


def csv_rows(table: Table) -> list[tuple[Cell, ...]]:
    """``table``'s header and rows as CSV cells (no title): absent and non-finite values
    empty, text made safe for spreadsheets (:func:`~.untrusted.csv_safe`)."""
    return [table.headers, *(tuple(_csv_value(v) for v in r) for r in table.rows)]


def to_csv(result: AnalysisResult) -> str:
    """Every table, each introduced by a ``# title`` row and followed by a blank row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for t in result.tables:
        writer.writerow([f"# {t.title}"])
        writer.writerows(csv_rows(t))
        writer.writerow([])
    return out.getvalue()


def render(result: AnalysisResult, fmt: str) -> str:
    if fmt == "markdown":
        return to_markdown(result)
    if fmt == "csv":
        return to_csv(result)
    if fmt == "json":
        return json.dumps(result.to_json(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    raise ValueError(f"unknown format {fmt!r} (markdown, csv, json)")
