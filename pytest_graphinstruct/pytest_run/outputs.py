"""The files a run writes: claimed before any work (each can be written, or the run is a usage
error naming the option), then written at the end — baseline update, JSON report, HTML page,
autosave, Markdown summary — each saying in one line whether it was written (never raising for
I/O: the run's verdict comes next)."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_graphinstruct.escaping import escape
from pytest_graphinstruct.run.config import RunConfig
from pytest_graphinstruct.run.records.results import Coverage, RunReport

if TYPE_CHECKING:
    from pytest_graphinstruct.run.gate.plan import BaselinePlan
    from pytest_graphinstruct.run.gate.verdict import Decision, Written
    from pytest_graphinstruct.run.overwrites import Input
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


def run_inputs(run: RunConfig) -> list[Input]:
    """What the run reads that none of its outputs may overwrite
    (:mod:`~pytest_graphinstruct.run.overwrites`): the ``--gi-baseline`` file, the recorded
    answers of ``--gi-replay``, the price table of ``--gi-prices``, the suite's level files and
    the answer cache's files."""
    return named_inputs(baseline=run.baseline, replay=run.replay, prices=run.prices,
                        suite=run.suite, cache=run.cache_dir)


def named_inputs(*, baseline: Path | None, replay: Path | None, prices: Path | None,
                 suite: Path | None, cache: Path | None) -> list[Input]:
    """:func:`run_inputs` of the paths as given (``None``: not given), the baseline first."""
    from pytest_graphinstruct.run.overwrites import Input, cache_inputs, suite_inputs

    inputs = []
    if baseline is not None:
        inputs.append(_baseline_input(baseline))
    if replay is not None:
        inputs.append(Input("the recorded answers of --gi-replay", replay,
                            "the answers this run replays"))
    if prices is not None:
        inputs.append(Input("the price table of --gi-prices", prices, "the price table"))
    inputs += suite_inputs(suite, loses="the suite this run asks")
    if cache is not None:
        inputs += cache_inputs(cache)
    return inputs


def _baseline_input(path: Path) -> Input:
    from pytest_graphinstruct.run.overwrites import Input

    return Input("the baseline file", path, "the baseline this run is compared with",
                 " (to replace the baseline with this run's report, use --gi-update-baseline)")


def output_on_input(run: RunConfig) -> str | None:
    """Why an output of the run may not be written where it is asked (one line, paths
    escaped), or ``None``: ``--gi-report``, ``--gi-html``, ``--gi-markdown`` (or the
    ``$GITHUB_STEP_SUMMARY`` file it appends to) naming a file the run reads
    (:func:`run_inputs`) — the same path once resolved, a symlink or a hard link to it —, or
    ``--gi-baseline`` naming one the run reads besides the baseline (the answer cache's file,
    the recorded answers).  The report's start-of-run placeholder would replace the baseline
    before the run is compared with it, and any of them would leave the input unreadable (a
    cache file written over loses every cached answer); with ``--gi-update-baseline`` the
    baseline is written by that option alone."""
    from pytest_graphinstruct.run.overwrites import overwrite_problem

    inputs = run_inputs(run)
    for flag, path in _outputs(run, None):
        problem = overwrite_problem(flag, path, inputs)
        if problem is not None:
            return problem
    if run.baseline is None:
        return None
    return overwrite_problem("--gi-baseline", run.baseline, inputs[1:])  # the baseline first


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


def mark_started(report: Path | None) -> str | None:
    """Replace an earlier report at ``report`` with one that says this run has not finished
    (so a run killed outright never leaves an older report looking like its own); its text
    (``None``: no report asked), which :func:`write_outputs` removes when the run's own
    report cannot replace it.

    Raises:
        GraphInstructError: it cannot be written (``--gi-report: cannot write <file>: <the
            OS error>``), e.g. the disk is full.
    """
    from pytest_graphinstruct.errors import GraphInstructError
    from pytest_graphinstruct.run.records.writer import report_json, write_report

    if report is None:
        return None
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    placeholder = RunReport((), coverage=Coverage.partial(
        f"the run started at {started} has not finished (or was killed)"))
    try:
        write_report(placeholder, report)
    except OSError as exc:
        raise GraphInstructError(f"--gi-report: cannot write {escape(str(report))}: "
                                 f"{_why(exc)}") from None
    return report_json(placeholder)


