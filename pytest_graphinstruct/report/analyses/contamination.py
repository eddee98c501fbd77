"""The contamination probe: one model's scores on the committed suite against a fresh seed.

The committed suite (seed 0) is public and may have been trained on; a suite built with another
seed holds new instructions from the same templates.  A model that scores higher on the public
instructions than on fresh instructions of the same templates may have seen them.

* **Unit: the template.**  Each item's template comes from the suite its report ran on (the
  record's ``template`` field).  Per ``(level, template)`` and per report the *template score* is
  the mean level score of its scored items (items with an error or no level score are left
  out).  A template scored in both reports is *paired*; the others are listed as unpaired.
* **Gap:** ``seed0 − fresh``, the mean over paired templates of the difference of their two
  template scores (every template weighs the same; per level over that level's templates,
  overall over all of them).  Its interval is the paired bootstrap of
  :func:`~pytest_graphinstruct.score.regression.bootstrap.paired_diff`: templates are resampled with
  replacement, the same draw for both suites.  With fewer than :data:`MIN_TEMPLATES` paired
  templates no interval is computed (absent, shown as ``—``).
* **Real gap:** the interval excludes 0 *and* ``|gap|`` exceeds the threshold, by default the
  paper's ±0.005 practical-stability band (:data:`NOISE_FLOOR`): below it the paper calls any
  effect noise, however narrow its interval.  A real gap with the committed suite higher is a
  sign of contamination; a real gap the other way says the two seeds differ in difficulty.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.registry import AnalysisOutput, AnalysisRequest
from pytest_graphinstruct.report.pick import pick_cell
from pytest_graphinstruct.report.untrusted import escape
from pytest_graphinstruct.run.gate.comparison import differences
from pytest_graphinstruct.run.records.results import CellReport, RunReport
from pytest_graphinstruct.score.regression.bootstrap import (
    CONFIDENCE,
    DEFAULT_B,
    DEFAULT_SEED,
    PairedDiff,
    paired_diff,
)
from pytest_graphinstruct.suite.loader import Suite, load_suite

NOISE_FLOOR = 0.005
"""The paper's practical-stability band (§5 and §5.4: effects within ±0.005 are noise)."""

MIN_TEMPLATES = 2
"""Paired templates needed for a bootstrap interval (one template has no spread to resample)."""

TOP_GAPS = 10
"""How many templates the report lists under "largest gaps"."""

REAL = "real gap"
REAL_REVERSED = "real gap the other way"
NO_GAP = "no real gap"
UNDECIDED = "undecided"


@dataclass(frozen=True)
class TemplateGap:
    """One template scored in both reports: item counts and template scores per suite."""

    level: int
    template: str
    items_seed0: int
    items_fresh: int
    score_seed0: float
    score_fresh: float

    @property
    def gap(self) -> float:
        """``seed0 − fresh``."""
        return self.score_seed0 - self.score_fresh

    @property
    def name(self) -> str:
        return f"L{self.level} {self.template}"


@dataclass(frozen=True)
class LevelGap:
    """One level (``level`` ``None``: all levels): its paired templates' mean scores and the
    bootstrap of their mean gap (``interval`` ``None`` with fewer than :data:`MIN_TEMPLATES`)."""

    level: int | None
    templates: int
    items_seed0: int
    items_fresh: int
    score_seed0: float
    score_fresh: float
    interval: PairedDiff | None

    @property
    def gap(self) -> float:
        return self.score_seed0 - self.score_fresh


