"""run.comparison: what a cell comparison pairs, changes and leaves out (and why)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pytest_graphinstruct.run.aggregate import build_cell
from pytest_graphinstruct.run.gate.comparison import (
    IMPROVEMENT,
    NO_CHANGE,
    REGRESSION,
    CellComparison,
    Difference,
    compare_cells,
    omission_reason,
)
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    CellReport,
    ItemFilter,
    ItemResult,
    LevelOmission,
    PromptSet,
    SampleResult,
    ShardSelection,
)


def cell(scores: dict[str, float], *, outcomes: dict[str, str] | None = None,
         model: str = "m", version: str | None = None) -> CellReport:
    """A cell of items ``L<level>-<n>`` with the given level scores (1.0 passes)."""
    outcomes = outcomes or {}
    items = []
    for iid, s in scores.items():
        outcome = outcomes.get(iid, "passed" if s == 1.0 else "failed")
        sample = SampleResult(parsed=True, refusal=False,
                              violations=() if outcome == "passed" else ("num_nodes=5",))
        items.append(ItemResult(
            instruction_id=iid, level=int(iid[1]), cell=f"{model}-zero-shot", model=model,
            strategy="zero-shot", level_score=None if outcome == "error" else s,
            outcome=outcome, samples=(sample,), error="HTTP 500" if outcome == "error" else None,
            cluster=f"t{int(iid.split('-')[1]) % 8}"))
    return build_cell(CellMetadata(model, "zero-shot", model_version=version), items)


def ids(level: int, n: int) -> list[str]:
    return [f"L{level}-{k:03d}" for k in range(n)]


def test_a_large_drop_regresses_and_names_new_failures_errors_and_passes() -> None:
    base = cell({**dict.fromkeys(ids(2, 80), 1.0), "L2-900": 0.3, "L2-901": 0.9})
    now = cell({**{i: (0.2 if k < 40 else 1.0) for k, i in enumerate(ids(2, 80))},
                "L2-900": 1.0, "L2-901": 0.0}, outcomes={"L2-901": "error"})
    (c,) = compare_cells([(now, base)], max_regression=0.02)
    assert c.regressed_levels == (2,)
    assert [x.instruction_id for x in c.newly_failing] == ids(2, 40)
    assert {x.first_violation for x in c.newly_failing} == {"num_nodes=5"}
    assert [(x.instruction_id, x.was) for x in c.newly_passing] == [("L2-900", "failed")]
    assert [(x.instruction_id, x.was, x.now) for x in c.now_errors] == [
        ("L2-901", "failed", "error")]
    # the error is not paired: 81 instructions scored in both
    assert c.diff.levels[2].n == 81
    assert "81 instructions paired: L2 81" in c.scope()


def test_nothing_changed_is_no_regression_and_no_change() -> None:
    scores = {i: (0.5 if k % 3 == 0 else 1.0) for k, i in enumerate(ids(1, 60) + ids(3, 60))}
    (c,) = compare_cells([(cell(scores), cell(scores))], max_regression=0.02)
    assert c.regressed_levels == () and c.improved_levels == ()
    assert c.newly_failing == c.newly_passing == c.now_errors == ()
    assert c.not_compared == ()


def test_levels_the_run_left_out_are_named_with_the_filter_that_did_it() -> None:
    base = cell(dict.fromkeys(ids(0, 10) + ids(2, 10) + ids(4, 10), 1.0))
    now = cell(dict.fromkeys(ids(0, 10), 1.0))
    flt = ItemFilter(keyword="not L2 and not L4")
    (c,) = compare_cells([(now, base)], max_regression=0.02, run_filter=flt)
    assert c.not_compared == (
        LevelOmission(2, 10, 10, "left out by -k 'not L2 and not L4'"),
        LevelOmission(4, 10, 10, "left out by -k 'not L2 and not L4'"))
    assert c.scope().endswith("not compared: L2 (left out by -k 'not L2 and not L4'), "
                              "L4 (left out by -k 'not L2 and not L4')")


@pytest.mark.parametrize(("flt", "whole", "reason"), [
    (ItemFilter(levels=(0, 1)), True, "left out by --gi-levels"),
    (ItemFilter(shard=ShardSelection(2, 4)), False, "not in shard 2/4"),
    (ItemFilter(markers="level0"), True, "left out by -m 'level0'"),
    (ItemFilter(per_level=3), False, "left out by --gi-per-level=3"),
    (ItemFilter(per_level=3), True, "no score in this run (errors or no result)"),
    (None, True, "no score in this run (errors or no result)"),
])
def test_omission_reasons(flt: ItemFilter | None, whole: bool, reason: str) -> None:
    assert omission_reason(2, flt, whole_level=whole) == reason


def test_what_the_baseline_lacks_is_named_with_the_baseline_filter_that_did_it() -> None:
    base = cell(dict.fromkeys(ids(0, 10) + ids(1, 6), 1.0))
    now = cell(dict.fromkeys(ids(0, 10) + ids(1, 10) + ids(2, 10), 1.0))
    (c,) = compare_cells([(now, base)], max_regression=0.02,
                         baseline_filter=ItemFilter(levels=(0, 1)))
    assert c.not_compared == (
        LevelOmission(1, 4, 10, "no score in the baseline (errors or no result)",
                      missing_from="baseline"),
        LevelOmission(2, 10, 10, "left out by --gi-levels", missing_from="baseline"))
    assert c.scope().endswith(
        "not compared: L1: 4 of 10 instructions not in the baseline (no score in the baseline "
        "(errors or no result)), L2 (not in the baseline: left out by --gi-levels)")
    # both sides at once: the run's gaps first
    (c,) = compare_cells([(cell(dict.fromkeys(ids(2, 10), 1.0)), base)], max_regression=0.02)
    assert [(x.level, x.missing_from) for x in c.not_compared] == [
        (0, "run"), (1, "run"), (2, "baseline")]


def test_part_of_a_level_missing_is_counted() -> None:
    base = cell(dict.fromkeys(ids(1, 20), 1.0))
    now = cell(dict.fromkeys(ids(1, 12), 1.0))
    (c,) = compare_cells([(now, base)], max_regression=0.02,
                         run_filter=ItemFilter(per_level=12))
    (gap,) = c.not_compared
    assert (gap.items, gap.of, gap.whole_level) == (8, 20, False)
    assert gap.describe() == "L1: 8 of 20 instructions (left out by --gi-per-level=12)"


def test_model_version_difference_is_named() -> None:
    scores = dict.fromkeys(ids(0, 5), 1.0)
    (c,) = compare_cells([(cell(scores, version="v2"), cell(scores, version="v1"))],
                         max_regression=0.02)
    assert c.differences == (Difference("model_version", "model version (v1 vs v2)"),)


def test_the_family_spans_cells_and_levels() -> None:
    """Two cells judged together: a cell's big drop is found whichever cell it is."""
    good = {i: (0.5 if k % 2 else 1.0) for k, i in enumerate(ids(0, 60) + ids(2, 60))}
    worse = {i: (0.0 if i.startswith("L2") else s) for i, s in good.items()}
    a, b = cell(good, model="a"), cell(good, model="b")
    a2, b2 = cell(good, model="a"), cell(worse, model="b")
    out = compare_cells([(a2, a), (b2, b)], max_regression=0.02)
    assert [c.regressed_levels for c in out] == [(), (2,)]


