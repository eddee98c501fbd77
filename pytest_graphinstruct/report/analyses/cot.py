"""F4: chain-of-thought deltas by model family (paper §5.2, Tab. 14, Fig. 8).

Per model with a zero-shot cell: ``S_total(zero-CoT) − S_total(zero-shot)`` and
``S_total(few-CoT) − S_total(zero-shot)``, grouped by family (models table) and ordered by
scale within it; per family the mean of each delta and whether its models agree in sign
(outside the ±0.005 band).  The released files give Tab. 14 to within rounding of the last digit.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.registry import AnalysisOutput, AnalysisRequest
from pytest_graphinstruct.report.analyses.run_set import Run
from pytest_graphinstruct.report.analyses.select import baseline_by_model
from pytest_graphinstruct.report.analyses.strategy_effects import BAND
from pytest_graphinstruct.report.analyses.table import AnalysisResult, Table, render, signed

COT = ("zero-cot", "few-cot")


def _agreement(deltas: list[float], band: float) -> str:
    if all(d > band for d in deltas):
        return "all positive"
    if all(d < -band for d in deltas):
        return "all negative"
    return "mixed or within band"


def cot_deltas(runs: Sequence[Run], band: float = BAND) -> AnalysisResult:
    """Tab. 14 over ``runs`` (see the module docstring).

    Raises:
        GraphInstructError: no model has a zero-shot cell and a CoT cell.
    """
    rows = []
    for cells in baseline_by_model(runs).values():
        zs = cells.get("zero-shot")
        if zs is None or zs.quality is None or not any(s in cells for s in COT):
            continue
        d = [None if s not in cells or cells[s].quality is None
             else (cells[s].quality or 0.0) - zs.quality for s in COT]
        rows.append((zs.info.family or "—", zs.display, zs.info.scale, d[0], d[1]))
    if not rows:
        raise GraphInstructError("CoT deltas need a model with a zero-shot and a CoT cell")
    rows.sort(key=lambda r: (r[0], r[2] if r[2] is not None else float("inf"), r[1]))
    families: dict[str, list[tuple[float | None, float | None]]] = {}
    for fam, _, _, zc, fc in rows:
        families.setdefault(fam, []).append((zc, fc))
    fam_rows = []
    for fam, ds in families.items():
        zcs = [z for z, _ in ds if z is not None]
        fcs = [f for _, f in ds if f is not None]
        fam_rows.append((fam, len(ds), statistics.fmean(zcs) if zcs else None,
                         _agreement(zcs, band) if zcs else "—",
                         statistics.fmean(fcs) if fcs else None,
                         _agreement(fcs, band) if fcs else "—"))
    tables = (Table("CoT deltas vs zero-shot (S_total)",
                    ("family", "model", "ZC − ZS", "FC − ZS"),
                    tuple((f, m, zc, fc) for f, m, _, zc, fc in rows),
                    (None, None, signed(3), signed(3))),
              Table(f"By family (sign agreement outside ±{band:g})",
                    ("family", "models", "mean ZC − ZS", "ZC sign", "mean FC − ZS", "FC sign"),
                    tuple(fam_rows), (None, None, signed(3), None, signed(3), None)))
    data = {"rows": [{"family": f, "model": m, "scale": sc, "zc_minus_zs": zc,
                      "fc_minus_zs": fc} for f, m, sc, zc, fc in rows]}
    return AnalysisResult("cot", "F4: CoT deltas by family", tables, (), data)


def analyze(request: AnalysisRequest) -> AnalysisOutput:
    """``analyze cot``: :func:`cot_deltas`."""
    return AnalysisOutput(render(cot_deltas(request.runs()), request.options.format))
