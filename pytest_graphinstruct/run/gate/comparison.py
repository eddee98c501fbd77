"""A run's cells against baseline cells: the one comparison every command uses.

A :class:`CellComparison` holds what was paired (instructions scored in both cells, per level),
the paired bootstrap of ``current − baseline`` level scores over them (clusters: each
instruction's template, so instructions made from one pattern are resampled together), the
levels whose drop is real and larger than the allowed regression, the items whose outcome
changed (newly failing, newly passing, now errors), and what one side holds that the other
did not (levels or items not compared, either side's, with the reason that side's filter gives).

Which levels regressed is decided over the whole family of (cell, level) tests of one
comparison (:func:`compare_cells`), so that with nothing changed a gated run fails at most
``alpha`` of the time however many levels and cells it holds
(:func:`~pytest_graphinstruct.score.regression.multiple.regressions`); which improved, the same
way on the tests' p-values of "no rise" (:func:`~.multiple.improvements`).  The pytest run,
``gate``, ``compare`` and ``runs compare`` all call :func:`compare_cells`.

**What every view shows of a level** is one record, :meth:`CellComparison.level_change`
(:class:`~pytest_graphinstruct.run.records.results.LevelChange`, also the report's): the change
as level score and pass rate where both exist, each with its unadjusted 95 % interval, the
Holm-adjusted p-value labelled as such, and the gate's words.  The interval and the verdict are
different things — the interval (paired t, over the instructions) says how large the change is;
the verdict is the test's, one-sided, exact for this suite's fixed instructions and
Holm-adjusted over the family — so they can read differently: a test that counts the fifteen
samples that turned sees a drop that an interval over thirty instructions (three of them
changed) does not exclude, and an interval wholly below 0 can sit beside a drop Holm does not
reject.  Where they do, the words say why (:meth:`CellComparison.interval_note`); an interval
is never left to contradict the verdict beside it unexplained (docs/PLUGIN.md, "CI gates").
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from pytest_graphinstruct.run.adaptive import design, sample_outcomes
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    CellReport,
    ItemFilter,
    ItemResult,
    LevelChange,
    LevelOmission,
    describe_prompts,
    format_p,
)
from pytest_graphinstruct.score.regression.bootstrap import PairedResult, paired_bootstrap
from pytest_graphinstruct.score.regression.counts import PassCount
from pytest_graphinstruct.score.regression.multiple import (
    FAMILY_ALPHA,
    holm_adjusted,
    improvements,
    regressions,
)
from pytest_graphinstruct.score.regression.paired import suite_paired
from pytest_graphinstruct.score.regression.power import (
    ItemScore,
    detectable_drops,
    detectable_pass_drops,
)
from pytest_graphinstruct.score.regression.sequential import (
    LevelLooks,
    SequentialResult,
    sequential_paired,
)
from pytest_graphinstruct.vocab import GateTest, Level, as_level

__all__ = [
    "IMPROVEMENT",
    "NO_CHANGE",
    "REGRESSION",
    "CellComparison",
    "Difference",
    "ItemChange",
    "baseline_items",
    "baseline_samples",
    "compare_cells",
    "differences",
    "first_violation",
    "incomparable",
    "omission_reason",
    "pass_counts",
]


REGRESSION = "regression"
IMPROVEMENT = "improvement"
NO_CHANGE = "no significant change"


@dataclass(frozen=True)
class ItemChange:
    """An item whose outcome changed against the baseline (``was`` → ``now``), with its
    first violation now for a newly failing one: the constraint as written, never text from
    the model's answer."""

    instruction_id: str
    level: int
    was: str = ""
    now: str = ""
    first_violation: str | None = None


