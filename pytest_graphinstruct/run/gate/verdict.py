"""The run driver for the verdict: which baseline a run is compared with, the comparison,
the gates and the exit status, and whether the run may become the baseline.

Every place that judges a run goes through here — the pytest session
(:mod:`pytest_graphinstruct.pytest_run`) and the ``gate`` command (a saved or merged report) —
and ``compare`` / ``runs compare`` use the same comparison (:mod:`.comparison`):

1. :func:`.plan.plan_baseline` before the run: read and match the baseline (a usage error
   when it cannot serve), or note that it is missing or is being updated.
2. :func:`decide` after the run: compare each cell with its baseline cell (one family of
   tests over every level of every cell), apply the gates, say what was compared.
3. :func:`settle_baseline`: write the baseline — only from a run that may be trusted
   (complete, within ``gi_max_error_rate``, with scored items) and, on an update, that holds
   every item of the old baseline (unless ``--gi-replace-baseline``), atomically; an update
   says how the new baseline differs from the old one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pytest_graphinstruct.escaping import escape
from pytest_graphinstruct.run.gate.comparison import CellComparison, compare_cells
from pytest_graphinstruct.run.gate.gates import (
    GateFailure,
    GateVerdict,
    judge,
    narrowing,
    new_failure_notes,
)
from pytest_graphinstruct.run.gate.plan import BaselinePlan, GateOptions
from pytest_graphinstruct.run.records.reader import contradiction
from pytest_graphinstruct.run.records.results import (
    CellGate,
    GateRecord,
    RunReport,
)
from pytest_graphinstruct.run.records.writer import write_report

__all__ = [
    "Decision",
    "Written",
    "baseline_cells_not_run",
    "decide",
    "settle_baseline",
]


@dataclass(frozen=True)
class Decision:
    """A judged run: its verdict, each gated cell's comparison (``comparisons``; on an update,
    the change against the old baseline in ``update_change`` instead), and notes.
    ``refused_update`` says why an update may not replace the old baseline (a run narrower
    than it, without ``--gi-replace-baseline``); ``None``: nothing refused it.
    ``cells_not_run``: the baseline's cells a gated run did not compare (it has no such
    cell)."""

    verdict: GateVerdict
    plan: BaselinePlan
    comparisons: tuple[CellComparison, ...] = ()
    update_change: tuple[CellComparison, ...] = ()
    notes: tuple[str, ...] = ()
    refused_update: str | None = None
    #: the baseline's cells the run has no cell for (:func:`baseline_cells_not_run`)
    cells_not_run: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return self.verdict.failed

    @property
    def baseline_name(self) -> str | None:
        return None if self.plan.path is None else str(self.plan.path)

    def compared_lines(self) -> list[str]:
        """Per gated cell, one line naming the baseline file and what was compared, and one
        per level with its change and what the gate decided about it
        (:func:`level_changes`; every gated run prints them, passing or not); then the
        baseline's cells the run did not have."""
        lines = []
        for c in self.comparisons:
            lines.append(f"compared with baseline {self.baseline_name}: {c.scope()}")
            lines += [f"  {c.label}: {line}" for line in level_changes(c)]
        if self.cells_not_run:
            lines.append(f"compared with baseline {self.baseline_name}: "
                         f"{self.cells_not_run_text()}")
        return lines

    def cells_not_run_text(self) -> str:
        """``not compared: baseline cell m-few-shot (not in this run)`` (the first ten
        named); empty when the run compared every baseline cell."""
        if not self.cells_not_run:
            return ""
        shown = ", ".join(escape(label[:100]) for label in self.cells_not_run[:10])
        more = f" … {len(self.cells_not_run) - 10} more" if len(self.cells_not_run) > 10 else ""
        plural = "s" if len(self.cells_not_run) > 1 else ""
        return f"not compared: baseline cell{plural} {shown}{more} (not in this run)"

    def update_lines(self) -> list[str]:
        """What an update changes against the old baseline (not a gate): per cell a line with
        the counts of newly failing and newly passing items, then one per level as the
        compared lines give it (:func:`level_changes`)."""
        lines = []
        for c in self.update_change:
            lines.append(f"baseline update, {c.label} against the old baseline (not a gate): "
                         f"{change_summary(c)}")
            lines += [f"  {c.label}: {line}" for line in level_changes(c)]
        return lines

    def record(self, baseline_update: str | None = None) -> GateRecord:
        """The verdict as the report keeps it."""
        return GateRecord(
            passed=not self.failed, baseline=self.baseline_name,
            failures=tuple(self.verdict.lines()), compared=tuple(self.compared_lines()),
            cells=tuple(_cell_gate(c) for c in self.comparisons),
            baseline_update=baseline_update)


