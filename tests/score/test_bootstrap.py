from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from pytest_graphinstruct.score import bootstrap as bs
from pytest_graphinstruct.score.bootstrap import (
    bootstrap_levels,
    is_regression,
    paired_bootstrap,
    paired_diff,
)
from pytest_graphinstruct.score.levels import level_means, s_total
from tests.score.published_results import load, requires_published

# ---------------------------------------------------------------- per level and S_total


def test_constant_scores_give_a_point_interval() -> None:
    r = bootstrap_levels({0: [0.7] * 10})
    iv = r.levels[0]
    assert (iv.estimate, iv.n) == (pytest.approx(0.7), 10)
    assert iv.low == pytest.approx(0.7) and iv.high == pytest.approx(0.7)


def test_two_point_level_by_hand() -> None:
    # resample means of {0, 1} are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4, so the
    # 2.5 % and 97.5 % percentiles are 0 and 1
    iv = bootstrap_levels({3: [0.0, 1.0]}).levels[3]
    assert (iv.estimate, iv.low, iv.high) == (0.5, 0.0, 1.0)


def test_single_instruction_level_is_degenerate() -> None:
    iv = bootstrap_levels({5: [0.42]}).levels[5]
    assert iv.low == iv.high == iv.estimate == pytest.approx(0.42)


def test_interval_width_matches_the_normal_approximation() -> None:
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 1, 400)
    iv = bootstrap_levels({2: x.tolist()}, b=4000).levels[2]
    half = 1.96 * x.std() / math.sqrt(x.size)
    assert iv.estimate == pytest.approx(x.mean())
    assert iv.high - iv.low == pytest.approx(2 * half, rel=0.1)
    assert iv.contains(x.mean())


def test_s_total_estimate_and_interval() -> None:
    scores = {0: [1.0, 0.8, 0.9], 1: [0.5, 0.7], 2: [0.6, 0.6, 0.9, 0.3]}
    r = bootstrap_levels(scores)
    t = s_total({lv: float(np.mean(xs)) for lv, xs in scores.items()})
    assert r.total.estimate == pytest.approx(t.unnormalized)
    assert r.total_renormalized is not None
    assert r.total_renormalized.estimate == pytest.approx(t.renormalized)
    assert r.total.n == 9
    assert r.total.low <= r.total.estimate <= r.total.high
    # renormalized by the weights of the present levels: 0.05 + 0.10 + 0.15
    assert r.total_renormalized.low == pytest.approx(r.total.low / 0.30)


def test_empty_input() -> None:
    r = bootstrap_levels({0: []})
    assert r.levels == {}
    assert r.total.estimate == 0.0 and r.total_renormalized is None


def test_deterministic_and_seeded() -> None:
    scores = {lv: np.random.default_rng(lv).uniform(size=30).tolist() for lv in range(6)}
    assert bootstrap_levels(scores) == bootstrap_levels(scores)
    assert bootstrap_levels(scores, seed=1) != bootstrap_levels(scores)


def test_a_level_interval_does_not_depend_on_other_levels() -> None:
    x = np.random.default_rng(3).uniform(size=50).tolist()
    alone = bootstrap_levels({4: x}).levels[4]
    together = bootstrap_levels({0: [0.1, 0.9], 4: x}).levels[4]
    assert alone == together


def test_chunked_resampling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bs, "_MAX_CELLS", 7)  # one row per chunk
    x = np.random.default_rng(5).uniform(size=20).tolist()
    iv = bootstrap_levels({1: x}, b=300).levels[1]
    assert iv.low < iv.estimate < iv.high
    assert iv == bootstrap_levels({1: x}, b=300).levels[1]


