"""The Markdown summary of a run (``--gi-markdown``, ``gate --markdown``): short enough for a
pull-request comment, the full detail stays in the HTML report.

It holds: the verdict (passed / failed and why — the gates', and pytest's own failed tests, so
the heading agrees with the exit status of the run that wrote it), what came from the answer
cache (how many answers, from which model snapshots, how old the oldest:
:func:`.terminal.cache_lines`; a model's ``system_fingerprint`` that changed under the snapshot
served: :func:`.terminal.fingerprint_lines`) and what was really sent to the endpoints
(:func:`.terminal.spend_lines`), one row per cell (S_total with its interval, S_final, items,
cost), the per-level scores, with two or more samples per item the consistency over samples
(pass@1, pass@k, pass^k per level and every flaky item), the gate evidence per cell and level
(the gate's own record of each level,
:meth:`~pytest_graphinstruct.run.gate.comparison.CellComparison.level_change`: the change of
``current − baseline`` as level score and pass rate with their unadjusted 95 % intervals, the
Holm-adjusted p-value of its test — the paired sign-flip and pass-count tests on this suite by
default — and the gate's words, with why an interval reads otherwise when it does: the same
numbers and words the terminal, the HTML page and the report's ``gate`` record hold), the items
that newly fail against the baseline with their first violation and the items that newly pass
(each list capped), and notes (new failures that are not a significant drop, levels not run).

Every text that comes from a report — cell labels, instruction ids, constraint strings, error
messages — is escaped for Markdown (:func:`md`): a report may come from anywhere, and error
messages can quote a model's answer.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pytest_graphinstruct.report.render.terminal import (
    cache_lines,
    fingerprint_lines,
    spend_lines,
)
from pytest_graphinstruct.report.untrusted import escape, escape_markdown
from pytest_graphinstruct.run.gate.comparison import CellComparison
from pytest_graphinstruct.run.gate.gates import GateVerdict
from pytest_graphinstruct.run.gate.verdict import Decision
from pytest_graphinstruct.run.records.results import RunReport
from pytest_graphinstruct.vocab import LEVELS

MAX_ITEMS = 15
"""Newly failing / newly passing items listed per cell (the rest are counted)."""

MAX_TEXT = 160
"""Characters of one quoted text (a violation, an error) in the summary."""

def md(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` safe inside a Markdown table cell or line: one line, controls escaped, cut to
    ``limit`` characters, and every character Markdown or HTML would act on backslash-escaped
    (so no link, image, HTML tag, emphasis or table break can be injected)."""
    one = escape(" ".join(text.split()))
    if len(one) > limit:
        one = one[: limit - 1] + "…"
    return escape_markdown(one)


def code(text: str, limit: int = 80) -> str:
    """``text`` as an inline code span: one line, controls escaped, cut, backticks and pipes
    replaced (``'`` and ``¦``: nothing else inside a code span is interpreted, but a pipe would
    still split a table row)."""
    one = escape(" ".join(text.split())).replace("`", "'").replace("|", "¦")
    if len(one) > limit:
        one = one[: limit - 1] + "…"
    return f"`{one}`" if one else "` `"


