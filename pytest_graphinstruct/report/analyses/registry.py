"""Every cross-run analysis the command line offers, by name: the paper's analyses (the choices
of ``analyze``), the leaderboard and the contamination probe (each its own command).

An :class:`Analysis` names the module that does it; that module holds
``analyze(request: AnalysisRequest) -> AnalysisOutput``, imported only when the analysis runs
(the command line imports this module to build its arguments: it stays light).  Adding an
analysis is its module and its row in :data:`ANALYSES` (docs/ARCHITECTURE.md, "Where a change
goes").
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pytest_graphinstruct.errors import GraphInstructError

if TYPE_CHECKING:  # the command line imports this module to list the choices: keep it light
    from pytest_graphinstruct.report.analyses.run_set import Run

ANALYZE = "analyze"
"""The command whose choices are the paper's analyses."""


@dataclass(frozen=True)
class AnalysisOptions:
    """The command line's options an analysis may read; each reads those it takes (``None``:
    not given, the analysis's default)."""

    format: str = "markdown"
    rule: str | None = None
    pair: tuple[str, str] | None = None
    strategies: tuple[str, ...] = ()
    resamples: int | None = None
    seed: int | None = None
    threshold: float | None = None
    models_tables: tuple[str, ...] = ()
    strategies_only: bool = False
    cell: str | None = None
    suites: tuple[str | None, str | None] = (None, None)


@dataclass(frozen=True)
class AnalysisRequest:
    """What an analysis runs over: report files (or ``store``, a run store) and the options."""

    reports: tuple[str, ...] = ()
    store: str | None = None
    options: AnalysisOptions = AnalysisOptions()

    def runs(self) -> list[Run]:
        """The classified runs of the files or the store (:func:`.run_set.load_runs`).

        Raises:
            GraphInstructError: as :func:`~.run_set.load_runs`.
        """
        from pytest_graphinstruct.report.analyses.run_set import load_runs

        return load_runs(self.reports, store=self.store,
                         models_tables=self.options.models_tables)


@dataclass(frozen=True)
class AnalysisOutput:
    """An analysis's text (written to ``--out`` or stdout) and its warnings (stderr)."""

    text: str
    warnings: tuple[str, ...] = ()


class _Analyze(Protocol):
    def __call__(self, request: AnalysisRequest) -> AnalysisOutput: ...


@dataclass(frozen=True)
class Analysis:
    """One analysis: its ``name`` (a choice of ``analyze``, or its own ``command``), a one-line
    ``summary`` (the command line's help), the ``module`` of :mod:`.analyses` holding its
    ``analyze``, the formats it writes and the ``analyze`` options it reads."""

    name: str
    summary: str
    module: str
    command: str = ANALYZE
    formats: tuple[str, ...] = ("markdown", "csv", "json")
    takes: frozenset[str] = frozenset()

    def run(self, request: AnalysisRequest) -> AnalysisOutput:
        """The analysis over ``request``.

        Raises:
            GraphInstructError: bad input (one line), or an option it does not take.
        """
        module = importlib.import_module(f"{__package__}.{self.module}")
        analyze: _Analyze = module.analyze
        output = analyze(request)
        if request.options.rule is not None and "rule" not in self.takes:
            takers = ", ".join(a.name for a in ANALYSES if "rule" in a.takes)
            raise GraphInstructError(f"--rule applies to {takers} only")
        return output


ANALYSES: tuple[Analysis, ...] = (
    Analysis("tier-gap", "F1, per-level quality by tier and the T1-T3 gap (Tab. 12, App. H.6)",
             "tier_gap", takes=frozenset({"rule"})),
    Analysis("sensitivity", "F2, sigma_strat vs mean quality: OLS, bootstrap CI, leave-one-out "
             "(App. H.5)", "sensitivity", takes=frozenset({"resamples", "seed"})),
    Analysis("strategy-effects", "F3, strategy x level deltas vs zero-shot with sign counts "
             "(Tab. 13/36)", "strategy_effects"),
    Analysis("cot", "F4, CoT deltas by family (Tab. 14)", "cot"),
    Analysis("scaling", "F5, same-family scaling per level, paired/unpaired bootstrap "
             "(Tab. 15/35)", "scaling", takes=frozenset({"pair", "strategies", "resamples",
                                                          "seed"})),
    Analysis("frontier", "F6, Pareto frontier, frontier distance, Q/kTPV, Cost@Q (Tab. 16-18)",
             "frontier"),
    Analysis("methods", "methods vs zero-shot and the per-level Oracle (Tab. 19, App. H.1/H.2)",
             "methods"),
    Analysis("leaderboard", "one row per cell (model, strategy/method), ranked by S_total and "
             "S_final, with per-level and per-dimension tables, Q/kTPV, Cost@Q=0.8 and frontier "
             "distance", "leaderboard", command="leaderboard",
             formats=("markdown", "csv", "json", "html")),
    Analysis("contamination", "one model's scores on the committed suite (seed 0) vs a fresh "
             "seed: paired bootstrap by template and a verdict (docs/CONTAMINATION.md)",
             "contamination", command="contamination", formats=()),
)
"""Every analysis; the paper's in the order the paper gives them."""


def choices(command: str = ANALYZE) -> tuple[Analysis, ...]:
    """The analyses ``command`` runs (for ``analyze``: its choices, by name)."""
    return tuple(sorted((a for a in ANALYSES if a.command == command), key=lambda a: a.name))


def commands() -> tuple[str, ...]:
    """The commands that run an analysis (``analyze`` and those with their own command)."""
    return tuple(dict.fromkeys(a.command for a in ANALYSES))


def formats(command: str) -> tuple[str, ...]:
    """The ``--format`` choices of ``command``: every format of its analyses, in order."""
    return tuple(dict.fromkeys(f for a in ANALYSES if a.command == command for f in a.formats))


def find(command: str, name: str | None = None) -> Analysis:
    """The analysis ``command`` runs: the choice ``name`` of ``analyze``, else the one analysis
    with its own ``command``.

    Raises:
        GraphInstructError: no such analysis.
    """
    wanted = command if name is None else name
    for a in ANALYSES:
        if a.command == command and a.name == wanted:
            return a
    names = ", ".join(a.name for a in choices(command))
    raise GraphInstructError(f"unknown analysis {wanted!r} (one of {names})")


def analyze_help() -> str:
    """The help of ``analyze``'s choice: ``name: summary`` of each, by name."""
    return "; ".join(f"{a.name}: {a.summary}" for a in choices())
