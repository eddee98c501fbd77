"""The run store for people: the ``runs list`` and ``runs compare`` commands.

``runs list`` reads every saved report of a store (:class:`~pytest_graphinstruct.run.store.
RunStore`) and shows one row per run: number, time saved, cells, models, strategies and methods,
items, S_total per cell, whether the run was partial, and the git commit and suite hash its
provenance record (:class:`~pytest_graphinstruct.run.records.results.RunInfo`) names.  A stored
file that cannot be read is listed with why, and does not hide the others.

``runs compare A B`` takes two refs (:meth:`RunStore.resolve`: a number, ``latest``, ``-2``, a
file) and, for each cell label present in both runs, prints the paired per-level comparison of
the ``compare`` command (:func:`.compare.compare_cells`, B − A) and then the items that changed:
newly failing (passed in A; failed or error in B) with their first violation or error, and newly
passing (failed or error in A; passed in B).  A cell in only one of the runs is named.
``--cell`` (or ``--a-cell`` / ``--b-cell``) compares one cell of A with one of B, on purpose
across labels (a candidate model against the production one); two runs of one cell each are
compared whatever their labels (what the retired ``compare`` command did).
Everything taken from a report is escaped (:mod:`..untrusted`).  With
``--fail-on-regression`` the command exits 1 when some shared cell's verdict is ``regression``
(:meth:`RunsComparison.exit_status`); without it a comparison exits 0 whatever it found.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.commands.compare import compare_cells
from pytest_graphinstruct.report.untrusted import escape
from pytest_graphinstruct.run.gate.comparison import REGRESSION, CellComparison
from pytest_graphinstruct.run.gate.comparison import compare_cells as run_comparison
from pytest_graphinstruct.run.records.reader import read_report
from pytest_graphinstruct.run.records.results import CellReport, ItemResult, ReportError, RunReport
from pytest_graphinstruct.run.store import RunStore, StoredRun, StoreError
from pytest_graphinstruct.score.regression.bootstrap import DEFAULT_MAX_REGRESSION
from pytest_graphinstruct.vocab import METHOD_BASELINE, GateTest

_ITEM_LINES = ("newly failing (", "newly passing (", "errors in the candidate")
"""The lines of :meth:`Comparison.lines` that ``runs compare`` replaces by its own item list."""

SHOWN_CHARS = 160
"""A first violation or error is cut to this many characters in ``runs compare``."""


# -- runs list ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class RunRow:
    """One saved run as ``runs list`` shows it (``error``: why its file could not be read)."""

    run: StoredRun
    report: RunReport | None
    error: str | None = None


def read_store(store: RunStore) -> list[RunRow]:
    """Every run of ``store``, read (a file that cannot be read keeps its row, with why).

    Raises:
        StoreError: the store's folder does not exist or cannot be read.
    """
    if not store.root.is_dir():
        raise StoreError(f"no run store at {store.root} (runs are saved there by "
                         "--gi-autosave; --store DIR names another)")
    rows = []
    for run in store.runs():
        try:
            rows.append(RunRow(run, read_report(run.path)))
        except ReportError as exc:
            rows.append(RunRow(run, None, str(exc)))
    return rows


HEADERS = ("run", "saved (UTC)", "cells", "models", "strategies/methods", "items",
           "S_total per cell", "partial", "git", "suite")


def list_rows(rows: list[RunRow]) -> list[list[str]]:
    """The ``runs list`` table's rows (columns :data:`HEADERS`); S_total is one line per cell."""
    out = []
    for row in rows:
        saved = row.run.saved.strftime("%Y-%m-%d %H:%M:%S")
        report = row.report
        if report is None:  # why is said below the table
            out.append([row.run.name, saved, "unreadable", "", "", "", "", "", "", ""])
            continue
        cells = report.cells
        models = ", ".join(dict.fromkeys(c.metadata.model for c in cells))
        kinds = ", ".join(dict.fromkeys(_kind(c) for c in cells))
        totals = "\n".join(f"{escape(c.label)} {_num(c.summary.s_total)}" for c in cells)
        info = report.run
        git = "" if info is None or info.git is None else (
            info.git.commit[:10] + ("*" if info.git.dirty else ""))
        suite = "" if info is None or not info.suite_hash else (
            info.suite_hash.removeprefix("sha256:")[:12])
        out.append([row.run.name, saved, str(len(cells)), escape(models), escape(kinds),
                    str(sum(c.summary.items for c in cells)), totals,
                    "partial" if report.partial else "", git, suite])
    return out


