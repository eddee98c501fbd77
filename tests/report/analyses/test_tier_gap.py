"""F1, the tier gap per level (report/analyses/tier_gap.py): the three rules by hand, the
ratio of the largest gap, models without a tier, and the paper's Tab. 12 and Tab. 37."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.report.analyses.models_table import load_models_table
from pytest_graphinstruct.report.analyses.run_set import Run, read_runs
from pytest_graphinstruct.report.analyses.table import render
from pytest_graphinstruct.report.analyses.tier_gap import tier_gap, tier_means

from .analyses_data import HALF, family, number, paper_table, published_runs, uniform, write_cell


def test_tier_gap_rules_on_known_numbers(tmp_path: Path) -> None:
    runs = read_runs(family(tmp_path), load_models_table())
    per_level, members, _ = tier_means(runs, "best-per-level")
    assert members["T2"] == ["GPT-4o"] and members["T3"] == ["GPT-4o-mini"]
    assert per_level[4]["T2"] == pytest.approx(0.9) and per_level[2]["T3"] == pytest.approx(0.6)
    cells, _, _ = tier_means(runs, "all-cells")
    assert cells[4]["T2"] == pytest.approx((0.8 * 3 + 0.9) / 4)
    with pytest.raises(GraphInstructError, match="unknown tier-gap rule"):
        tier_means(runs, "median")


def _t1_t3(tmp_path: Path) -> list[Run]:
    """Sonnet-4.6 (T1): zero-shot 0.9 everywhere (S_total 0.9), few-shot 0.95 but 0.5 at L2
    (S_total 0.8825); GPT-3.5 (T3): zero-shot 0.5 but 0.3 at L2; a model without a tier."""
    sonnet_fs = {**uniform(0.95, 1), 2: [0.5]}
    files = [write_cell(tmp_path, "sonnet46", "zero-shot", uniform(0.9, 1)),
             write_cell(tmp_path, "sonnet46", "few-shot", sonnet_fs),
             write_cell(tmp_path, "gpt35turbo", "zero-shot", {**uniform(0.5, 1), 2: [0.3]}),
             write_cell(tmp_path, "<i>mystery</i>", "zero-shot", uniform(0.1, 1),
                        name="m.quality.json")]
    return read_runs(files, load_models_table())


@pytest.mark.parametrize(("rule", "t1_l0", "t1_l2"), [
    ("best-profile", 0.9, 0.9),        # the S_total-best cell: zero-shot, all its levels
    ("best-per-level", 0.95, 0.9),     # each level's best strategy
    ("all-cells", 0.925, 0.7),         # both cells count once
])
def test_each_rule_by_hand(tmp_path: Path, rule: str, t1_l0: float, t1_l2: float) -> None:
    means, members, untiered = tier_means(_t1_t3(tmp_path), rule)
    assert (means[0]["T1"], means[2]["T1"]) == pytest.approx((t1_l0, t1_l2))
    assert (means[0]["T3"], means[2]["T3"]) == pytest.approx((0.5, 0.3))
    assert means[0]["T2"] is None
    assert members == {"T1": ["Sonnet-4.6"], "T2": [], "T3": ["GPT-3.5"]}
    assert untiered == ["<i>mystery</i>"]


def test_the_gap_its_peak_ratios_and_notes(tmp_path: Path) -> None:
    result = tier_gap(_t1_t3(tmp_path))
    gaps = {row[0]: row[4] for row in result.tables[0].rows}
    assert gaps["L0"] == pytest.approx(0.4) and gaps["L2"] == pytest.approx(0.6)
    assert result.data["peak_level"] == 2
    ratios = result.tables[1]
    assert ratios.title == "The largest gap (L2) over each other level's"
    assert [r[0] for r in ratios.rows] == ["L2 / L0", "L2 / L1", "L2 / L3", "L2 / L4",
                                           "L2 / L5"]
    assert [r[1] for r in ratios.rows] == pytest.approx([1.5] * 5)
    assert result.notes[1:] == ("T1: Sonnet-4.6", "T2: no model", "T3: GPT-3.5",
                                "left out (no tier in the models table): <i>mystery</i>")
    md = render(result, "markdown")
    assert "<i>" not in md and "\\<i\\>mystery\\</i\\>" in md


def test_without_t1_or_t3_there_is_no_gap_and_no_ratio(tmp_path: Path) -> None:
    files = [write_cell(tmp_path, "gpt4o", "zero-shot", uniform(0.8))]
    result = tier_gap(read_runs(files, load_models_table()), "all-cells")
    assert all(row[4] is None for row in result.tables[0].rows)
    assert len(result.tables) == 1 and result.data["peak_level"] is None
    assert result.notes[0].startswith("rule: all-cells;")
    empty = tier_gap([])
    assert empty.data["members"] == {"T1": [], "T2": [], "T3": []}


def test_tier_gap_rules() -> None:
    runs = published_runs(baseline_only=True)
    tab37 = [r for r in paper_table("Table 37:", "Sonnet-4 exclusion") if r[0][1:].isdigit()]
    for rule, column in (("best-per-level", 2), ("all-cells", 3)):
        means, _, _ = tier_means(runs, rule)
        for row in tab37:
            m = means[int(row[0][1])]
            assert abs((m["T1"] or 0) - (m["T3"] or 0) - number(row[column])) <= HALF, \
                (rule, row)
    # Tab. 12: each model's S_total-best cell (Sonnet-4 in T2) gives the T1 and T2 rows;
    # the T3 row differs at L1-L3 by up to 0.007 (the paper's per-cell choice, App. H.6)
    means, members, untiered = tier_means(runs, "best-profile")
    assert not untiered and len(members["T2"]) == 6
    t3_diffs = []
    for level, t1, t2, t3, _ in paper_table("Table 12:", "Figure 3")[1:]:
        m = means[int(level[1])]
        assert abs((m["T1"] or 0) - number(t1)) <= 0.0011, level
        assert abs((m["T2"] or 0) - number(t2)) <= 0.0011, level
        t3_diffs.append(abs((m["T3"] or 0) - number(t3)))
    assert max(t3_diffs) == pytest.approx(0.0066, abs=1e-4)
    for rule in ("best-profile", "best-per-level", "all-cells"):
        means, _, _ = tier_means(runs, rule)
        gaps = {lv: (m["T1"] or 0) - (m["T3"] or 0) for lv, m in means.items()}
        assert max(gaps, key=lambda lv: gaps[lv]) == 2  # L2 is the peak under every rule
