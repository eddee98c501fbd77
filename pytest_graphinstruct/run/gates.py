"""CI gates and the exit-status rules of a run: a quality floor, regressions against a saved
baseline, and the infrastructure error budget.

A baseline is a saved run report (``--gi-update-baseline`` writes one); any report
:func:`~pytest_graphinstruct.run.reader.read_report` accepts can serve.  Cells are matched by
label (``model-strategy``, ``-method`` appended for a method other than the baseline),
instructions by id.

* ``fail_under``: a cell whose ``S_total`` over the levels run is below the floor fails.
* ``max_regression``: per level, the paired bootstrap of ``current − baseline`` level scores over
  the instructions scored in both runs; the gate fails when the mean dropped by more than DELTA
  *and* the whole 95 % interval is below 0 (the drop is real, not sampling noise).  The message
  names the levels and the instructions whose item passed in the baseline and fails now.
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
from pytest_graphinstruct.run.reader import read_report
from pytest_graphinstruct.run.results import CellReport, ItemResult, ReportError, RunReport
from pytest_graphinstruct.score.bootstrap import PairedResult, is_regression, paired_bootstrap


def load_baseline(path: str | Path) -> dict[str, CellReport]:
    """The cells of a baseline report, keyed by label (:func:`read_baseline`).

    Raises:
        GraphInstructError: see :func:`read_baseline`.
    """
    return {c.label: c for c in read_baseline(path).cells}


def read_baseline(path: str | Path) -> RunReport:
    """A baseline report, checked: it exists, reads, is complete and has cells.

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
    if report.partial:
        raise GraphInstructError(f"baseline {p} is from an incomplete run "
                                 f"({report.coverage.describe()}); a gate needs a complete "
                                 "one (rebuild it with --gi-update-baseline)")
    if not report.cells:
        raise GraphInstructError(f"baseline {p} holds no cells")
    return report


def match_baseline(labels: Sequence[str], baseline: RunReport, *, name: str,
                   baseline_cell: str | None = None,
                   suite_hash: str | None = None) -> dict[str, CellReport]:
    """The baseline cell each run cell (``labels``) is compared with, keyed by the run's
    label.  Without ``baseline_cell`` every run cell needs a baseline cell of the same label
    (model, strategy, method); with it, every run cell is compared with that one cell.

    Raises:
        GraphInstructError: a run cell without its baseline cell, an unknown
            ``baseline_cell``, or a baseline of another suite (``suite_hash`` differs from the
            one the baseline recorded) — a usage error, never a silent comparison.
    """
    recorded = baseline.run.suite_hash if baseline.run is not None else None
    if suite_hash is not None and recorded is not None and recorded != suite_hash:
        raise GraphInstructError(
            f"baseline {name} was made on another suite ({recorded[:19]}…, this run: "
            f"{suite_hash[:19]}…); rebuild it with --gi-update-baseline")
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


@dataclass(frozen=True)
class ItemChange:
    """An item whose outcome changed against the baseline, with its first violation now (a
    newly failing item) — untrusted text from the model's answer is not in it, only the
    constraint as written."""

    instruction_id: str
    level: int
    first_violation: str | None = None


@dataclass(frozen=True)
class CellComparison:
    """One cell against its baseline cell: the paired bootstrap of ``current − baseline``
    level scores, the levels whose drop is real and larger than ``max_regression``, and the
    items that newly fail or newly pass."""

    label: str
    diff: PairedResult
    regressed_levels: tuple[int, ...]
    newly_failing: tuple[ItemChange, ...]
    newly_passing: tuple[ItemChange, ...]

    @property
    def unjudged_failures(self) -> tuple[ItemChange, ...]:
        """Newly failing items on levels without a real drop: the statistical gate lets them
        pass (noise for a stochastic model), so they are a note, not a failure."""
        return tuple(x for x in self.newly_failing if x.level not in self.regressed_levels)


def new_failure_notes(comparisons: Sequence[CellComparison], *, hint: str = "") -> list[str]:
    """One ``NOTE:`` line per cell with :attr:`~CellComparison.unjudged_failures` (the first
    ten named); ``hint`` ends each line (e.g. the option that would fail on them)."""
    notes = []
    for c in comparisons:
        quiet = [x.instruction_id for x in c.unjudged_failures]
        if quiet:
            shown = ", ".join(quiet[:10]) + (f" … {len(quiet) - 10} more" if len(quiet) > 10
                                             else "")
            notes.append(f"NOTE: {c.label}: {len(quiet)} item(s) newly fail against the "
                         f"baseline on levels without a significant drop ({shown}); not a gate "
                         f"failure{hint}")
    return notes


def first_violation(item: ItemResult) -> str | None:
    """The first violated constraint of an item's first failing sample (``None``: none)."""
    for sample in item.samples:
        found = (*sample.violations, *sample.derived_violations)
        if found:
            return found[0]
        if sample.error:
            return f"error: {sample.error}"
        if not sample.parsed:
            return "no graph parsed"
    return None