def test_negative_allowed_regression_is_refused() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        compare_cells([], max_regression=-0.1)


def test_the_scope_says_how_small_a_drop_each_level_detects() -> None:
    scores = dict.fromkeys(ids(0, 10) + ids(2, 10) + ids(5, 2), 1.0)
    (plain,) = compare_cells([(cell(scores), cell(scores))], max_regression=0.02)
    assert plain.detectable == {} and "power" not in plain.scope()
    c = replace(plain, detectable={0: 0.031, 2: 0.0901, 5: float("inf")})
    assert c.scope() == (
        "m-zero-shot: 22 instructions paired: L0 10 (80 % power for drops ≥ 0.04), L2 10 (too "
        "small for --gi-max-regression=0.02: 80 % power only for drops ≥ 0.10), L5 2 (too few "
        "instructions or templates for 80 % power at any drop)")
    assert [lv for lv, _ in c.underpowered] == [2, 5]


def test_with_power_each_level_gets_its_prediction_over_the_whole_family() -> None:
    scores = {i: (0.5 if k % 3 == 0 else 1.0) for k, i in enumerate(ids(0, 40) + ids(2, 40))}
    (c,) = compare_cells([(cell(scores), cell(scores))], max_regression=0.02, power=True)
    assert set(c.detectable) == {0, 2}
    assert all(0.02 < d < 1 for d in c.detectable.values())
    (one,) = compare_cells([(cell(scores), cell(scores))], max_regression=0.02, power=True)
    (two, _) = compare_cells([(cell(scores), cell(scores))] * 2, max_regression=0.02,
                             power=True)  # a larger family: each test gets less of alpha
    assert all(two.detectable[lv] > one.detectable[lv] for lv in (0, 2))


