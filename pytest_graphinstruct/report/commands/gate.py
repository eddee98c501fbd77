"""``python -m pytest_graphinstruct gate REPORT --baseline FILE``: a saved report judged the way
its run would have been — the way a sharded CI run is gated after ``merge``.

The rules are the run's, applied by the same driver (:mod:`pytest_graphinstruct.run.gate.verdict`):
a partial report fails; a level fails when its drop is real (the family-wise test over every
compared level of every cell) and larger than ``max_regression``; a cell fails below
``fail_under``; a level of a cell fails when its pass^k is below ``min_pass_all``; more than
``max_error_rate`` of items without an answer fails; ``strict`` also fails on newly failing
items and on anything of the baseline not compared.  The baseline must be
of the same suite and hold every cell of the report (``baseline_cell`` compares across cells on
purpose); otherwise it is an input error, never a silent comparison.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.render.markdown import render_markdown
from pytest_graphinstruct.run.gate.plan import (
    BaselinePlan,
    GateOptions,
    plan_baseline,
    report_suite_hash,
)
from pytest_graphinstruct.run.gate.verdict import Decision, decide
from pytest_graphinstruct.run.records.reader import read_whole_report
from pytest_graphinstruct.run.records.results import ReportError
from pytest_graphinstruct.score.regression.bootstrap import DEFAULT_MAX_REGRESSION
from pytest_graphinstruct.vocab import GateTest


@dataclass(frozen=True)
class GateResult:
    """The decision and the Markdown summary of one gated report."""

    decision: Decision
    markdown: str

    @property
    def failed(self) -> bool:
        return self.decision.failed

    def lines(self) -> list[str]:
        """What the command prints: what was compared, one line per failure (or that every
        gate passed), then the notes."""
        d = self.decision
        out = d.compared_lines() + (d.verdict.lines() or ["every gate passed"])
        return out + list(d.notes)


def gate(report_path: str | Path, baseline_path: str | Path | None, *,
         max_regression: float = DEFAULT_MAX_REGRESSION, fail_under: float | None = None,
         max_error_rate: float = 0.05, baseline_cell: str | None = None,
         strict: bool = False, min_pass_all: float | None = None,
         test: GateTest = "suite") -> GateResult:
    """Gate the report at ``report_path`` (against ``baseline_path`` when given).

    Raises:
        GraphInstructError: a file cannot be read or contradicts itself (an instruction twice
            in a cell, complete coverage over another number of items), the baseline is
            unusable (missing, partial, another suite, a cell it lacks), or an option needs
            another.
    """
    try:
        report = read_whole_report(report_path)
    except ReportError as exc:
        raise GraphInstructError(str(exc)) from None
    if baseline_path is None and (baseline_cell is not None or strict):
        raise GraphInstructError(f"{'--baseline-cell' if baseline_cell else '--strict'} "
                                 "needs --baseline")
    options = GateOptions(None if baseline_path is None else Path(baseline_path),
                          baseline_cell=baseline_cell, max_regression=max_regression,
                          fail_under=fail_under, max_error_rate=max_error_rate, strict=strict,
                          min_pass_all=min_pass_all, test=test)
    plan = BaselinePlan()
    if options.baseline is not None:
        if not options.baseline.exists():
            raise GraphInstructError(f"baseline not found: {options.baseline}")
        plan = plan_baseline(options, list(report.labels),
                             level_hashes=report.run.level_hashes if report.run else None,
                             suite_hash_for=report_suite_hash(report))
    decision = decide(report, plan, options)
    return GateResult(decision, render_markdown(report, decision))
