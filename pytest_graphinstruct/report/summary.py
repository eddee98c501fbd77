"""The session report of a benchmark run and its terminal summary.

:func:`build_session_report` turns the per-item results of a run (from one process or merged
from xdist workers) into the report: for one cell, that cell's report object; for several,
``{"schema": ..., "cells": [report, ...]}``.  Everything is ordered (cells as configured,
instructions in suite order) and free of timings or cache flags, so the same answers always give
byte-identical JSON, whatever the number of workers.

Dimensions other than D4 are reported as absent until the scoring module provides them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from tabulate import tabulate

from pytest_graphinstruct import __version__
from pytest_graphinstruct.runconfig import RunConfig

SCHEMA = "graphinstruct-report/1"
OUTCOMES = ("passed", "failed", "error", "skipped")
ABSENT_DIMENSIONS = ("D1", "D2", "D3", "D5")
_VOLATILE_SAMPLE_KEYS = ("cached",)


def _level_rows(results: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    levels: dict[int, list[Mapping[str, Any]]] = {}
    for r in results:
        levels.setdefault(r["level"], []).append(r)
    out = {}
    for lv, rs in sorted(levels.items()):
        scored = [r["d4_instruction_score"] for r in rs if r["d4_instruction_score"] is not None]
        counts = {o: sum(1 for r in rs if r["outcome"] == o) for o in OUTCOMES}
        ran = counts["passed"] + counts["failed"]
        out[str(lv)] = {
            "items": len(rs),
            **counts,
            "pass_rate": counts["passed"] / ran if ran else None,
            "d4_mean": fmean(scored) if scored else None,
        }
    return out


def _clean(result: Mapping[str, Any]) -> dict[str, Any]:
    r = dict(result)
    r["samples"] = [{k: v for k, v in s.items() if k not in _VOLATILE_SAMPLE_KEYS}
                    for s in result.get("samples", [])]
    return r


def build_cell_report(cell_label: str, results: Sequence[Mapping[str, Any]], run: RunConfig,
                      *, partial: bool = False) -> dict[str, Any]:
    """The report object of one cell (results already in suite order)."""
    cell = next(c for c in run.cells if c.label == cell_label)
    counts = {o: sum(1 for r in results if r["outcome"] == o) for o in OUTCOMES}
    tokens = [r["tokens"] for r in results if r["outcome"] in ("passed", "failed")]
    known = [t for t in tokens if t is not None]
    return {
        "schema": SCHEMA,
        "metadata": {
            "tool": f"pytest-graphinstruct {__version__}",
            "model": cell.model,
            "strategy": cell.strategy,
            "method": cell.method,
            "suite": str(run.suite),
            "levels": list(run.levels) if run.levels else None,
            "samples_per_instruction": run.samples,
            "pass_rule": run.pass_rule,
            "decoding": run.params.to_json(),
            "partial": partial,
            "absent_dimensions": list(ABSENT_DIMENSIONS),
        },
        "summary": {
            "items": len(results),
            **counts,
            "infra_errors": counts["error"],
            "tokens_total": sum(known) if known else None,
            "usage_missing_items": len(tokens) - len(known),
            "api_calls": sum(r["api_calls"] for r in results),
        },
        "per_level": _level_rows(results),
        "per_instruction": [_clean(r) for r in results],
    }


def build_session_report(results: Sequence[Mapping[str, Any]], run: RunConfig, *,
                         suite_order: Mapping[str, int], partial: bool = False
                         ) -> dict[str, Any]:
    """The report of a whole run (see the module docstring for the shape)."""
    cells = []
    for cell in run.cells:
        rs = sorted((r for r in results if r["cell"] == cell.label),
                    key=lambda r: suite_order.get(r["instruction_id"], 1 << 30))
        cells.append(build_cell_report(cell.label, rs, run, partial=partial))
    if len(cells) == 1:
        return cells[0]
    return {"schema": SCHEMA, "partial": partial, "cells": cells}


def write_json(report: Mapping[str, Any], path: str | Path) -> None:
    """Write a report atomically (a crash never leaves half a file)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(p)


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def summary_lines(report: Mapping[str, Any]) -> list[str]:
    """The terminal summary: one table row per cell and level, then per-cell totals."""
    cells = report.get("cells", [report])
    rows = []
    for c in cells:
        label = f"{c['metadata']['model']}-{c['metadata']['strategy']}"
        for lv, row in c["per_level"].items():
            rows.append([label, f"L{lv}", row["items"], row["passed"], row["failed"],
                         row["error"], row["skipped"], _fmt(row["pass_rate"]),
                         _fmt(row["d4_mean"])])
    lines = tabulate(rows, headers=["cell", "level", "items", "pass", "fail", "error", "skip",
                                    "pass rate", "D4"], tablefmt="simple").splitlines()
    for c in cells:
        s = c["summary"]
        label = f"{c['metadata']['model']}-{c['metadata']['strategy']}"
        tokens = "unknown" if s["tokens_total"] is None else str(s["tokens_total"])
        missing = f" ({s['usage_missing_items']} item(s) without usage)" \
            if s["usage_missing_items"] else ""
        lines.append(f"{label}: {s['items']} items, {s['infra_errors']} infra error(s), "
                     f"tokens {tokens}{missing}, {s['api_calls']} API call(s)")
    lines.append("D1, D2, D3, D5 and S_total/S_final: not computed yet (reported as absent)")
    return lines
