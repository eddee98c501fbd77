"""The gates of a run and its exit status: a quality floor, regressions against a saved
baseline, what the comparison left out, and the infrastructure error budget.

A baseline is a saved, complete run report (``--gi-update-baseline`` writes one).  Cells are
matched by label (``model-strategy``, ``-method`` appended for a method other than the
baseline), instructions by id; the comparison itself is :mod:`.comparison`'s.

* ``fail_under``: a cell whose ``S_total`` over the levels run is below the floor fails.
* ``min_pass_all``: a level of a cell whose pass^k (the share of its items whose every one of
  ``k`` samples passes: :mod:`.consistency`) is below the floor fails; with one sample per
  item pass^1 is the share of items whose sample passes.
* ``max_regression``: a level fails when its drop is real — the family-wise test over every
  compared (cell, level) rejects "no drop" — and larger than ``max_regression``.
* ``strict``: also an item that newly fails, and anything of the baseline not compared.
* Like with like: a cell whose baseline cell ran another number of samples per instruction
  or other decoding fails (``comparison.incomparable``): the same answers score differently,
  so the change would not be the model's.
* ``max_error_rate``: more than this share of items without an answer fails the run.
* A run that did not finish (interrupted, terminated, a usage error, a crashed worker, items
  without results: the report's ``coverage``) fails whatever its scores, and a partial report
  is refused as a baseline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.run.consistency import measure
from pytest_graphinstruct.run.gate.comparison import CellComparison, incomparable
from pytest_graphinstruct.run.records.reader import read_report, whole
from pytest_graphinstruct.run.records.results import CellReport, ReportError, RunReport
from pytest_graphinstruct.vocab import Level


def read_baseline(path: str | Path) -> RunReport:
    """A baseline report, checked: it exists, reads, and can serve as a baseline
    (:func:`serving_baseline`).

    Raises:
        GraphInstructError: missing (the message says how to create it), or not a report.
    """
    p = Path(path)
    if not p.exists():
        raise GraphInstructError(f"baseline not found: {p} (create it with "
                                 "--gi-update-baseline)")
    try:
        report = read_report(p)
    except ReportError as exc:
        raise GraphInstructError(f"baseline {exc}") from None
    return serving_baseline(report, p)


def serving_baseline(report: RunReport, path: str | Path) -> RunReport:
    """``report``, read from ``path``, when it can serve as a baseline: it does not contradict
    itself (:func:`~.reader.whole`), is complete and has cells.

    Raises:
        GraphInstructError: it cannot (one line naming the file).
    """
    p = Path(path)
    try:
        whole(report, p)
    except ReportError as exc:
        raise GraphInstructError(f"baseline {exc}") from None
    if report.partial:
        raise GraphInstructError(f"baseline {p} is from an incomplete run "
                                 f"({report.coverage.describe()}); a gate needs a complete "
                                 "one (rebuild it with --gi-update-baseline)")
    if not report.cells:
        raise GraphInstructError(f"baseline {p} holds no cells")
    return report


def load_baseline(path: str | Path) -> dict[str, CellReport]:
    """The cells of a baseline report, keyed by label (:func:`read_baseline`)."""
    return {c.label: c for c in read_baseline(path).cells}


def suite_difference(run: Mapping[Level, str], baseline: Mapping[Level, str]) -> str | None:
    """The first level whose suite file differs between a run and its baseline (``level →
    file hash`` of each; levels only one of them ran are not a difference: a subset of
    levels of the same suite is a subset), as a phrase; ``None`` when they agree."""
    for lv in sorted(set(run) & set(baseline)):
        if run[lv] != baseline[lv]:
            return f"level_{lv}.json differs ({baseline[lv][7:19]}… vs {run[lv][7:19]}…)"
    return None


def match_baseline(labels: Sequence[str], baseline: RunReport, *, name: str,
                   baseline_cell: str | None = None,
                   level_hashes: Mapping[Level, str] | None = None,
                   suite_hash: str | None = None) -> dict[str, CellReport]:
    """The baseline cell each run cell (``labels``) is compared with, keyed by the run's
    label.  Without ``baseline_cell`` every run cell needs a baseline cell of the same label
    (model, strategy, method); with it, every run cell is compared with that one cell.
    ``level_hashes`` are the run's suite files (level → hash); when the baseline recorded its
    own, the levels both ran must hold the same files.  A baseline written before level
    hashes were kept is checked by its ``suite_hash`` instead: ``suite_hash`` is then the hash
    of the run's suite over the baseline's levels (the caller computes it).

    Raises:
        GraphInstructError: a run cell without its baseline cell, an unknown
            ``baseline_cell``, or a baseline of another suite — a usage error, never a silent
            comparison.
    """
    recorded = baseline.run.level_hashes if baseline.run is not None else {}
    differs = None
    if level_hashes and recorded:
        differs = suite_difference(level_hashes, recorded)
    elif (suite_hash is not None and baseline.run is not None and baseline.run.suite_hash
          and suite_hash != baseline.run.suite_hash):
        differs = (f"its suite files hash to {baseline.run.suite_hash[7:19]}…, this "
                   f"suite's to {suite_hash[7:19]}…")
    if differs:
        raise GraphInstructError(
            f"baseline {name} was made on another suite ({differs}); compare runs of the "
            "same suite, or rebuild the baseline with --gi-update-baseline")
    cells = {c.label: c for c in baseline.cells}
    if baseline_cell is not None:
        if baseline_cell not in cells:
            raise GraphInstructError(f"baseline cell {baseline_cell!r}: baseline {name} has "
                                     f"no such cell (it has: {', '.join(cells)})")
        return dict.fromkeys(labels, cells[baseline_cell])
    unmatched = [label for label in labels if label not in cells]
    if unmatched:
        raise GraphInstructError(
            f"baseline {name} has no cell {', '.join(unmatched)} (it has: {', '.join(cells)}); "
            "compare across cells on purpose with --gi-baseline-cell=LABEL, or rebuild the "
            "baseline with --gi-update-baseline")
    return {label: cells[label] for label in labels}


def narrowing(run: RunReport, baseline: RunReport) -> str | None:
    """What writing ``run`` over ``baseline`` would lose, in one phrase (``None``: nothing —
    the run holds every item, ``(cell, instruction)``, of the baseline): ``the baseline has
    800 items in 6 levels; this run has 1 (it would lose L1, L2, L3, L4, L5 and 199 of the 200
    instructions of L0)``.  Cell labels are the report's (escaped by the caller's output)."""
    have = {(c.label, r.instruction_id) for c in run.cells for r in c.per_instruction}
    kept_labels = set(run.labels)
    lost_cells = [c.label for c in baseline.cells if c.label not in kept_labels]
    of: dict[Level, set[str]] = {}
    lost: dict[Level, set[str]] = {}
    for cell in baseline.cells:
        for r in cell.per_instruction:
            of.setdefault(r.level, set()).add(r.instruction_id)
            if cell.label in kept_labels and (cell.label, r.instruction_id) not in have:
                lost.setdefault(r.level, set()).add(r.instruction_id)
    if not lost_cells and not lost:
        return None
    parts = [f"cell{'s' if len(lost_cells) > 1 else ''} {_names(lost_cells, 5)}"] if lost_cells \
        else []
    whole = [f"L{lv}" for lv in sorted(lost) if lost[lv] == of[lv]]
    parts += whole
    parts += [f"{len(ids)} of the {len(of[lv])} instructions of L{lv}"
              for lv, ids in sorted(lost.items()) if ids != of[lv]]
    total = sum(len(c.per_instruction) for c in baseline.cells)
    cells = f" and {len(baseline.cells)} cells" if len(baseline.cells) > 1 else ""
    mine = sum(len(c.per_instruction) for c in run.cells)
    lose = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    return (f"the baseline has {total} items in {len(of)} levels{cells}; this run has {mine} "
            f"(it would lose {lose})")


def baseline_failures(baseline: Mapping[str, CellReport]) -> set[tuple[str, str]]:
    """``(cell label, instruction id)`` of every item that failed in the baseline."""
    return {(label, r.instruction_id) for label, c in baseline.items()
            for r in c.per_instruction if r.outcome == "failed"}


@dataclass(frozen=True)
class GateFailure:
    """One tripped gate, with its human-readable message."""

    gate: str
    cell: str
    message: str


def _names(ids: Sequence[str], limit: int) -> str:
    return ", ".join(ids[:limit]) + (f" … {len(ids) - limit} more" if len(ids) > limit else "")


def new_failure_notes(comparisons: Sequence[CellComparison], *, hint: str = "") -> list[str]:
    """One ``NOTE:`` line per cell with :attr:`~CellComparison.unjudged_failures` (the first
    ten named); ``hint`` ends each line (e.g. the option that would fail on them)."""
    notes = []
    for c in comparisons:
        quiet = [x.instruction_id for x in c.unjudged_failures]
        if quiet:
            notes.append(f"NOTE: {c.label}: {len(quiet)} item(s) newly fail against the "
                         f"baseline on levels without a significant drop ({_names(quiet, 10)}); "
                         f"not a gate failure{hint}")
    return notes


def check_gates(report: RunReport, comparisons: Sequence[CellComparison] = (), *,
                fail_under: float | None = None, strict: bool = False,
                min_pass_all: float | None = None) -> list[GateFailure]:
    """Every gate the report trips (empty when it passes all configured gates), given its
    cells' comparisons with the baseline (none: no baseline gate)."""
    out: list[GateFailure] = []
    for cell in report.cells:
        total = cell.summary.s_total_renormalized
        if fail_under is not None and (total is None or total < fail_under):
            shown = "none" if total is None else f"{total:.4f}"
            out.append(GateFailure("fail_under", cell.label, f"{cell.label}: S_total {shown} "
                                   f"is below --gi-fail-under={fail_under:g}"))
        if min_pass_all is not None:
            out += pass_all_failures(cell, min_pass_all)
    for c in comparisons:
        if c.looks_open:
            out.append(GateFailure(
                "baseline", c.label,
                f"{c.label}: --gi-samples=auto: the report lacks {c.looks_open} sample(s) its "
                "looks ask for against this baseline (an edited report, or another baseline "
                "than the run's): its levels cannot be judged"))
        unlike = incomparable(c.differences)
        if unlike:
            out.append(GateFailure(
                "baseline", c.label,
                f"{c.label}: not compared like with like: the baseline cell "
                f"{c.baseline_label} differs in {', '.join(map(str, unlike))}, which changes "
                "the scores of the same answers; run with the baseline's settings, or rebuild the "
                "baseline with --gi-update-baseline"))
        for lv in c.regressed_levels:
            out.append(GateFailure("regression", c.label, regression_message(c, lv)))
        if not strict:
            continue
        if c.newly_failing:
            ids = [x.instruction_id for x in c.newly_failing]
            out.append(GateFailure("strict", c.label, f"{c.label}: {len(ids)} item(s) newly "
                                   f"fail against the baseline ({_names(ids, 20)})"))
        if c.not_compared:
            out.append(GateFailure("strict", c.label, f"{c.label}: not compared with the "
                                   "baseline: " + ", ".join(x.describe()
                                                            for x in c.not_compared)))
    return out