@dataclass(frozen=True)
class CellComparison:
    """One run cell (``label``) against its baseline cell (``baseline_label``)."""

    label: str
    baseline_label: str
    diff: PairedResult
    max_regression: float
    regressed_levels: tuple[int, ...] = ()
    improved_levels: tuple[int, ...] = ()
    newly_failing: tuple[ItemChange, ...] = ()
    newly_passing: tuple[ItemChange, ...] = ()
    now_errors: tuple[ItemChange, ...] = ()
    not_compared: tuple[LevelOmission, ...] = ()
    #: level -> the smallest drop the gate detects there at 80 % power (levels it can tell)
    detectable: Mapping[int, float] = field(default_factory=dict)
    differences: tuple[Difference, ...] = ()
    #: the gate's test (vocab.GateTest) and the family it decided in: level -> Holm-adjusted
    #: p-value of "no drop" (``adjusted``) and of "no rise" (``adjusted_rise``), the number of
    #: (cell, level) tests and the family-wise alpha
    test: GateTest = "suite"
    adjusted: Mapping[int, float] = field(default_factory=dict)
    family: int = 0
    alpha: float = FAMILY_ALPHA
    #: ``--gi-samples=auto``: each level's looks (replayed from the two cells' samples), and
    #: the cap; the levels' changes are then of pass rate on paired samples
    looks: Mapping[int, LevelLooks] = field(default_factory=dict)
    samples_cap: int | None = None
    #: samples the replayed looks still ask for (0: the report holds every one they need)
    looks_open: int = 0
    adjusted_rise: Mapping[int, float] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        """:data:`REGRESSION` when a level regressed (it outweighs one that improved), else
        :data:`IMPROVEMENT` when a level improved (Holm over the family rejects "no rise" and
        the mean change is above ``max_regression``), else :data:`NO_CHANGE`."""
        if self.regressed_levels:
            return REGRESSION
        return IMPROVEMENT if self.improved_levels else NO_CHANGE

    def _real(self, level: int) -> tuple[bool, bool]:
        """Whether Holm over the family rejects "no drop", and "no rise", at ``level``."""
        drop, rise = self.adjusted.get(level), self.adjusted_rise.get(level)
        return (drop is not None and drop <= self.alpha,
                rise is not None and rise <= self.alpha)

    def level_verdict(self, level: int) -> str:
        """What the gate decided about ``level``, in words: the decision is the test's (Holm
        over the family, each direction), the interval only says how large.  ``regressed``,
        ``improved``; ``unchanged (|change| < 0.0005)``; ``lower by 0.012, a real drop but
        within --gi-max-regression=0.02`` (``higher by …, a real rise …``); ``lower, not
        significant`` (``higher, …``); where the test finds the pass counts moving against the
        level score, ``lower, but more samples pass (Holm p(no rise)=…)`` (``higher, but fewer
        samples pass …``)."""
        d = self.diff.levels[level]
        if level in self.regressed_levels:
            return "regressed"
        if level in self.improved_levels:
            return "improved"
        if abs(d.mean_diff) < _SHOWN:  # a float's last digits, whatever the test says
            return "unchanged (|change| < 0.0005)"
        drop, rise = self._real(level)
        limit = f"--gi-max-regression={self.max_regression:g}"
        if d.mean_diff < 0:
            if drop:
                return f"lower by {-d.mean_diff:.3f}, a real drop but within {limit}"
            if rise:
                return (f"lower, but more samples pass (Holm p(no rise)="
                        f"{format_p(self.adjusted_rise[level])})")
            return "lower, not significant"
        if rise:
            return f"higher by {d.mean_diff:.3f}, a real rise but within {limit}"
        if drop:
            return (f"higher, but fewer samples pass (Holm p(no drop)="
                    f"{format_p(self.adjusted[level])})")
        return "higher, not significant"

    def _claim(self, level: int) -> Literal["drop", "rise", "none", "mixed"]:
        """What :meth:`level_verdict` says of ``level``: a real drop, a real rise, no real
        change, or both directions at once (it names both)."""
        d = self.diff.levels[level]
        drop, rise = self._real(level)
        if abs(d.mean_diff) < _SHOWN and level not in (*self.regressed_levels,
                                                       *self.improved_levels):
            return "none"  # "unchanged": what the float's last digits say is no claim
        if level in self.regressed_levels or (d.mean_diff < 0 and drop):
            return "drop"
        if level in self.improved_levels or (d.mean_diff > 0 and rise):
            return "rise"
        return "mixed" if drop or rise else "none"

    def _intervals(self, level: int) -> list[tuple[str, float, float]]:
        """The intervals shown beside the level's verdict: its measure's, and the pass rate's
        beside a level score."""
        d = self.diff.levels[level]
        out: list[tuple[str, float, float]] = [(d.measure, d.low, d.high)]
        if d.passes is not None and d.measure == "level score":
            out.append(("pass rate", d.passes.low, d.passes.high))
        return out

    def interval_note(self, level: int) -> str | None:
        """Why an interval shown beside ``level``'s verdict does not read like it (``None``:
        every one does).  A real drop (rise) beside an interval that reaches 0: the interval is
        two-sided and over the instructions, taking their differences for noise, the test
        one-sided and exact for this suite's fixed instructions (the template-clustered test's
        interval is its own t's: it only differs in being two-sided); where only the pass
        rate's interval beside a level score reaches 0, the verdict is of the level score.
        No real change beside an interval that excludes 0: the interval is unadjusted and not
        the test; the note gives the test's unadjusted p-value and the family Holm adjusted it
        over.  An interval's end within 0.0005 of 0 reads as 0, as it is printed."""
        claim = self._claim(level)
        if claim == "mixed":
            return None  # the words name both directions
        shown = self._intervals(level)
        # as printed (three decimals): an end within _SHOWN of 0 reads as 0
        if claim == "none":
            off = [what for what, lo, hi in shown if hi <= -_SHOWN or lo >= _SHOWN]
            if not off:
                return None
            d = self.diff.levels[level]
            rose = d.mean_diff > 0
            p = d.p_rise if rose else d.p_drop
            tests = f"{self.family} level test" + ("s" if self.family != 1 else "")
            return (f"{_which(off, len(shown))} exclude{'s' if len(off) == 1 else ''} 0 but "
                    f"{'is' if len(off) == 1 else 'are'} unadjusted and not the test: "
                    f"p(no {'rise' if rose else 'drop'})={format_p(p)} unadjusted, Holm over "
                    f"{tests}")
        crossing = [what for what, lo, hi in shown
                    if (hi > -_SHOWN if claim == "drop" else lo < _SHOWN)]
        if not crossing:
            return None
        one = len(crossing) == 1
        head = f"{_which(crossing, len(shown))} reach{'es' if one else ''} 0"
        if crossing == ["pass rate"] and len(shown) > 1:
            return f"{head}: the verdict is of the level score"
        if self.test == "templates" and self.samples_cap is None and not self._on_passes:
            return f"{head}: two-sided at 95 %; the test is one-sided"
        return (f"{head}: {'it counts' if one else 'they count'} the differences between "
                "instructions as noise; the test holds this suite's instructions fixed and is "
                "one-sided")

    @property
    def _on_passes(self) -> bool:
        return any(d.on_passes for d in self.differences)

    def level_change(self, level: int) -> LevelChange:
        """``level`` as every view shows it and the report keeps it (module docstring): the
        change with its interval, the pass-rate change beside a level score, both p-values as
        tested and Holm-adjusted, the verdict's words and the note."""
        d = self.diff.levels[level]
        beside = d.passes if d.passes is not None and d.measure == "level score" else None
        detectable = self.detectable.get(level)
        return LevelChange(
            as_level(level), d.n, d.mean_diff, d.low, d.high, d.p_drop,
            level in self.regressed_levels,
            None if detectable is None or math.isinf(detectable) else detectable,
            measure=d.measure, paired_samples=self.samples_cap is not None,
            pass_change=None if beside is None else beside.change,
            pass_low=None if beside is None else beside.low,
            pass_high=None if beside is None else beside.high,
            p_drop_holm=self.adjusted.get(level), p_rise=d.p_rise,
            p_rise_holm=self.adjusted_rise.get(level), tests=self.family,
            improved=level in self.improved_levels, verdict=self.level_verdict(level),
            note=self.interval_note(level))

    def level_changes(self) -> tuple[LevelChange, ...]:
        """:meth:`level_change` of every compared level, in level order."""
        return tuple(self.level_change(lv) for lv in sorted(self.diff.levels))

    @property
    def unjudged_failures(self) -> tuple[ItemChange, ...]:
        """Newly failing items on levels without a real drop: the statistical gate lets them
        pass (noise for a stochastic model), so they are a note, not a failure."""
        return tuple(x for x in self.newly_failing if x.level not in self.regressed_levels)

    @property
    def underpowered(self) -> tuple[tuple[int, float], ...]:
        """``(level, detectable drop)`` of compared levels too small for the allowed
        regression: at 80 % power they detect only drops of more than twice
        ``max_regression`` (a drop of exactly ``max_regression`` is never flagged by the rule
        itself, so twice it is where "too small" starts), or none at all (``inf``)."""
        return tuple((lv, d) for lv, d in sorted(self.detectable.items())
                     if lv in self.diff.levels and d > WEAK_FACTOR * self.max_regression)

    def scope(self) -> str:
        """What was compared, in one line (without the baseline's name): the cells, each
        compared level with its paired instructions and the smallest drop it detects at 80 %
        power (saying so when that is too large for the allowed regression), what either side
        has that the other did not, and how the two cells differ (:func:`differences`: the
        change measured is also theirs)."""
        cells = (self.label if self.label == self.baseline_label
                 else f"{self.label} vs baseline cell {self.baseline_label}")
        weak = dict(self.underpowered)
        levels = ", ".join(f"L{lv} {d.n}" + self._power_note(lv, lv in weak)
                           for lv, d in sorted(self.diff.levels.items()))
        n = sum(d.n for d in self.diff.levels.values())
        text = f"{cells}: {n} instructions paired" + (f": {levels}" if levels else "")
        if self.not_compared:
            text += "; not compared: " + ", ".join(x.describe() for x in self.not_compared)
        # the suite is matched by its files' hashes (run.gates.match_baseline): its path is
        # only where it lay, not a difference of what was asked
        shown = [d.shown for d in self.differences if d.what != "suite"]
        if shown:
            text += "; the cells differ in " + ", ".join(shown)
        if self.samples_cap is not None:
            text += "; " + self.looks_line()
        return text

    def looks_line(self) -> str:
        """``--gi-samples=auto``: per level how many samples it took and why it stopped."""
        parts = []
        for lv, look in sorted(self.looks.items()):
            per = look.samples / look.instructions if look.instructions else 0.0
            looks = f"{look.looks} look" + ("s" if look.looks != 1 else "")
            parts.append(f"L{lv} {looks}, {look.samples} sample(s) ({per:.1f} per "
                         f"instruction), {look.state} ({look.reason})")
        return (f"--gi-samples=auto (at most {self.samples_cap} per instruction; each level's "
                "change is of pass rate on paired samples): " + "; ".join(parts))

    def _power_note(self, level: int, weak: bool) -> str:
        drop = self.detectable.get(level)
        if drop is None:
            return ""
        if math.isinf(drop):
            return " (too few instructions or templates for 80 % power at any drop)"
        shown = math.ceil(drop * 100 - 1e-9) / 100  # rounded up: never promise more
        drops = "pass-rate drops" if self._on_passes else "drops"
        if weak:
            return (f" (too small for --gi-max-regression={self.max_regression:g}: 80 % power "
                    f"only for {drops} ≥ {shown:.2f})")
        return f" (80 % power for {drops} ≥ {shown:.2f})"