@dataclass(frozen=True)
class Contamination:
    """The probe's result: per template, per level and overall (module docstring)."""

    cell_seed0: str
    cell_fresh: str
    templates: tuple[TemplateGap, ...]
    levels: tuple[LevelGap, ...]
    overall: LevelGap
    unpaired_seed0: tuple[str, ...]
    unpaired_fresh: tuple[str, ...]
    threshold: float
    b: int
    seed: int
    confidence: float

    def is_real(self, interval: PairedDiff | None) -> bool:
        """Whether ``interval`` excludes 0 and its mean gap exceeds :attr:`threshold`."""
        return (interval is not None and (interval.low > 0 or interval.high < 0)
                and abs(interval.mean_diff) > self.threshold)

    @property
    def verdict(self) -> str:
        """``real gap`` (committed suite higher), ``real gap the other way``, ``no real gap``,
        or ``undecided`` (too few paired templates for an interval)."""
        if self.overall.interval is None:
            return UNDECIDED
        if not self.is_real(self.overall.interval):
            return NO_GAP
        return REAL if self.overall.gap > 0 else REAL_REVERSED

    @property
    def real_levels(self) -> tuple[int, ...]:
        """Levels whose own gap is real (reported beside the overall verdict)."""
        return tuple(row.level for row in self.levels
                     if row.level is not None and self.is_real(row.interval))

    def largest(self, k: int = TOP_GAPS) -> tuple[TemplateGap, ...]:
        """The ``k`` paired templates with the largest ``|gap|`` (ties: level, name)."""
        return tuple(sorted(self.templates, key=lambda t: (-abs(t.gap), t.level, t.template))[:k])

    def verdict_line(self) -> str:
        """One line: the verdict, the overall gap with its interval, and the rule that decided."""
        pct = f"{round(100 * self.confidence)}%"
        band = f"±{self.threshold:g}"
        if self.overall.interval is None:
            return (f"verdict: {UNDECIDED} — {self.overall.templates} template(s) scored in "
                    f"both reports; the bootstrap by template needs at least {MIN_TEMPLATES}")
        d = self.overall.interval
        shown = f"seed0 − fresh = {d.mean_diff:+.4f}, {pct} CI [{d.low:+.4f}, {d.high:+.4f}]"
        levels = (f"; levels with a real gap of their own: "
                  f"{', '.join(f'L{lv}' for lv in self.real_levels)}" if self.real_levels
                  else "")
        verdict = self.verdict
        if verdict == REAL:
            return (f"verdict: {REAL} — the model scores higher on the committed suite ({shown}: "
                    f"the CI excludes 0 and the gap exceeds the {band} noise floor); a sign of "
                    f"contamination{levels}")
        if verdict == REAL_REVERSED:
            return (f"verdict: {REAL_REVERSED} — the model scores lower on the committed suite "
                    f"({shown}: the CI excludes 0 and the gap exceeds the {band} noise floor); "
                    f"not a sign of contamination: the seeds differ in difficulty{levels}")
        why = ("the CI includes 0" if d.low <= 0 <= d.high
               else f"the gap is within the {band} noise floor")
        return f"verdict: {NO_GAP} ({shown}: {why}){levels}"

    def lines(self, seed0: str = "", fresh: str = "") -> list[str]:
        """The report: header, per-level table, largest gaps, unpaired templates, verdict.

        ``seed0`` / ``fresh`` describe the two sides (report file and suite) for the header.
        """
        from tabulate import tabulate

        pct = round(100 * self.confidence)
        out = [f"contamination probe: seed0 − fresh, paired bootstrap by template "
               f"({self.b} resamples, {pct}% CI, seed {self.seed})",
               f"  committed: cell {self.cell_seed0}" + (f" — {seed0}" if seed0 else ""),
               f"  fresh:     cell {self.cell_fresh}" + (f" — {fresh}" if fresh else "")]
        rows = [self._row(f"L{r.level}", r) for r in self.levels]
        rows.append(self._row("all", self.overall))
        out += ["", *tabulate(rows, headers=["level", "templates", "items seed0/fresh", "seed0",
                                             "fresh", "gap", f"{pct}% CI", "real"],
                              disable_numparse=True).splitlines()]
        top = self.largest()
        if top:
            out += ["", f"largest template gaps ({len(top)} of {len(self.templates)}):"]
            out += ["  " + line for line in tabulate(
                [[escape(t.name), f"{t.items_seed0}/{t.items_fresh}", f"{t.score_seed0:.4f}",
                  f"{t.score_fresh:.4f}", f"{t.gap:+.4f}"] for t in top],
                headers=["template", "items", "seed0", "fresh", "gap"],
                disable_numparse=True).splitlines()]
        for side, names in (("committed", self.unpaired_seed0), ("fresh", self.unpaired_fresh)):
            if names:
                out.append(f"scored in the {side} report only, left out ({len(names)}): "
                           + ", ".join(escape(n) for n in names))
        out += ["", self.verdict_line()]
        return out

    def _row(self, name: str, r: LevelGap) -> list[str]:
        d = r.interval
        ci = "—" if d is None else f"[{d.low:+.4f}, {d.high:+.4f}]"
        real = "—" if d is None else ("yes" if self.is_real(d) else "no")
        return [name, str(r.templates), f"{r.items_seed0}/{r.items_fresh}",
                f"{r.score_seed0:.4f}", f"{r.score_fresh:.4f}", f"{r.gap:+.4f}", ci, real]