def regression_message(c: CellComparison, level: int) -> str:
    """Why ``level`` of ``c`` fails the gate, in one line: the drop as level score and pass
    rate where both exist (the numbers every view shows, without the intervals: the compared
    line gives them, with why they read otherwise when they do), the Holm-adjusted p-value,
    the tolerance it exceeds and the newly failing items.  ``m-zero-shot: L2 dropped (level
    score −0.0590, pass rate −0.1000; 30 instructions; Holm p(no drop)=1.2e-07) by more than
    --gi-max-regression=0.02 of level score; newly failing: L2-001, …``."""
    x = c.level_change(level)
    what = x.change_texts()[0][0]
    changes = [f"{what} {x.change:+.4f}"]
    if x.pass_change is not None:
        changes.append(f"pass rate {x.pass_change:+.4f}")
    newly = [i.instruction_id for i in c.newly_failing if i.level == level]
    return (f"{c.label}: L{level} dropped ({', '.join(changes)}; {x.n} instructions; "
            f"{x.p_text()}) by more than --gi-max-regression={c.max_regression:g} of {what}; "
            f"newly failing: {_names(newly, 20) or 'none (scores dropped)'}")


def pass_all_failures(cell: CellReport, floor: float) -> list[GateFailure]:
    """One failure per level of ``cell`` whose pass^k is below ``floor``, measured from its
    items (:func:`.consistency.measure`: reports of one sample and older ones too); a level
    with no item to measure (only errors) is the error budget's, not this gate's."""
    measured = measure(cell.per_instruction)
    if measured is None:
        return []
    out = []
    for lv, row in sorted(measured.levels.items()):
        if row.pass_all_k < floor:
            left = f", {row.left_out} without an answer left out" if row.left_out else ""
            out.append(GateFailure(
                "min_pass_all", cell.label,
                f"{cell.label}: L{lv} pass^{row.k} {row.pass_all_k:.4f} (items whose every "
                f"one of {row.k} samples passes; {row.items} items{left}) is below "
                f"--gi-min-pass-all={floor:g}"))
    return out