_SHOWN = 5e-4
"""A mean change smaller than this reads as 0.000 where it is shown: no word of its own."""


def _which(names: Sequence[str], shown: int) -> str:
    """``the interval`` (one shown), ``the pass-rate interval`` (one of two), ``both
    intervals``."""
    if shown == 1:
        return "the interval"
    if len(names) == shown:
        return "both intervals"
    return f"the {names[0].replace(' ', '-')} interval"

WEAK_FACTOR = 2.0
"""A level whose detectable drop exceeds this multiple of the allowed regression is called
too small for it on the ``compared`` line."""


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


def omission_reason(level: int, run_filter: ItemFilter | None, *, whole_level: bool,
                    where: str = "this run") -> str:
    """Why a run (``where`` names it: ``this run``, ``the baseline``) has no score for the
    other side's items of ``level``, from that run's item filter."""
    if run_filter is not None:
        if run_filter.levels is not None and level not in run_filter.levels:
            return "left out by --gi-levels"
        if run_filter.shard is not None:
            return f"not in shard {run_filter.shard.index}/{run_filter.shard.count}"
        chosen = [f"-k {run_filter.keyword!r}" if run_filter.keyword else "",
                  f"-m {run_filter.markers!r}" if run_filter.markers else ""]
        if any(chosen):
            return "left out by " + " ".join(x for x in chosen if x)
        if run_filter.per_level is not None and not whole_level:
            return f"left out by --gi-per-level={run_filter.per_level}"
    return f"no score in {where} (errors or no result)"


