"""``plan``: what the regression gate can detect with a report as its baseline."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.commands.plan import plan_lines, plan_report
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    ItemResult,
    RunReport,
    SampleResult,
)
from pytest_graphinstruct.score.regression.power import detectable_drop, level_noise
from pytest_graphinstruct.suite.loader import load_suite

ROOT = Path(__file__).resolve().parents[3]
PASS = SampleResult(parsed=True, refusal=False)
FAIL = SampleResult(parsed=True, refusal=False, violations=("num_nodes=5",))


def items(model: str, level: int, templates: int, per: int, *, k: int = 5, seed: int = 0,
          clusters: bool = True) -> list[ItemResult]:
    rng = np.random.default_rng(seed)
    out = []
    for t in range(templates):
        for j in range(per):
            passes = int(rng.integers(0, k + 1))
            iid = f"L{level}-{t * per + j + 1:03d}"
            out.append(ItemResult(
                instruction_id=iid, level=level, cell=f"{model}-zero-shot", model=model,
                strategy="zero-shot", outcome="passed" if passes == k else "failed",
                samples=(PASS,) * passes + (FAIL,) * (k - passes),
                level_score=0.3 + 0.6 * passes / k + float(rng.uniform(0, 0.02)),
                cluster=f"t{t}" if clusters else None))
    return out


def report(**kw: bool) -> RunReport:
    cells = [build_cell(CellMetadata(m, "zero-shot", samples_per_instruction=5),
                        items(m, 0, 4, 25, seed=s, **kw) + items(m, 2, 13, 15, seed=s + 1, **kw))
             for m, s in (("a", 0), ("b", 7))]
    return with_pareto(cells)


def test_a_row_per_cell_and_level() -> None:
    plans = plan_report(report())
    assert [(p.cell, p.level) for p in plans] == [("a-zero-shot", 0), ("a-zero-shot", 2),
                                                  ("b-zero-shot", 0), ("b-zero-shot", 2)]
    first = plans[0]
    assert (first.noise.instructions, first.noise.clusters, first.samples) == (100, 4, 5)
    assert not first.noise.conservative
    # the family is every level of every cell: 4 tests; the gate's default test
    assert first.detectable == pytest.approx(
        detectable_drop(first.noise, delta=0.02, tests=4, test="suite"), rel=1e-9)
    templates = plan_report(report(), test="templates")[0]
    assert templates.detectable == pytest.approx(
        detectable_drop(first.noise, delta=0.02, tests=4, test="templates"), rel=1e-9)
    assert first.samples_needed is None and first.instructions_needed is None


def test_figures_for_other_samples_and_a_drop() -> None:
    plans = plan_report(report(), samples=20, drop=0.05)
    base = plan_report(report())
    for p, b in zip(plans, base, strict=True):
        assert p.samples == 20 and p.detectable <= b.detectable
        assert p.samples_needed is None or p.samples_needed >= 1
        assert p.instructions_needed is None or p.instructions_needed >= 1


def test_the_table_and_the_rule_line() -> None:
    lines = plan_lines(plan_report(report(), drop=0.05), name="r.json", drop=0.05)
    text = "\n".join(lines)
    assert lines[0] == "a-zero-shot (r.json; baseline: 5 sample(s) per instruction)"
    assert "detectable drop (80%)" in text and "samples for 0.05" in text
    assert "instructions for 0.05" in text
    assert lines[-2].startswith("rule: a level regresses when Holm over the 4 level test(s)")
    assert "--max-regression=0.02" in lines[-2]


def test_reports_without_clusters_count_each_instruction_alone_or_use_the_suite() -> None:
    rep = report(clusters=False)
    plans = plan_report(rep)
    assert plans[0].noise.clusters == 100 and plans[0].unknown_clusters == 100
    assert "each counted as its own" in "\n".join(plan_lines(plans, name="r"))
    suite = load_suite(ROOT / "instructions", levels=[0, 2])
    derived = plan_report(rep, suite=suite)
    # ids L0-001..100 and L2-001..195 of the committed suite: their templates
    assert derived[0].noise.clusters == 4 and derived[0].unknown_clusters == 0


def test_one_cluster_detects_nothing_by_templates_but_the_suite_test_sees() -> None:
    """The template-clustered test cannot estimate shared noise from one template; the
    fixed-suite test does not need it."""
    one = [r for r in items("a", 1, 1, 30)]
    cell = with_pareto([build_cell(CellMetadata("a", "zero-shot"), one)])
    plans = plan_report(cell, test="templates")
    assert math.isinf(plans[0].detectable)
    assert "none" in "\n".join(plan_lines(plans, name="r", test="templates"))
    assert 0.02 < plan_report(cell)[0].detectable < 1


def test_too_few_instructions_detect_nothing_on_the_suite() -> None:
    """Four instructions of one sample: the sign-flip test's smallest p-value, 1/16, is above
    Holm's threshold, so no drop can be seen; with five samples each the pass-count test's
    smallest, 2·252⁻⁴, is far below it."""
    one = [r for r in items("a", 1, 2, 2, k=1)]
    plans = plan_report(with_pareto([build_cell(CellMetadata("a", "zero-shot"), one)]))
    assert math.isinf(plans[0].detectable)
    five = [r for r in items("a", 1, 2, 2)]
    plans = plan_report(with_pareto([build_cell(CellMetadata("a", "zero-shot"), five)]))
    assert 0.02 < plans[0].detectable < 1


@pytest.mark.parametrize(("kw", "message"), [
    ({"samples": 0}, "--samples must be >= 1"),
    ({"drop": 0.0}, "--drop must be within (0, 1]"),
    ({"max_regression": 1.5}, "--max-regression must be within 0..1"),
])
def test_bad_numbers(kw: dict[str, float], message: str) -> None:
    with pytest.raises(GraphInstructError, match=message.replace("(", r"\(").replace(
            ")", r"\)").replace("]", r"\]")):
        plan_report(report(), **kw)  # type: ignore[arg-type]


def test_no_scored_instruction_is_an_error() -> None:
    empty = with_pareto([build_cell(CellMetadata("a", "zero-shot"), [ItemResult(
        instruction_id="L0-001", level=0, cell="a-zero-shot", model="a", strategy="zero-shot",
        outcome="error", error="timeout")])])
    with pytest.raises(GraphInstructError, match="no scored instruction"):
        plan_report(empty)


def test_level_noise_of_the_plan_is_the_power_modules() -> None:
    rows = items("a", 0, 4, 25)
    plans = plan_report(with_pareto([build_cell(CellMetadata("a", "zero-shot"), rows)]))
    expected = level_noise([r.level_score or 0.0 for r in rows], [r.cluster or "" for r in rows],
                           samples=5, pass_shares=[r.pass_share for r in rows])
    assert plans[0].noise == expected


# -- the command ------------------------------------------------------------------------------

def test_plan_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "base.json"
    path.write_text(json.dumps(report().to_json()), encoding="utf-8")
    assert main(["plan", str(path), "--drop", "0.05", "--samples", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"a-zero-shot ({path}; baseline: 5 sample(s) per instruction)")
    last = out.rstrip().splitlines()
    assert "L0" in out and "L2" in out and last[-2].startswith("rule:")
    # a baseline of several samples: what --gi-samples=auto measured against it
    assert last[-1].startswith("--gi-samples=auto against this baseline: about the detectable")


def test_a_one_sample_baseline_says_nothing_of_auto() -> None:
    one = with_pareto([build_cell(CellMetadata("a", "zero-shot", samples_per_instruction=1),
                                  items("a", 0, 4, 25, k=1))])
    lines = plan_lines(plan_report(one), name="one.json")
    assert lines[-1].startswith("rule:")


@pytest.mark.parametrize("args", [["--samples", "0"], ["--drop", "2"],
                                  ["--max-regression", "-1"], ["--suite", "/nonexistent"]])
def test_plan_command_bad_input_is_one_line_and_status_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    path = tmp_path / "base.json"
    path.write_text(json.dumps(report().to_json()), encoding="utf-8")
    assert main(["plan", str(path), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_plan_command_on_a_missing_file(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(tmp_path / "nope.json")]) == 2
    err = capsys.readouterr().err
    assert "nope.json" in err and err.count("\n") == 1