@pytest.mark.parametrize("kwargs", [{"b": 0}, {"confidence": 1.0}, {"confidence": 0.0}])
def test_bad_parameters(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        bootstrap_levels({0: [0.5]}, **kwargs)  # type: ignore[arg-type]


def test_absent_scores_must_be_filtered_first() -> None:
    with pytest.raises(ValueError):
        bootstrap_levels({0: [0.5, math.nan]})
    with pytest.raises(ValueError):
        bootstrap_levels({9: [0.5]})


def test_full_suite_sized_input() -> None:
    rng = np.random.default_rng(0)
    sizes = {0: 100, 1: 200, 2: 200, 3: 150, 4: 100, 5: 50}
    scores = {lv: rng.uniform(size=n).tolist() for lv, n in sizes.items()}
    result = bootstrap_levels(scores, b=2000)
    for lv, n in sizes.items():
        iv = result.levels[lv]
        assert iv.n == n and iv.low < iv.estimate < iv.high and iv.contains(0.5)


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.sampled_from(range(6)),
                       st.lists(st.floats(0, 1), min_size=1, max_size=20), min_size=1))
def test_intervals_are_ordered_and_inside_the_data(scores: dict[int, list[float]]) -> None:
    r = bootstrap_levels(scores, b=200)
    for lv, iv in r.levels.items():
        assert min(scores[lv]) - 1e-12 <= iv.low <= iv.high <= max(scores[lv]) + 1e-12
        assert min(scores[lv]) - 1e-12 <= iv.estimate <= max(scores[lv]) + 1e-12
    assert 0.0 <= r.total.low <= r.total.high <= 1.0 + 1e-12


# ---------------------------------------------------------------- paired differences


def _run(scores: dict[str, float], level: int = 2) -> dict[str, tuple[int, float]]:
    return {i: (level, s) for i, s in scores.items()}


def test_identical_runs_have_zero_difference() -> None:
    rng = np.random.default_rng(2)
    run = {f"L{lv}-{i:03d}": (lv, float(rng.uniform())) for lv in range(6) for i in range(30)}
    r = paired_bootstrap(run, dict(run))
    for d in [*r.levels.values(), r.total]:
        assert d.mean_diff == 0.0
        assert d.contains(0.0)
        assert d.share_ge0 == d.share_le0 == 1.0
        assert not is_regression(d, 0.0)
    assert r.only_baseline == r.only_candidate == ()


def test_a_large_uniform_drop_is_detected() -> None:
    rng = np.random.default_rng(4)
    base = {f"i{k}": float(rng.uniform(0.5, 1.0)) for k in range(60)}
    cand = {k: v - 0.2 + float(rng.normal(0, 0.02)) for k, v in base.items()}
    r = paired_bootstrap(_run(base), _run(cand))
    d = r.levels[2]
    assert d.mean_diff == pytest.approx(-0.2, abs=0.01)
    assert d.high < 0 and not d.contains(0.0)
    assert d.share_ge0 == 0.0 and d.share_le0 == 1.0
    assert is_regression(d, delta=0.05)
    assert not is_regression(d, delta=0.3)  # smaller than the tolerated drop
    assert r.total.mean_diff == pytest.approx(0.15 * d.mean_diff)


def test_noise_is_not_a_regression() -> None:
    rng = np.random.default_rng(6)
    base = {f"i{k}": float(rng.uniform()) for k in range(40)}
    cand = {k: float(rng.uniform()) for k in base}
    d = paired_bootstrap(_run(base), _run(cand)).levels[2]
    assert d.contains(0.0)
    assert not is_regression(d, delta=0.0)


def test_pairing_removes_instruction_difficulty() -> None:
    # hugely varying difficulty, constant +0.01 improvement: the paired interval is tight
    base = {f"i{k}": k / 100 for k in range(90)}
    cand = {k: v + 0.01 for k, v in base.items()}
    d = paired_bootstrap(_run(base), _run(cand)).levels[2]
    assert d.low == pytest.approx(0.01) and d.high == pytest.approx(0.01)


def test_unpaired_ids_are_listed_and_ignored() -> None:
    r = paired_bootstrap(_run({"a": 0.5, "b": 0.5, "x": 0.0}), _run({"a": 0.6, "b": 0.6, "y": 1}))
    assert r.only_baseline == ("x",) and r.only_candidate == ("y",)
    assert r.levels[2].n == 2
    assert r.levels[2].mean_diff == pytest.approx(0.1)


def test_result_does_not_depend_on_mapping_order() -> None:
    rng = np.random.default_rng(8)
    base = {f"i{k}": (k % 6, float(rng.uniform())) for k in range(120)}
    cand = {k: (lv, float(rng.uniform())) for k, (lv, _) in base.items()}
    keys = list(base)
    random.Random(0).shuffle(keys)
    shuffled = {k: base[k] for k in keys}
    assert paired_bootstrap(base, cand) == paired_bootstrap(shuffled, cand)