@dataclass(frozen=True)
class GateVerdict:
    """How a finished run ends: the tripped gates, the error rate, and whether it fails."""

    gate_failures: tuple[GateFailure, ...]
    error_rate: float
    max_error_rate: float
    incomplete: str | None = None  #: why the run is partial (``None``: it is complete)
    scored: int = 0  #: items with a score (not errors, not skipped)

    @property
    def too_many_errors(self) -> bool:
        return self.error_rate > self.max_error_rate

    @property
    def failed(self) -> bool:
        """Whether the run must exit non-zero because of its gates or error budget."""
        return bool(self.gate_failures) or self.too_many_errors or self.incomplete is not None

    def trust_problem(self) -> str | None:
        """Why the run may not become a baseline (``None``: it may): incomplete, over its
        error budget, or without a scored item.  Its gates against an older baseline do not
        matter: an update is on purpose."""
        if self.incomplete is not None:
            return f"the run is incomplete ({self.incomplete})"
        if self.too_many_errors:
            return (f"infrastructure error rate {self.error_rate:.1%} exceeds "
                    f"gi_max_error_rate={self.max_error_rate:g}")
        if self.scored == 0:
            return "no item has a score"
        return None

    def lines(self) -> list[str]:
        """One line per reason the run fails (empty when it does not)."""
        out = []
        if self.incomplete is not None:
            out.append(f"FAILED: incomplete run ({self.incomplete}): no gate passes "
                       "on a partial run")
        if self.too_many_errors:
            out.append(f"FAILED: infrastructure error rate {self.error_rate:.1%} exceeds "
                       f"gi_max_error_rate={self.max_error_rate:g}")
        out += [f"GATE FAILED ({g.gate}): {g.message}" for g in self.gate_failures]
        return out


def error_rate(report: RunReport) -> float:
    """The share of the report's items that had no answer (infrastructure errors; 0 when it
    has no items)."""
    errors = sum(c.summary.error for c in report.cells)
    total = sum(c.summary.items for c in report.cells)
    return errors / total if total else 0.0


def judge(report: RunReport, comparisons: Sequence[CellComparison] = (), *,
          max_error_rate: float, fail_under: float | None = None,
          strict: bool = False, min_pass_all: float | None = None,
          extra: Sequence[GateFailure] = ()) -> GateVerdict:
    """Apply the run's gates and error budget to its report and comparisons (``extra``:
    failures decided elsewhere, e.g. a missing baseline)."""
    gates = check_gates(report, comparisons, fail_under=fail_under, strict=strict,
                        min_pass_all=min_pass_all)
    incomplete = (None if report.coverage.complete
                  else report.coverage.describe().removeprefix("partial: "))
    scored = sum(1 for c in report.cells for r in c.per_instruction if r.scored)
    return GateVerdict((*gates, *extra), error_rate(report), max_error_rate, incomplete, scored)
