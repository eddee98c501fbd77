"""Which baseline a run is compared with, decided before the run: the gate's options
(:class:`GateOptions`) and the baseline read and matched (:class:`BaselinePlan`,
:func:`plan_baseline`).

Its own module so that a run without ``--gi-baseline`` — and every xdist controller before
it starts its workers — plans its (empty) baseline without loading the comparison and the
regression tests behind the verdict (:mod:`.verdict`, which import NumPy); :mod:`.gates` is
imported here only when a baseline file is read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.options import DEFAULT_MAX_REGRESSION
from pytest_graphinstruct.vocab import GateTest, Level

if TYPE_CHECKING:
    from pytest_graphinstruct.run.config import RunConfig
    from pytest_graphinstruct.run.records.results import CellReport, RunReport


@dataclass(frozen=True)
class GateOptions:
    """The options that decide a verdict (``--gi-baseline``, ``--gi-update-baseline``,
    ``--gi-baseline-cell``, ``--gi-max-regression``, ``--gi-fail-under``,
    ``gi_max_error_rate``, ``--gi-violations=fail``, ``--gi-min-pass-all``,
    ``--gi-replace-baseline``, ``gi_gate_test``)."""

    baseline: Path | None = None
    update_baseline: bool = False
    baseline_cell: str | None = None
    max_regression: float = DEFAULT_MAX_REGRESSION
    fail_under: float | None = None
    max_error_rate: float = 0.05
    strict: bool = False
    min_pass_all: float | None = None
    replace_baseline: bool = False  #: an update even from a run narrower than the baseline
    test: GateTest = "suite"

    @classmethod
    def of(cls, config: RunConfig) -> GateOptions:
        """A run's gate options."""
        return cls(config.baseline, config.update_baseline, config.baseline_cell,
                   DEFAULT_MAX_REGRESSION if config.max_regression is None
                   else config.max_regression, config.fail_under, config.max_error_rate,
                   config.strict, config.min_pass_all, config.replace_baseline,
                   config.gate_test)


@dataclass(frozen=True)
class BaselinePlan:
    """What a run is compared with.  ``cells`` maps a run cell to its baseline cell (the
    cells gated — or, on an update, the cells whose change is shown); ``missing``: the
    baseline file does not exist (this run writes it when trusted, and fails); ``update``:
    ``--gi-update-baseline``; ``note``: what the plan had to say (an unreadable old baseline
    that an update replaces)."""

    path: Path | None = None
    report: RunReport | None = None
    cells: Mapping[str, CellReport] = field(default_factory=dict)
    missing: bool = False
    update: bool = False
    note: str | None = None

    @property
    def gated(self) -> bool:
        """Whether the run is gated against a baseline (not when updating one)."""
        return self.report is not None and not self.update

    @property
    def writes(self) -> bool:
        """Whether this run is to write the baseline file (an update, or a missing file)."""
        return self.path is not None and (self.update or self.missing)

    def expected_failures(self) -> set[tuple[str, str]]:
        """``(cell, instruction id)`` that failed in the baseline (none unless gated)."""
        if not self.gated:
            return set()
        from pytest_graphinstruct.run.gate.gates import baseline_failures

        return baseline_failures(self.cells)


SuiteHashFor = Callable[[Sequence[int] | None], str | None]
"""The run's suite hash over given levels (``None``: all), for baselines that recorded only
a whole-run ``suite_hash``."""


def plan_baseline(options: GateOptions, labels: Sequence[str], *,
                  level_hashes: Mapping[Level, str] | None = None,
                  suite_hash_for: SuiteHashFor | None = None) -> BaselinePlan:
    """Read and match the baseline for a run of the cells ``labels`` (``level_hashes``: its
    suite files, checked against the baseline's when known; ``suite_hash_for``: how to hash
    the run's suite over an older baseline's levels).

    Raises:
        GraphInstructError: a gated run's baseline cannot serve: unreadable, partial, of
            another suite, without a cell of the run (unless ``baseline_cell``).
    """
    path = options.baseline
    if path is None:
        return BaselinePlan()
    if not path.exists():
        return BaselinePlan(path, missing=True, update=options.update_baseline)
    from pytest_graphinstruct.run.gate.gates import (
        match_baseline,
        read_baseline,
        serving_baseline,
    )

    if not options.update_baseline:
        report = read_baseline(path)
        cells = match_baseline(labels, report, name=str(path),
                               baseline_cell=options.baseline_cell, level_hashes=level_hashes,
                               suite_hash=_older_hash(report, suite_hash_for))
        return BaselinePlan(path, report, cells)
    old = _replaced_report(path)
    try:  # an update: the old baseline only shows what changes; it need not serve as one
        serving_baseline(old, path)
    except GraphInstructError as exc:  # partial, empty or damaged: the narrowing guard holds
        return BaselinePlan(path, old, update=True, note=f"the old baseline is not shown "
                            f"against this run: {exc}")
    try:
        cells = match_baseline(labels, old, name=str(path), baseline_cell=options.baseline_cell,
                               level_hashes=level_hashes,
                               suite_hash=_older_hash(old, suite_hash_for))
    except GraphInstructError as exc:
        return BaselinePlan(path, old, update=True,
                            note=f"the old baseline is not compared with this run: {exc}")
    return BaselinePlan(path, old, cells, update=True)


def _replaced_report(path: Path) -> RunReport:
    """The report an update of the baseline at ``path`` would replace: any report this plugin
    reads (:func:`~.records.reader.read_report`: ours, older shapes, the release's), complete
    or not — never another file (a TOML or other JSON file, a truncated report, a Git LFS
    pointer, merge-conflict markers), which the update would destroy, and without which the
    narrowing guard (:func:`~.gates.narrowing`) could not see what the update loses.

    Raises:
        GraphInstructError: the file is not such a report (one line, the path escaped).
    """
    from pytest_graphinstruct.escaping import escape
    from pytest_graphinstruct.run.records.reader import read_report
    from pytest_graphinstruct.run.records.results import ReportError

    try:
        return read_report(path)
    except ReportError as exc:
        raise GraphInstructError(escape(
            f"--gi-update-baseline: refusing to overwrite {exc}; it replaces only a readable "
            "report of this plugin (or writes a missing file): move the file away, or name "
            "another --gi-baseline")) from None


def _older_hash(baseline: RunReport, suite_hash_for: SuiteHashFor | None) -> str | None:
    """For a baseline that kept no level hashes: the run's suite hash over its levels."""
    info = baseline.run
    if info is None or info.level_hashes or not info.suite_hash or suite_hash_for is None:
        return None
    return suite_hash_for(info.filter.levels)


def report_suite_hash(report: RunReport) -> SuiteHashFor:
    """:data:`SuiteHashFor` of a saved report: its own ``suite_hash`` when asked for the
    levels it ran (otherwise unknown: ``None``)."""
    def hash_for(levels: Sequence[int] | None) -> str | None:
        info = report.run
        if info is None:
            return None
        ran = None if info.filter.levels is None else tuple(sorted(info.filter.levels))
        wanted = None if levels is None else tuple(sorted(levels))
        return info.suite_hash if ran == wanted else None
    return hash_for