DifferenceField = Literal["suite", "samples", "decoding", "model_version", "prompts"]
"""What of a cell's metadata two cells differ in (:class:`Difference`)."""


@dataclass(frozen=True)
class Difference:
    """How two cells differ in ``what``; ``shown`` is how people read it, e.g.
    ``samples per instruction (5 vs 1)`` (also ``str()`` of the record).  ``on_passes``: the
    cells ask different fixed sample counts and both keep every sample's verdict, so the gate
    judges them on pass counts (:mod:`~pytest_graphinstruct.score.regression.counts`, exact for
    any counts) instead of refusing."""

    what: DifferenceField
    shown: str
    on_passes: bool = False

    def __str__(self) -> str:
        return self.shown

    @property
    def incomparable(self) -> bool:
        """Whether it changes the score of the same answers so that a gate refuses to judge
        across it: other decoding, or other sample counts without every sample's verdict on
        both sides (or an adaptive baseline against a fixed run).  A new model version or prompt
        set is what a gate exists to judge; the suite is matched by its files' hashes
        elsewhere."""
        return self.what == "decoding" or (self.what == "samples" and not self.on_passes)


def differences(a: CellMetadata, b: CellMetadata) -> tuple[Difference, ...]:
    """``name (a vs b)`` for each of suite, samples per instruction, decoding, model version
    and prompt set that both cells record and that differ.  Decoding and the prompt set count
    as recorded only in a cell that names the tool that produced it (a run's cell): elsewhere —
    a release file, a hand-built cell — an empty decoding is unknown, not "the defaults", and
    no prompt set is unknown, not "the packaged templates"."""
    out = []
    if a.suite is not None and b.suite is not None and a.suite != b.suite:
        out.append(Difference("suite", f"suite ({a.suite} vs {b.suite})"))
    sa, sb = a.samples_per_instruction, b.samples_per_instruction
    if sa is not None and sb is not None and sa != sb:
        out.append(Difference("samples", f"samples per instruction ({sa} vs {sb})"))
    elif a.samples_cap is not None and b.samples_cap is None:
        # a fixed-count run against an adaptive baseline (whose items' samples vary); the
        # other way round is what --gi-samples=auto is for
        out.append(Difference("samples", f"samples per instruction (auto:{a.samples_cap} vs "
                                         f"{sb or 'fixed'})"))
    if a.tool is not None and b.tool is not None and dict(a.decoding) != dict(b.decoding):
        out.append(Difference("decoding", f"decoding ({_decoding(a.decoding)} vs "
                                          f"{_decoding(b.decoding)})"))
    va, vb = a.model_version, b.model_version
    if va is not None and vb is not None and va != vb:
        out.append(Difference("model_version", f"model version ({va} vs {vb})"))
    if a.tool is not None and b.tool is not None and a.prompts != b.prompts:
        out.append(Difference("prompts", f"prompt set ({describe_prompts(a.prompts)} vs "
                                         f"{describe_prompts(b.prompts)})"))
    return tuple(out)


