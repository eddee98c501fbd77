"""The session report of a benchmark run and its terminal summary.

:func:`build_session_report` turns the per-item results of a run (from one process or merged
from xdist workers) into the report: for one cell, that cell's report object; for several,
``{"schema": ..., "cells": [report, ...], "pareto": ...}``.  Everything is ordered (cells as
configured, instructions in suite order) and free of timings or cache flags, so the same answers
always give byte-identical JSON, whatever the number of workers.

Per cell: per-level means of every dimension and of the quality-only level score with a 95 %
bootstrap interval (resampling instructions), ``S_total`` (the paper's unnormalized form and the
form renormalized over the levels present), the cell's cost (TPV = tokens / valid outputs),
Q/kTPV, and — over the cells of the run — the Pareto bonus and ``S_final``.  Items that errored
or were skipped have no score; they are counted, never scored as the model's failure.
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
from pytest_graphinstruct.score.bootstrap import bootstrap_levels
from pytest_graphinstruct.score.d5 import D5Result, cell_cost
from pytest_graphinstruct.score.levels import s_total
from pytest_graphinstruct.score.pareto import CellPoint, analyze

SCHEMA = "graphinstruct-report/1"
OUTCOMES = ("passed", "failed", "error", "skipped")
DIMENSIONS = ("D1", "D2", "D3", "D4", "D5")
_VOLATILE_SAMPLE_KEYS = ("cached",)


def _mean(xs: Sequence[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return fmean(vals) if vals else None


def _scored(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in results if r["outcome"] in ("passed", "failed")]


def _level_rows(results: Sequence[Mapping[str, Any]], boot: Any) -> dict[str, dict[str, Any]]:
    levels: dict[int, list[Mapping[str, Any]]] = {}
    for r in results:
        levels.setdefault(r["level"], []).append(r)
    out = {}
    for lv, rs in sorted(levels.items()):
        counts = {o: sum(1 for r in rs if r["outcome"] == o) for o in OUTCOMES}
        ran = _scored(rs)
        interval = boot.levels.get(lv) if boot is not None else None
        out[str(lv)] = {
            "items": len(rs),
            **counts,
            "pass_rate": counts["passed"] / len(ran) if ran else None,
            "dimensions": {d: _mean([r.get("dimension_scores", {}).get(d) for r in ran])
                           for d in DIMENSIONS},
            "level_score": interval.estimate if interval else None,
            "level_score_ci95": [interval.low, interval.high] if interval else None,
            "scored_items": interval.n if interval else 0,
        }
    return out


def _clean(result: Mapping[str, Any]) -> dict[str, Any]:
    r = dict(result)
    r["samples"] = [{k: v for k, v in s.items() if k not in _VOLATILE_SAMPLE_KEYS}
                    for s in result.get("samples", [])]
    return r


def _cost(results: Sequence[Mapping[str, Any]]) -> Any:
    return cell_cost(D5Result(r.get("tokens"), r.get("api_calls", 0), r.get("d5_valid", 0),
                              None, None, None, None, None, "valid") for r in _scored(results))


def cell_label(metadata: Mapping[str, Any]) -> str:
    """A cell's label from its report metadata, as :attr:`Cell.label` builds it
    (``model-strategy``, ``-method`` appended unless the method is ``baseline``)."""
    base = f"{metadata['model']}-{metadata['strategy']}"
    method = metadata.get("method") or "baseline"
    return base if method == "baseline" else f"{base}-{method}"


def usage_sources(results: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Samples per usage source (``provider``, ``tiktoken:<encoding>``, ``recorded``, ...;
    ``none`` = no usage at all), sorted by source, over the scored items."""
    counts: dict[str, int] = {}
    for r in _scored(results):
        for s in r.get("samples", []):
            key = s.get("usage_source") or "none"
            counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def build_cell_report(cell_label: str, results: Sequence[Mapping[str, Any]], run: RunConfig,
                      *, partial: bool = False,
                      model_info: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The report object of one cell (results already in suite order).

    ``model_info`` maps a model name to a description of what served it (the embedded model's
    file and versions); it becomes ``metadata.model_info`` (``None`` when not given).
    """
    from pytest_graphinstruct.methods.constrained import METHOD, resolve_format

    cell = next(c for c in run.cells if c.label == cell_label)
    counts = {o: sum(1 for r in results if r["outcome"] == o) for o in OUTCOMES}
    by_level: dict[int, list[float]] = {}
    for r in _scored(results):
        if r.get("level_score") is not None:
            by_level.setdefault(r["level"], []).append(r["level_score"])
    boot = bootstrap_levels(by_level) if by_level else None
    total = s_total({lv: fmean(xs) for lv, xs in by_level.items()})
    cost = _cost(results)
    missing = sorted({d for r in _scored(results) for d in r.get("missing_dimensions", [])})
    return {
        "schema": SCHEMA,
        "metadata": {
            "tool": f"pytest-graphinstruct {__version__}",
            "model": cell.model,
            "strategy": cell.strategy,
            "method": cell.method,
            "constraint": (resolve_format(run.constrained_format, cell.model)
                           if cell.method == METHOD else None),
            "model_info": (model_info or {}).get(cell.model),
            "suite": str(run.suite),
            "levels": list(run.levels) if run.levels else None,
            "samples_per_instruction": run.samples,
            "pass_rule": run.pass_rule,
            "decoding": run.params.to_json(),
            "partial": partial,
            "quality_only": True,
            "missing_dimensions": missing,
        },
        "summary": {
            "items": len(results),
            **counts,
            "infra_errors": counts["error"],
            "s_total": total.unnormalized,
            "s_total_renormalized": total.renormalized,
            "s_total_ci95": [boot.total.low, boot.total.high] if boot else None,
            "levels_present": list(total.levels_present),
            "levels_missing": list(total.levels_missing),
            "tokens_total": cost.tokens,
            "usage_missing_items": cost.unknown_instructions,
            "usage_sources": usage_sources(results),
            "valid_outputs": cost.valid,
            "tpv": cost.tpv,
            "api_calls": sum(r.get("api_calls", 0) for r in results),
        },
        "per_level": _level_rows(results, boot),
        "per_instruction": [_clean(r) for r in results],
    }


def cell_point(cell: Mapping[str, Any]) -> CellPoint:
    """A cell report as a point of the Pareto view (quality = S_total over the levels run,
    cost = the cell's TPV, ``None`` when token usage is unknown)."""
    m = cell["metadata"]
    return CellPoint(label=cell_label(m), model=m["model"],
                     strategy=m["strategy"], method=m["method"],
                     quality=cell["summary"]["s_total_renormalized"] or 0.0,
                     cost=cell["summary"]["tpv"])


def _add_pareto(cells: list[dict[str, Any]]) -> dict[str, Any]:
    report = analyze([cell_point(c) for c in cells])
    for c, a in zip(cells, report.cells, strict=True):
        c["summary"].update({
            "pareto_optimal": a.on_frontier,
            "pareto_bonus": a.bonus,
            "pareto_compared_cells": a.pareto_compared_cells,
            "s_final": a.s_final,
            "q_per_ktpv": a.q_per_ktpv,
            "frontier_distance": a.frontier_distance,
        })
    return {"excluded_unknown_cost": list(report.excluded),
            "cost_at_q08": report.cost_at_q, "sigma_strat": report.sigma_strat}


def build_session_report(results: Sequence[Mapping[str, Any]], run: RunConfig, *,
                         suite_order: Mapping[str, int], partial: bool = False,
                         model_info: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The report of a whole run (see the module docstring for the shape; ``model_info`` as
    in :func:`build_cell_report`)."""
    cells = []
    for cell in run.cells:
        rs = sorted((r for r in results if r["cell"] == cell.label),
                    key=lambda r: suite_order.get(r["instruction_id"], 1 << 30))
        cells.append(build_cell_report(cell.label, rs, run, partial=partial,
                                       model_info=model_info))
    pareto = _add_pareto(cells)
    if len(cells) == 1:
        return cells[0]
    return {"schema": SCHEMA, "partial": partial, "pareto": pareto, "cells": cells}


def write_json(report: Mapping[str, Any], path: str | Path) -> None:
    """Write a report atomically (a crash never leaves half a file)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(p)


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _ci(ci: Sequence[float] | None) -> str:
    return "—" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def summary_lines(report: Mapping[str, Any]) -> list[str]:
    """The terminal summary: a row per cell and level, then a row per cell."""
    cells = report.get("cells", [report])
    rows = []
    for c in cells:
        label = cell_label(c["metadata"])
        for lv, row in c["per_level"].items():
            dims = row["dimensions"]
            rows.append([label, f"L{lv}", row["items"], row["passed"], row["failed"],
                         row["error"], _fmt(row["pass_rate"]),
                         *(_fmt(dims[d]) for d in DIMENSIONS),
                         _fmt(row["level_score"]), _ci(row["level_score_ci95"])])
    lines = tabulate(rows, headers=["cell", "level", "items", "pass", "fail", "error",
                                    "pass rate", *DIMENSIONS, "S_level", "95% CI"],
                     tablefmt="simple").splitlines()
    lines.append("")
    crow = []
    for c in cells:
        s = c["summary"]
        label = cell_label(c["metadata"])
        crow.append([label + (" *" if s.get("pareto_optimal") else ""), _fmt(s["s_total"]),
                     _fmt(s["s_total_renormalized"]), _ci(s["s_total_ci95"]),
                     _fmt(s.get("s_final")), _fmt(s["tpv"], 1), _fmt(s.get("q_per_ktpv")),
                     s["infra_errors"]])
    lines += tabulate(crow, headers=["cell (* Pareto-optimal)", "S_total", "S_total (levels "
                                     "run)", "95% CI", "S_final", "TPV", "Q/kTPV",
                                     "infra errors"], tablefmt="simple").splitlines()
    for c in cells:
        s, m = c["summary"], c["metadata"]
        notes = []
        if s["levels_missing"]:
            notes.append(f"levels not run: {', '.join(f'L{x}' for x in s['levels_missing'])} "
                         "(S_total counts them as 0; the renormalized column does not)")
        if m["missing_dimensions"]:
            notes.append(f"absent dimensions (level scores renormalized without them): "
                         f"{', '.join(m['missing_dimensions'])}")
        if s["usage_missing_items"]:
            notes.append(f"{s['usage_missing_items']} item(s) without token usage: TPV, D5 "
                         "absent")
        counted = {k: v for k, v in s.get("usage_sources", {}).items() if "tiktoken" in k}
        if counted:
            notes.append("token usage counted offline (the provider sent none) for " + ", ".join(
                f"{v} sample(s) with {k}" for k, v in counted.items()))
        if s.get("pareto_compared_cells") == 1:
            notes.append("one cell only: the Pareto bonus compares it with nothing")
        for n in notes:
            lines.append(f"{cell_label(m)}: {n}")
    return lines
