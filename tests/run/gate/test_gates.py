"""run.gates: the quality floor, baseline regressions, the error budget, baseline loading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.gate.comparison import compare_cells
from pytest_graphinstruct.run.gate.gates import (
    GateFailure,
    baseline_failures,
    check_gates,
    judge,
    load_baseline,
    narrowing,
)
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    CellReport,
    ItemResult,
    RunReport,
    SampleResult,
)


def run(scores: dict[str, float], outcomes: dict[str, str] | None = None) -> RunReport:
    outcomes = outcomes or {}
    items = [ItemResult(instruction_id=i, level=2, cell="m-zero-shot", model="m",
                        strategy="zero-shot", level_score=s,
                        outcome=outcomes.get(i, "passed" if s == 1.0 else "failed"))
             for i, s in scores.items()]
    return with_pareto([build_cell(CellMetadata("m", "zero-shot"), items)])



def gates(report: RunReport, baseline: dict[str, CellReport] | None,
          max_regression: float) -> list[GateFailure]:
    pairs = [(c, baseline[c.label]) for c in report.cells] if baseline else []
    return check_gates(report, compare_cells(pairs, max_regression=max_regression))


def test_fail_under() -> None:
    report = run({"a": 1.0, "b": 0.5})
    assert check_gates(report, fail_under=0.7) == []
    (g,) = check_gates(report, fail_under=0.8)
    assert g.gate == "fail_under" and "0.7500" in g.message


def test_real_regression_is_caught_and_names_instructions() -> None:
    ids = [f"L2-{n:03d}" for n in range(60)]
    base = {c.label: c for c in run(dict.fromkeys(ids, 1.0)).cells}
    worse = run({i: (0.4 if n < 30 else 1.0) for n, i in enumerate(ids)})
    (g,) = gates(worse, base, 0.05)
    assert g.gate == "regression"
    # the drop (of level score alone: these items keep no sample's verdict), the
    # Holm-adjusted p-value labelled, the tolerance and of what
    assert g.message.startswith("m-zero-shot: L2 dropped (level score -0.3000; 60 instructions; "
                                "Holm p(no drop)=")
    assert "by more than --gi-max-regression=0.05 of level score; newly failing: " in g.message
    assert "L2-000" in g.message and "L2-029" not in g.message.split("newly failing: ")[0]


def test_noise_and_small_drops_pass() -> None:
    ids = [f"L2-{n:03d}" for n in range(60)]
    base = {c.label: c for c in run(dict.fromkeys(ids, 1.0)).cells}
    one_drop = run({i: (0.0 if n == 0 else 1.0) for n, i in enumerate(ids)})
    assert gates(one_drop, base, 0.0) == []  # CI reaches 0
    small = run({i: 0.99 for i in ids})
    assert gates(small, base, 0.05) == []  # below DELTA
    assert gates(small, None, 0.0) == []


def test_error_budget() -> None:
    report = run({"a": 1.0, "b": 1.0, "c": 1.0}, outcomes={"c": "error"})
    verdict = judge(report, max_error_rate=0.5)
    assert not verdict.failed and verdict.error_rate == pytest.approx(1 / 3)
    verdict = judge(report, max_error_rate=0.3)
    assert verdict.failed and "error rate 33.3%" in verdict.lines()[0]


def test_load_baseline_and_failures(tmp_path: Path) -> None:
    p = tmp_path / "b.json"
    p.write_text(json.dumps(run({"a": 1.0, "b": 0.2}).to_json()), encoding="utf-8")
    base = load_baseline(p)
    assert baseline_failures(base) == {("m-zero-shot", "b")}
    with pytest.raises(GraphInstructError, match="baseline not found"):
        load_baseline(tmp_path / "none.json")
    p.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(GraphInstructError, match="not a GraphInstruct report"):
        load_baseline(p)


def test_compare_cell_names_new_failures_with_their_first_violation() -> None:
    from pytest_graphinstruct.run.records.results import SampleResult

    ids = [f"L2-{n:03d}" for n in range(40)]
    base = run({i: (0.5 if n == 39 else 1.0) for n, i in enumerate(ids)}).cells[0]
    items = []
    for n, i in enumerate(ids):
        fails = n < 20
        sample = SampleResult(parsed=True, refusal=False,
                              violations=("num_edges=4",) if fails else ())
        items.append(ItemResult(instruction_id=i, level=2, cell="m-zero-shot", model="m",
                                strategy="zero-shot", level_score=0.5 if fails else 1.0,
                                outcome="failed" if fails else "passed", samples=(sample,)))
    now = with_pareto([build_cell(CellMetadata("m", "zero-shot"), items)]).cells[0]
    (c,) = compare_cells([(now, base)], max_regression=0.05)
    assert c.regressed_levels == (2,)
    assert [x.instruction_id for x in c.newly_failing] == ids[:20]
    assert {x.first_violation for x in c.newly_failing} == {"num_edges=4"}
    assert [x.instruction_id for x in c.newly_passing] == ["L2-039"]
    assert c.diff.levels[2].mean_diff == pytest.approx((20 * -0.5 + 0.5) / 40)
    (small,) = compare_cells([(now, base)], max_regression=0.5)  # a real drop, but under DELTA
    assert small.regressed_levels == () and len(small.newly_failing) == 20


def _sampled(iid: str, passing: int, n: int = 3, outcome: str | None = None) -> ItemResult:
    return ItemResult(instruction_id=iid, level=int(iid[1]), cell="m-zero-shot", model="m",
                      strategy="zero-shot", level_score=passing / n, passing_samples=passing,
                      outcome=outcome or ("passed" if passing == n else "failed"),
                      samples=(SampleResult(parsed=True, refusal=False),) * n)


def test_min_pass_all_names_the_level_its_pass_all_k_and_the_floor() -> None:
    items = [_sampled("L1-001", 3), _sampled("L1-002", 3), _sampled("L2-001", 3),
             _sampled("L2-002", 2), _sampled("L2-003", 0),
             ItemResult(instruction_id="L2-004", level=2, cell="m-zero-shot", model="m",
                        strategy="zero-shot", outcome="error", error="HTTP 500")]
    report = with_pareto([build_cell(CellMetadata("m", "zero-shot"), items)])
    assert check_gates(report, min_pass_all=1 / 3) == []
    (g,) = check_gates(report, min_pass_all=0.5)
    assert g.gate == "min_pass_all" and g.cell == "m-zero-shot"
    assert g.message == ("m-zero-shot: L2 pass^3 0.3333 (items whose every one of 3 samples "
                         "passes; 3 items, 1 without an answer left out) is below "
                         "--gi-min-pass-all=0.5")
    verdict = judge(report, max_error_rate=1.0, min_pass_all=0.5)
    assert verdict.failed and verdict.lines() == [f"GATE FAILED (min_pass_all): {g.message}"]


def test_min_pass_all_with_one_sample_is_the_share_of_items_that_pass() -> None:
    assert check_gates(run({"a": 1.0, "b": 0.5}), min_pass_all=1.0) == []  # no samples
    items = [_sampled("L2-001", 1, n=1), _sampled("L2-002", 0, n=1)]
    one = with_pareto([build_cell(CellMetadata("m", "zero-shot"), items)])
    assert one.cells[0].summary.consistency is None  # not written with one sample
    (g,) = check_gates(one, min_pass_all=0.6)
    assert "L2 pass^1 0.5000" in g.message


def _cells(*cells: tuple[str, list[str]]) -> RunReport:
    """A report of cells ``(strategy, instruction ids)`` of model m (ids name their level)."""
    return with_pareto([build_cell(CellMetadata("m", strategy), [
        ItemResult(instruction_id=i, level=int(i[1]), cell=f"m-{strategy}", model="m",
                   strategy=strategy, level_score=1.0, outcome="passed") for i in ids])
        for strategy, ids in cells])


FULL = [f"L{lv}-{k:03d}" for lv in (0, 1, 2) for k in range(1, 5)]


def test_narrowing_names_what_a_narrower_run_would_lose() -> None:
    base = _cells(("zero-shot", FULL))
    assert narrowing(base, base) is None
    assert narrowing(_cells(("zero-shot", [*FULL, "L3-001"])), base) is None  # wider: fine
    one = _cells(("zero-shot", ["L0-001"]))
    assert narrowing(one, base) == ("the baseline has 12 items in 3 levels; this run has 1 "
                                    "(it would lose L1, L2 and 3 of the 4 instructions of L0)")
    levels = _cells(("zero-shot", [i for i in FULL if not i.startswith("L2")]))
    assert narrowing(levels, base) == ("the baseline has 12 items in 3 levels; this run has 8 "
                                       "(it would lose L2)")
    two = _cells(("zero-shot", FULL), ("few-shot", FULL))
    assert narrowing(base, two) == ("the baseline has 24 items in 3 levels and 2 cells; this "
                                    "run has 12 (it would lose cell m-few-shot)")
