"""The analyses by name, for the ``analyze`` command (kept light: the command line imports it
to list the choices; each analysis is imported when run)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the command line imports this module to list the choices: keep it light
    from pytest_graphinstruct.report.analyses.run_set import Run

ANALYSES = {
    "tier-gap": "F1, per-level quality by tier and the T1-T3 gap (Tab. 12, App. H.6)",
    "sensitivity": "F2, sigma_strat vs mean quality: OLS, bootstrap CI, leave-one-out (App. H.5)",
    "strategy-effects": "F3, strategy x level deltas vs zero-shot with sign counts (Tab. 13/36)",
    "cot": "F4, CoT deltas by family (Tab. 14)",
    "scaling": "F5, same-family scaling per level, paired/unpaired bootstrap (Tab. 15/35)",
    "frontier": "F6, Pareto frontier, frontier distance, Q/kTPV, Cost@Q (Tab. 16-18)",
    "methods": "methods vs zero-shot and the per-level Oracle (Tab. 19, App. H.1/H.2)",
}


def run_analysis(name: str, runs: Sequence[Run], args: argparse.Namespace) -> str:
    """Run analysis ``name`` over ``runs`` with the command line's options; the rendered text."""
    from pytest_graphinstruct.errors import GraphInstructError
    from pytest_graphinstruct.report.analyses.table import render

    if name == "tier-gap":
        from pytest_graphinstruct.report.analyses.tier_gap import DEFAULT_RULE, tier_gap

        result = tier_gap(runs, args.rule or DEFAULT_RULE)
    elif name == "sensitivity":
        from pytest_graphinstruct.report.analyses import sensitivity as f2

        result = f2.sensitivity(runs, resamples=args.resamples or f2.DEFAULT_RESAMPLES,
                                seed=args.seed)
    elif name == "strategy-effects":
        from pytest_graphinstruct.report.analyses.strategy_effects import strategy_effects

        result = strategy_effects(runs)
    elif name == "cot":
        from pytest_graphinstruct.report.analyses.cot import cot_deltas

        result = cot_deltas(runs)
    elif name == "scaling":
        from pytest_graphinstruct.report.analyses import scaling as f5
        from pytest_graphinstruct.report.models_table import load_models_table

        result = f5.scaling(runs, pair=args.pair, strategies=args.strategy,
                            resamples=args.resamples or f5.DEFAULT_RESAMPLES, seed=args.seed,
                            table=load_models_table(args.models_table))
    elif name == "frontier":
        from pytest_graphinstruct.report.analyses.frontier import frontier

        result = frontier(runs)
    elif name == "methods":
        from pytest_graphinstruct.report.analyses.methods import methods_table

        result = methods_table(runs)
    else:
        raise GraphInstructError(f"unknown analysis {name!r} (one of {', '.join(ANALYSES)})")
    if args.rule is not None and name != "tier-gap":
        raise GraphInstructError("--rule applies to tier-gap only")
    return render(result, args.format)