def test_level_mismatch_raises() -> None:
    with pytest.raises(ValueError):
        paired_bootstrap({"a": (1, 0.5)}, {"a": (2, 0.5)})


def test_paired_total_is_weighted_over_levels() -> None:
    base = {"a": (0, 0.5), "b": (5, 0.5)}
    cand = {"a": (0, 0.6), "b": (5, 0.3)}
    r = paired_bootstrap(base, cand)
    assert r.total.mean_diff == pytest.approx(0.05 * 0.1 + 0.25 * -0.2)
    assert r.total_renormalized is not None
    assert r.total_renormalized.mean_diff == pytest.approx((0.05 * 0.1 + 0.25 * -0.2) / 0.30)


def test_paired_diff_on_sequences() -> None:
    d = paired_diff([0.5, 0.6, 0.7], [0.4, 0.5, 0.6])
    assert d.mean_diff == pytest.approx(-0.1)
    assert d.low == pytest.approx(-0.1) and d.high == pytest.approx(-0.1)
    assert is_regression(d, 0.05)
    with pytest.raises(ValueError):
        paired_diff([0.5], [0.5, 0.6])
    with pytest.raises(ValueError):
        is_regression(d, -1)


# ---------------------------------------------------------------- clusters


def _clustered_runs(sizes: list[int], seed: int = 0, shift: float = 0.0,
                    level: int = 2) -> tuple[dict[str, tuple[int, float]],
                                             dict[str, tuple[int, float]], dict[str, str]]:
    rng = np.random.default_rng(seed)
    base, cand, clusters = {}, {}, {}
    for g, size in enumerate(sizes):
        for k in range(size):
            i = f"c{g}-{k:03d}"
            base[i] = (level, float(rng.uniform()))
            cand[i] = (level, float(rng.uniform()) + shift)
            clusters[i] = f"template-{g}"
    return base, cand, clusters


def test_without_clusters_each_instruction_is_its_own_and_the_test_is_student_t() -> None:
    base, cand, _ = _clustered_runs([40], seed=11, shift=-0.1)
    d = paired_bootstrap(base, cand).levels[2]
    diffs = np.array([cand[i][1] - base[i][1] for i in sorted(base)])
    t = stats.ttest_1samp(diffs, 0.0, alternative="less")
    assert (d.clusters, d.df) == (40, pytest.approx(39))
    assert d.se == pytest.approx(diffs.std(ddof=1) / math.sqrt(40))
    assert d.p_drop == pytest.approx(t.pvalue)
    half = stats.t.ppf(0.975, 39) * d.se
    assert (d.low, d.high) == (pytest.approx(d.mean_diff - half), pytest.approx(d.mean_diff + half))


def test_equal_clusters_have_g_minus_1_degrees_of_freedom_and_the_cr1_error() -> None:
    base, cand, clusters = _clustered_runs([10, 10, 10, 10], seed=3)
    d = paired_bootstrap(base, cand, clusters=clusters).levels[2]
    ids = sorted(base)
    diffs = np.array([cand[i][1] - base[i][1] for i in ids])
    sums = np.array([sum(diffs[k] for k, i in enumerate(ids) if clusters[i] == f"template-{g}")
                     for g in range(4)])
    cr1 = 4 / 3 * np.sum((sums - 10 * diffs.mean()) ** 2) / 40 ** 2
    assert d.clusters == 4 and d.df == pytest.approx(3)
    assert d.se == pytest.approx(math.sqrt(cr1))
    assert d.p_drop == pytest.approx(stats.t.cdf(d.mean_diff / d.se, 3))


def test_shared_cluster_shifts_widen_the_interval() -> None:
    # one template moved as a whole: between instructions that is a clear change, between
    # templates it is one observation of four
    base, _, clusters = _clustered_runs([25, 25, 25, 25], seed=5)
    moved = {i: (lv, s - 0.3 if clusters[i] == "template-0" else s)
             for i, (lv, s) in base.items()}
    alone = paired_bootstrap(base, moved).levels[2]
    grouped = paired_bootstrap(base, moved, clusters=clusters).levels[2]
    assert alone.high < 0 and alone.p_drop < 1e-6
    assert grouped.contains(0.0) and grouped.p_drop > 0.1
    assert grouped.mean_diff == alone.mean_diff