def template_scores(cell: CellReport, suite: Suite, *, name: str = "") -> dict[
        tuple[int, str], list[float]]:
    """``{(level, template): [level scores]}`` of ``cell``'s scored items, templates from
    ``suite``.

    Raises:
        GraphInstructError: an item's instruction is not in the suite, sits on another level
            there, or has no ``template`` field (one line naming the item and the suite).
    """
    where = f"{name}: " if name else ""
    out: dict[tuple[int, str], list[float]] = {}
    for item in cell.per_instruction:
        inst = suite.get(item.instruction_id)
        if inst is None:
            raise GraphInstructError(
                f"{where}item {escape(item.instruction_id)} of cell {escape(cell.label)} is not "
                f"in the suite {suite.root}: the report ran on another suite (pass --suite-* "
                "with the suite it ran on)")
        if inst.level != item.level:
            raise GraphInstructError(
                f"{where}item {inst.id} is on level {item.level} in the report but on level "
                f"{inst.level} in the suite {suite.root}: the report ran on another suite")
        if inst.template is None:
            raise GraphInstructError(
                f"suite {suite.root}: instruction {inst.id} has no 'template' field (the probe "
                "pairs templates; suites made by build-suite name them)")
        if item.scored and item.level_score is not None:
            out.setdefault((item.level, inst.template), []).append(float(item.level_score))
    return out


def probe(seed0: CellReport, fresh: CellReport, suite_seed0: Suite, suite_fresh: Suite, *,
          b: int = DEFAULT_B, seed: int = DEFAULT_SEED, threshold: float = NOISE_FLOOR,
          names: tuple[str, str] = ("", "")) -> Contamination:
    """Compare ``seed0`` (run on the committed suite) with ``fresh`` (run on a fresh seed) by
    template (module docstring).  ``names`` name the two reports in error messages.

    Raises:
        GraphInstructError: ``b < 1``, a negative threshold, an item not in its suite
            (:func:`template_scores`), or no template scored in both reports.
    """
    if b < 1:
        raise GraphInstructError(f"--resamples must be at least 1, got {b}")
    if threshold < 0:
        raise GraphInstructError(f"--threshold must be >= 0, got {threshold:g}")
    s0 = template_scores(seed0, suite_seed0, name=names[0])
    sf = template_scores(fresh, suite_fresh, name=names[1])
    paired = sorted(set(s0) & set(sf))
    if not paired:
        raise GraphInstructError(
            f"no template scored in both reports ({len(s0)} in the committed one, {len(sf)} in "
            "the fresh one): nothing to compare")
    templates = tuple(TemplateGap(lv, t, len(s0[lv, t]), len(sf[lv, t]), _mean(s0[lv, t]),
                                  _mean(sf[lv, t])) for lv, t in paired)
    levels = tuple(_level(lv, [t for t in templates if t.level == lv], b, seed)
                   for lv in sorted({t.level for t in templates}))
    return Contamination(
        cell_seed0=seed0.label, cell_fresh=fresh.label, templates=templates, levels=levels,
        overall=_level(None, list(templates), b, seed),
        unpaired_seed0=_names(set(s0) - set(sf)), unpaired_fresh=_names(set(sf) - set(s0)),
        threshold=threshold, b=b, seed=seed, confidence=CONFIDENCE)


