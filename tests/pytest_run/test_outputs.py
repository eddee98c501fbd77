"""The files a run writes: claimed before any work (the first one that cannot be written names
its option), marked as started, then written at the end with one line each, never raising for
I/O."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.pytest_run.outputs import (
    autosave,
    mark_started,
    output_on_input,
    unclaimable,
    write_html,
    write_json,
    write_markdown_summary,
    write_outputs,
)
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.config import RunConfig
from pytest_graphinstruct.run.gate.plan import BaselinePlan, GateOptions
from pytest_graphinstruct.run.gate.verdict import Decision, Written, decide
from pytest_graphinstruct.run.records.results import CellMetadata, Coverage, ItemResult, RunReport
from pytest_graphinstruct.run.store import RunStore

from .fakes import run_config


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def _report(partial: bool = False) -> RunReport:
    items = [ItemResult(instruction_id="L1-001", level=1, cell="m-zero-shot", model="m",
                        strategy="zero-shot", level_score=0.5)]
    report = with_pareto([build_cell(CellMetadata("m", "zero-shot"), items)])
    return replace(report, coverage=Coverage.partial("stopped")) if partial else report


def _decision(report: RunReport) -> Decision:
    return decide(report, BaselinePlan(), GateOptions())


def _blocker(tmp_path: Path) -> Path:
    """A file where a folder should be."""
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    return blocker


# -- claimed before any work -------------------------------------------------------------------

def test_a_run_whose_outputs_can_be_written_claims_them(tmp_path: Path) -> None:
    run = replace(run_config(tmp_path), report=tmp_path / "out" / "r.json",
                  html=tmp_path / "r.html", markdown=tmp_path / "r.md", store=tmp_path / "runs")
    assert unclaimable(run, BaselinePlan()) is None
    assert (tmp_path / "out").is_dir() and (tmp_path / "runs").is_dir()  # as a write would


def test_the_first_output_that_cannot_be_written_names_its_option(tmp_path: Path) -> None:
    base = run_config(tmp_path)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    blocked = _blocker(tmp_path) / "x"

    def problem(run: RunConfig) -> str | None:
        return unclaimable(run, BaselinePlan())

    assert problem(replace(base, report=folder, html=folder)) == (
        f"--gi-report: cannot write a report to {folder}: it is a directory")
    assert (problem(replace(base, html=blocked)) or "").startswith(
        f"--gi-html: cannot create the folder of {blocked}")
    assert (problem(replace(base, markdown=folder)) or "").startswith("--gi-markdown: ")
    assert problem(replace(base, store=_blocker(tmp_path))) == (
        f"--gi-autosave: the run store {tmp_path / 'file'} is not a folder")


def test_the_baseline_is_claimed_only_when_the_run_writes_it(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    run = replace(run_config(tmp_path), baseline=folder)
    assert unclaimable(run, BaselinePlan(path=folder)) is None  # read, not written
    assert (unclaimable(run, BaselinePlan(path=folder, missing=True)) or "").startswith(
        "--gi-baseline: ")
    assert (unclaimable(run, BaselinePlan(path=folder, update=True)) or "").startswith(
        "--gi-baseline: ")


def test_the_step_summary_is_claimed_with_the_markdown(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(folder))
    run = run_config(tmp_path)
    assert unclaimable(run, BaselinePlan()) is None  # no --gi-markdown: not appended to
    assert (unclaimable(replace(run, markdown=tmp_path / "r.md"), BaselinePlan()) or "").startswith(
        "$GITHUB_STEP_SUMMARY (--gi-markdown appends to it): ")


def test_mark_started_replaces_an_older_report(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text("an older report", encoding="utf-8")
    mark_started(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["cells"] == [] and data["coverage"]["complete"] is False
    reason = data["coverage"]["reason"]
    assert reason.startswith("the run started at ")
    assert reason.endswith(" has not finished (or was killed)")
    mark_started(None)  # nothing asked: nothing written


# -- written at the end ------------------------------------------------------------------------

def test_every_output_is_written_with_one_line_each_update_first(tmp_path: Path) -> None:
    report = _report()
    run = replace(run_config(tmp_path), report=tmp_path / "r.json", html=tmp_path / "r.html",
                  store=tmp_path / "runs", markdown=tmp_path / "r.md")
    written = write_outputs(report, _decision(report), run, None,
                            update=Written("baseline written", ok=True), failed_tests=0)
    assert all(w.ok for w in written)
    assert [w.line for w in written] == [
                     "baseline written", f"report written to {tmp_path / 'r.json'}",
                     f"html report written to {tmp_path / 'r.html'}",
                     f"saved as run 0001 in {tmp_path / 'runs'}",
                     f"markdown summary written to {tmp_path / 'r.md'}"]
    assert all((tmp_path / name).is_file() for name in ("r.json", "r.html", "r.md"))
    assert write_outputs(report, _decision(report), run_config(tmp_path), None, update=None,
                         failed_tests=0) == []


def test_the_store_holds_the_reports_bytes(tmp_path: Path) -> None:
    report = _report()
    write_json(report, tmp_path / "r.json", "report")
    assert autosave(report, tmp_path / "runs").line == f"saved as run 0001 in {tmp_path / 'runs'}"
    (saved,) = RunStore(tmp_path / "runs").runs()
    assert saved.path.read_bytes() == (tmp_path / "r.json").read_bytes()


def test_autosave_keeps_no_run_without_results(tmp_path: Path) -> None:
    store = tmp_path / "runs"
    nothing = autosave(RunReport(()), store)
    assert nothing == Written(
        f"run NOT saved in {store}: no item has a result (no item was selected)", ok=False,
        skipped=True)
    assert not nothing.fails_run  # nothing to save is no failure to write
    stopped = RunReport((), coverage=Coverage.partial("usage error: bad"))
    assert autosave(stopped, store) == Written(
        f"run NOT saved in {store}: no item has a result (partial: usage error: bad)",
        ok=False, skipped=True)
    assert autosave(_report(partial=True), store).line == (
        f"saved as run 0001 in {store} (a partial run)")
    assert autosave(_report(), _blocker(tmp_path)).line.startswith("run NOT saved: ")


def test_a_failed_write_is_one_line_and_raises_nothing(tmp_path: Path) -> None:
    report = _report()
    blocked = _blocker(tmp_path) / "out"
    written = write_json(report, blocked, "baseline")
    line = written.line
    assert not written.ok and line.startswith(f"baseline NOT written to {blocked}: ")
    assert "\n" not in line
    written = write_markdown_summary(report, _decision(report), blocked, failed_tests=0,
                                     benchmark=False)
    line = written.line
    assert not written.ok and line.startswith(f"markdown summary NOT written to {blocked}: ")
    assert "\n" not in line


def test_a_failed_page_write_is_one_line_and_raises_nothing(tmp_path: Path) -> None:
    from tests.report.html_fixtures import two_cell_report

    blocker = tmp_path / "file"
    blocker.write_text("")
    written = write_html(two_cell_report(), blocker / "r.html", None)
    line = written.line
    assert not written.ok and line.startswith(f"html report NOT written to {blocker / 'r.html'}: ")
    assert "\n" not in line


def test_a_fault_of_the_page_builder_costs_only_the_page(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_graphinstruct.report.render import html

    def broken(*args: object, **kw: object) -> None:
        raise KeyError("oops")

    monkeypatch.setattr(html, "build_page", broken)
    assert write_html(_report(), tmp_path / "r.html", None) == Written(
        f"html report NOT written to {tmp_path / 'r.html'}: KeyError: 'oops'", ok=False)


def test_the_page_of_a_partial_run_says_so(tmp_path: Path) -> None:
    assert write_html(_report(partial=True), tmp_path / "r.html", None) == Written(
        f"html report (partial run) written to {tmp_path / 'r.html'}", ok=True)


@pytest.mark.parametrize("option", ["report", "html", "markdown"])
def test_an_output_naming_the_baseline_file_is_refused_in_one_line(tmp_path: Path,
                                                                   option: str) -> None:
    base = tmp_path / "base.json"
    base.write_text("{}", encoding="utf-8")
    (tmp_path / "link.json").symlink_to(base)
    for named in (base, tmp_path / "sub" / ".." / "base.json", tmp_path / "link.json"):
        run = run_config(tmp_path, baseline=str(base), **{option: str(named)})
        why = output_on_input(run)
        assert why is not None and why.startswith(f"--gi-{option} names the baseline file")
        assert "\n" not in why and "--gi-update-baseline" in why
    elsewhere = run_config(tmp_path, baseline=str(base), **{option: str(tmp_path / "o")})
    assert output_on_input(elsewhere) is None
    assert output_on_input(run_config(tmp_path, **{option: str(base)})) is None


def test_the_step_summary_file_on_the_baseline_is_refused_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = tmp_path / "base.json"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(base))
    run = run_config(tmp_path, baseline=str(base), markdown=str(tmp_path / "s.md"))
    why = output_on_input(run)
    assert why is not None and why.startswith("$GITHUB_STEP_SUMMARY")


@pytest.mark.parametrize("option", ["report", "html", "markdown", "baseline"])
def test_an_output_on_a_file_of_the_answer_cache_is_refused(tmp_path: Path, option: str) -> None:
    cache = tmp_path / "c"
    for name in ("answers.jsonl", "batches.json"):
        run = run_config(tmp_path, cache=str(cache), **{option: str(cache / name)})
        why = output_on_input(run)
        assert why is not None and why.startswith(f"--gi-{option} names the answer cache's "
                                                  f"{'batch ledger ' * (name != 'answers.jsonl')}"
                                                  f"{name} ({cache / name})"), why
    assert output_on_input(run_config(tmp_path, cache="none",
                                      **{option: str(cache / "answers.jsonl")})) is None
    default = tmp_path / ".pytest_cache" / "graphinstruct" / "answers.jsonl"  # no --gi-cache
    assert output_on_input(run_config(tmp_path, **{option: str(default)})) is not None


def test_an_output_on_the_recorded_answers_the_prices_or_the_suite_is_refused(
        tmp_path: Path) -> None:
    answers, prices = tmp_path / "a.jsonl", tmp_path / "p.json"
    answers.write_text("", encoding="utf-8")
    replayed = run_config(tmp_path, model=None, replay=str(answers), report=str(answers))
    assert (output_on_input(replayed) or "").startswith(
        "--gi-report names the recorded answers of --gi-replay")
    priced = replace(run_config(tmp_path, html=str(prices)), prices=prices)
    assert (output_on_input(priced) or "").startswith("--gi-html names the price table")
    level = tmp_path / "suite" / "level_1.json"
    assert (output_on_input(run_config(tmp_path, markdown=str(level))) or "").startswith(
        "--gi-markdown names the suite's level_1.json")


def test_mark_started_says_what_it_wrote_or_why_it_could_not(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    text = mark_started(path)
    assert text is not None and path.read_text(encoding="utf-8") == text
    assert mark_started(None) is None
    with pytest.raises(GraphInstructError, match=r"^--gi-report: cannot write .*r\.json: "):
        mark_started(_blocker(tmp_path) / "r.json")


def test_a_report_that_cannot_replace_the_placeholder_removes_it(tmp_path: Path) -> None:
    report = _report()
    path = tmp_path / "r.json"
    placeholder = mark_started(path)
    (tmp_path / "r.json.tmp").mkdir()  # the write through the temporary file fails
    run = replace(run_config(tmp_path), report=path)
    (written,) = write_outputs(report, _decision(report), run, None, update=None,
                               failed_tests=0, placeholder=placeholder)
    assert not written.ok and written.fails_run
    assert written.line.startswith(f"report NOT written to {path}: ")
    assert written.line.endswith("(the start-of-run placeholder there was removed)")
    assert not path.exists()
    # a file that is no longer the placeholder (someone else's) is left alone
    path.write_text("another report", encoding="utf-8")
    (written,) = write_outputs(report, _decision(report), run, None, update=None,
                               failed_tests=0, placeholder=placeholder)
    assert not written.ok and "placeholder" not in written.line
    assert path.read_text(encoding="utf-8") == "another report"