def test_the_verdict_regression_outweighs_improvement() -> None:
    """``verdict``: regression when a level regressed (even with another improved), then
    improvement, else no significant change."""
    up_and_down = cell({**{i: 0.2 for i in ids(1, 80)}, **{i: 1.0 for i in ids(2, 80)}})
    before = cell({**{i: 1.0 for i in ids(1, 80)}, **{i: 0.2 for i in ids(2, 80)}})
    (mixed,) = compare_cells([(up_and_down, before)], max_regression=0.02)
    assert (mixed.regressed_levels, mixed.improved_levels) == ((1,), (2,))
    assert mixed.verdict == REGRESSION
    (better,) = compare_cells([(cell(dict.fromkeys(ids(2, 80), 1.0)),
                                cell(dict.fromkeys(ids(2, 80), 0.2)))], max_regression=0.02)
    assert better.verdict == IMPROVEMENT
    same = cell(dict.fromkeys(ids(2, 80), 0.7))
    (flat,) = compare_cells([(same, same)], max_regression=0.02)
    assert flat.verdict == NO_CHANGE


def test_a_changed_prompt_set_is_a_difference_the_compared_line_names() -> None:
    scores = dict.fromkeys(ids(0, 5), 1.0)
    terse = PromptSet("terse", "sha256:" + "cd" * 32, ("system_default",))
    base, now = cell(scores), cell(scores)
    ours = replace(base.metadata, tool="pytest-graphinstruct")  # a run's cell: recorded
    base = replace(base, metadata=ours)
    now = replace(now, metadata=replace(ours, prompts=terse))
    (c,) = compare_cells([(now, base)], max_regression=0.02)
    assert tuple(map(str, c.differences)) == ("prompt set (the packaged templates vs terse "
                             "(sha256:cdcdcdcdcdcd…))",)
    assert c.scope().endswith("; the cells differ in prompt set (the packaged templates vs "
                              "terse (sha256:cdcdcdcdcdcd…))")
    # a cell no run wrote (a release file, a hand-built one): no prompt set is unknown
    (c,) = compare_cells([(now, replace(base, metadata=replace(ours, tool=None)))],
                         max_regression=0.02)
    assert c.differences == ()


def test_each_levels_word_agrees_with_its_numbers() -> None:
    base = cell({f"L1-{n:03d}": 0.9 for n in range(30)} | {f"L2-{n:03d}": 0.9 for n in range(30)})
    now = cell({f"L1-{n:03d}": 0.9 - 1e-7 for n in range(30)}
               | {f"L2-{n:03d}": 0.9 - (0.4 if n < 4 else 0.0) for n in range(30)})
    (c,) = compare_cells([(now, base)], max_regression=0.02)
    # a change in a float's last digits is no change, however its sign falls
    assert c.level_verdict(1) == "unchanged (|change| < 0.0005)"
    # four of 30 worse: lower, not shown to be real (Holm over the two levels)
    assert c.level_verdict(2) == "lower, not significant"
    assert c.adjusted[2] > 0.05
    # ... while the level score's unadjusted interval lies wholly below 0: the words say why
    # (issue 48 §6), with the test's unadjusted p-value, labelled, and the family
    d = c.diff.levels[2]
    assert d.high < 0 and d.passes is not None and d.passes.low == d.passes.high == 0.0
    assert c.interval_note(2) == (
        "the level-score interval excludes 0 but is unadjusted and not the test: "
        f"p(no drop)={d.p_drop:.2g} unadjusted, Holm over 2 level tests")
    x = c.level_change(2)
    assert x.describe() == (
        f"L2 level score {d.mean_diff:+.3f} [{d.low:+.3f}, {d.high:+.3f}], pass rate +0.000 "
        f"[+0.000, +0.000]; Holm p(no drop)={c.adjusted[2]:.2g}: lower, not significant "
        f"({c.interval_note(2)})")
    assert c.interval_note(1) is None  # unchanged, interval about 0