def list_text(store: RunStore) -> str:
    """The ``runs list`` output: the table (a dirty work tree's commit marked ``*``) and a line
    per unreadable run, or a line saying the store holds no runs.

    Raises:
        StoreError: the store's folder does not exist or cannot be read.
    """
    from tabulate import tabulate

    rows = read_store(store)
    if not rows:
        return f"the run store {store.root} holds no runs\n"
    table = tabulate(list_rows(rows), headers=list(HEADERS), disable_numparse=True)
    unreadable = "".join(f"run {r.run.name} is unreadable: {escape(r.error or '')}\n"
                         for r in rows if r.report is None)
    return (f"{table}\n{unreadable}{len(rows)} run(s) in {store.root}; git: * = uncommitted "
            "changes\n")


def _kind(cell: CellReport) -> str:
    m = cell.metadata
    return m.strategy if m.method == METHOD_BASELINE else f"{m.strategy}+{m.method}"


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.4f}"


# -- runs compare ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ComparedRun:
    """One run of a comparison: its ref, file, store entry (``None`` for a file outside the
    store) and report."""

    ref: str
    path: Path
    stored: StoredRun | None
    report: RunReport

    def describe(self) -> str:
        """``run 0003 (saved …, git …, suite …)`` or the file's path."""
        name = f"run {self.stored.name}" if self.stored is not None else str(self.path)
        facts = []
        if self.stored is not None:
            facts.append(f"saved {self.stored.saved.strftime('%Y-%m-%d %H:%M:%S')} UTC")
        info = self.report.run
        if info is not None and info.git is not None:
            facts.append(f"git {info.git.commit[:10]}{' (dirty)' if info.git.dirty else ''}")
        if self.report.partial:
            facts.append("partial")
        return f"{name} ({', '.join(facts)})" if facts else name


def open_compared_run(store: RunStore, ref: str) -> ComparedRun:
    """The run ``ref`` names, read.

    Raises:
        StoreError: no such run; ReportError: its file is not a readable report.
    """
    path = store.resolve(ref)
    try:
        stored = next((r for r in store.runs() if r.path.resolve() == path.resolve()), None)
    except StoreError:  # a file given by path, outside an unreadable store
        stored = None
    return ComparedRun(ref, path, stored, read_report(path))


@dataclass(frozen=True)
class RunsComparison:
    """What ``runs compare`` says: its ``lines`` (stdout), ``warnings`` (stderr, one line
    each) and the ``regressed`` cells (labels whose verdict is ``regression``)."""

    lines: list[str]
    warnings: list[str]
    regressed: tuple[str, ...] = ()

    def exit_status(self, *, fail_on_regression: bool) -> int:
        """1 when ``fail_on_regression`` and some shared cell regressed, else 0."""
        return 1 if fail_on_regression and self.regressed else 0


def compare_runs(a: ComparedRun, b: ComparedRun, *,
                 max_regression: float = DEFAULT_MAX_REGRESSION, test: GateTest = "suite",
                 cell_a: str | None = None, cell_b: str | None = None) -> RunsComparison:
    """The ``runs compare`` output (B − A), its warnings and the cells that regressed.

    ``cell_a`` / ``cell_b`` name the one cell of each run to compare (either alone names
    both); without them every label the runs share is compared, or, when each run holds
    one cell, those two.  ``test`` is the gate's question (``--test``).

    Raises:
        GraphInstructError: the runs share no cell, a named cell is missing, or
            ``max_regression`` is negative.
    """
    if max_regression < 0:
        raise GraphInstructError(f"--max-regression must be >= 0, got {max_regression:g}")
    labels_a, labels_b = a.report.labels, b.report.labels
    pairs = _cell_pairs(a, b, cell_a, cell_b)
    lines = [f"A: {a.describe()}", f"B: {b.describe()}"]
    warnings = _provenance_warnings(a, b)
    regressed: list[str] = []
    across = len(pairs) == 1 and pairs[0][0] != pairs[0][1]  # one cell each, paired as such
    if cell_a is None and cell_b is None and not across:
        only_a = [label for label in labels_a if label not in labels_b]
        only_b = [label for label in labels_b if label not in labels_a]
        if only_a:
            lines.append(f"only in A: {escape(', '.join(only_a))}")
        if only_b:
            lines.append(f"only in B: {escape(', '.join(only_b))}")
    for label_a, label_b in pairs:
        base, cand = a.report.cell(label_a), b.report.cell(label_b)
        title = (escape(label_a) if label_a == label_b
                 else f"{escape(label_a)} (A) vs {escape(label_b)} (B)")
        lines += ["", f"== cell {title} =="]
        try:
            comparison = compare_cells(base, cand, max_regression=max_regression, test=test)
        except GraphInstructError as exc:
            lines.append(f"no paired comparison: {exc}")
            with contextlib.suppress(ValueError):  # still list what changed, if it can pair
                lines += _changed_items(run_comparison([(cand, base)],
                                                       max_regression=max_regression)[0], cand)
        else:
            warning = comparison.warning()
            if warning:
                warnings.append(f"cell {label_b}: {warning}")
            # the changed items follow with their first violation (errors included)
            lines += [line for line in comparison.lines(str(a.path), str(b.path))
                      if not line.startswith(_ITEM_LINES)]
            lines += _changed_items(comparison.cell, cand)
            if comparison.verdict == REGRESSION:
                regressed.append(label_b)
    if len(pairs) > 1:
        lines += ["", f"regressed cells: {escape(', '.join(regressed)) or 'none'} "
                  f"(of {len(pairs)} compared)"]
    return RunsComparison(lines, warnings, tuple(regressed))


