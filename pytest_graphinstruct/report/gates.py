"""CI gates on a session report: a quality floor and regressions against a saved baseline.

A baseline is simply a saved session report (``--gi-update-baseline`` writes one).  Cells are
matched by label (``model-strategy``, ``-method`` appended for a method other than the
baseline, e.g. ``local-zero-shot-constrained``), instructions by id.

* ``fail_under``: a cell whose ``S_total`` over the levels run is below the floor fails.
* ``max_regression``: per level, the paired bootstrap of ``current − baseline`` level scores over
  the instructions scored in both runs; the gate fails when the mean dropped by more than DELTA
  *and* the whole 95 % interval is below 0 (the drop is real, not sampling noise).  The message
  names the levels and the instructions whose item passed in the baseline and fails now.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.summary import cell_label
from pytest_graphinstruct.score.bootstrap import is_regression, paired_bootstrap


def cells_of(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The cell reports of a session report, keyed by their label (:func:`cell_label`)."""
    cells = report.get("cells", [report])
    return {cell_label(c["metadata"]): c for c in cells}


def load_baseline(path: str | Path) -> dict[str, Mapping[str, Any]]:
    """Read a baseline file (a saved session report).

    Raises:
        GraphInstructError: missing, unreadable or not a GraphInstruct report.
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        return cells_of(data)
    except FileNotFoundError:
        raise GraphInstructError(f"baseline not found: {p} (create it with "
                                 "--gi-update-baseline)") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise GraphInstructError(f"baseline {p} is not a GraphInstruct report: {exc}") from None


def baseline_failures(baseline: Mapping[str, Mapping[str, Any]]) -> set[tuple[str, str]]:
    """``(cell label, instruction id)`` of every item that failed in the baseline."""
    return {(label, r["instruction_id"]) for label, c in baseline.items()
            for r in c["per_instruction"] if r["outcome"] == "failed"}


@dataclass(frozen=True)
class GateFailure:
    """One tripped gate, with its human-readable message."""

    gate: str
    cell: str
    message: str


def level_scores(cell: Mapping[str, Any]) -> dict[str, tuple[int, float]]:
    """``{instruction id: (level, level score)}`` of a cell's scored items (passed/failed)."""
    return {r["instruction_id"]: (r["level"], r["level_score"]) for r in cell["per_instruction"]
            if r["outcome"] in ("passed", "failed") and r.get("level_score") is not None}


def check_gates(report: Mapping[str, Any], *, fail_under: float | None = None,
                baseline: Mapping[str, Mapping[str, Any]] | None = None,
                max_regression: float | None = None) -> list[GateFailure]:
    """Every gate the report trips (empty when it passes all configured gates)."""
    out: list[GateFailure] = []
    for label, cell in cells_of(report).items():
        total = cell["summary"].get("s_total_renormalized")
        if fail_under is not None and (total is None or total < fail_under):
            shown = "none" if total is None else f"{total:.4f}"
            out.append(GateFailure("fail_under", label, f"{label}: S_total {shown} is below "
                                   f"--gi-fail-under={fail_under:g}"))
        if baseline is None or max_regression is None:
            continue
        base = baseline.get(label)
        if base is None:
            continue
        diff = paired_bootstrap(level_scores(base), level_scores(cell))
        before = {r["instruction_id"]: r["outcome"] for r in base["per_instruction"]}
        for lv, d in sorted(diff.levels.items()):
            if not is_regression(d, max_regression):
                continue
            newly = [r["instruction_id"] for r in cell["per_instruction"]
                     if r["level"] == lv and r["outcome"] == "failed"
                     and before.get(r["instruction_id"]) == "passed"]
            shown = ", ".join(newly[:20]) + (f" … {len(newly) - 20} more" if len(newly) > 20
                                             else "")
            out.append(GateFailure(
                "regression", label,
                f"{label}: L{lv} quality dropped by {-d.mean_diff:.4f} (95% CI of the change "
                f"[{d.low:.4f}, {d.high:.4f}], {d.n} instructions) > --gi-max-regression="
                f"{max_regression:g}; newly failing: {shown or 'none (scores dropped)'}"))
    return out
