"""run.verdict: the baseline plan, the decision, and writing a baseline only from a run that
may be trusted."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.gate import verdict
from pytest_graphinstruct.run.gate.plan import BaselinePlan, GateOptions, plan_baseline
from pytest_graphinstruct.run.gate.verdict import decide, settle_baseline
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    Coverage,
    ItemResult,
    RunInfo,
    RunReport,
    SampleResult,
)
from pytest_graphinstruct.run.records.writer import write_report

IDS = [f"L{lv}-{k:03d}" for lv in (0, 2) for k in range(60)]
HASHES = {0: "sha256:" + "0" * 64, 2: "sha256:" + "2" * 64}


def _settled(report: RunReport, decision: verdict.Decision) -> str | None:
    """:func:`settle_baseline`'s line (its ``ok`` is the line's own word: NOT means not)."""
    written = settle_baseline(report, decision)
    if written is None:
        return None
    assert written.ok == ("NOT written" not in written.line), written
    return written.line


def report(score: float = 1.0, *, errors: int = 0, bad_levels: tuple[int, ...] = (),
           hashes: dict[int, str] | None = None, complete: bool = True) -> RunReport:
    items = []
    for n, iid in enumerate(IDS):
        lv = int(iid[1])
        error = n < errors
        s = 0.1 if lv in bad_levels else (score if n % 2 else 1.0)
        items.append(ItemResult(
            instruction_id=iid, level=lv, cell="m-zero-shot", model="m", strategy="zero-shot",
            level_score=None if error else s, cluster=f"t{n % 6}",
            outcome="error" if error else ("passed" if s == 1.0 else "failed"),
            error="HTTP 500" if error else None))
    run = with_pareto([build_cell(CellMetadata("m", "zero-shot", samples_per_instruction=1),
                                  items)])
    coverage = Coverage() if complete else Coverage.partial("interrupted (Ctrl+C)")
    return replace(run, coverage=coverage, run=RunInfo(level_hashes=hashes or HASHES))


def save(r: RunReport, path: Path) -> Path:
    write_report(r, path)
    return path


def test_a_gated_run_names_what_it_compared_and_passes_when_nothing_changed(
        tmp_path: Path) -> None:
    base = save(report(0.8), tmp_path / "b.json")
    options = GateOptions(base)
    plan = plan_baseline(options, ["m-zero-shot"], level_hashes=HASHES)
    d = decide(report(0.8), plan, options)
    assert not d.failed
    line, *changes = d.compared_lines()
    assert re.fullmatch(
        rf"compared with baseline {re.escape(str(base))}: m-zero-shot: 120 instructions "
        r"paired: L0 60 \(.*drops ≥ 0\.\d\d\), L2 60 \(.*drops ≥ 0\.\d\d\)", line), line
    # identical answers: no change, intervals of width 0, nothing to reject (Holm-adjusted 1)
    # (these items keep no sample's verdict: a level score alone)
    same = "level score +0.000 [+0.000, +0.000]; Holm p(no drop)=1: unchanged (|change| < 0.0005)"
    assert changes == [f"  m-zero-shot: L0 {same}", f"  m-zero-shot: L2 {same}"]
    record = d.record()
    assert record.passed and record.baseline == str(base)
    assert record.compared == (line, *changes)
    # the report's record is what the lines print
    assert [f"  m-zero-shot: {x.describe()}" for x in record.cells[0].levels] == changes
    assert [(x.p_drop_holm, x.tests, x.note)
            for x in record.cells[0].levels] == [(1.0, 2, None)] * 2
    assert [x.level for x in record.cells[0].levels] == [0, 2]


def test_a_worse_model_fails_and_the_failure_names_the_level(tmp_path: Path) -> None:
    base = save(report(0.8), tmp_path / "b.json")
    options = GateOptions(base)
    d = decide(report(0.8, bad_levels=(2,)), plan_baseline(options, ["m-zero-shot"]), options)
    assert d.failed
    assert any("L2 dropped (level score -" in line for line in d.verdict.lines())
    assert d.record().cells[0].levels[1].regressed


def test_a_level_subset_of_the_same_suite_is_compared_not_refused(tmp_path: Path) -> None:
    base = save(report(), tmp_path / "b.json")
    plan = plan_baseline(GateOptions(base), ["m-zero-shot"], level_hashes={2: HASHES[2]})
    assert plan.gated
    other = {2: "sha256:" + "f" * 64}
    with pytest.raises(GraphInstructError, match=r"another suite \(level_2\.json differs"):
        plan_baseline(GateOptions(base), ["m-zero-shot"], level_hashes=other)


def test_an_older_baseline_is_checked_by_its_suite_hash_over_its_own_levels(
        tmp_path: Path) -> None:
    old = replace(report(), run=RunInfo(suite_hash="sha256:" + "a" * 64))
    base = save(old, tmp_path / "b.json")
    asked: list[object] = []

    def hash_for(levels: object) -> str:
        asked.append(levels)
        return "sha256:" + "a" * 64

    plan_baseline(GateOptions(base), ["m-zero-shot"], level_hashes={0: HASHES[0]},
                  suite_hash_for=hash_for)
    assert asked == [None]  # the baseline ran every level: hash the run's whole suite
    with pytest.raises(GraphInstructError, match="another suite"):
        plan_baseline(GateOptions(base), ["m-zero-shot"], level_hashes={0: HASHES[0]},
                      suite_hash_for=lambda _: "sha256:" + "b" * 64)


def test_strict_fails_on_anything_not_compared(tmp_path: Path) -> None:
    base = save(report(), tmp_path / "b.json")
    now = report()
    cell = now.cells[0]
    only_l0 = replace(now, cells=(build_cell(cell.metadata, [r for r in cell.per_instruction
                                                              if r.level == 0]),))
    lenient = GateOptions(base)
    d = decide(only_l0, plan_baseline(lenient, ["m-zero-shot"]), lenient)
    assert not d.failed and "not compared: L2" in d.compared_lines()[0]
    strict = GateOptions(base, strict=True)
    d = decide(only_l0, plan_baseline(strict, ["m-zero-shot"]), strict)
    assert d.failed
    assert any("not compared with the baseline: L2" in x for x in d.verdict.lines())


@pytest.mark.parametrize(("run", "why"), [
    (report(errors=120), "infrastructure error rate 100.0%"),
    (report(errors=20), "infrastructure error rate 16.7%"),
    (report(complete=False), "the run is incomplete"),
])
def test_an_untrusted_run_never_becomes_the_baseline(tmp_path: Path, run: RunReport,
                                                     why: str) -> None:
    path = save(report(0.8), tmp_path / "b.json")
    before = path.read_bytes()
    options = GateOptions(path, update_baseline=True)
    d = decide(run, plan_baseline(options, ["m-zero-shot"]), options)
    line = _settled(run, d)
    assert line is not None and line.startswith("baseline NOT written: ") and why in line
    assert line.endswith(f"{path} is unchanged")
    assert path.read_bytes() == before
    missing = tmp_path / "new.json"
    options = GateOptions(missing)
    d = decide(run, plan_baseline(options, ["m-zero-shot"]), options)
    assert d.failed and "it is not written either" in d.verdict.lines()[-1]
    assert "was not created" in str(_settled(run, d)) and not missing.exists()


def test_an_update_shows_the_change_against_the_old_baseline(tmp_path: Path) -> None:
    path = save(report(0.8), tmp_path / "b.json")
    options = GateOptions(path, update_baseline=True)
    worse = report(0.8, bad_levels=(0, 2))
    d = decide(worse, plan_baseline(options, ["m-zero-shot"]), options)
    assert not d.failed  # an update accepts the change on purpose ...
    line, *levels = d.update_lines()  # ... but says what it accepts
    assert line == ("baseline update, m-zero-shot against the old baseline (not a gate): "
                    "2 level(s) paired, regressed: L0, L2; newly failing 60, newly passing 0")
    assert [x.split(" level score")[0] for x in levels] == ["  m-zero-shot: L0",
                                                             "  m-zero-shot: L2"]
    assert all(x.endswith(": regressed") for x in levels)
    assert _settled(worse, d) == (f"baseline updated: {path} (the change against the "
                                         "old one is shown above)")
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["cells"][0]["summary"]["passed"] == 0
    assert written["gate"]["baseline_update"].startswith("baseline updated: ")


@pytest.mark.parametrize("text", [
    "{not json",  # a truncated report
    '[tool.graphinstruct]\nmodel = "x"\n',  # TOML
    '{"name": "package.json"}',  # another JSON document
    "version https://git-lfs.github.com/spec/v1\noid sha256:ab\nsize 12\n",  # a Git LFS pointer
    '<<<<<<< HEAD\n{"schema": "graphinstruct-report/2"}\n=======\n{}\n>>>>>>> b\n',
    "",  # an empty file
])
def test_an_update_refuses_to_overwrite_a_file_that_is_not_a_report(tmp_path: Path,
                                                                     text: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(text, encoding="utf-8")
    options = GateOptions(path, update_baseline=True)
    with pytest.raises(GraphInstructError) as caught:
        plan_baseline(options, ["m-zero-shot"])
    message = str(caught.value)
    assert message.startswith(f"--gi-update-baseline: refusing to overwrite {path}: ")
    assert "\n" not in message and "only a readable report of this plugin" in message
    assert path.read_text(encoding="utf-8") == text


def test_a_partial_old_baseline_is_replaced_by_an_update_with_a_note(tmp_path: Path) -> None:
    path = save(report(complete=False), tmp_path / "b.json")
    options = GateOptions(path, update_baseline=True)
    plan = plan_baseline(options, ["m-zero-shot"])
    assert plan.note is not None and "not shown against this run" in plan.note
    assert plan.report is not None  # read: the narrowing guard sees what it held
    d = decide(report(), plan, options)
    assert _settled(report(), d) == f"baseline updated: {path}"


def test_a_report_that_contradicts_itself_never_becomes_the_baseline(tmp_path: Path) -> None:
    # what every worker of --dist each reporting every item made: each instruction twice
    full = report()
    cell = full.cells[0]
    doubled = replace(full, cells=(replace(cell, per_instruction=cell.per_instruction * 2),))
    for options in (GateOptions(tmp_path / "new.json", update_baseline=True),
                    GateOptions(tmp_path / "missing.json")):
        d = decide(doubled, plan_baseline(options, ["m-zero-shot"]), options)
        written = settle_baseline(doubled, d)
        assert written is not None and written.fails_run
        assert written.line.startswith("baseline NOT written: the report contradicts itself "
                                       "(cell m-zero-shot holds instruction ")
        assert written.line.endswith("was not created")
        assert options.baseline is not None and not options.baseline.exists()


def test_without_a_baseline_nothing_is_compared_or_written() -> None:
    d = decide(report(), BaselinePlan(), GateOptions())
    assert d.compared_lines() == [] and _settled(report(), d) is None
    assert d.record().baseline is None and d.record().passed


def test_the_pass_all_gate_flows_through_the_decision() -> None:
    items = [ItemResult(instruction_id=f"L1-{k:03d}", level=1, cell="m-zero-shot", model="m",
                        strategy="zero-shot", level_score=0.5, outcome="failed",
                        passing_samples=k % 3, samples=(SampleResult(parsed=True,
                                                                     refusal=False),) * 2)
             for k in range(3)]
    r = with_pareto([build_cell(CellMetadata("m", "zero-shot"), items)])
    assert not decide(r, BaselinePlan(), GateOptions(min_pass_all=1 / 3)).failed
    d = decide(r, BaselinePlan(), GateOptions(min_pass_all=0.5))
    assert d.failed and d.record().failures == (
        "GATE FAILED (min_pass_all): m-zero-shot: L1 pass^2 0.3333 (items whose every one of "
        "2 samples passes; 3 items) is below --gi-min-pass-all=0.5",)


def test_an_update_from_a_narrower_run_is_refused_unless_asked(tmp_path: Path) -> None:
    path = save(report(), tmp_path / "b.json")
    before = path.read_bytes()
    full = report()
    narrow = replace(full, cells=(replace(full.cells[0], per_instruction=tuple(
        r for r in full.cells[0].per_instruction if r.level == 0)),))
    options = GateOptions(path, update_baseline=True)
    d = decide(narrow, plan_baseline(options, ["m-zero-shot"]), options)
    lost = "the baseline has 120 items in 2 levels; this run has 60 (it would lose L2)"
    assert d.failed and d.refused_update is not None and d.refused_update.startswith(lost)
    assert d.verdict.lines() == [f"GATE FAILED (baseline): baseline {path}: {lost}: refusing "
                                 "to replace it; pass --gi-replace-baseline to do it anyway"]
    line = _settled(narrow, d)
    assert line == f"baseline NOT written: {d.refused_update}; {path} is unchanged"
    assert path.read_bytes() == before
    # the same run, widened back: replaced as before
    d = decide(full, plan_baseline(options, ["m-zero-shot"]), options)
    assert not d.failed and d.refused_update is None
    # asked in so many words: replaced, with a note of what the new baseline lacks
    forced = GateOptions(path, update_baseline=True, replace_baseline=True)
    d = decide(narrow, plan_baseline(forced, ["m-zero-shot"]), forced)
    assert not d.failed and any(lost in n for n in d.notes)
    assert _settled(narrow, d) == (f"baseline updated: {path} (the change against the "
                                          "old one is shown above)")
    # no old baseline: a first one is written from any trusted run
    first = tmp_path / "first.json"
    options = GateOptions(first, update_baseline=True)
    d = decide(narrow, plan_baseline(options, ["m-zero-shot"]), options)
    assert _settled(narrow, d) == f"baseline written to {first}"


def test_baseline_cells_the_run_lacks_are_named_and_strict_fails_on_them(
        tmp_path: Path) -> None:
    one = report()
    few = replace(one.cells[0], metadata=replace(one.cells[0].metadata, strategy="few-shot"))
    path = save(replace(one, cells=(one.cells[0], few)), tmp_path / "b.json")
    options = GateOptions(path)
    d = decide(one, plan_baseline(options, ["m-zero-shot"]), options)
    assert d.cells_not_run == ("m-few-shot",) and not d.failed
    assert d.compared_lines()[-1] == (f"compared with baseline {path}: not compared: baseline "
                                      "cell m-few-shot (not in this run)")
    assert d.record().compared[-1] == d.compared_lines()[-1]  # the JSON report keeps it
    strict = GateOptions(path, strict=True)
    d = decide(one, plan_baseline(strict, ["m-zero-shot"]), strict)
    assert d.failed and d.verdict.lines() == [
        f"GATE FAILED (strict): baseline {path}: 1 cell(s) not compared with this run (it has "
        "no such cell): m-few-shot"]
    across = GateOptions(path, baseline_cell="m-few-shot")  # one cell picked on purpose
    d = decide(one, plan_baseline(across, ["m-zero-shot"]), across)
    assert d.cells_not_run == ()