def _f(x: float | None, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def render_markdown(report: RunReport, decision: Decision, *,
                    max_items: int = MAX_ITEMS, failed_tests: int = 0,
                    benchmark: bool = True, not_written: Sequence[str] = ()) -> str:
    """The summary of a judged run as Markdown text (ends with a newline).

    ``failed_tests`` is the number of items pytest counted as failed (a pytest run passes it;
    ``gate --markdown`` has none): with any, the heading says failed, as pytest's exit status
    1 does, and a line says why — without ``--gi-violations=report`` (``benchmark=False``)
    every model violation fails its test.  ``not_written``: the lines of outputs the run asked
    for and could not write (the report, the baseline); they fail the run too, and are listed
    first."""
    out: list[str] = []
    verdict, comparisons = decision.verdict, decision.comparisons
    baseline_name = decision.baseline_name
    failed = verdict.failed
    heading = ("❌ gate failed" if failed else "❌ failed" if failed_tests or not_written
               else "✅ passed")
    out.append(f"## GraphInstruct: {heading}")
    out.append("")
    out += [f"- {md(line, 400)} (the run fails: an output it asked for was not written)"
            for line in not_written]
    if failed_tests:
        out.append(f"- {_tests_failed(report, failed_tests, benchmark)}")
    reasons = verdict.lines()
    if reasons:
        out += [f"- {md(line, 400)}" for line in reasons]
    else:
        gates = "the baseline gate" if comparisons else "no baseline gate configured"
        out.append(f"- every gate passed ({gates}; infrastructure error rate "
                   f"{verdict.error_rate:.1%} ≤ {verdict.max_error_rate:g})")
    if baseline_name:
        out.append(f"- baseline: {code(baseline_name, 200)}")
    for c in comparisons:
        out.append(f"- compared: {md(c.scope(), 600)}")
    if decision.cells_not_run:
        out.append(f"- {md(decision.cells_not_run_text(), 600)}")
    out += [f"- {md(line, 400)}" for line in cache_lines(report.run)]  # answers reused
    out += [f"- {md(line, 600)}" for line in fingerprint_lines(report.run)]  # backend changed
    out += [f"- {md(line, 400)}" for line in spend_lines(report.run)]  # what was sent
    out.append("")
    out += _cells_table(report)
    out.append("")
    out += _levels_table(report, {c.label: c for c in comparisons})
    out += _consistency(report)
    for comparison in comparisons:
        out.append("")
        out += _comparison(comparison, max_items)
    for comparison in decision.update_change:
        out.append("")
        out += _comparison(comparison, max_items, title="baseline update: the change against "
                           "the old baseline (not a gate)")
    notes = _notes(report, comparisons, verdict)
    if decision.plan.note:
        notes.append(md(decision.plan.note, 400))
    if notes:
        out.append("")
        out += [f"> {n}" for n in notes]
    return "\n".join(out) + "\n"


def _tests_failed(report: RunReport, failed_tests: int, benchmark: bool) -> str:
    """Why pytest exits 1 although no gate failed: its failed tests, and what made them fail."""
    violated = sum(c.summary.failed for c in report.cells)
    errors = sum(c.summary.error for c in report.cells)
    why = []
    if violated and not benchmark:
        why.append(f"{violated} item(s) violated their instructions and, without "
                   "--gi-violations=report, each violation fails its test (that option reports "
                   "them as xfail and leaves the verdict to the gates)")
    if errors:
        why.append(f"{errors} item(s) could not be answered (errors)")
    tail = f": {'; '.join(why)}" if why else ""
    return f"{failed_tests} test(s) failed, so pytest exits 1{tail}"


def _cells_table(report: RunReport) -> list[str]:
    rows = ["| cell | S_total | 95% CI | S_final | passed | failed | errors | tokens | TPV | "
            "API calls |", "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for c in report.cells:
        s = c.summary
        ci = "—" if not s.s_total_ci95 else f"[{s.s_total_ci95[0]:.3f}, {s.s_total_ci95[1]:.3f}]"
        star = " ★" if s.pareto_optimal else ""
        rows.append(f"| {code(c.label)}{star} | {_f(s.s_total)} | {ci} | {_f(s.s_final)} | "
                    f"{s.passed} | {s.failed} | {s.error} | "
                    f"{'—' if s.tokens_total is None else s.tokens_total} | {_f(s.tpv, 1)} | "
                    f"{s.api_calls} |")
    return rows


def _levels_table(report: RunReport, compared: dict[str, CellComparison]) -> list[str]:
    levels = [lv for lv in LEVELS if any(lv in c.per_level for c in report.cells)]
    if not levels:
        return []
    head = "| cell | " + " | ".join(f"L{lv}" for lv in levels) + " |"
    rows = [head, "|---|" + "---:|" * len(levels)]
    dash = False
    for c in report.cells:
        comp = compared.get(c.label)
        cells = []
        for lv in levels:
            row = c.per_level.get(lv)
            text = _f(row.level_score if row else None)
            if comp is not None and lv in comp.diff.levels:
                mark = " ⚠" if lv in comp.regressed_levels else ""
                text += f" ({comp.level_change(lv).short_text()}{mark})"
            cells.append(text)
        rows.append(f"| {code(c.label)} | " + " | ".join(cells) + " |")
        dash = dash or any(text.startswith("—") for text in cells)
    if compared:
        rows.append("")
        rows.append("In brackets: the change against the baseline (of level score, and of "
                    "pass rate where both runs keep every sample's verdict); ⚠ a real drop "
                    "larger than the allowed regression.")
    if dash:
        rows += ["", "— : no level score — the cell did not run that level, or none of its "
                 "items there was scored (all errors)."]
    return rows


def _ci_text(x: float, ci: Sequence[float]) -> str:
    return f"{x:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _consistency(report: RunReport) -> list[str]:
    """Consistency over samples (only cells of two or more samples per item): pass@1, pass@k
    and pass^k with their 95 % intervals per level and for the cell, then every flaky item."""
    cells = [c for c in report.cells if c.summary.consistency is not None]
    if not cells:
        return []
    out = ["", "### Consistency over samples", "",
           "| cell | level | k | items | left out | pass@1 | pass@k | pass^k | flaky |",
           "|---|---|---:|---:|---:|---|---|---|---:|"]
    flaky: list[str] = []
    for c in cells:
        rows = [(f"L{lv}", row.consistency) for lv, row in sorted(c.per_level.items())]
        for level, x in [*rows, ("all", c.summary.consistency)]:
            if x is not None:
                out.append(f"| {code(c.label)} | {level} | {x.k} | {x.items} | {x.left_out} | "
                           f"{_ci_text(x.pass_at_1, x.pass_at_1_ci95)} | "
                           f"{_ci_text(x.pass_at_k, x.pass_at_k_ci95)} | "
                           f"{_ci_text(x.pass_all_k, x.pass_all_k_ci95)} | {x.flaky} |")
        if c.flaky:
            named = ", ".join(f"{code(x.instruction_id, 60)} {x.passing}/{x.samples}"
                              for x in c.flaky)
            flaky.append(f"- {code(c.label)} ({len(c.flaky)}): {named}")
    out += ["", "pass@k: at least one of k samples passes; pass^k: every one passes; items "
            "without an answer are left out (counted under 'left out')."]
    if flaky:
        out += ["", "Flaky items (some samples pass, some fail; passing/samples):", "", *flaky]
    return out


def _comparison(c: CellComparison, max_items: int, *,
                title: str = "against the baseline") -> list[str]:
    """One cell's evidence: per level the gate's record (:meth:`CellComparison.level_change`,
    the texts every view shows), then the changed items."""
    tests = f"{c.family} level test" + ("s" if c.family != 1 else "")
    out = [f"### {code(c.label)} {title}", "",
           "| level | instructions | change [unadjusted 95% CI] | p (Holm-adjusted over "
           f"{tests}) | verdict |", "|---|---:|---|---|---|"]
    for level in c.level_changes():
        word = md(level.verdict_text(), 600)
        if level.regressed:
            word = f"**{word}**"
        out.append(f"| L{level.level} | {level.n} | {md(level.changes_text())} | "
                   f"{md(level.p_text())} | {word} |")
    if c.newly_failing:
        out += ["", f"Newly failing ({len(c.newly_failing)}):", ""]
        for x in c.newly_failing[:max_items]:
            why = f": {md(x.first_violation)}" if x.first_violation else ""
            out.append(f"- {code(x.instruction_id, 60)} (L{x.level}){why}")
        if len(c.newly_failing) > max_items:
            out.append(f"- … and {len(c.newly_failing) - max_items} more (HTML report)")
    if c.newly_passing:
        shown = ", ".join(code(x.instruction_id, 60) for x in c.newly_passing[:max_items])
        more = (f" … and {len(c.newly_passing) - max_items} more"
                if len(c.newly_passing) > max_items else "")
        out += ["", f"Newly passing ({len(c.newly_passing)}): {shown}{more}"]
    if c.not_compared:
        out += ["", "Not compared: " + "; ".join(md(x.describe()) for x in c.not_compared)]
    return out


def _notes(report: RunReport, comparisons: Sequence[CellComparison],
           verdict: GateVerdict) -> list[str]:
    notes = []
    for c in comparisons:
        quiet = c.unjudged_failures
        if quiet:
            notes.append(f"{code(c.label)}: {len(quiet)} newly failing item(s) on levels whose "
                         "drop is not significant (noise for a stochastic model; not a gate "
                         "failure)")
    for cell in report.cells:
        if cell.summary.levels_missing:
            missing = ", ".join(f"L{x}" for x in cell.summary.levels_missing)
            notes.append(f"{code(cell.label)}: levels not run: {missing}")
    if report.partial and verdict.incomplete is None:
        notes.append(f"partial report: {md(report.coverage.describe(), 300)}")
    return notes


def write_markdown(path: str | os.PathLike[str], text: str) -> None:
    """Write the summary to ``path`` and, when ``GITHUB_STEP_SUMMARY`` names a file, append it
    there too (the job page of GitHub Actions).

    Raises:
        OSError: ``path`` (or the step summary) cannot be written.
    """
    Path(path).write_text(text, encoding="utf-8")
    step = os.environ.get("GITHUB_STEP_SUMMARY")
    if step:
        with open(step, "a", encoding="utf-8") as fh:
            fh.write(text)