def _level(level: int | None, rows: Sequence[TemplateGap], b: int, seed: int) -> LevelGap:
    fresh = [t.score_fresh for t in rows]
    committed = [t.score_seed0 for t in rows]
    # paired_diff gives mean(candidate − baseline): the committed suite is the candidate
    interval = (paired_diff(fresh, committed, b=b, seed=seed) if len(rows) >= MIN_TEMPLATES
                else None)
    return LevelGap(level, len(rows), sum(t.items_seed0 for t in rows),
                    sum(t.items_fresh for t in rows), _mean(committed), _mean(fresh), interval)


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def _names(keys: Iterable[tuple[int, str]]) -> tuple[str, ...]:
    return tuple(f"L{lv} {t}" for lv, t in sorted(keys))


# -- files: the command's inputs ----------------------------------------------------------------

@dataclass(frozen=True)
class ProbeCell:
    """One side of the probe as read from disk: report file, chosen cell, its suite."""

    report: str
    cell: CellReport
    suite: Suite
    suite_seed: int | None

    def describe(self) -> str:
        seed = "" if self.suite_seed is None else f" (seed {self.suite_seed})"
        return f"{self.report}, suite {self.suite.root}{seed}"


def open_probe_cell(report: RunReport, path: str, label: str | None, suite: str | None,
                    option: str) -> ProbeCell:
    """Pick the cell and load its suite: ``suite`` when given, else the cell's recorded one
    (``CellMetadata.suite``), restricted to the levels of the cell's items.

    Raises:
        GraphInstructError: as :func:`pick_cell`; the cell records no suite and ``suite`` is
            not given; the suite does not exist or does not load (``option`` names the flag).
    """
    cell = pick_cell(report, path, label)
    root = suite if suite is not None else cell.metadata.suite
    if root is None:
        raise GraphInstructError(f"{path}: cell {escape(cell.label)} records no suite; pass "
                                 f"{option}=DIR (the suite it ran on)")
    where = Path(root).expanduser()
    if not where.exists():
        given = "" if suite is not None else f" (recorded in {path})"
        raise GraphInstructError(f"suite not found: {root}{given}; pass {option}=DIR")
    levels = sorted({r.level for r in cell.per_instruction})
    return ProbeCell(path, cell, load_suite(where, levels if where.is_dir() and levels else None),
                _manifest_seed(where))


def _manifest_seed(root: Path) -> int | None:
    """The ``seed`` of the suite's ``manifest.json`` (build-suite writes one), if readable."""
    manifest = (root if root.is_dir() else root.parent) / "manifest.json"
    try:
        seed = json.loads(manifest.read_text(encoding="utf-8")).get("seed")
    except (OSError, ValueError, AttributeError):
        return None
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