def test_improved_needs_holm_as_regressed_does() -> None:
    """Issue 48 §6: four of 30 instructions better by 0.4 — a mean rise above the tolerance
    with the whole unadjusted interval above 0, which the old rule called "improved" — is not
    a rise the test shows (its p-value of "no rise" is at least 2⁻⁴); eighty all better is."""
    base = cell({f"L2-{n:03d}": 0.5 for n in range(30)})
    now = cell({f"L2-{n:03d}": 0.9 if n < 4 else 0.5 for n in range(30)})
    (c,) = compare_cells([(now, base)], max_regression=0.02)
    d = c.diff.levels[2]
    assert d.mean_diff > 0.02 and d.low > 0  # the old rule's "improved"
    assert c.improved_levels == () and c.verdict == NO_CHANGE
    # the sign-flip's 2⁻⁴ (doubled where the level's two tests are combined)
    assert 0.05 < d.p_rise <= 0.14 and c.adjusted_rise[2] == d.p_rise
    assert c.level_verdict(2) == "higher, not significant"
    assert c.interval_note(2) == (
        "the level-score interval excludes 0 but is unadjusted and not the test: "
        f"p(no rise)={d.p_rise:.2g} unadjusted, Holm over 1 level test")
    assert c.level_change(2).p_text() == f"Holm p(no rise)={d.p_rise:.2g}"
    (all_up,) = compare_cells([(cell(dict.fromkeys(ids(2, 80), 0.9)),
                                cell(dict.fromkeys(ids(2, 80), 0.5)))], max_regression=0.02)
    assert all_up.improved_levels == (2,) and all_up.level_verdict(2) == "improved"
    # their pass rate did not move (every sample failed on both sides): the words say so
    assert all_up.interval_note(2) == ("the pass-rate interval reaches 0: the verdict is of "
                                       "the level score")
    # a real rise within the tolerance has words of its own
    (small,) = compare_cells([(cell(dict.fromkeys(ids(2, 80), 0.51)),
                               cell(dict.fromkeys(ids(2, 80), 0.5)))], max_regression=0.02)
    assert small.level_verdict(2) == ("higher by 0.010, a real rise but within "
                                      "--gi-max-regression=0.02")


def _five(passing: list[int]) -> CellReport:
    """A cell of five samples per L2 instruction, ``passing[k]`` of them passing (the level
    score the share): each keeps every sample's verdict, so the pass-count test runs too."""
    items = []
    for k, x in enumerate(passing):
        samples = tuple(SampleResult(parsed=True, refusal=False,
                                     violations=() if j < x else ("num_nodes=5",))
                        for j in range(5))
        items.append(ItemResult(
            instruction_id=f"L2-{k:03d}", level=2, cell="m-zero-shot", model="m",
            strategy="zero-shot", level_score=x / 5, outcome="passed" if x == 5 else "failed",
            samples=samples, passing_samples=x))
    return build_cell(CellMetadata("m", "zero-shot", samples_per_instruction=5), items)


