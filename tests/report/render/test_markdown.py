"""The Markdown summary (report/render/markdown.py): content, caps,
escaping, GITHUB_STEP_SUMMARY."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.report.render.markdown import code, md, render_markdown, write_markdown
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.gate.plan import BaselinePlan, GateOptions
from pytest_graphinstruct.run.gate.verdict import decide
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    ItemResult,
    RunReport,
    SampleResult,
)

IDS = [f"L2-{n:03d}" for n in range(40)]


def _run(failing: set[str], why: str = "num_edges=4", label: str = "m") -> RunReport:
    items = []
    for i in IDS:
        bad = i in failing
        sample = SampleResult(parsed=True, refusal=False, violations=(why,) if bad else ())
        items.append(ItemResult(instruction_id=i, level=2, cell=f"{label}-zero-shot", model=label,
                                strategy="zero-shot", level_score=0.4 if bad else 1.0,
                                outcome="failed" if bad else "passed", samples=(sample,)))
    return with_pareto([build_cell(CellMetadata(label, "zero-shot"), items)])


def _summary(base: RunReport, now: RunReport, max_regression: float = 0.05,
             **kw: object) -> str:
    plan = BaselinePlan(Path("ci/baselines/b.json"), base, {c.label: c for c in base.cells})
    decision = decide(now, plan, GateOptions(plan.path, max_regression=max_regression))
    return render_markdown(now, decision, **kw)  # type: ignore[arg-type]


def test_a_real_regression_fails_and_lists_new_failures_with_their_violation() -> None:
    text = _summary(_run({"L2-039"}), _run(set(IDS[:20])))
    assert text.startswith("## GraphInstruct: ❌ gate failed\n")
    assert "GATE FAILED (regression)" in text
    assert re.search(r"^\| L2 \| 40 \| level score -0\.285 \\\[-0\.391, -0\.179\\\], pass rate "
                     r"-0\.475 \\\[-0\.652, -0\.298\\\] \| Holm p\(no drop\)=[0-9.e-]+ \| "
                     r"\*\*regressed\*\* \|$", text, re.M), text
    assert "| level | instructions | change [unadjusted 95% CI] | p (Holm-adjusted over 1 " \
        "level test) | verdict |" in text
    assert "Newly failing (20):" in text
    assert "- `L2-000` (L2): num\\_edges=4" in text
    assert "… and 5 more (HTML report)" in text  # capped at 15
    assert "Newly passing (1): `L2-039`" in text
    assert "| `m-zero-shot` | 0.700 (-0.285, pass rate -0.475 ⚠) |" in text
    assert "baseline: `ci/baselines/b.json`" in text
    assert re.search(r"^- compared: m-zero-shot: 40 instructions paired: L2 40 \(.*"
                     r"drops ≥ 0\.\d\d\)$", text, re.M)


def test_new_failures_that_are_noise_are_a_note_not_a_failure() -> None:
    text = _summary(_run(set()), _run({"L2-003"}))
    assert text.startswith("## GraphInstruct: ✅ passed\n")
    # one newly failing item of 40: lower, and the row says it is not a regression (one
    # discordant item: the sign-flip gives about 1/2; its Holm-adjusted p-value, labelled)
    assert re.search(r"\| Holm p\(no drop\)=(0\.\d+|1) \| lower, not significant \|", text), text
    assert "> `m-zero-shot`: 1 newly failing item(s) on levels whose drop is not significant" \
        in text


def test_without_a_baseline_it_is_the_run_alone() -> None:
    now = _run({"L2-001"})
    text = render_markdown(now, decide(now, BaselinePlan(), GateOptions()))
    assert "no baseline gate configured" in text and "Newly failing" not in text
    assert "| `m-zero-shot` |" in text


def test_hostile_texts_cannot_inject_markdown_or_html() -> None:
    evil = "<img src=x onerror=alert(1)> [click](http://evil) | `code` *bold*\n# heading"
    text = _summary(_run(set()), _run(set(IDS[:30]), why=evil))
    line = next(x for x in text.splitlines() if x.startswith("- `L2-000`"))
    assert not re.search(r"(?<!\\)[<>\[\]|`*]", line.split(": ", 1)[1])
    assert "\\<img" in line and "\\[click\\]" in line and "\\|" in line
    assert code("a|b`c\nd") == "`a¦b'c d`"


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=400))
def test_md_is_one_bounded_line_with_no_active_character(text: str) -> None:
    out = md(text, 50)
    assert "\n" not in out and "\r" not in out
    unescaped = out.replace("\\\\", "")
    for ch in "<>[]|`*_":
        assert all(unescaped[i - 1] == "\\" for i, c in enumerate(unescaped) if c == ch and i)
        assert not unescaped.startswith(ch)


def test_write_appends_to_the_github_step_summary(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    step = tmp_path / "step.md"
    step.write_text("earlier\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    write_markdown(tmp_path / "s.md", "## hi\n")
    assert (tmp_path / "s.md").read_text(encoding="utf-8") == "## hi\n"
    assert step.read_text(encoding="utf-8") == "earlier\n## hi\n"
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    write_markdown(tmp_path / "t.md", "x\n")
    assert step.read_text(encoding="utf-8") == "earlier\n## hi\n"


def test_failed_tests_without_benchmark_make_the_summary_say_failed_and_why() -> None:
    now = _run({"L2-001", "L2-002"})
    decision = decide(now, BaselinePlan(), GateOptions())
    assert not decision.failed  # no gate: the verdict alone would say passed
    text = render_markdown(now, decision, failed_tests=2, benchmark=False)
    assert text.startswith("## GraphInstruct: ❌ failed\n")
    assert ("- 2 test(s) failed, so pytest exits 1: 2 item(s) violated their instructions and, "
            "without --gi-violations=report, each violation fails its test") in text
    assert "✅" not in text
    assert render_markdown(now, decision).startswith("## GraphInstruct: ✅ passed\n")


def test_a_dash_in_the_levels_table_has_a_legend() -> None:
    l1 = ItemResult(instruction_id="L1-001", level=1, cell="x-zero-shot", model="x",
                    strategy="zero-shot", level_score=1.0, outcome="passed")
    both = with_pareto([build_cell(CellMetadata("m", "zero-shot"), _run(set()).cells[0]
                                   .per_instruction),
                        build_cell(CellMetadata("x", "zero-shot"), [l1])])
    text = render_markdown(both, decide(both, BaselinePlan(), GateOptions()))
    assert "| `m-zero-shot` | — | 1.000 |" in text
    assert "— : no level score — the cell did not run that level" in text
    alone = _run(set())
    assert "— : no level score" not in render_markdown(
        alone, decide(alone, BaselinePlan(), GateOptions()))


def _sampled(samples: int) -> RunReport:
    ok = SampleResult(parsed=True, refusal=False)
    items = [ItemResult(instruction_id=iid, level=1, cell="m-zero-shot", model="m",
                        strategy="zero-shot", outcome="failed", level_score=0.5,
                        samples=(ok,) * samples,
                        passing_samples=passing if samples > 1 else None)
             for iid, passing in (("L1-001", 1), ("L1-<b>*x*", 2))]
    return with_pareto([build_cell(CellMetadata("m", "zero-shot"), items)])


def test_consistency_and_every_flaky_item_with_several_samples_only() -> None:
    text = render_markdown(_sampled(3), decide(_sampled(3), BaselinePlan(), GateOptions()))
    assert "### Consistency over samples" in text
    assert "| `m-zero-shot` | all | 3 | 2 | 0 | 0.500 [" in text
    assert "- `m-zero-shot` (2): `L1-001` 1/3, `L1-<b>*x*` 2/3" in text  # a code span
    one = render_markdown(_sampled(1), decide(_sampled(1), BaselinePlan(), GateOptions()))
    assert "Consistency" not in one and "flaky" not in one.lower()


def test_a_changed_fingerprint_is_a_line_of_the_summary() -> None:
    """Issue 47 §9: the run's warning of a changed system_fingerprint reaches the Markdown."""
    from dataclasses import replace

    from pytest_graphinstruct.run.records.results import FingerprintChange, RunInfo

    now = _run(set())
    change = FingerprintChange("m-2024", "fp_<b>new", {"fp_old": 3})
    text = render_markdown(replace(now, run=RunInfo(fingerprint_changes={"m": change})),
                           decide(now, BaselinePlan(), GateOptions()))
    (line,) = [x for x in text.splitlines() if "fingerprint" in x]
    assert line == ("- m: the endpoint serves m-2024 (fp\\_\\<b\\>new), and 3 answer(s) "
                    "cached from m-2024 came with another system\\_fingerprint (3 with "
                    "fp\\_old): reused (a fingerprint is shown, never compared), but the "
                    "provider's backend configuration changed since")  # no HTML, no emphasis
    plain = render_markdown(now, decide(now, BaselinePlan(), GateOptions()))
    assert "fingerprint" not in plain
