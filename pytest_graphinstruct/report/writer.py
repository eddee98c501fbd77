"""Writing a run report as JSON (atomically: a crash never leaves half a file)."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_graphinstruct.run.results import RunReport


def report_json(report: RunReport) -> str:
    """The report's JSON text (indented, UTF-8, newline-terminated; deterministic)."""
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"


def write_report(report: RunReport, path: str | Path) -> None:
    """Write ``report`` to ``path`` through a temporary file renamed into place; the folder is
    created when missing."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    try:
        tmp.write_text(report_json(report), encoding="utf-8")
        tmp.replace(p)
    finally:
        tmp.unlink(missing_ok=True)
