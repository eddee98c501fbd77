"""Two cells compared: the ``compare`` command.

The quality change is the paired bootstrap of ``candidate − baseline`` level scores over the
instructions scored in both cells (:func:`~pytest_graphinstruct.score.bootstrap.paired_bootstrap`),
per level and for S_total.  The verdict follows the rule of the ``--gi-max-regression`` gate, so
``compare --fail-on-regression`` and a pytest run against the same baseline agree:

* **regression** — some level's mean change is below ``−max_regression`` *and* the whole 95 %
  interval of the change is below 0 (:func:`~pytest_graphinstruct.score.bootstrap.is_regression`);
* **improvement** — no level regressed, and some level's mean change is above
  ``+max_regression`` with the whole interval above 0;
* **no significant change** — otherwise.

A level that regressed outweighs one that improved.  Beside the verdict: both cells and their
files, the cost change (TPV, tokens per valid sample, as each cell's summary gives it), the
instructions whose item passed in the baseline and fails in the candidate and the reverse, and
the metadata (suite, samples per instruction, decoding) in which the two cells differ — compared
only where both cells record it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.untrusted import escape
from pytest_graphinstruct.run.results import CellMetadata, CellReport, RunReport
from pytest_graphinstruct.score.bootstrap import (
    DEFAULT_MAX_REGRESSION,
    PairedDiff,
    PairedResult,
    is_regression,
    paired_bootstrap,
)

REGRESSION = "regression"
IMPROVEMENT = "improvement"
NO_CHANGE = "no significant change"


@dataclass(frozen=True)
class Comparison:
    """``candidate − baseline`` for two cells, and what follows from it (module docstring)."""

    baseline: CellReport
    candidate: CellReport
    paired: PairedResult
    max_regression: float
    regressed: tuple[int, ...]
    improved: tuple[int, ...]
    newly_failing: tuple[str, ...]
    newly_passing: tuple[str, ...]
    now_errors: tuple[str, ...]
    differences: tuple[str, ...]

    @property
    def verdict(self) -> str:
        """``regression``, ``improvement`` or ``no significant change`` (module docstring)."""
        if self.regressed:
            return REGRESSION
        return IMPROVEMENT if self.improved else NO_CHANGE

    def warning(self) -> str | None:
        """One line naming the metadata the two cells differ in, or ``None`` when alike."""
        if not self.differences:
            return None
        return (f"the two cells differ in {', '.join(self.differences)}: the change may come "
                "from that, not from the model")

    def lines(self, baseline_file: str = "", candidate_file: str = "") -> list[str]:
        """The ``compare`` report: the intervals, both cells, cost, changed items, verdict."""
        base, cand, result = self.baseline, self.candidate, self.paired
        pct = round(100 * result.confidence)
        out = [f"candidate {cand.label} - baseline {base.label} (paired bootstrap over shared "
               f"instructions, {pct}% CI):"]
        for lv, d in result.levels.items():
            out.append(f"  L{lv}: {_diff(d)}")
        out.append(f"  S_total: {_diff(result.total)}")
        if result.only_baseline or result.only_candidate:
            out.append(f"  unpaired: {len(result.only_baseline)} only in baseline, "
                       f"{len(result.only_candidate)} only in candidate")
        out.append(f"baseline:  cell {base.label}" + (f" ({baseline_file})" if baseline_file
                                                       else ""))
        out.append(f"candidate: cell {cand.label}" + (f" ({candidate_file})" if candidate_file
                                                       else ""))
        out.append(f"cost: {_cost(base.summary.tpv, cand.summary.tpv)}")
        out.append(f"newly failing ({len(self.newly_failing)}): "
                   f"{', '.join(self.newly_failing) or 'none'}")
        out.append(f"newly passing ({len(self.newly_passing)}): "
                   f"{', '.join(self.newly_passing) or 'none'}")
        if self.now_errors:
            out.append(f"errors in the candidate, scored in the baseline "
                       f"({len(self.now_errors)}): {', '.join(self.now_errors)}")
        out.append(f"verdict: {self.verdict} ({self._rule()})")
        return out

    def _rule(self) -> str:
        delta = f"{self.max_regression:g}"
        pct = f"{round(100 * self.paired.confidence)}%"
        if self.regressed:
            return (f"{_levels(self.regressed)}: mean change below -{delta} and the whole "
                    f"{pct} CI below 0")
        if self.improved:
            return (f"{_levels(self.improved)}: mean change above +{delta} and the whole "
                    f"{pct} CI above 0")
        return (f"no level changed by more than {delta} with its whole {pct} CI on one side "
                "of 0")


def compare_cells(baseline: CellReport, candidate: CellReport, *,
                  max_regression: float = DEFAULT_MAX_REGRESSION) -> Comparison:
    """Compare two cells (module docstring).

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
        result = paired_bootstrap(base_scores, cand_scores)
    except ValueError as exc:  # an id on different levels in the two cells
        raise GraphInstructError(str(exc)) from None
    before = {r.instruction_id: r.outcome for r in baseline.per_instruction}
    changed: dict[tuple[str, str], list[str]] = {}
    for r in candidate.per_instruction:
        changed.setdefault((before.get(r.instruction_id, ""), r.outcome), []).append(
            r.instruction_id)
    now_errors = [i for (was, now), ids in changed.items()
                  if was in ("passed", "failed") and now == "error" for i in ids]
    return Comparison(
        baseline=baseline, candidate=candidate, paired=result, max_regression=max_regression,
        regressed=tuple(lv for lv, d in result.levels.items()
                        if is_regression(d, max_regression)),
        improved=tuple(lv for lv, d in result.levels.items()
                       if d.mean_diff > max_regression and d.low > 0),
        newly_failing=tuple(changed.get(("passed", "failed"), ())),
        newly_passing=tuple(changed.get(("failed", "passed"), ())),
        now_errors=tuple(now_errors),
        differences=differences(baseline.metadata, candidate.metadata),
    )