def level_changes(c: CellComparison) -> list[str]:
    """One text per compared level, the one every view shows
    (:meth:`~pytest_graphinstruct.run.records.results.LevelChange.describe`): the change as
    level score and pass rate where both exist, each with its unadjusted 95 % interval, the
    Holm-adjusted p-value (labelled) and the gate's words, with why the interval reads
    otherwise when it does."""
    return [x.describe() for x in c.level_changes()]


def change_summary(c: CellComparison) -> str:
    """The counts of newly failing and newly passing items, and the levels that regressed
    (the levels themselves: :func:`level_changes`)."""
    down = ", ".join(f"L{lv}" for lv in c.regressed_levels)
    levels = (f"{len(c.diff.levels)} level(s) paired" if c.diff.levels else "no level paired")
    return (f"{levels}{f', regressed: {down}' if down else ''}; newly failing "
            f"{len(c.newly_failing)}, newly passing {len(c.newly_passing)}")


def _cell_gate(c: CellComparison) -> CellGate:
    return CellGate(
        cell=c.label, baseline_cell=c.baseline_label, levels=c.level_changes(),
        not_compared=c.not_compared,
        newly_failing=tuple(x.instruction_id for x in c.newly_failing),
        newly_passing=tuple(x.instruction_id for x in c.newly_passing),
        now_errors=tuple(x.instruction_id for x in c.now_errors))


def _compare(report: RunReport, plan: BaselinePlan,
             options: GateOptions) -> tuple[CellComparison, ...]:
    """Each cell of ``report`` that the plan has a baseline cell for, compared.

    Raises:
        ValueError: an instruction on different levels in a cell and its baseline cell.
    """
    pairs = [(cell, plan.cells[cell.label]) for cell in report.cells if cell.label in plan.cells]
    if not pairs:
        return ()
    base_run = None if plan.report is None else plan.report.run
    return compare_cells(pairs, max_regression=options.max_regression,
                         run_filter=report.run.filter if report.run is not None else None,
                         power=plan.gated,  # an update's change prints no power
                         test=options.test,
                         baseline_filter=None if base_run is None else base_run.filter)


def baseline_cells_not_run(plan: BaselinePlan, options: GateOptions) -> tuple[str, ...]:
    """The labels of the baseline's cells that no cell of a gated run was compared with (the
    run has no such cell); none with ``--gi-baseline-cell``, which picks one on purpose."""
    if not plan.gated or plan.report is None or options.baseline_cell is not None:
        return ()
    used = {c.label for c in plan.cells.values()}
    return tuple(label for label in plan.report.labels if label not in used)


def decide(report: RunReport, plan: BaselinePlan, options: GateOptions) -> Decision:
    """Judge a finished run: compare, gate, and say what was compared.  A run that cannot be
    paired with its baseline (an instruction on another level there) fails its gate."""
    extra: list[GateFailure] = []
    notes = [plan.note] if plan.note else []
    comparisons: tuple[CellComparison, ...] = ()
    update_change: tuple[CellComparison, ...] = ()
    try:
        if plan.gated:
            comparisons = _compare(report, plan, options)
        elif plan.update and plan.cells:
            update_change = _compare(report, plan, options)
    except ValueError as exc:
        if plan.gated:
            extra.append(GateFailure("baseline", "", f"baseline {plan.path} cannot be "
                                     f"compared with this run: {exc}"))
        else:
            notes.append(f"the old baseline is not compared with this run: {exc}")
    cells_not_run = baseline_cells_not_run(plan, options)
    if cells_not_run and options.strict:
        extra.append(GateFailure("strict", "", f"baseline {plan.path}: {len(cells_not_run)} "
                                 "cell(s) not compared with this run (it has no such cell): "
                                 + ", ".join(escape(c[:100]) for c in cells_not_run[:10])))
    verdict = judge(report, comparisons, max_error_rate=options.max_error_rate,
                    fail_under=options.fail_under, strict=options.strict,
                    min_pass_all=options.min_pass_all, extra=extra)
    if not options.strict:
        notes += new_failure_notes(comparisons, hint=" (--gi-violations=fail fails on them)")
    decision = _narrowed_update(report, Decision(verdict, plan, comparisons, update_change,
                                                 tuple(notes), cells_not_run=cells_not_run),
                                options)
    if plan.missing and plan.path is not None:
        problem = decision.verdict.trust_problem() or _damaged(report)
        done = ("it is written from this run" if problem is None
                else f"it is not written either: {problem}")
        missing = GateFailure("baseline", "", f"baseline {plan.path} did not exist: {done}; "
                              "review and commit it, or pass --gi-update-baseline to write one "
                              "on purpose")
        if not plan.update:  # a missing baseline fails a gated run; an update creates it
            verdict = replace(verdict, gate_failures=(*verdict.gate_failures, missing))
            decision = replace(decision, verdict=verdict)
    return decision