def side_warnings(seed0: ProbeCell, fresh: ProbeCell) -> list[str]:
    """What may make the gap mean something else: the same suite on both sides, two different
    cells, or sampling/decoding that differ (as ``compare`` checks them)."""
    out = []
    same_root = Path(seed0.suite.root).resolve() == Path(fresh.suite.root).resolve()
    if same_root or (seed0.suite_seed is not None and seed0.suite_seed == fresh.suite_seed):
        out.append(f"both reports ran on the same suite ({seed0.suite.root}"
                   + ("" if same_root else f" and {fresh.suite.root}, both seed "
                      f"{seed0.suite_seed}") + "): the gap measures run-to-run noise, not "
                   "contamination")
    if seed0.cell.label != fresh.cell.label:
        out.append(f"the cells differ ({escape(seed0.cell.label)} vs {escape(fresh.cell.label)}):"
                   " the probe compares one model with itself")
    diff = differences(replace(seed0.cell.metadata, suite=None),
                       replace(fresh.cell.metadata, suite=None))
    if diff:
        out.append(f"the two cells differ in {', '.join(map(str, diff))}: the gap may come "
                   "from that")
    dims = dimension_mismatch(seed0.cell, fresh.cell) + pool_mismatch(seed0.cell, fresh.cell)
    if dims:
        out.append(f"the two runs were scored differently ({'; '.join(dims)}): did both use "
                   "the same pools (--gi-pools, default references/pools under the pytest "
                   "rootdir)? The gap may come from that")
    for side in (seed0, fresh):
        if side.cell.metadata.partial:
            out.append(f"{side.report}: cell {escape(side.cell.label)} is partial; only its "
                       "scored items count")
    return out



def dimension_mismatch(seed0: CellReport, fresh: CellReport) -> list[str]:
    """``L<l>: <dims> only in the committed|fresh run`` for each level both cells scored where
    one computed a dimension (D1–D5, on any item) that the other never did — the mark of a run
    without the pools the other had."""
    a, b = _dimensions(seed0), _dimensions(fresh)
    out = []
    for lv in sorted(set(a) & set(b)):
        for side, only in (("committed", a[lv] - b[lv]), ("fresh", b[lv] - a[lv])):
            if only:
                out.append(f"L{lv}: {', '.join(sorted(only))} only in the {side} run")
    return out


def _dimensions(cell: CellReport) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for item in cell.per_instruction:
        if item.scored:
            present = {d for d, v in item.dimension_scores.items() if v is not None}
            out.setdefault(item.level, set()).update(present)
    return out


def pool_mismatch(seed0: CellReport, fresh: CellReport) -> list[str]:
    """``L<l>: pool references only in the committed|fresh run`` for each level both cells
    scored where one run's items list pool graphs as yardsticks (``details.pool_references``,
    set whenever the run had pools and an L3/L4 instruction matched) and the other's never do."""
    a, b = _pooled(seed0), _pooled(fresh)
    out = []
    for lv in sorted(set(a) & set(b)):
        if a[lv] != b[lv]:
            out.append(f"L{lv}: pool references only in the {'committed' if a[lv] else 'fresh'}"
                       " run")
    return out


def _pooled(cell: CellReport) -> dict[int, bool]:
    out: dict[int, bool] = {}
    for item in cell.per_instruction:
        if item.scored:
            out[item.level] = out.get(item.level, False) or bool(
                item.details.pool_references)
    return out


def analyze(request: AnalysisRequest) -> AnalysisOutput:
    """The ``contamination`` command: the probe of the two reports (committed suite first),
    each side's suite from ``--suite-seed0``/``--suite-fresh`` or its cell; the report's lines
    and :func:`side_warnings`.

    Raises:
        GraphInstructError: as :func:`open_probe_cell` and :func:`probe`; a report that cannot
            be read.
    """
    from pytest_graphinstruct.run.records.reader import read_report

    o = request.options
    path_seed0, path_fresh = request.reports
    seed0 = open_probe_cell(read_report(path_seed0), path_seed0, o.cell, o.suites[0],
                            "--suite-seed0")
    fresh = open_probe_cell(read_report(path_fresh), path_fresh, o.cell, o.suites[1],
                            "--suite-fresh")
    result = probe(seed0.cell, fresh.cell, seed0.suite, fresh.suite,
                   b=DEFAULT_B if o.resamples is None else o.resamples,
                   seed=DEFAULT_SEED if o.seed is None else o.seed,
                   threshold=NOISE_FLOOR if o.threshold is None else o.threshold,
                   names=(path_seed0, path_fresh))
    return AnalysisOutput("\n".join(result.lines(seed0.describe(), fresh.describe())) + "\n",
                          tuple(side_warnings(seed0, fresh)))