def differences(a: CellMetadata, b: CellMetadata) -> tuple[str, ...]:
    """``name (a vs b)`` for each of suite, samples per instruction and decoding that both
    cells record and that differ.  Decoding counts as recorded only in a cell that names the
    tool that produced it (a run's cell): elsewhere — a release file, a hand-built cell — an
    empty decoding is unknown, not "the defaults"."""
    out = []
    if a.suite is not None and b.suite is not None and a.suite != b.suite:
        out.append(f"suite ({a.suite} vs {b.suite})")
    sa, sb = a.samples_per_instruction, b.samples_per_instruction
    if sa is not None and sb is not None and sa != sb:
        out.append(f"samples per instruction ({sa} vs {sb})")
    if a.tool is not None and b.tool is not None and dict(a.decoding) != dict(b.decoding):
        out.append(f"decoding ({_decoding(a.decoding)} vs {_decoding(b.decoding)})")
    return tuple(out)


def _decoding(d: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(d.items())) or "defaults"


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


def pick_cell(report: RunReport, path: str, label: str | None, *,
              hint: str = "pick one with --cell ({labels})") -> CellReport:
    """The cell called ``label``, or the report's only cell (``hint``: how to choose one, for
    the error; ``{labels}`` in it lists the report's cells, escaped).

    Raises:
        GraphInstructError: no such cell, or several cells and no ``label`` (lists them).
    """
    if label is not None:
        try:
            return report.cell(label)
        except KeyError as exc:
            raise GraphInstructError(f"{path}: {exc.args[0]}") from None
    if len(report.cells) != 1:
        labels = ", ".join(escape(x) for x in report.labels) or "none"
        raise GraphInstructError(f"{path} holds {len(report.cells)} cells; "
                                 + hint.format(labels=labels))
    return report.cells[0]
