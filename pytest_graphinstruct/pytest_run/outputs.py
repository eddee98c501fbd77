"""The files a run writes: claimed before any work (each can be written, or the run is a usage
error naming the option), then written at the end — baseline update, JSON report, HTML page,
autosave, Markdown summary — each saying in one line whether it was written (never raising for
I/O: the run's verdict comes next)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_graphinstruct.run.config import RunConfig
from pytest_graphinstruct.run.records.results import Coverage, RunReport

if TYPE_CHECKING:
    from pytest_graphinstruct.run.gate.plan import BaselinePlan
    from pytest_graphinstruct.run.gate.verdict import Decision, Written
    from pytest_graphinstruct.run.session import BenchmarkSession


def _outputs(run: RunConfig, plan: BaselinePlan | None) -> list[tuple[str, Path]]:
    """The files this run writes (the option that names each, its path), the report first:
    when it is the one that cannot be written, nothing is.  The baseline is among them when
    ``plan`` writes it (``None``: the outputs besides the baseline)."""
    named = [("--gi-report", run.report), ("--gi-html", run.html),
             ("--gi-markdown", run.markdown)]
    if run.markdown is not None and os.environ.get("GITHUB_STEP_SUMMARY"):
        named.append(("$GITHUB_STEP_SUMMARY (--gi-markdown appends to it)",
                      Path(os.environ["GITHUB_STEP_SUMMARY"])))
    if plan is not None and plan.writes:
        named.append(("--gi-baseline", run.baseline))
    return [(flag, path) for flag, path in named if path is not None]


def output_on_baseline(run: RunConfig) -> str | None:
    """Why an output of the run may not be written where it is asked (one line), or ``None``:
    ``--gi-report``, ``--gi-html``, ``--gi-markdown`` (or the ``$GITHUB_STEP_SUMMARY`` file
    it appends to) naming the ``--gi-baseline`` file — the same path once resolved, a symlink
    or a hard link to it.  The report's start-of-run placeholder would replace the baseline
    before the run is compared with it, and any of them would leave it unreadable as a
    baseline; with ``--gi-update-baseline`` the baseline is written by that option alone."""
    from pytest_graphinstruct.run.records.writer import same_file

    if run.baseline is None:
        return None
    for flag, path in _outputs(run, None):
        if same_file(path, run.baseline):
            return (f"{flag} names the baseline file ({run.baseline}): writing it would "
                    "overwrite the baseline this run is compared with; write it to another "
                    "file (to replace the baseline with this run's report, use "
                    "--gi-update-baseline)")
    return None


def unclaimable(run: RunConfig, plan: BaselinePlan) -> str | None:
    """Why a file the run will write cannot be written (``"<option>: <reason>"``, the first
    one), or ``None`` when all can.

    The outputs: ``--gi-report``, ``--gi-html``, ``--gi-markdown`` (and the
    ``$GITHUB_STEP_SUMMARY`` file it appends to), the baseline when this run may write it,
    and the run store of ``--gi-autosave``.  The answer cache is not among them: a cache
    that cannot be written costs only reuse (the run warns)."""
    from pytest_graphinstruct.run.records.writer import unwritable_reason

    for flag, path in _outputs(run, plan):
        reason = unwritable_reason(path)
        if reason is not None:
            return f"{flag}: {reason}"
    if run.store is not None:
        from pytest_graphinstruct.run.store import RunStore

        reason = RunStore(run.store).unwritable_reason()
        if reason is not None:
            return f"--gi-autosave: {reason}"
    return None


def mark_started(report: Path | None) -> None:
    """Replace an earlier report at ``report`` with one that says this run has not finished
    (so a run killed outright never leaves an older report looking like its own)."""
    from pytest_graphinstruct.run.records.writer import write_report

    if report is not None:
        started = time.strftime("%Y-%m-%d %H:%M:%S")
        write_report(RunReport((), coverage=Coverage.partial(
            f"the run started at {started} has not finished (or was killed)")), report)


def write_outputs(report: RunReport, decision: Decision, run: RunConfig,
                  bench: BenchmarkSession | None, *, update: Written | None,
                  failed_tests: int) -> list[Written]:
    """Write every output ``run`` asks for; one line each saying what was (not) written, the
    baseline ``update``'s line first.  ``failed_tests`` (pytest's count) makes the Markdown
    heading agree with the exit status; ``bench`` gives the HTML page its instruction texts."""
    written = [] if update is None else [update]
    if run.report is not None:
        written.append(write_json(report, run.report, "report"))
    if run.html is not None:
        plan = decision.plan
        baseline = (plan.path, plan.report) if plan.gated and plan.path is not None else None
        written.append(write_html(report, run.html, bench, baseline))
    if run.store is not None:
        written.append(autosave(report, run.store))
    if run.markdown is not None:
        written.append(write_markdown_summary(report, decision, run.markdown,
                                              failed_tests=failed_tests,
                                              benchmark=run.benchmark))
    return written


def write_json(report: RunReport, path: Path, what: str) -> Written:
    """Write ``report``; the line to show, whether it worked or not (never raises for I/O)."""
    from pytest_graphinstruct.run.gate.verdict import Written
    from pytest_graphinstruct.run.records.writer import write_report

    try:
        write_report(report, path)
    except OSError as exc:
        return Written(f"{what} NOT written to {path}: {exc.strerror or exc}", ok=False)
    return Written(f"{what} written to {path}", ok=True)


def write_html(report: RunReport, path: Path, bench: BenchmarkSession | None,
               baseline: tuple[Path, RunReport | None] | None = None) -> Written:
    """Write the HTML page of ``report`` (instruction texts from the run's suite; a gated run's
    ``baseline`` file and report mark the items that changed, and the page shows the gate);
    the line to show.  Never raises: the JSON report is already written and the run's verdict
    comes next."""
    from pytest_graphinstruct.report.render.html import NamedReport, build_page, write_page
    from pytest_graphinstruct.run.gate.verdict import Written

    try:
        instructions = {i.id: i for i in bench.suite} if bench is not None else None
        base = (NamedReport(baseline[0].name, baseline[1])
                if baseline is not None and baseline[1] is not None else None)
        page = build_page([NamedReport("this run", report)], baseline=base,
                          instructions=instructions)
        write_page(page, path)
    except OSError as exc:
        return Written(f"html report NOT written to {path}: {exc.strerror or exc}", ok=False)
    except Exception as exc:  # a fault of the page builder must not cost the run its verdict
        return Written(f"html report NOT written to {path}: {type(exc).__name__}: {exc}",
                       ok=False)
    partial = " (partial run)" if report.partial else ""
    return Written(f"html report{partial} written to {path}", ok=True)


def autosave(report: RunReport, store: Path) -> Written:
    """Save ``report`` as the next run of the store (its bytes are the JSON report's, whether or
    not ``--gi-report`` also wrote it), unless no item has a result (a usage error, a run
    stopped before its first item); the line to show (never raises for I/O)."""
    from pytest_graphinstruct.run.gate.verdict import Written
    from pytest_graphinstruct.run.records.writer import report_json
    from pytest_graphinstruct.run.store import RunStore, StoreError

    if not any(c.per_instruction for c in report.cells):
        why = report.coverage.describe() if report.partial else "no item was selected"
        return Written(f"run NOT saved in {store}: no item has a result ({why})", ok=False)
    try:
        saved = RunStore(store).save_bytes(report_json(report).encode("utf-8"))
    except StoreError as exc:
        return Written(f"run NOT saved: {exc}", ok=False)
    partial = " (a partial run)" if report.partial else ""
    return Written(f"saved as run {saved.name} in {store}{partial}", ok=True)


def write_markdown_summary(report: RunReport, decision: Decision, path: Path, *,
                           failed_tests: int, benchmark: bool) -> Written:
    """Write the Markdown summary (``--gi-markdown``); the line to show (never raises for
    I/O)."""
    from pytest_graphinstruct.report.render.markdown import render_markdown, write_markdown
    from pytest_graphinstruct.run.gate.verdict import Written

    try:
        text = render_markdown(report, decision, failed_tests=failed_tests, benchmark=benchmark)
        write_markdown(path, text)
    except OSError as exc:
        return Written(f"markdown summary NOT written to {path}: {exc.strerror or exc}",
                       ok=False)
    return Written(f"markdown summary written to {path}", ok=True)
