"""Tab. 19: methods against zero-shot and the per-level Oracle (paper §5.4, App. F.4, H.2).

For every model with a method cell (VGIG, CAAP, Combined, retry, SC, …) or an oracle cell:

* ``ZS`` — its zero-shot S_total;
* ``Oracle (per-level best)`` — computed here: per level the best of the model's plain
  strategies, combined with Eq. 2 (:func:`pytest_graphinstruct.score.levels.s_total`).  This is
  App. H.1's "full-data Oracle Q" (Tab. 30);
* ``Oracle (cell)`` — the oracle cell when one was given: the release re-evaluates the chosen
  levels' answers, which is what Tab. 19 prints;
* one column per main method (vgig, caap, combined, retry, sc) and ``Δ`` = Combined − Oracle
  (the cell's when given, else the computed one).

A second table lists every method or oracle cell with Δ vs ZS, Δ vs Oracle, TPV and its
multiple of zero-shot's TPV.  A model's variant (the release's ``nothink`` runs) is shown; a
condition present in several variants is taken from the plain model in the first table.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.registry import AnalysisOutput, AnalysisRequest
from pytest_graphinstruct.report.analyses.run_set import ORACLE, Run
from pytest_graphinstruct.report.analyses.select import baseline_by_model
from pytest_graphinstruct.report.analyses.table import AnalysisResult, Table, render, signed
from pytest_graphinstruct.score.levels import s_total
from pytest_graphinstruct.vocab import LEVELS, STRATEGIES

MAIN_METHODS = ("vgig", "caap", "combined", "retry", "sc")


def per_level_oracle(cells: dict[str, Run]) -> float | None:
    """S_total of the per-level best of ``cells`` (a model's plain cells by strategy)."""
    best: dict[int, float] = {}
    for lv in LEVELS:
        values = [v for r in cells.values() if (v := r.level_score(lv)) is not None]
        if values:
            best[lv] = max(values)
    return s_total(best).renormalized if best else None


def methods_table(runs: Sequence[Run]) -> AnalysisResult:
    """Tab. 19 and the long method table (see the module docstring).

    Raises:
        GraphInstructError: no method or oracle cell among the runs.
    """
    plain = baseline_by_model(runs)
    special = [r for r in runs if not r.is_baseline and r.quality is not None]
    if not special:
        raise GraphInstructError("methods: no method or oracle cell among the runs")
    models: dict[str, list[Run]] = {}
    for r in special:
        models.setdefault(r.model, []).append(r)
    wide, long = [], []
    for model, conds in models.items():
        base = plain.get(model, {})
        zs = base.get("zero-shot")
        computed = per_level_oracle(base) if base else None
        n_strat = sum(s in base for s in STRATEGIES)

        def pick(condition: str, conds: list[Run] = conds) -> Run | None:
            found = [r for r in conds if r.condition == condition]
            return next((r for r in found if r.variant is None), found[0] if found else None)

        oracle_cell = pick(ORACLE)
        oracle = oracle_cell.quality if oracle_cell is not None else computed
        picked = {m: pick(m) for m in MAIN_METHODS}
        combined = picked["combined"]
        variants = sorted({r.variant for r in picked.values() if r is not None and r.variant})
        display = conds[0].info.display + (f" (methods: {', '.join(variants)})"
                                           if variants else "")
        wide.append((display, None if zs is None else zs.quality,
                     computed if n_strat == len(STRATEGIES) else None,
                     None if oracle_cell is None else oracle_cell.quality,
                     *(None if picked[m] is None else picked[m].quality  # type: ignore[union-attr]
                       for m in MAIN_METHODS),
                     None if combined is None or oracle is None
                     else (combined.quality or 0.0) - oracle))
        for r in conds:
            q = r.quality or 0.0
            long.append((r.display, r.condition, q,
                         None if zs is None or zs.quality is None else q - zs.quality,
                         None if oracle is None else q - oracle, r.tpv,
                         None if zs is None or not zs.tpv or r.tpv is None else r.tpv / zs.tpv))
    tables = (Table("Quality by method, with zero-shot and the per-level Oracle",
                    ("model", "ZS", "Oracle (per-level best)", "Oracle (cell)", "VGIG", "CAAP",
                     "Combined", "retry", "SC", "Δ Combined − Oracle"), tuple(wide),
                    (None, 4, 4, 4, 4, 4, 4, 4, 4, signed(3))),
              Table("Every method and oracle cell",
                    ("model", "condition", "S_total", "Δ vs ZS", "Δ vs Oracle", "TPV",
                     "TPV × ZS"), tuple(long), (None, None, 4, signed(3), signed(3), 0, 1)))
    notes = ("Oracle (per-level best) needs all four plain strategies of the model; "
             "Δ uses the oracle cell when given, else the per-level best",)
    data = {"rows": [dict(zip(("model", "zs", "oracle_per_level", "oracle_cell",
                               *MAIN_METHODS, "combined_minus_oracle"), row, strict=True))
                     for row in wide]}
    return AnalysisResult("methods", "Methods vs zero-shot and the per-level Oracle (Tab. 19)",
                          tables, notes, data)


def analyze(request: AnalysisRequest) -> AnalysisOutput:
    """``analyze methods``: :func:`methods_table`."""
    return AnalysisOutput(render(methods_table(request.runs()), request.options.format))
