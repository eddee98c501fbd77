"""Scoring recorded answers: a benchmark session over a raw-generation JSONL file.

The ``score`` command runs exactly what ``pytest --gi-replay`` runs (same session, same
evaluation path, same pools default), so both give identical per-instruction results and
summaries for the same answers.

With ``jobs`` > 1 the items are scored in that many forked processes (every ``jobs``-th item
each, so every part holds every level): each part checks and scores its items exactly as one
process would — an item's result never depends on the other items of its batch — and the
parent gathers the results in item order and builds the one report.  The parts share what the
parent read before forking (the suite, the pools, the answers) and the reference side's store
on disk; only on Linux (where ``fork`` is safe with NumPy's BLAS; macOS's system libraries are
not fork-safe, Windows has no fork), only when D3 trains on the CPU (CUDA does not survive a
fork) and only for enough items to pay for it.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from pathlib import Path

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.graphs.model import Limits
from pytest_graphinstruct.run.config import Cell, RunConfig
from pytest_graphinstruct.run.gc_policy import fewer_collections
from pytest_graphinstruct.run.item_store import default_item_store
from pytest_graphinstruct.run.provenance import run_info, utc_now
from pytest_graphinstruct.run.records.codec import JsonObject
from pytest_graphinstruct.run.records.results import Coverage, ItemFilter, ItemResult, RunReport
from pytest_graphinstruct.run.session import BenchmarkSession
from pytest_graphinstruct.suite.instruction import Instruction

#: Below this many items a run is scored in one process whatever ``jobs`` says (a fork and
#: the parts' own batches would cost more than they save).
MIN_ITEMS_PER_JOB = 64
#: ``jobs="auto"`` uses the usable cores, at most this many.
MAX_AUTO_JOBS = 8


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
    #: items whose results were read from the item store, not checked and scored again
    recalled: int = 0

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


def auto_jobs() -> int:
    """The processes ``jobs="auto"`` scores with: the cores this process may use (at most
    :data:`MAX_AUTO_JOBS`), 1 where parts cannot fork (:func:`can_fork`)."""
    if not can_fork():
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_AUTO_JOBS))


def can_fork() -> bool:
    """Whether items can be scored in forked parts here (Linux only)."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def score_recorded(run: RunConfig, *, limits: Limits | None = None,
                   rootdir: Path | None = None, jobs: int = 1) -> ScoredRecording:
    """Verify and score every recorded instruction of ``run.suite`` (``run.replay`` is set),
    in ``jobs`` processes (see the module docstring; the report is the same for any
    ``jobs``).  Where the item store is on (:mod:`.item_store`), an item scored before with
    the same answers is read from it, not checked and scored again, and every item scored is
    stored.

    The report's ``run`` record says what produced it, as a replay session's does: times,
    machine, suite and its hash, the git state of ``rootdir`` (absent without one), the
    levels and the count of items scored, the pools, the responses file and the lines of it
    that were skipped (``replay_problems``).

    Raises:
        GraphInstructError: the suite, the responses file or the pools cannot be read; a
            scoring process died.
        ValueError: ``jobs`` < 1.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    started = utc_now()
    with fewer_collections():  # the whole scoring, the forked parts included
        bench = BenchmarkSession(run, limits=limits, item_store=default_item_store())
        try:
            chosen = bench.select(list(bench.suite))
            items = [(inst, cell) for cell in run.cells for inst in chosen]
            jobs = min(jobs, max(1, len(items) // MIN_ITEMS_PER_JOB))
            if jobs > 1 and can_fork() and run.d3_device == "cpu":  # CUDA does not survive fork
                results, recalled = _in_parts(bench, items, jobs)
            else:
                results, recalled = _score_items(bench, items)
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
        warnings=tuple(check.lines_to_show()) if check is not None and check.total else (),
        recalled=recalled)


def _score_items(bench: BenchmarkSession,
                 items: Sequence[tuple[Instruction, Cell]]) -> tuple[list[ItemResult], int]:
    """Check and score ``items`` in this process (or read their stored results): their
    results, in item order, and how many were read from the item store.  Only these items':
    a forked process of the pool may have scored another part before (its queue keeps
    every result it recorded)."""
    before, recalled = len(bench.scoring.results), bench.scoring.recalled
    bench.prefetch(items)
    for inst, cell in items:
        answers = bench.answers(inst, cell)
        errors = [a.error for a in answers if a.error is not None]
        if errors:
            bench.record_error(inst, cell, answers, outcome="error", error=errors[0])
        elif not bench.recall(inst, cell, answers):
            bench.record(bench.check(inst, cell, answers))
    return _in_item_order(bench.flush()[before:], items), bench.scoring.recalled - recalled


# what a forked part reads: set by the parent right before it forks, never pickled
_FORKED: tuple[BenchmarkSession, Sequence[tuple[Instruction, Cell]], int] | None = None


def _part(k: int) -> tuple[int, list[JsonObject]]:
    """In a forked process: part ``k`` of the parent's items, scored, as JSON records, and
    how many of them were read from the item store."""
    assert _FORKED is not None
    bench, items, jobs = _FORKED
    results, recalled = _score_items(bench, items[k::jobs])
    bench.inputs.flush_pools()  # what the part learned (a forked worker runs no atexit)
    return recalled, [r.to_json() for r in results]


def _in_parts(bench: BenchmarkSession, items: Sequence[tuple[Instruction, Cell]],
              jobs: int) -> tuple[list[ItemResult], int]:
    """The results of ``items`` scored in ``jobs`` forked processes, in item order, and how
    many were read from the item store."""
    global _FORKED
    _ = bench.inputs.pools  # read once here (a bad pool directory fails before any fork)
    _FORKED = (bench, items, jobs)
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"))
    try:
        parts = list(pool.map(_part, range(jobs)))
    except BaseException as exc:
        # Ctrl+C (or a part's error): the other parts stop now, not when their items are done
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            proc.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
        if isinstance(exc, BrokenProcessPool):
            raise GraphInstructError(f"a scoring process died ({exc}); run again with "
                                     "--jobs 1 to score in this process") from None
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        _FORKED = None
    results = [ItemResult.from_json(r) for _, part in parts for r in part]
    return _in_item_order(results, items), sum(n for n, _ in parts)


def _in_item_order(results: Sequence[ItemResult],
                   items: Sequence[tuple[Instruction, Cell]]) -> list[ItemResult]:
    """``results`` (one for each of ``items``) in the order of ``items``."""
    order = {(inst.id, cell.label): n for n, (inst, cell) in enumerate(items)}
    return sorted(results, key=lambda r: order[r.instruction_id, r.cell])