def test_a_real_drop_beside_intervals_that_reach_zero_says_why() -> None:
    """Issue 48 §2/§6: three of 30 instructions now always wrong — fifteen samples turned, none
    the other way.  The pass-count test sees it (regressed); both intervals, over thirty
    instructions of which three changed, reach 0: the verdict's words say why."""
    base = _five([5] * 30)
    now = _five([0, 0, 0] + [5] * 27)
    (c,) = compare_cells([(now, base)], max_regression=0.02)
    d = c.diff.levels[2]
    assert c.regressed_levels == (2,) and d.high > 0
    assert d.passes is not None and d.passes.change == pytest.approx(-0.1) and d.passes.high > 0
    note = ("both intervals reach 0: they count the differences between instructions as "
            "noise; the test holds this suite's instructions fixed and is one-sided")
    assert c.interval_note(2) == note
    x = c.level_change(2)
    assert (x.measure, x.pass_change, x.verdict, x.note) == ("level score", d.passes.change,
                                                             "regressed", note)
    assert x.p_drop_holm == c.adjusted[2] == d.p_drop and x.tests == 1
    assert x.describe().endswith(f"; Holm p(no drop)={d.p_drop:.2g}: regressed ({note})")
    assert x.short_text() == f"{d.mean_diff:+.3f}, pass rate -0.100"


def test_the_notes_of_each_kind_of_comparison() -> None:
    """Synthetic levels: the template-clustered test's interval is its own t's (it only
    differs in being two-sided); an adaptive level is of pass rate on paired samples; no
    note where interval and verdict read alike."""
    from pytest_graphinstruct.score.regression.bootstrap import PairedDiff, PairedResult

    def one(d: PairedDiff, **kw: object) -> CellComparison:
        result = PairedResult({2: d}, d, None, (), (), 0, 0, 0.95)
        return CellComparison("m", "m", result, 0.02, family=1, **kw)  # type: ignore[arg-type]

    crossing = PairedDiff(30, -0.05, -0.10, 0.001, 0.1, 0.9, p_drop=0.04)
    templates = one(crossing, regressed_levels=(2,), adjusted={2: 0.04}, test="templates")
    assert templates.interval_note(2) == ("the interval reaches 0: two-sided at 95 %; the "
                                          "test is one-sided")
    auto = one(replace(crossing, measure="pass rate"), regressed_levels=(2,),
               adjusted={2: 0.04}, samples_cap=5)
    assert auto.interval_note(2) == ("the interval reaches 0: it counts the differences "
                                     "between instructions as noise; the test holds this "
                                     "suite's instructions fixed and is one-sided")
    assert auto.level_change(2).changes_text() == "pass rate on paired samples -0.050 " \
        "[-0.100, +0.001]"
    below = PairedDiff(30, -0.05, -0.10, -0.01, 0.1, 0.9, p_drop=0.001)
    assert one(below, regressed_levels=(2,), adjusted={2: 0.001}).interval_note(2) is None
    # a level score up while fewer samples pass: the words name both, no note
    mixed = one(replace(below, mean_diff=0.01, low=-0.01, high=0.03), adjusted={2: 0.001},
                adjusted_rise={2: 0.9})
    assert mixed.level_verdict(2) == "higher, but fewer samples pass (Holm p(no drop)=0.001)"
    assert mixed.interval_note(2) is None


def sampled(outcomes: dict[str, tuple[bool, ...]], *, cap: int | None) -> CellReport:
    """A cell whose items hold these per-sample outcomes; ``cap``: a --gi-samples=auto cell."""
    items = [ItemResult(instruction_id=i, level=int(i[1]), cell="m-zero-shot", model="m",
                        strategy="zero-shot", outcome="passed" if all(s) else "failed",
                        level_score=sum(s) / len(s),
                        samples=tuple(SampleResult(parsed=True, refusal=False,
                                                   violations=() if x else ("num_nodes=5",))
                                      for x in s)) for i, s in outcomes.items()]
    fixed = len(next(iter(outcomes.values())))
    meta = CellMetadata("m", "zero-shot", samples_per_instruction=None if cap else fixed,
                        samples_cap=cap)
    return build_cell(meta, items)


