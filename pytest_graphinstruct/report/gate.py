"""``python -m pytest_graphinstruct gate REPORT --baseline FILE``: the plugin's gates applied to a
saved report — the way a sharded CI run is gated after ``merge``.

Same rules as a run (:mod:`pytest_graphinstruct.run.gates`): a partial report fails; a level
fails when its drop is real (paired bootstrap) and larger than ``max_regression``; a cell fails
below ``fail_under``; more than ``max_error_rate`` of items without an answer fails.  The
baseline must be of the same suite and hold every cell of the report (``baseline_cell``
compares across cells on purpose); otherwise it is an input error, never a silent comparison.
New failures on levels without a significant drop are notes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.markdown import render_markdown
from pytest_graphinstruct.run.gates import (
    CellComparison,
    Verdict,
    compare_to_baseline,
    judge,
    match_baseline,
    new_failure_notes,
    read_baseline,
)
from pytest_graphinstruct.run.reader import read_report
from pytest_graphinstruct.run.results import ReportError
from pytest_graphinstruct.score.bootstrap import DEFAULT_MAX_REGRESSION


@dataclass(frozen=True)
class GateResult:
    """The verdict, the per-cell evidence and the Markdown summary of one gated report."""

    verdict: Verdict
    comparisons: tuple[CellComparison, ...]
    notes: tuple[str, ...]
    markdown: str

    @property
    def failed(self) -> bool:
        return self.verdict.failed

    def lines(self) -> list[str]:
        """What the command prints: one line per failure (or that every gate passed), then
        the notes."""
        out = self.verdict.lines() or ["every gate passed"]
        return out + list(self.notes)


def gate(report_path: str | Path, baseline_path: str | Path | None, *,
         max_regression: float = DEFAULT_MAX_REGRESSION, fail_under: float | None = None,
         max_error_rate: float = 0.05, baseline_cell: str | None = None) -> GateResult:
    """Gate the report at ``report_path`` (against ``baseline_path`` when given).

    Raises:
        GraphInstructError: a file cannot be read, the baseline is unusable (missing,
            partial, another suite, a cell it lacks).
    """
    try:
        report = read_report(report_path)
    except ReportError as exc:
        raise GraphInstructError(str(exc)) from None
    baseline = comparisons = None
    if baseline_path is not None:
        base = read_baseline(baseline_path)
        suite_hash = report.run.suite_hash if report.run is not None else None
        baseline = match_baseline(list(report.labels), base, name=str(baseline_path),
                                  baseline_cell=baseline_cell, suite_hash=suite_hash)
        comparisons = compare_to_baseline(report, baseline, max_regression=max_regression)
    elif baseline_cell is not None:
        raise GraphInstructError("--baseline-cell needs --baseline")
    verdict = judge(report, max_error_rate=max_error_rate, fail_under=fail_under,
                    baseline=baseline, max_regression=max_regression)
    notes = new_failure_notes(comparisons or ())
    text = render_markdown(report, verdict, comparisons or (),
                           baseline_name=None if baseline_path is None else str(baseline_path))
    return GateResult(verdict, tuple(comparisons or ()), tuple(notes), text)