def write_outputs(report: RunReport, decision: Decision, run: RunConfig,
                  bench: BenchmarkSession | None, *, update: Written | None,
                  failed_tests: int, placeholder: str | None = None) -> list[Written]:
    """Write every output ``run`` asks for; one line each saying what was (not) written, the
    baseline ``update``'s line first.  ``failed_tests`` (pytest's count) makes the Markdown
    heading agree with the exit status; ``bench`` gives the HTML page its instruction texts.
    When the JSON report cannot be written, the start-of-run ``placeholder``
    (:func:`mark_started`) is removed if the file still holds it: it would say the run has
    not finished, of a run that did."""
    written = [] if update is None else [update]
    if run.report is not None:
        done = write_json(report, run.report, "report")
        if not done.ok and placeholder is not None and _remove_placeholder(run.report,
                                                                            placeholder):
            done = replace(done, line=f"{done.line} (the start-of-run placeholder there "
                                      "was removed)")
        written.append(done)
    if run.html is not None:
        plan = decision.plan
        baseline = (plan.path, plan.report) if plan.gated and plan.path is not None else None
        written.append(write_html(report, run.html, bench, baseline))
    if run.store is not None:
        written.append(autosave(report, run.store))
    if run.markdown is not None:  # last: it says which of the others failed the run
        written.append(write_markdown_summary(
            report, decision, run.markdown, failed_tests=failed_tests,
            benchmark=run.benchmark,
            not_written=tuple(w.line for w in written if w.fails_run)))
    return written


def _remove_placeholder(path: Path, placeholder: str) -> bool:
    """Remove ``path`` when it holds ``placeholder`` and nothing else; whether it did (never
    raises)."""
    try:
        if path.read_text(encoding="utf-8") != placeholder:
            return False
        path.unlink()
    except (OSError, UnicodeDecodeError):
        return False
    return True


def write_json(report: RunReport, path: Path, what: str) -> Written:
    """Write ``report``; the line to show, whether it worked or not (never raises for I/O)."""
    from pytest_graphinstruct.run.gate.verdict import Written
    from pytest_graphinstruct.run.records.writer import write_report

    try:
        write_report(report, path)
    except OSError as exc:
        return Written(f"{what} NOT written to {escape(str(path))}: {_why(exc)}",
                       ok=False)
    return Written(f"{what} written to {escape(str(path))}", ok=True)


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
        return Written(f"html report NOT written to {escape(str(path))}: "
                       f"{_why(exc)}", ok=False)
    except Exception as exc:  # a fault of the page builder must not cost the run its verdict
        return Written(f"html report NOT written to {escape(str(path))}: "
                       f"{type(exc).__name__}: {escape(str(exc))}", ok=False)
    partial = " (partial run)" if report.partial else ""
    return Written(f"html report{partial} written to {escape(str(path))}", ok=True)


def autosave(report: RunReport, store: Path) -> Written:
    """Save ``report`` as the next run of the store (its bytes are the JSON report's, whether or
    not ``--gi-report`` also wrote it), unless no item has a result (a usage error, a run
    stopped before its first item); the line to show (never raises for I/O)."""
    from pytest_graphinstruct.run.gate.verdict import Written
    from pytest_graphinstruct.run.records.writer import report_json
    from pytest_graphinstruct.run.store import RunStore, StoreError

    if not any(c.per_instruction for c in report.cells):
        why = report.coverage.describe() if report.partial else "no item was selected"
        return Written(f"run NOT saved in {escape(str(store))}: no item has a result ({why})",
                       ok=False, skipped=True)
    try:
        saved = RunStore(store).save_bytes(report_json(report).encode("utf-8"))
    except StoreError as exc:
        return Written(f"run NOT saved: {escape(str(exc))}", ok=False)
    partial = " (a partial run)" if report.partial else ""
    return Written(f"saved as run {saved.name} in {escape(str(store))}{partial}", ok=True)


def write_markdown_summary(report: RunReport, decision: Decision, path: Path, *,
                           failed_tests: int, benchmark: bool,
                           not_written: tuple[str, ...] = ()) -> Written:
    """Write the Markdown summary (``--gi-markdown``); the line to show (never raises for
    I/O).  ``not_written``: the lines of the outputs that were asked for and not written (they
    fail the run, and the summary says so)."""
    from pytest_graphinstruct.report.render.markdown import render_markdown, write_markdown
    from pytest_graphinstruct.run.gate.verdict import Written

    try:
        text = render_markdown(report, decision, failed_tests=failed_tests, benchmark=benchmark,
                               not_written=not_written)
        write_markdown(path, text)
    except OSError as exc:
        return Written(f"markdown summary NOT written to {escape(str(path))}: "
                       f"{_why(exc)}", ok=False)
    return Written(f"markdown summary written to {escape(str(path))}", ok=True)


def _why(exc: OSError) -> str:
    """What an OS error says, escaped (its text may quote a path)."""
    return escape(exc.strerror or str(exc))
