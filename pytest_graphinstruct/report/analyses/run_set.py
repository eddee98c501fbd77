"""The set of runs an analysis or the leaderboard reads: cells, classified.

Every cell becomes a :class:`Run`: its model (looked up in the models table, so the API id and
the reference release's file name of one model are one model), a *variant* of the model (the
release's ``qwen3535ba3b-nothink-*`` files: same model, thinking off) and a *condition*: a
prompting strategy (``zero-shot`` … ``few-cot``; a baseline cell), ``oracle`` (the release's
per-level best-of-four file), or a method (``vgig``, ``vgig-T5``, ``caap``, ``combined``, …).

Our reports name the method in the cell metadata; the release's files name it in place of the
strategy (the reader keeps the file name's tail as the strategy), so ``nothink-caap`` is read as
variant ``nothink``, condition ``caap``.

Cells come from report files (:func:`read_runs`) or from a run store (:func:`store_paths`); a
label read twice is an error for files, while a store keeps the latest run's cell of each label
(a store is a history, the newest run of a cell is the one that counts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.models_table import ModelInfo, ModelsTable
from pytest_graphinstruct.run.aggregate import cell_point
from pytest_graphinstruct.run.records.reader import read_report
from pytest_graphinstruct.run.records.results import CellReport, ReportError
from pytest_graphinstruct.score.pareto import CellPoint
from pytest_graphinstruct.vocab import (
    METHOD_BASELINE,
    METHOD_CONSTRAINED,
    METHODS,
    STRATEGIES,
    Level,
)

ORACLE = "oracle"
"""The condition of a per-level best-of-four cell (the release's ``*-oracle`` files)."""

STRATEGY_ABBREV = {"zero-shot": "ZS", "few-shot": "FS", "zero-cot": "ZC", "few-cot": "FC"}
"""The paper's abbreviations of the prompting strategies."""

_METHOD_BASES = frozenset({*METHODS, METHOD_CONSTRAINED, ORACLE})


def split_condition(strategy: str) -> tuple[str | None, str]:
    """``(variant, condition)`` of a release file's strategy part.

    >>> split_condition("nothink-caap")
    ('nothink', 'caap')
    >>> split_condition("vgig-T5")
    (None, 'vgig-T5')
    >>> split_condition("zero-shot")
    (None, 'zero-shot')
    """
    tokens = strategy.split("-")
    for i, token in enumerate(tokens):
        rest = "-".join(tokens[i:])
        if rest in STRATEGIES or token in _METHOD_BASES:
            return ("-".join(tokens[:i]) or None), rest
    return None, strategy


def method_base(condition: str) -> str:
    """A condition's method without its settings: ``vgig-T5``, ``vgig-fine@T2`` → ``vgig``;
    a strategy or an unknown condition is returned whole."""
    head = condition.split("@")[0].split("-")[0]
    return head if head in _METHOD_BASES else condition


@dataclass(frozen=True)
class Run:
    """One cell, classified (see the module docstring)."""

    cell: CellReport
    info: ModelInfo
    variant: str | None
    condition: str
    partial: str | None = None  #: the coverage line of the partial run it came from


    @property
    def label(self) -> str:
        return self.cell.label

    @property
    def model(self) -> str:
        """The model's key in the models table (the name as given for an unknown model)."""
        return self.info.key

    @property
    def group(self) -> str:
        """The model and its variant: what a per-model comparison groups by."""
        return self.model if self.variant is None else f"{self.model} ({self.variant})"

    @property
    def display(self) -> str:
        """The model's display name, with its variant."""
        return self.info.display if self.variant is None else \
            f"{self.info.display} ({self.variant})"

    @property
    def is_baseline(self) -> bool:
        """A plain prompting-strategy cell (no method)."""
        return self.condition in STRATEGIES

    @property
    def quality(self) -> float | None:
        """S_total over the levels run (the Pareto view's quality), ``None`` with no level."""
        s = self.cell.summary
        return s.s_total_renormalized if s.s_total_renormalized is not None else s.s_total

    @property
    def tpv(self) -> float | None:
        return self.cell.summary.tpv

    def level_score(self, level: Level) -> float | None:
        row = self.cell.per_level.get(level)
        return None if row is None else row.level_score

    def level_items(self, level: int) -> dict[str, float]:
        """``{instruction id: level score}`` of the scored items of ``level``."""
        return {i: s for i, (lv, s) in self.cell.scored_level_scores().items() if lv == level}

    def point(self) -> CellPoint:
        """The cell as a Pareto point, its model the run's :attr:`group`."""
        p = cell_point(self.cell)
        return CellPoint(label=p.label, model=self.group, strategy=self.condition,
                         quality=p.quality, cost=p.cost,
                         method=METHOD_BASELINE if self.is_baseline else self.condition)


def classify(cell: CellReport, table: ModelsTable) -> Run:
    """``cell`` as a :class:`Run`."""
    m = cell.metadata
    info = table.info(m.model)
    if m.method != METHOD_BASELINE:
        return Run(cell, info, None, m.method)
    variant, condition = split_condition(m.strategy)
    return Run(cell, info, variant, condition)


def store_paths(root: str | Path) -> list[Path]:
    """The report files of the run store at ``root``, oldest first.

    Raises:
        GraphInstructError: no such store, or a store without runs.
    """
    from pytest_graphinstruct.run.store import RunStore

    p = Path(root)
    if not p.is_dir():
        raise GraphInstructError(f"run store {p}: no such folder (runs are saved there with "
                                 "--gi-autosave)")
    runs = RunStore(p).runs()
    if not runs:
        raise GraphInstructError(f"run store {p}: holds no runs")
    return [r.path for r in runs]


def read_runs(paths: Sequence[str | Path], table: ModelsTable, *,
              store: bool = False) -> list[Run]:
    """The cells of ``paths`` as runs, in file order.

    With ``store`` the files are a run store's, oldest first: a later run's cell replaces an
    earlier cell of the same label.  Otherwise a label found in two files is an error.

    A cell of a partial report (an interrupted run) carries the report's coverage line in
    :attr:`Run.partial`.

    Raises:
        ReportError: a file cannot be read (or, without ``store``, a label repeats).
    """
    runs: dict[str, Run] = {}
    where: dict[str, str] = {}
    for path in paths:
        report = read_report(path)
        partial = None if report.coverage.complete else report.coverage.describe()
        for cell in report.cells:
            if not store and cell.label in runs:
                raise ReportError(f"{path}: cell {cell.label} is also in {where[cell.label]}")
            runs.pop(cell.label, None)
            runs[cell.label] = replace(classify(cell, table), partial=partial)
            where[cell.label] = str(path)
    return list(runs.values())


def load_runs(reports: Sequence[str | Path], *, store: str | Path | None = None,
              models_tables: Sequence[str | Path] = ()) -> list[Run]:
    """The runs of the command line: report files, or (``store``) every report of a run
    store, classified with the packaged models table extended by ``models_tables``.

    Raises:
        GraphInstructError: both or neither of files and a store, an unreadable file or store,
            a malformed models table.
    """
    from pytest_graphinstruct.report.analyses.models_table import load_models_table

    if store is not None and reports:
        raise GraphInstructError("give report files or --store, not both")
    if store is None and not reports:
        raise GraphInstructError("no runs: give report files (ours or the release's "
                                 "*.quality.json) or --store")
    table = load_models_table(models_tables)
    if store is not None:
        return read_runs(store_paths(store), table, store=True)
    return read_runs(reports, table)