def compare_cell(cell: CellReport, base: CellReport, *,
                 max_regression: float) -> CellComparison:
    """``cell`` against ``base`` (the same label in the baseline)."""
    diff = paired_bootstrap(base.scored_level_scores(), cell.scored_level_scores())
    before = {r.instruction_id: r.outcome for r in base.per_instruction}
    failing = tuple(ItemChange(r.instruction_id, r.level, first_violation(r))
                    for r in cell.per_instruction
                    if r.outcome == "failed" and before.get(r.instruction_id) == "passed")
    passing = tuple(ItemChange(r.instruction_id, r.level) for r in cell.per_instruction
                    if r.outcome == "passed" and before.get(r.instruction_id) == "failed")
    regressed = tuple(lv for lv, d in sorted(diff.levels.items())
                      if is_regression(d, max_regression))
    return CellComparison(cell.label, diff, regressed, failing, passing)


def compare_to_baseline(report: RunReport, baseline: Mapping[str, CellReport], *,
                        max_regression: float) -> tuple[CellComparison, ...]:
    """Every cell of ``report`` that the baseline has, compared (in the report's order)."""
    return tuple(compare_cell(c, baseline[c.label], max_regression=max_regression)
                 for c in report.cells if c.label in baseline)


def check_gates(report: RunReport, *, fail_under: float | None = None,
                baseline: Mapping[str, CellReport] | None = None,
                max_regression: float | None = None) -> list[GateFailure]:
    """Every gate the report trips (empty when it passes all configured gates)."""
    out: list[GateFailure] = []
    compared = ({} if baseline is None or max_regression is None else
                {c.label: c for c in compare_to_baseline(report, baseline,
                                                         max_regression=max_regression)})
    for cell in report.cells:
        label = cell.label
        total = cell.summary.s_total_renormalized
        if fail_under is not None and (total is None or total < fail_under):
            shown = "none" if total is None else f"{total:.4f}"
            out.append(GateFailure("fail_under", label, f"{label}: S_total {shown} is below "
                                   f"--gi-fail-under={fail_under:g}"))
        if baseline is None or max_regression is None:
            continue
        comparison = compared.get(label)
        if comparison is None:
            out.append(GateFailure("regression", label, f"{label}: the baseline has no such "
                                   f"cell (it has: {', '.join(sorted(baseline)) or 'none'}); "
                                   "update it with --gi-update-baseline"))
            continue
        for lv in comparison.regressed_levels:
            d = comparison.diff.levels[lv]
            newly = [x.instruction_id for x in comparison.newly_failing if x.level == lv]
            shown = ", ".join(newly[:20]) + (f" … {len(newly) - 20} more" if len(newly) > 20
                                             else "")
            out.append(GateFailure(
                "regression", label,
                f"{label}: L{lv} quality dropped by {-d.mean_diff:.4f} (95% CI of the change "
                f"[{d.low:.4f}, {d.high:.4f}], {d.n} instructions) > --gi-max-regression="
                f"{max_regression:g}; newly failing: {shown or 'none (scores dropped)'}"))
    return out


@dataclass(frozen=True)
class Verdict:
    """How a finished run ends: the tripped gates, the error rate, and whether it fails."""

    gate_failures: tuple[GateFailure, ...]
    error_rate: float
    max_error_rate: float
    incomplete: str | None = None  #: why the run is partial (``None``: it is complete)

    @property
    def too_many_errors(self) -> bool:
        return self.error_rate > self.max_error_rate

    @property
    def failed(self) -> bool:
        """Whether the run must exit non-zero because of its gates or error budget."""
        return bool(self.gate_failures) or self.too_many_errors or self.incomplete is not None

    def lines(self) -> list[str]:
        """One line per reason the run fails (empty when it does not)."""
        out = []
        if self.incomplete is not None:
            out.append(f"FAILED: incomplete run ({self.incomplete}): no gate passes "
                       "on a partial run")
        if self.too_many_errors:
            out.append(f"FAILED: infrastructure error rate {self.error_rate:.1%} exceeds "
                       f"--gi-max-error-rate={self.max_error_rate:g}")
        out += [f"GATE FAILED ({g.gate}): {g.message}" for g in self.gate_failures]
        return out


def judge(report: RunReport, *, max_error_rate: float, fail_under: float | None = None,
          baseline: Mapping[str, CellReport] | None = None,
          max_regression: float | None = None) -> Verdict:
    """Apply the run's gates and error budget to its report."""
    errors = sum(c.summary.error for c in report.cells)
    total = sum(c.summary.items for c in report.cells)
    gates = check_gates(report, fail_under=fail_under, baseline=baseline,
                        max_regression=max_regression)
    incomplete = (None if report.coverage.complete
                  else report.coverage.describe().removeprefix("partial: "))
    return Verdict(tuple(gates), errors / total if total else 0.0, max_error_rate, incomplete)