def test_a_single_cluster_measures_nothing() -> None:
    base, cand, clusters = _clustered_runs([30], shift=-0.5)
    d = paired_bootstrap(base, cand, clusters=clusters).levels[2]
    assert (d.clusters, d.df, d.p_drop) == (1, 0.0, 1.0)
    assert (d.low, d.high) == (-1.0, 1.0)
    assert not is_regression(d, 0.02)
    assert paired_bootstrap(base, cand, clusters=clusters).total.contains(0.0)


def test_a_dominant_cluster_leaves_few_degrees_of_freedom() -> None:
    base, cand, clusters = _clustered_runs([140, 4, 3, 3])
    d = paired_bootstrap(base, cand, clusters=clusters).levels[2]
    assert d.df == pytest.approx(1.095, abs=1e-3)
    assert bs.bm_df([140, 4, 3, 3]) == pytest.approx(d.df)
    assert bs.bm_df([7]) == 0.0 and bs.bm_df([5, 0]) == 0.0
    assert bs.bm_df([1] * 50) == pytest.approx(49)


def test_ids_without_a_cluster_are_their_own() -> None:
    base, cand, clusters = _clustered_runs([5, 5])
    partial = {i: c for i, c in clusters.items() if c == "template-0"}
    d = paired_bootstrap(base, cand, clusters=partial).levels[2]
    assert d.clusters == 1 + 5
    # a cluster named like an id is not that id's cluster
    named = {"c0-000": "c1-000", "c0-001": "c1-000"}
    assert paired_bootstrap(base, cand, clusters=named).levels[2].clusters == 9


def test_cluster_names_and_order_do_not_matter() -> None:
    base, cand, clusters = _clustered_runs([6, 9, 4, 7], seed=9)
    renamed = {i: f"x{c[::-1]}" for i, c in reversed(list(clusters.items()))}
    assert paired_bootstrap(base, cand, clusters=clusters) == \
        paired_bootstrap(base, cand, clusters=renamed)


def test_cluster_resamples_keep_a_cluster_together() -> None:
    # two clusters of constant differences 0 and -1: a resample holds zero, one or both of one
    base = {f"a{k}": (1, 0.5) for k in range(3)} | {f"b{k}": (1, 0.5) for k in range(3)}
    cand = {f"a{k}": (1, 0.5) for k in range(3)} | {f"b{k}": (1, -0.5) for k in range(3)}
    clusters = {i: i[0] for i in base}
    d = paired_bootstrap(base, cand, clusters=clusters, b=4000).levels[1]
    assert d.share_ge0 == pytest.approx(0.25, abs=0.03)  # both draws from cluster a
    assert d.share_le0 == 1.0


def test_a_level_does_not_depend_on_other_levels_or_their_clusters() -> None:
    base, cand, clusters = _clustered_runs([8, 8, 8], seed=1, level=3)
    other_b, other_c, other_cl = _clustered_runs([5, 5], seed=2, level=0)
    alone = paired_bootstrap(base, cand, clusters=clusters).levels[3]
    both = paired_bootstrap(base | {f"x{k}": v for k, v in other_b.items()},
                            cand | {f"x{k}": v for k, v in other_c.items()},
                            clusters=clusters | {f"x{k}": v for k, v in other_cl.items()})
    assert both.levels[3] == alone


