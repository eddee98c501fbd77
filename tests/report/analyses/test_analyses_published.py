"""The paper's analyses reproduced from its published score files (skipped when
../shared/published-results or ../shared/paper is absent).  Where the paper's printed number
does not follow from the files under one rule, the test pins what each rule gives and
docs/ANALYSES.md says which table used which."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.report.analyses.cot import cot_deltas
from pytest_graphinstruct.report.analyses.methods import methods_table, per_level_oracle
from pytest_graphinstruct.report.analyses.models_table import load_models_table
from pytest_graphinstruct.report.analyses.scaling import scaling
from pytest_graphinstruct.report.analyses.select import complete_models
from pytest_graphinstruct.report.analyses.sensitivity import sensitivity
from pytest_graphinstruct.report.analyses.strategy_effects import effects, strategy_effects
from pytest_graphinstruct.report.analyses.tier_gap import tier_means

from .analyses_data import number, paper_table, published_runs

HALF = 0.0005 + 1e-9  # within rounding of the paper's third decimal
ABBREV = {"FS": "few-shot", "ZC": "zero-cot", "FC": "few-cot", "ZS": "zero-shot"}


@pytest.mark.slow
def test_strategy_effects_reproduce_tab_36_exactly_and_tab_13_within_0_002() -> None:
    eff = effects(published_runs(baseline_only=True))
    tab36 = [r for r in paper_table("Table 36:", "L4 FS") if r[0][1:].isdigit()]
    assert len(tab36) == 18
    for level, effect, mean, pos, neg, tie, _ in tab36:
        strategy = ABBREV[effect.split("$")[0]]
        ours = eff[int(level[1])][strategy]
        assert abs(ours[0] - number(mean)) <= HALF, (level, effect)
        assert ours[1:] == (int(pos), int(neg), int(tie)), (level, effect)
    # Tab. 13 prints the same means with up to 0.0018 difference in 10 of 18 cells (no subset
    # or rounding of the files gives them); pinned here so a change shows
    tab13 = [r for r in paper_table("Table 13:", "Figure 7") if r[0][1:].isdigit()]
    diffs = []
    for level, fs, zc, fc, best in tab13:
        for strategy, text in (("few-shot", fs), ("zero-cot", zc), ("few-cot", fc)):
            diffs.append(abs(eff[int(level[1])][strategy][0] - number(text)))
        row = eff[int(level[1])]
        assert max([(0.0, "zero-shot")] + [(v[0], s) for s, v in row.items()])[1] == best.lower()
    assert max(diffs) == pytest.approx(0.0018, abs=1e-4)
    assert sum(d > HALF for d in diffs) == 10
    assert strategy_effects(published_runs(baseline_only=True)).tables


def test_cot_deltas_reproduce_tab_14() -> None:
    result = cot_deltas(published_runs(baseline_only=True))
    ours = {row["model"]: row for row in result.data["rows"]}
    table = load_models_table()
    for family, model, zc, fc in paper_table("Table 14:", "Figure 8")[1:]:
        name = {"Qwen3.5": f"Qwen3.5-{model}", "GPT": f"GPT-{model}"}[family]
        row = ours[table.info(name.replace("-turbo", "")).display]
        # the paper rounds half away from zero from 4-decimal values (−0.0045 → −0.005)
        assert abs(row["zc_minus_zs"] - number(zc)) <= 0.0006, model
        assert abs(row["fc_minus_zs"] - number(fc)) <= 0.0006, model


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


def test_sensitivity_reproduces_f2_and_app_h5() -> None:
    result = sensitivity(published_runs(baseline_only=True), resamples=10_000, seed=0)
    sigma = {m["model"]: m["sigma_strat"] for m in result.data["models"]}
    for model, value in (("GPT-3.5", 0.027), ("GPT-4o-mini", 0.025), ("Llama-3.1-8B", 0.022),
                         ("DeepSeek-V3", 0.008), ("Llama-3.3-70B", 0.007),
                         ("Sonnet-4.6", 0.015), ("Qwen3.5-397B", 0.018),
                         ("Qwen3.5-122B", 0.015)):
        assert abs(sigma[model] - value) <= HALF, model
    fit = result.data["fit"]
    assert (round(fit["slope"], 4), round(fit["r2"], 3), fit["n"]) == (-0.0733, 0.398, 11)
    # the slope's t-test on 11 points gives p = 0.037; the paper prints p ≈ 0.015
    assert fit["p"] == pytest.approx(0.037, abs=0.001)
    loo = result.data["loo"]
    assert (round(min(f["slope"] for f in loo), 3), round(max(f["slope"] for f in loo), 3)) \
        == (-0.093, -0.059)
    assert (round(min(f["r2"] for f in loo), 3), round(max(f["r2"] for f in loo), 3)) \
        == (0.297, 0.477)
    boot = result.data["bootstrap"]
    # our draws, not the paper's: the low end and P(β<0) agree to 0.01, the high end is +0.03
    # here against the paper's +0.002 (the upper tail is where the 11 points are thinnest)
    assert abs(boot["low"] - (-0.135)) <= 0.01
    assert abs(boot["share_negative"] - 0.975) <= 0.01
    assert 0.0 < boot["high"] < 0.05


def test_scaling_reproduces_tab_35_and_tab_15() -> None:
    runs = published_runs(baseline_only=True)
    result = scaling(runs, pair=("qwen3535ba3b", "qwen35397ba17b"), resamples=1000, seed=0,
                     table=load_models_table())
    rows = {(r["strategy"], r["level"]): r for r in result.data["rows"]}
    for strategy, delta, paired, unpaired, crosses in paper_table("Table 35:", "The paper")[1:]:
        key = {"zero-shot": "ZS", "few-shot": "FS", "zero-CoT": "ZC", "few-CoT": "FC"}[strategy]
        row = rows[(key, "L5")]
        assert abs(row["delta"] - number(delta)) <= HALF, strategy
        low, high = (number(x) for x in paired.replace("$", "").split(","))
        assert abs(row["paired_low"] - low) <= 0.005 and abs(row["paired_high"] - high) <= 0.005
        ulow, uhigh = (number(x) for x in unpaired.replace("$", "").split(","))
        assert abs(row["unpaired_low"] - ulow) <= 0.01
        assert abs(row["unpaired_high"] - uhigh) <= 0.01
        assert row["paired_crosses_zero"] == crosses.startswith("Yes"), strategy
    # Tab. 15's Qwen rows are few-CoT level scores (397B − 35B)
    for level, delta in (("L3", 0.032), ("L4", 0.024), ("L5", -0.005)):
        assert abs(-rows[("FC", level)]["delta"] - delta) <= 0.0006, level


@pytest.mark.slow
def test_methods_reproduce_tab_19_where_the_files_do() -> None:
    result = methods_table(published_runs())
    rows = {r["model"].split(" (")[0]: r for r in result.data["rows"]}
    for cells in paper_table("Table 19:", "Mechanism")[1:]:
        model = load_models_table().info(cells[0].replace("-A3B", "")).display
        row = rows[model]
        zs, oracle, vgig, caap, combined = (number(c) for c in cells[1:6])
        assert f"{row['zs']:.4f}" == f"{zs:.4f}"
        assert f"{row['oracle_cell']:.4f}" == f"{oracle:.4f}"
        assert f"{row['combined']:.4f}" == f"{combined:.4f}"
        assert abs(row["combined_minus_oracle"] - number(cells[6])) <= HALF
        # Tab. 19's VGIG and CAAP columns are not in the released files (their vgig/caap
        # files give App. H.2 Tab. 32's values instead): pinned as different
        assert abs(row["vgig"] - vgig) > 0.005 and abs(row["caap"] - caap) > 0.0004
    # the released vgig/caap/retry/sc files are Tab. 32 (H.2) and Tab. 20
    expect = {"GPT-4o-mini": (0.810, 0.800, 0.7488, 0.7510),
              "DeepSeek-V3": (0.863, 0.855, 0.8273, 0.8203)}
    for model, (vgig, caap, retry, sc) in expect.items():
        row = rows[model]
        assert (round(row["vgig"], 3), round(row["caap"], 3)) == (vgig, caap)
        assert (round(row["retry"], 4), round(row["sc"], 4)) == (retry, sc)


def test_the_per_level_oracle_is_app_h1s_full_data_oracle() -> None:
    """Tab. 30's "Full-data Oracle Q" is the per-level best of the four files, Eq. 2."""
    models = complete_models(published_runs(baseline_only=True))
    table = load_models_table()
    by_display = {next(iter(c.values())).display: c for c in models.values()}
    for cells in paper_table("Table 30:", "Table 31:")[1:]:
        name = cells[0].replace(" (target)", "")
        ours = per_level_oracle(by_display[table.info(name).display])
        assert ours is not None and abs(ours - float(cells[1])) <= 0.00051, name


@pytest.mark.slow
def test_frontier_reproduces_tab_18_cost_at_q() -> None:
    from pytest_graphinstruct.report.analyses.frontier import frontier

    result = frontier(published_runs(baseline_only=True))
    matrix = {row[0]: row for row in result.tables[-1].rows}
    table = load_models_table()
    for cells in paper_table("Table 18:", "Mechanism")[1:]:
        row = matrix[table.info(cells[0]).display]
        assert row[1] == cells[1]
        for ours, theirs in zip(row[2:6], cells[2:6], strict=True):
            assert (None if theirs == "—" else int(theirs)) == \
                (None if ours is None else round(float(ours)))
        assert row[6] == cells[6]
    assert result.data["median_fd"] == pytest.approx(0.062, abs=5e-4)