def incomparable(found: Sequence[Difference]) -> tuple[Difference, ...]:
    """The :func:`differences` that make two cells' scores incomparable
    (:attr:`Difference.incomparable`)."""
    return tuple(x for x in found if x.incomparable)


def _decoding(d: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(d.items())) or "defaults"


def pass_counts(cell: CellReport) -> dict[str, PassCount]:
    """Each scored instruction's passing samples of its samples, where the cell keeps every
    sample's verdict (empty for a release file, which keeps none)."""
    return {r.instruction_id: PassCount(r.passing or 0, len(r.samples))
            for r in cell.per_instruction if r.scored and r.samples}


def _fixed_counts_differ(base: CellReport, cell: CellReport) -> bool:
    """Both cells asked a fixed number of samples per instruction, and not the same."""
    a, b = base.metadata, cell.metadata
    return (a.samples_cap is None and b.samples_cap is None
            and a.samples_per_instruction is not None and b.samples_per_instruction is not None
            and a.samples_per_instruction != b.samples_per_instruction)


def baseline_items(cell: CellReport, derived: Mapping[str, str] | None = None, *,
                   only: Collection[str] | None = None) -> list[ItemScore]:
    """A cell's scored instructions as the power model reads them (level, cluster, level
    score, share of samples passed); an instruction without a recorded cluster takes the one
    ``derived`` gives it (instruction id → cluster), else is its own.  ``only``: just these
    instruction ids (those a comparison paired)."""
    derived = derived or {}
    return [ItemScore(r.level, r.cluster or derived.get(r.instruction_id)
                      or f"instruction:{r.instruction_id}", float(r.level_score), r.pass_share)
            for r in cell.per_instruction if r.scored and r.level_score is not None
            and (only is None or r.instruction_id in only)]


