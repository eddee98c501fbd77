"""Two cells compared: the ``compare`` command.

The comparison is the one a gated run makes (:mod:`pytest_graphinstruct.run.gate.comparison`):
``candidate − baseline`` level scores over the instructions scored in both cells, per level and
for S_total, judged by the gate's test (``--test``: the paired sign-flip test on this suite by
default, or the template-clustered one).  The verdict follows the rule of the
``--gi-max-regression`` gate, so ``compare --fail-on-regression`` and a pytest run against the
same baseline agree:

* **regression** — some level's drop is real (the family-wise test over the cell's levels
  rejects "no drop") *and* its mean change is below ``−max_regression``;
* **improvement** — no level regressed, and some level's rise is real (the same family-wise
  test, of "no rise") *and* its mean change is above ``+max_regression``;
* **no significant change** — otherwise.

A level that regressed outweighs one that improved.  Each level is shown as a gated run shows
it (:meth:`~pytest_graphinstruct.run.records.results.LevelChange.describe`: the change as level
score and pass rate with their unadjusted 95 % intervals, the Holm-adjusted p-value labelled so,
the gate's words, and why an interval reads otherwise when it does).  Beside the verdict: both
cells and their
files, the cost change (TPV, tokens per valid sample, as each cell's summary gives it), the
instructions whose item passed in the baseline and fails in the candidate and the reverse, and
the metadata (suite, samples per instruction, decoding) in which the two cells differ — compared
only where both cells record it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.run.gate.comparison import CellComparison, ItemChange
from pytest_graphinstruct.run.gate.comparison import compare_cells as run_comparison
from pytest_graphinstruct.run.records.results import CellReport
from pytest_graphinstruct.score.regression.bootstrap import DEFAULT_MAX_REGRESSION, PairedDiff
from pytest_graphinstruct.vocab import GateTest

__all__ = ["Comparison", "compare_cells"]


@dataclass(frozen=True)
class Comparison:
    """``candidate − baseline`` for two cells: the run layer's :class:`CellComparison` of the
    two, and how the ``compare`` command says it (module docstring)."""

    baseline: CellReport
    candidate: CellReport
    cell: CellComparison

    @property
    def verdict(self) -> str:
        """``regression``, ``improvement`` or ``no significant change``
        (:attr:`CellComparison.verdict`)."""
        return self.cell.verdict

    def warning(self) -> str | None:
        """One line naming the metadata the two cells differ in, or ``None`` when alike."""
        if not self.cell.differences:
            return None
        shown = ", ".join(map(str, self.cell.differences))
        return (f"the two cells differ in {shown}: the change may come from that, not from "
                "the model")

    def lines(self, baseline_file: str = "", candidate_file: str = "") -> list[str]:
        """The ``compare`` report: the intervals, both cells, cost, changed items, verdict."""
        base, cand, c = self.baseline, self.candidate, self.cell
        result = c.diff
        pct = round(100 * result.confidence)
        test = ("paired sign-flip test per instruction on this suite" if c.test == "suite"
                else "template-clustered test")
        out = [f"candidate {cand.label} - baseline {base.label} ({test} over shared "
               f"instructions; each change with its unadjusted {pct}% CI; Holm p adjusted over "
               f"{c.family} level tests):"]
        out += [f"  {x.describe()}; {x.n} instructions" for x in c.level_changes()]
        out.append(f"  S_total: {_diff(result.total)}")
        if result.only_baseline or result.only_candidate:
            out.append(f"  unpaired: {len(result.only_baseline)} only in baseline, "
                       f"{len(result.only_candidate)} only in candidate")
        out.append(f"baseline:  cell {base.label}" + (f" ({baseline_file})" if baseline_file
                                                       else ""))
        out.append(f"candidate: cell {cand.label}" + (f" ({candidate_file})" if candidate_file
                                                       else ""))
        out.append(f"cost: {_cost(base.summary.tpv, cand.summary.tpv)}")
        for name, changes in (("newly failing", c.newly_failing),
                              ("newly passing", c.newly_passing)):
            out.append(f"{name} ({len(changes)}): {_ids(changes) or 'none'}")
        if c.now_errors:
            out.append(f"errors in the candidate, scored in the baseline "
                       f"({len(c.now_errors)}): {_ids(c.now_errors)}")
        out.append(f"verdict: {self.verdict} ({self._rule()})")
        return out

    def _rule(self) -> str:
        c = self.cell
        delta = f"{c.max_regression:g}"
        if c.regressed_levels:
            return (f"{_levels(c.regressed_levels)}: a real drop (Holm p <= {c.alpha:g} over "
                    f"{c.family} level tests) with the mean change below -{delta}")
        if c.improved_levels:
            return (f"{_levels(c.improved_levels)}: a real rise (Holm p(no rise) <= {c.alpha:g} "
                    f"over {c.family} level tests) with the mean change above +{delta}")
        return (f"no level has a real drop larger than {delta} nor a real rise larger than "
                f"+{delta} (Holm over {c.family} level tests at {c.alpha:g}, each way)")


def compare_cells(baseline: CellReport, candidate: CellReport, *,
                  max_regression: float = DEFAULT_MAX_REGRESSION,
                  test: GateTest = "suite") -> Comparison:
    """Compare two cells (module docstring) with the comparison a gated run uses
    (:func:`pytest_graphinstruct.run.gate.comparison.compare_cells`).

    Raises:
        GraphInstructError: ``max_regression`` is negative, no instruction is scored in both
            cells, or an instruction has different levels in the two cells.
    """
    if max_regression < 0:
        raise GraphInstructError(f"--max-regression must be >= 0, got {max_regression:g}")
    base_scores, cand_scores = baseline.scored_level_scores(), candidate.scored_level_scores()
    if not set(base_scores) & set(cand_scores):
        raise GraphInstructError(f"no instruction scored in both cells ({baseline.label}: "
                                 f"{len(base_scores)}, {candidate.label}: {len(cand_scores)}): "
                                 "nothing to compare")
    try:
        (c,) = run_comparison([(candidate, baseline)], max_regression=max_regression,
                              test=test)
    except ValueError as exc:  # an id on different levels in the two cells
        raise GraphInstructError(str(exc)) from None
    return Comparison(baseline, candidate, c)


def _ids(changes: Sequence[ItemChange]) -> str:
    return ", ".join(x.instruction_id for x in changes)


def _diff(d: PairedDiff) -> str:
    return f"{d.mean_diff:+.4f} [{d.low:+.4f}, {d.high:+.4f}]  n={d.n}"


def _cost(base: float | None, cand: float | None) -> str:
    shown = f"TPV {_tpv(base)} -> {_tpv(cand)}"
    if base is None or cand is None:
        return shown + " (no change computed: unknown token usage)"
    rel = f", {100 * (cand - base) / base:+.1f}%" if base else ""
    return f"{shown} ({cand - base:+.1f}{rel})"


def _tpv(x: float | None) -> str:
    return "unknown" if x is None else f"{x:.1f}"


def _levels(levels: tuple[int, ...]) -> str:
    return ", ".join(f"L{lv}" for lv in levels)