def test_a_run_of_another_sample_count_gets_its_power_in_pass_rate() -> None:
    # the README's design: a baseline of five samples, runs of one; the run is judged on pass
    # counts, so the figure is the smallest pass-rate drop the pass-count test sees
    def five(k: int) -> tuple[bool, ...]:
        return tuple(((k * 7 + j) % 10) < 7 for j in range(5))  # about 70 % passing

    def one(k: int) -> tuple[bool, ...]:
        return (((k * 3) % 10) < 7,)

    base = sampled({i: five(k) for lv in (0, 2) for k, i in enumerate(ids(lv, 200))}, cap=None)
    now = sampled({i: one(k) for lv in (0, 2) for k, i in enumerate(ids(lv, 200))}, cap=None)
    (c,) = compare_cells([(now, base)], max_regression=0.02, power=True)
    assert c.diff.levels[2].measure == "pass rate"
    assert set(c.detectable) == {0, 2}
    assert all(0.02 < d < 0.5 for d in c.detectable.values())
    assert "(80 % power for pass-rate drops ≥ " in c.scope() or \
        "only for pass-rate drops ≥ " in c.scope()
    assert c.level_change(2).detectable == c.detectable[2]
    # more run samples see smaller drops
    now5 = sampled({i: five(k + 1) for lv in (0, 2) for k, i in enumerate(ids(lv, 200))},
                   cap=None)
    now3 = sampled({i: five(k + 1)[:3] for lv in (0, 2) for k, i in enumerate(ids(lv, 200))},
                   cap=None)
    (c3,) = compare_cells([(now3, base)], max_regression=0.02, power=True)
    assert c3.detectable[2] < c.detectable[2]
    # the same count: a level-score figure, not a pass-rate one
    (same,) = compare_cells([(now5, base)], max_regression=0.02, power=True)
    assert same.diff.levels[2].measure == "level score" and "pass-rate drops" not in same.scope()


def test_an_adaptive_cell_is_judged_by_replaying_its_looks() -> None:
    base = sampled(dict.fromkeys(ids(2, 40), (True,) * 5), cap=None)
    now = sampled({i: ((False,) if k < 20 else (True,)) for k, i in enumerate(ids(2, 40))},
                  cap=5)
    (c,) = compare_cells([(now, base)], max_regression=0.02, power=True)
    assert c.regressed_levels == (2,) and c.samples_cap == 5
    look = c.looks[2]
    assert (look.looks, look.samples, look.state) == (1, 40, "regressed")
    assert c.diff.levels[2].mean_diff == pytest.approx(-0.5)
    assert c.diff.levels[2].p_drop == pytest.approx(0.5 ** 20)
    assert c.detectable == {}  # the power model is of a fixed sample count
    assert "L2 1 look, 40 sample(s) (1.0 per instruction), regressed" in c.scope()


def test_a_fixed_run_against_an_adaptive_baseline_is_not_like_with_like() -> None:
    base = sampled(dict.fromkeys(ids(2, 10), (True,)), cap=5)
    now = sampled(dict.fromkeys(ids(2, 10), (True,) * 5), cap=None)
    (c,) = compare_cells([(now, base)], max_regression=0.02)
    assert Difference("samples", "samples per instruction (auto:5 vs 5)") in c.differences
    (back,) = compare_cells([(base, now)], max_regression=0.02)
    assert not any(d.what == "samples" for d in back.differences)


def test_an_adaptive_report_missing_samples_its_looks_ask_for_is_not_judged() -> None:
    from pytest_graphinstruct.run.gate.gates import check_gates
    from pytest_graphinstruct.run.records.results import RunReport

    base = sampled(dict.fromkeys(ids(2, 40), (True,) * 5), cap=None)
    # four differing first pairs leave the level open: the looks ask for second samples,
    # which this report (one sample each) does not hold
    now = sampled({i: ((False,) if k < 4 else (True,)) for k, i in enumerate(ids(2, 40))},
                  cap=5)
    (c,) = compare_cells([(now, base)], max_regression=0.02)
    assert c.looks_open == 40
    failures = check_gates(RunReport((now,)), [c])
    assert [f.gate for f in failures] == ["baseline"]
    assert "lacks 40 sample(s) its looks ask for" in failures[0].message