def baseline_samples(cell: CellReport) -> int:
    """The samples per instruction a cell ran: its metadata's, else the most common count of
    its scored items' samples (1 when nothing says)."""
    if cell.metadata.samples_per_instruction:
        return int(cell.metadata.samples_per_instruction)
    counts = Counter(len(r.samples) for r in cell.per_instruction
                     if r.scored and r.level_score is not None and r.samples)
    return counts.most_common(1)[0][0] if counts else 1


def _clusters(*cells: CellReport) -> dict[str, str]:
    """Instruction id → its cluster (template), from whichever cell records one."""
    out: dict[str, str] = {}
    for cell in cells:
        for r in cell.per_instruction:
            if r.cluster is not None:
                out.setdefault(r.instruction_id, r.cluster)
    return out


def _changes(cell: CellReport, base: CellReport) -> tuple[tuple[ItemChange, ...], ...]:
    before = {r.instruction_id: r.outcome for r in base.per_instruction}
    failing, passing, errors = [], [], []
    for r in cell.per_instruction:
        was = before.get(r.instruction_id)
        if was == "passed" and r.outcome == "failed":
            failing.append(ItemChange(r.instruction_id, r.level, was, r.outcome,
                                      first_violation(r)))
        elif was in ("failed", "error") and r.outcome == "passed":
            passing.append(ItemChange(r.instruction_id, r.level, was, r.outcome))
        elif was in ("passed", "failed") and r.outcome == "error":
            errors.append(ItemChange(r.instruction_id, r.level, was, r.outcome,
                                     f"error: {r.error}" if r.error else None))
    return tuple(failing), tuple(passing), tuple(errors)