def test_total_combines_the_levels_with_satterthwaite_df() -> None:
    b0, c0, k0 = _clustered_runs([10, 10, 10], seed=1, level=0)
    b5, c5, k5 = _clustered_runs([5, 5, 5, 5, 5], seed=2, level=5)
    r = paired_bootstrap(b0 | b5, c0 | c5, clusters=k0 | k5)
    d0, d5 = r.levels[0], r.levels[5]
    var = (0.05 * d0.se) ** 2 + (0.25 * d5.se) ** 2
    df = var ** 2 / ((0.05 * d0.se) ** 4 / d0.df + (0.25 * d5.se) ** 4 / d5.df)
    assert r.total.mean_diff == pytest.approx(0.05 * d0.mean_diff + 0.25 * d5.mean_diff)
    assert r.total.se == pytest.approx(math.sqrt(var)) and r.total.df == pytest.approx(df)
    assert r.total.clusters == 8
    assert r.total_renormalized is not None
    assert r.total_renormalized.mean_diff == pytest.approx(r.total.mean_diff / 0.30)
    assert r.total_renormalized.p_drop == pytest.approx(r.total.p_drop)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.floats(0, 1), st.floats(0, 1)), min_size=2,
                max_size=40))
def test_the_interval_and_p_drop_agree(rows: list[tuple[int, float, float]]) -> None:
    base = {f"i{k}": (1, b) for k, (_, b, _) in enumerate(rows)}
    cand = {f"i{k}": (1, c) for k, (_, _, c) in enumerate(rows)}
    clusters = {f"i{k}": str(g) for k, (g, _, _) in enumerate(rows)}
    d = paired_bootstrap(base, cand, clusters=clusters, b=50).levels[1]
    assert 0.0 <= d.p_drop <= 1.0
    assert -1.0 <= d.low <= d.mean_diff <= d.high <= 1.0
    if d.df > 0 and d.se > 0:
        assert (d.high < 0) == (d.p_drop < 0.025) or abs(d.p_drop - 0.025) < 1e-9
    # a lower candidate never makes a drop less likely
    lower = {i: (lv, s - 0.1) for i, (lv, s) in cand.items()}
    assert paired_bootstrap(base, lower, clusters=clusters, b=50).levels[1].p_drop \
        <= d.p_drop + 1e-12


# ---------------------------------------------------------------- published results


def _scores(name: str) -> dict[str, tuple[int, float]]:
    return {r["instruction_id"]: (r["level"], r["level_score"])
            for r in load(name)["per_instruction"]}


@requires_published
def test_published_run_interval_contains_its_total() -> None:
    run = load("gpt4o-zero-shot")
    by_level: dict[int, list[float]] = {}
    for r in run["per_instruction"]:
        by_level.setdefault(r["level"], []).append(r["level_score"])
    b = bootstrap_levels(by_level)
    assert b.total.estimate == pytest.approx(run["total_score"], abs=1e-12)
    assert b.total.contains(run["total_score"])
    assert 0.01 < b.total.high - b.total.low < 0.06
    means = level_means((r["level"], r["level_score"]) for r in run["per_instruction"])
    for lv, iv in b.levels.items():
        assert iv.estimate == pytest.approx(means[lv].mean, abs=1e-12)
        assert iv.contains(run["per_level_scores"][str(lv)])


@requires_published
@pytest.mark.parametrize(
    ("strategy", "delta", "low", "high"),
    [  # paper App. H.5, Tab. 35: Qwen3.5-35B − Qwen3.5-397B on L5, paired 95 % CI
        ("zero-shot", -0.041, -0.094, -0.002),
        ("few-shot", -0.002, -0.030, 0.037),
        ("zero-cot", -0.035, -0.077, -0.007),
        ("few-cot", 0.005, -0.012, 0.027),
    ],
)
def test_published_paired_l5_comparison(strategy: str, delta: float, low: float,
                                        high: float) -> None:
    # the paper's percentile bootstrap over instructions is paired_diff's (the gate's
    # paired_bootstrap is studentized over clusters and wider on these skewed differences)
    base, cand = _scores(f"qwen35397ba17b-{strategy}"), _scores(f"qwen3535ba3b-{strategy}")
    ids = sorted(i for i in base if base[i][0] == 5 and i in cand)
    d = paired_diff([base[i][1] for i in ids], [cand[i][1] for i in ids])
    assert d.n == 50
    assert round(d.mean_diff, 3) == delta
    # different resampling streams and B (the paper used 1000): bounds agree within 0.005
    assert d.low == pytest.approx(low, abs=0.005)
    assert d.high == pytest.approx(high, abs=0.005)
    assert d.contains(0.0) == (low <= 0.0 <= high)
