"""Scoring recorded answers: a benchmark session over a raw-generation JSONL file.

The ``score`` command runs exactly what ``pytest --gi-replay`` runs (same session, same
evaluation path, same pools default), so both give identical per-instruction results and
summaries for the same answers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from pytest_graphinstruct.graphs.model import Limits
from pytest_graphinstruct.run.config import RunConfig
from pytest_graphinstruct.run.provenance import run_info, utc_now
from pytest_graphinstruct.run.records.results import Coverage, ItemFilter, RunReport
from pytest_graphinstruct.run.session import BenchmarkSession


@dataclass(frozen=True)
class ScoredRecording:
    """The report of recorded answers, with what the file and the suite did not share."""

    report: RunReport
    suite_size: int
    missing: tuple[str, ...]  #: suite instructions the file has no answers for (not scored)
    unknown: tuple[str, ...]  #: ids in the file that the suite does not have (escaped)
    #: the count line and the first skipped lines, each naming its line and why (empty when
    #: nothing was skipped); the report's ``run.replay_problems`` keeps them
    warnings: tuple[str, ...]

    def nothing_to_score(self) -> str | None:
        """Why the file gave no record to score (``None``: it gave some, or only unknown ids,
        which the report names)."""
        if len(self.missing) < self.suite_size or self.unknown:
            return None
        run = self.report.run
        check = None if run is None else run.replay_problems
        if check is None or not check.lines:
            return "the file is empty"
        if check.total:
            return (f"{check.total} of {check.lines} line(s) skipped, the first: "
                    f"{check.problems[0].describe(check.path)}")
        return f"its {check.lines} record(s) are of levels not asked"


def score_recorded(run: RunConfig, *, limits: Limits | None = None,
                   rootdir: Path | None = None) -> ScoredRecording:
    """Verify and score every recorded instruction of ``run.suite`` (``run.replay`` is set).

    The report's ``run`` record says what produced it, as a replay session's does: times,
    machine, suite and its hash, the git state of ``rootdir`` (absent without one), the
    levels and the count of items scored, the pools, the responses file and the lines of it
    that were skipped (``replay_problems``).

    Raises:
        GraphInstructError: the suite, the responses file or the pools cannot be read.
    """
    started = utc_now()
    bench = BenchmarkSession(run, limits=limits)
    try:
        chosen = bench.select(list(bench.suite))
        items = [(inst, cell) for cell in run.cells for inst in chosen]
        bench.prefetch(items)
        for inst, cell in items:
            answers = bench.answers(inst, cell)
            errors = [a.error for a in answers if a.error is not None]
            if errors:
                bench.record_error(inst, cell, answers, outcome="error", error=errors[0])
            else:
                bench.record(bench.check(inst, cell, answers))
        results = bench.flush()
        coverage = Coverage(selected=len(items))
        report = bench.report(results, coverage=coverage)
    finally:
        bench.close()
    info = run_info(run, started=started, suite=bench.suite, rootdir=rootdir, results=results,
                    item_filter=ItemFilter(levels=run.levels, per_level=run.per_level,
                                           selected=coverage.selected),
                    replay=bench.replay_check)
    report = replace(report, run=info)
    recorded = bench.recorded_ids or frozenset()
    check = bench.replay_check
    return ScoredRecording(
        report=report, suite_size=len(bench.suite),
        missing=tuple(i.id for i in bench.suite if i.id not in recorded),
        unknown=tuple(sorted({p.instruction_id for p in bench.replay_problems
                              if p.kind == "unknown_id" and p.instruction_id is not None})),
        warnings=tuple(check.lines_to_show()) if check is not None and check.total else ())