def _not_compared(mine: Mapping[str, tuple[Level, float]],
                  base: Mapping[str, tuple[Level, float]],
                  run_filter: ItemFilter | None, *,
                  where: str = "this run") -> tuple[LevelOmission, ...]:
    """The baseline's scored instructions (``base``) the run has no score for (``mine``);
    ``where`` names the run in the reason (the baseline's side swaps the two)."""
    theirs: dict[Level, list[str]] = {}
    for iid, (lv, _) in base.items():
        theirs.setdefault(lv, []).append(iid)
    out = []
    for lv, ids in sorted(theirs.items()):
        lacking = sum(1 for i in ids if i not in mine)
        if lacking:
            whole = lacking == len(ids)
            out.append(LevelOmission(lv, lacking, len(ids), omission_reason(
                lv, run_filter, whole_level=whole, where=where)))
    return tuple(out)


def _not_in_baseline(mine: Mapping[str, tuple[Level, float]],
                     base: Mapping[str, tuple[Level, float]],
                     baseline_filter: ItemFilter | None) -> tuple[LevelOmission, ...]:
    """The run's scored instructions (``mine``) the baseline has no score for (``base``), per
    level, with the reason the baseline's own item filter gives (``missing_from="baseline"``)."""
    return tuple(replace(x, missing_from="baseline")
                 for x in _not_compared(base, mine, baseline_filter, where="the baseline"))


def compare_cells(pairs: Sequence[tuple[CellReport, CellReport]], *, max_regression: float,
                  run_filter: ItemFilter | None = None, alpha: float = FAMILY_ALPHA,
                  power: bool = False, test: GateTest = "suite",
                  baseline_filter: ItemFilter | None = None) -> tuple[CellComparison, ...]:
    """Each ``(cell, baseline cell)`` pair compared, in order; which levels regressed is
    decided over every level of every pair together (one family: Holm at ``alpha``, and a
    mean drop larger than ``max_regression``).  ``run_filter`` is the run's item filter (the
    reason a level is not compared), ``baseline_filter`` the baseline's (the reason the
    baseline lacks what the run scored: both sides are in ``not_compared``); with ``power``,
    each comparison also holds the smallest drop each of its levels detects at 80 % power,
    predicted from the baseline cell's items that were paired, with the Holm share of this
    family (what a gated run prints).  ``test`` is the gate's test
    (:data:`~pytest_graphinstruct.vocab.GateTest`): ``suite``, the paired sign-flip test on
    the fixed suite (:mod:`~pytest_graphinstruct.score.regression.paired`), or ``templates``, the
    template-clustered test
    (:func:`~pytest_graphinstruct.score.regression.bootstrap.paired_bootstrap`).

    Raises:
        ValueError: ``max_regression`` is negative, or an instruction has different levels in
            a cell and its baseline cell.
    """
    if max_regression < 0:
        raise ValueError(f"the allowed regression must be >= 0, got {max_regression:g}")
    scores = [(cell.scored_level_scores(), base.scored_level_scores()) for cell, base in pairs]
    tests = max(1, sum(len({mine[i][0] for i in set(mine) & set(theirs)})
                       for mine, theirs in scores))
    looks = _replayed(pairs, alpha)
    passes = [(pass_counts(base), pass_counts(cell)) for cell, base in pairs]
    # other fixed sample counts: judged on pass counts where both cells keep every verdict
    on_passes = [_fixed_counts_differ(base, cell) and _cover(theirs, mine, *passes[k])
                 for k, ((cell, base), (mine, theirs)) in enumerate(zip(pairs, scores,
                                                                        strict=True))]
    # an adaptive cell is judged by its replayed looks; the others by the gate's test
    diffs = [looks[k][0] if k in looks
             else suite_paired(theirs, mine, tests=tests, alpha=alpha,
                               baseline_passes=passes[k][0], candidate_passes=passes[k][1],
                               scores_comparable=not on_passes[k])
             if test == "suite" or on_passes[k]
             else paired_bootstrap(theirs, mine, clusters=_clusters(cell, base))
             for k, ((cell, base), (mine, theirs)) in enumerate(zip(pairs, scores, strict=True))]
    family = {(k, lv): d for k, diff in enumerate(diffs) for lv, d in diff.levels.items()}
    down = regressions(family, delta=max_regression, alpha=alpha)
    up = improvements(family, delta=max_regression, alpha=alpha)
    adjusted = holm_adjusted({key: d.p_drop for key, d in family.items()})
    adjusted_rise = holm_adjusted({key: d.p_rise for key, d in family.items()})
    out = []
    for k, ((cell, base), diff) in enumerate(zip(pairs, diffs, strict=True)):
        mine, theirs = scores[k]
        failing, passing, errors = _changes(cell, base)
        # an adaptive cell gets no figure (its looks decide how many samples it asks); one
        # judged on pass counts against another count gets its figure in pass rate
        paired = baseline_items(base, only=mine.keys()) if power and k not in looks else []
        drops = ({} if not paired else
                 detectable_pass_drops(paired, baseline_samples=baseline_samples(base),
                                       samples=baseline_samples(cell), delta=max_regression,
                                       alpha=alpha, tests=len(family) or 1)
                 if on_passes[k] else
                 detectable_drops(paired, samples=baseline_samples(base),
                                  delta=max_regression, alpha=alpha, tests=len(family) or 1,
                                  test=test))
        out.append(CellComparison(
            label=cell.label, baseline_label=base.label, diff=diff,
            max_regression=max_regression,
            regressed_levels=tuple(lv for lv in sorted(diff.levels) if (k, lv) in down),
            improved_levels=tuple(lv for lv in sorted(diff.levels) if (k, lv) in up),
            newly_failing=failing, newly_passing=passing, now_errors=errors,
            not_compared=(*_not_compared(mine, theirs, run_filter),
                          *_not_in_baseline(mine, theirs, baseline_filter)),
            detectable=drops,
            differences=_judged(differences(base.metadata, cell.metadata), on_passes[k]),
            test=test, adjusted={lv: p for (j, lv), p in adjusted.items() if j == k},
            adjusted_rise={lv: p for (j, lv), p in adjusted_rise.items() if j == k},
            family=len(family), alpha=alpha,
            looks=looks[k][1].levels if k in looks else {},
            samples_cap=cell.metadata.samples_cap,
            looks_open=len(looks[k][1].asks) if k in looks else 0))
    return tuple(out)