def _cell_pairs(a: ComparedRun, b: ComparedRun, cell_a: str | None,
                cell_b: str | None) -> list[tuple[str, str]]:
    """The (A label, B label) pairs ``runs compare`` compares (:func:`compare_runs`).

    Raises:
        GraphInstructError: a named cell is missing, or there is nothing to pair.
    """
    labels_a, labels_b = a.report.labels, b.report.labels
    if cell_a is not None or cell_b is not None:
        wanted = (cell_a or cell_b or "", cell_b or cell_a or "")
        for label, labels, run in ((wanted[0], labels_a, a), (wanted[1], labels_b, b)):
            if label not in labels:
                raise GraphInstructError(f"{escape(run.ref)} has no cell {escape(label)!r} "
                                         f"(its cells: {escape(', '.join(labels)) or 'none'})")
        return [wanted]
    shared = [(label, label) for label in labels_a if label in labels_b]
    if not shared and len(labels_a) == len(labels_b) == 1:
        return [(labels_a[0], labels_b[0])]
    if not shared:
        raise GraphInstructError(
            f"{escape(a.ref)} and {escape(b.ref)} share no cell (A: "
            f"{escape(', '.join(labels_a)) or 'none'}; B: {escape(', '.join(labels_b)) or 'none'}"
            "): name the two with --a-cell and --b-cell")
    return shared


def _provenance_warnings(a: ComparedRun, b: ComparedRun) -> list[str]:
    """What makes the two runs' scores not comparable as they stand (a different suite)."""
    ia, ib = a.report.run, b.report.run
    if ia is None or ib is None or not ia.suite_hash or not ib.suite_hash:
        return []
    if ia.suite_hash != ib.suite_hash:
        return [f"the runs used different suite files ({ia.suite_hash[7:19]} vs "
                f"{ib.suite_hash[7:19]}): a change may come from the suite"]
    return []


def _changed_items(c: CellComparison, cand: CellReport) -> list[str]:
    """The comparison's newly failing items (passed in A; failed in B) and items that became
    errors (scored in A), each with its first problem, then the newly passing ones (failed or
    error in A; passed in B), in B's order."""
    now = {r.instruction_id: r for r in cand.per_instruction}
    failing = [*c.newly_failing, *c.now_errors]
    order = {r.instruction_id: n for n, r in enumerate(cand.per_instruction)}
    failing.sort(key=lambda x: order[x.instruction_id])
    out = [f"newly failing in B ({len(failing)})" + (":" if failing else ": none")]
    out += [f"  {escape(x.instruction_id)} {x.now}: {first_problem(now[x.instruction_id])}"
            + ("" if x.was == "passed" else f" (was {x.was})") for x in failing]
    out.append(f"newly passing in B ({len(c.newly_passing)})"
               + (":" if c.newly_passing else ": none"))
    out += [f"  {escape(x.instruction_id)} (was {x.was})" for x in c.newly_passing]
    return out


def first_problem(item: ItemResult) -> str:
    """The first thing wrong with an item, escaped and cut to :data:`SHOWN_CHARS`: its error,
    else its first sample's first violation (with category, expected and observed when the
    report keeps them), refusal or parse error."""
    text = f"error: {item.error}" if item.error else _first_violation(item)
    text = escape(text)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS - 1] + "…"


def _first_violation(item: ItemResult) -> str:
    for s in item.samples:
        if s.violation_details:
            d = s.violation_details[0]
            seen = (f": expected {d.expected}, observed {d.observed}"
                    if d.expected is not None and d.observed is not None else "")
            return f"{d.constraint} ({d.category}){seen}"
        if s.violations or s.derived_violations:
            return (s.violations or s.derived_violations)[0]
    for s in item.samples:
        if not s.parsed and not s.refusal:
            return "not parsed" + (f": {s.error}" if s.error else "")
    if item.feasible and any(s.refusal for s in item.samples):
        return "refused"
    return "no violation recorded"