def _narrowed_update(report: RunReport, decision: Decision, options: GateOptions) -> Decision:
    """An update from a run that may be trusted but is narrower than the old baseline
    (:func:`~.gates.narrowing`): refused — a gate failure naming what it would lose — unless
    ``replace_baseline``, which replaces it and says what the new baseline lacks."""
    plan = decision.plan
    if not plan.update or plan.report is None or decision.verdict.trust_problem() is not None:
        return decision
    lost = narrowing(report, plan.report)
    if lost is None:
        return decision
    if options.replace_baseline:
        note = (f"NOTE: --gi-replace-baseline: {plan.path} is replaced by a narrower run: "
                f"{lost}")
        return replace(decision, notes=(*decision.notes, note))
    refused = f"{lost}: refusing to replace it; pass --gi-replace-baseline to do it anyway"
    failure = GateFailure("baseline", "", f"baseline {plan.path}: {refused}")
    verdict = replace(decision.verdict,
                      gate_failures=(*decision.verdict.gate_failures, failure))
    return replace(decision, verdict=verdict, refused_update=refused)


@dataclass(frozen=True)
class Written:
    """What one output of a run's end came to: the ``line`` to show and whether the file was
    written (``ok``; a line that says NOT is shown as a failure).  ``skipped``: not written
    because there was nothing to write (a run without a result is not saved in the run
    store); any other output not written fails the run (:attr:`fails_run`)."""

    line: str
    ok: bool
    skipped: bool = False

    @property
    def fails_run(self) -> bool:
        """Whether the run must exit non-zero for this output: one it asked for and did not
        get (the disk full, a damaged report refused as the baseline, a refused update)."""
        return not self.ok and not self.skipped


def settle_baseline(report: RunReport, decision: Decision) -> Written | None:
    """Write ``report``, with the decision's gate record, as the baseline when the run is to
    write one and may be trusted; the line to show (``None``: the run writes no baseline).
    A report that contradicts itself (:func:`~.records.reader.contradiction`: an instruction
    twice in a cell, results that disagree with its coverage) is never written: ``gate`` and
    every later run would refuse it.  The old file is left byte-identical whenever nothing is
    written.  Never raises for I/O: the line says what failed."""
    plan = decision.plan
    if not plan.writes or plan.path is None:
        return None
    name = escape(str(plan.path))
    problem = (decision.verdict.trust_problem() or decision.refused_update
               or _damaged(report))
    if problem is not None:
        state = "is unchanged" if plan.path.exists() else "was not created"
        return Written(f"baseline NOT written: {problem}; {name} {state}", ok=False)
    if plan.update and plan.report is not None:
        shown = (" (the change against the old one is shown above)"
                 if decision.update_change else "")
        done = f"baseline updated: {name}{shown}"
    else:
        done = f"baseline written to {name}"
    try:  # the baseline file's own gate record says it was written as the baseline
        write_report(replace(report, gate=decision.record(done)), plan.path)
    except OSError as exc:
        return Written(f"baseline NOT written to {name}: {escape(exc.strerror or str(exc))}",
                       ok=False)
    return Written(done, ok=True)


def _damaged(report: RunReport) -> str | None:
    """Why ``report`` may not become a baseline although its run may be trusted: it
    contradicts itself, as ``gate`` would find when it reads the file (``None``: it does
    not)."""
    problem = contradiction(report)
    return None if problem is None else (f"the report contradicts itself ({problem}), so no "
                                         "gate could read it as a baseline")