def _cover(base_scores: Mapping[str, tuple[Level, float]],
           run_scores: Mapping[str, tuple[Level, float]],
           base_passes: Mapping[str, PassCount], run_passes: Mapping[str, PassCount]) -> bool:
    """Whether every instruction scored in both cells has its pass counts on both sides."""
    both = set(base_scores) & set(run_scores)
    return bool(both) and all(i in base_passes and i in run_passes for i in both)


def _judged(found: tuple[Difference, ...], on_passes: bool) -> tuple[Difference, ...]:
    """``found``, its sample-count difference marked as judged on pass counts when it is."""
    if not on_passes:
        return found
    return tuple(replace(d, shown=f"{d.shown}: judged on pass counts", on_passes=True)
                 if d.what == "samples" else d for d in found)


def _replayed(pairs: Sequence[tuple[CellReport, CellReport]], alpha: float
              ) -> dict[int, tuple[PairedResult, SequentialResult]]:
    """For each pair whose run cell ran ``--gi-samples=auto`` (by index): the looks replayed
    from both cells' per-sample outcomes with the run's design (:func:`.adaptive.design`:
    the same family the run's looks used), as the gate judges them."""
    auto = [k for k, (cell, _) in enumerate(pairs) if cell.metadata.samples_cap is not None]
    if not auto:
        return {}
    bases = {cell.label: sample_outcomes(base) for cell, base in pairs}
    runs = {cell.label: {r.instruction_id: int(r.level) for r in cell.per_instruction}
            for cell, _ in pairs}
    out = {}
    for k in auto:
        cell = pairs[k][0]
        cap = cell.metadata.samples_cap
        assert cap is not None
        out[k] = sequential_paired(bases[cell.label], sample_outcomes(cell),
                                   design(cap, runs, bases, alpha))
    return out

