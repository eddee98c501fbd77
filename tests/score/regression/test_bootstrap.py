from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from pytest_graphinstruct.score.levels import level_means, s_total
from pytest_graphinstruct.score.regression import bootstrap as bs
from pytest_graphinstruct.score.regression.bootstrap import (
    bootstrap_levels,
    is_regression,
    paired_bootstrap,
    paired_diff,
)
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
    # the other tail of the same t: "no rise" is certain not to be rejected (issue 48 §6)
    assert d.p_drop + d.p_rise == pytest.approx(1.0) and d.p_rise > 0.999
    rise = paired_bootstrap(_run(cand), _run(base)).levels[2]
    assert rise.p_rise == pytest.approx(d.p_drop) and r.total.p_rise > 0.999


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
            i = f"L{level}-c{g}-{k:03d}"
            base[i] = (level, float(rng.uniform()))
            cand[i] = (level, float(rng.uniform()) + shift)
            clusters[i] = f"L{level}-template-{g}"
    return base, cand, clusters


def _levels(spec: dict[int, list[int]], seed: int = 0, shared: float = 0.0,
            shifts: dict[tuple[int, int], float] | None = None,
            ) -> tuple[dict[str, tuple[int, float]], dict[str, tuple[int, float]],
                       dict[str, str]]:
    """Runs over several levels: level → template sizes; differences ~ N(0, 0.1²) per
    instruction, plus N(0, shared²) per template, plus ``shifts[(level, template)]``."""
    rng = np.random.default_rng(seed)
    base, cand, clusters = {}, {}, {}
    for lv, sizes in spec.items():
        for g, size in enumerate(sizes):
            move = float(rng.normal(0, shared)) if shared else 0.0
            move += (shifts or {}).get((lv, g), 0.0)
            for k in range(size):
                i = f"L{lv}-t{g}-{k:03d}"
                b = float(rng.uniform(0.3, 0.7))
                base[i] = (lv, b)
                cand[i] = (lv, b + move + float(rng.normal(0, 0.1)))
                clusters[i] = f"L{lv}-t{g}"
    return base, cand, clusters


def _reference(base: dict[str, tuple[int, float]], cand: dict[str, tuple[int, float]],
               clusters: dict[str, str]) -> dict[int, tuple[float, float]]:
    """Level → (se, df) of the pooled shared-noise test, written out with plain loops (the
    module docstring's recipe; the capped ratio found by iterating from 0)."""
    cap = stats.chi2.ppf(0.99, 1)
    kappa = stats.chi2.cdf(cap, 3) + cap * stats.chi2.sf(cap, 1)
    groups: dict[int, dict[str, list[float]]] = {}
    for i in sorted(base):
        groups.setdefault(base[i][0], {}).setdefault(clusters[i], []).append(
            cand[i][1] - base[i][1])
    levels = {}
    for lv, by in sorted(groups.items()):
        ds = [x for xs in by.values() for x in xs]
        n, g = len(ds), len(by)
        pooled = sum(sum((x - np.mean(xs)) ** 2 for x in xs) for xs in by.values()) / (n - g)
        own = {c: (np.var(xs, ddof=1) if len(xs) >= 2 else pooled) for c, xs in by.items()}
        w_var = sum(len(xs) * own[c] for c, xs in by.items()) / n ** 2
        den = sum((len(xs) * own[c]) ** 2 / (len(xs) - 1) for c, xs in by.items()
                  if len(xs) >= 2)
        single = sum(len(xs) * own[c] for c, xs in by.items() if len(xs) == 1)
        den += single ** 2 / (n - g) if single else 0.0
        w_df = (w_var * n * n) ** 2 / den
        design = sum(len(xs) ** 2 * own[c] for c, xs in by.items()) / (n * n * w_var)
        terms = []
        for xs in by.values():
            big = len(xs) >= 5
            nu = len(xs) - 1 if big else n - g
            v = np.var(xs, ddof=1) if big else pooled
            terms.append((len(xs), v, len(xs) * ((nu - 2) / nu if nu > 2 else 1) / v,
                          float(np.mean(xs))))
        total = sum(t[2] for t in terms)
        centre = sum(t[2] * t[3] for t in terms) / total
        rows = [(m, v, w, 1 - w / total, w * (y - centre) ** 2 / (1 - w / total))
                for m, v, w, y in terms]
        levels[lv] = (float(np.mean(ds)), w_var, w_df, design, rows)
    everything = [r for *_, rows in levels.values() for r in rows]
    info = sum(a * m for m, _, _, a, _ in everything)
    rho = 0.0
    for _ in range(10_000):
        rho = max(0.0, sum(a * (min(y, cap * (1 + m * rho)) - kappa)
                           for m, _, _, a, y in everything) / (kappa * info))

    def spread(rows: list[tuple[float, float, float, float, float]]) -> float:
        total = sum(w for _, _, w, _, _ in rows)
        s = [(w, v * (1 / m + rho)) for m, v, w, _, _ in rows]
        return 2 * (sum(w * w * x * x for w, x in s) - 2 * sum(w ** 3 * x * x for w, x in s)
                    / total + sum(w * w * x for w, x in s) ** 2 / total ** 2)

    rho_var = sum(spread(rows) for *_, rows in levels.values()) / info ** 2
    own_est, own_var = {}, {}
    for lv, (*_, rows) in levels.items():
        i_l = sum(a * m for m, _, _, a, _ in rows)
        own_est[lv] = sum(a * (min(y, cap * (1 + m * rho)) - kappa)
                          for m, _, _, a, y in rows) / (kappa * i_l)
        own_var[lv] = spread(rows) / i_l ** 2
    inv = {lv: 1 / v for lv, v in own_var.items()}
    centre = sum(inv[lv] * own_est[lv] for lv in inv) / sum(inv.values())
    q = sum(inv[lv] * (own_est[lv] - centre) ** 2 for lv in inv)
    s1, s2 = sum(inv.values()), sum(x * x for x in inv.values())
    between = max(0.0, (q - (len(inv) - 1)) / (s1 - s2 / s1)) if len(inv) > 1 else 0.0
    out = {}
    for lv, (_, w_var, w_df, design, _) in levels.items():
        b = between / (between + own_var[lv])
        r = max(0.0, b * own_est[lv] + (1 - b) * rho)
        v = b * own_var[lv] + (1 - b) ** 2 * rho_var
        inflation = 1 + r * design
        out[lv] = (math.sqrt(w_var * inflation),
                   1 / (1 / w_df + design ** 2 * v / (2 * inflation ** 2)))
    return out


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


@pytest.mark.parametrize("shared", [0.0, 0.05, 0.2])
def test_the_pooled_test_by_hand(shared: float) -> None:
    # templates of every size the recipe treats apart: one instruction, two to four (the
    # level's pooled variance), five and more (their own)
    spec = {0: [25, 25, 25, 25], 1: [3, 4, 2, 1, 6, 8], 3: [30, 12, 1, 1], 5: [5, 5, 5]}
    base, cand, clusters = _levels(spec, seed=4, shared=shared)
    r = paired_bootstrap(base, cand, clusters=clusters, b=20)
    want = _reference(base, cand, clusters)
    for lv, (se, df) in want.items():
        d = r.levels[lv]
        assert d.se == pytest.approx(se, rel=1e-9)
        assert d.df == pytest.approx(df, rel=1e-9)
        assert d.p_drop == pytest.approx(stats.t.cdf(d.mean_diff / se, df), rel=1e-9)
        assert d.clusters == len(spec[lv])
    # the ratio estimates τ²/σ² = (shared / 0.1)²
    assert r.shared_ratio == pytest.approx((shared / 0.1) ** 2, abs=0.05 + shared * 20)


def test_a_template_that_falls_is_seen_when_the_others_show_no_shared_noise() -> None:
    # one template of four falls: between four templates that is one observation of four
    # (CR2 cannot tell it from noise shared within templates, however far it falls), but the
    # other levels' templates show no shared noise, so a large enough fall is a real drop.
    # The level's own spread still counts for something (random effects across levels), so
    # the fall must be clearly larger than the levels' noise
    spec = {0: [25, 25, 25, 25], 1: [13] * 15, 2: [20] * 10, 4: [6] * 16}
    ids = sorted(i for i in _levels(spec)[0] if i.startswith("L0"))
    p = []
    for fall in (0.3, 0.5, 1.0):
        base, cand, clusters = _levels(spec, seed=2, shifts={(0, 1): -fall})
        d = paired_bootstrap(base, cand, clusters=clusters).levels[0]
        diffs = np.array([cand[i][1] - base[i][1] for i in ids])
        sums = np.array([diffs[[clusters[i] == f"L0-t{g}" for i in ids]].sum()
                         for g in range(4)])
        cr2 = math.sqrt(np.sum((sums - 25 * diffs.mean()) ** 2) * 4 / 3) / 100
        assert stats.t.cdf(diffs.mean() / cr2, 3) > 0.05  # CR2: nothing to see
        assert d.mean_diff == pytest.approx(-fall / 4, abs=0.02)
        p.append(d.p_drop)
    assert p[0] > p[1] > p[2] and p[2] < 1e-4


def test_shared_noise_in_every_level_widens_every_level() -> None:
    spec = {0: [25, 25, 25, 25], 1: [13] * 15, 2: [20] * 10, 4: [6] * 16}
    base, cand, clusters = _levels(spec, seed=5)
    quiet = paired_bootstrap(base, cand)
    plain = paired_bootstrap(base, cand, clusters=clusters)
    noisy = paired_bootstrap(*_levels(spec, seed=5, shared=0.1)[:2],
                             clusters=_levels(spec, seed=5, shared=0.1)[2])
    assert plain.shared_ratio < 0.05 < noisy.shared_ratio
    for lv in spec:
        assert quiet.levels[lv].df > plain.levels[lv].df  # clusters cost degrees of freedom
        assert noisy.levels[lv].se > plain.levels[lv].se
        assert noisy.levels[lv].contains(0.0)


def test_constant_shifts_per_template_fall_back_to_cr2() -> None:
    # one template moved as a whole and no other spread: no within-template noise to scale
    # shared noise by, so the level is tested between its templates (CR2)
    base, _, clusters = _clustered_runs([25, 25, 25, 25], seed=5)
    moved = {i: (lv, s - 0.3 if clusters[i].endswith("template-0") else s)
             for i, (lv, s) in base.items()}
    alone = paired_bootstrap(base, moved).levels[2]
    grouped = paired_bootstrap(base, moved, clusters=clusters).levels[2]
    assert alone.high < 0 and alone.p_drop < 1e-6
    assert grouped.contains(0.0) and grouped.p_drop > 0.1
    assert grouped.df == pytest.approx(3) and grouped.mean_diff == alone.mean_diff


def test_a_single_cluster_measures_nothing_on_its_own() -> None:
    base, cand, clusters = _clustered_runs([30], shift=-0.5)
    d = paired_bootstrap(base, cand, clusters=clusters).levels[2]
    assert (d.clusters, d.df, d.p_drop) == (1, 0.0, 1.0)
    assert (d.low, d.high) == (-1.0, 1.0)
    assert not is_regression(d, 0.02)
    assert paired_bootstrap(base, cand, clusters=clusters).total.contains(0.0)
    # with other levels to learn the shared noise from, its drop is measured
    b, c, k = _levels({0: [13] * 15, 4: [6] * 16}, seed=3)
    d = paired_bootstrap(base | b, cand | c, clusters=clusters | k).levels[2]
    assert d.df > 0 and d.p_drop < 0.01


def test_bell_mccaffrey_degrees_of_freedom() -> None:
    assert bs.bm_df([140, 4, 3, 3]) == pytest.approx(1.095, abs=1e-3)
    assert bs.bm_df([7]) == 0.0 and bs.bm_df([5, 0]) == 0.0
    assert bs.bm_df([1] * 50) == pytest.approx(49)
    assert bs.bm_df([10, 10, 10, 10]) == pytest.approx(3)


def test_a_dominant_cluster_depends_on_how_well_the_shared_noise_is_known() -> None:
    # official L3: 140 of 150 instructions in one pattern.  Its mean moves with that pattern's
    # shared noise, known only as well as the other levels pin the ratio down
    few = {3: [140, 4, 3, 3], 0: [37, 33, 10, 10, 10]}
    many = {3: [140, 4, 3, 3], 0: [37, 33, 10, 10, 10], 1: [13] * 15, 2: [20] * 10,
            4: [6] * 16}
    d_few = paired_bootstrap(*_levels(few, seed=8)[:2], clusters=_levels(few, seed=8)[2])
    d_many = paired_bootstrap(*_levels(many, seed=8)[:2], clusters=_levels(many, seed=8)[2])
    assert d_few.levels[3].df < d_many.levels[3].df


def test_ids_without_a_cluster_are_their_own() -> None:
    base, cand, clusters = _clustered_runs([5, 5])
    partial = {i: c for i, c in clusters.items() if c.endswith("template-0")}
    d = paired_bootstrap(base, cand, clusters=partial).levels[2]
    assert d.clusters == 1 + 5
    # a cluster named like an id is not that id's cluster
    named = {"L2-c0-000": "L2-c1-000", "L2-c0-001": "L2-c1-000"}
    assert paired_bootstrap(base, cand, clusters=named).levels[2].clusters == 9


def test_cluster_names_and_order_do_not_matter() -> None:
    base, cand, clusters = _levels({0: [6, 9, 4, 7], 3: [5, 5, 12]}, seed=9)
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


def test_what_a_level_shares_with_the_others_is_the_shared_noise_ratio() -> None:
    # the mean and the resample shares are the level's own; the standard error depends on the
    # other levels only through the pooled ratio.  A level of single instructions tells
    # nothing about it, so adding one changes nothing
    base, cand, clusters = _levels({3: [8, 8, 8], 1: [10, 10, 10, 10]}, seed=1)
    alone = paired_bootstrap(base, cand, clusters=clusters)
    other_b, other_c, _ = _clustered_runs([1] * 12, seed=2, level=0)
    both = paired_bootstrap(base | other_b, cand | other_c, clusters=clusters)
    assert both.levels[3] == alone.levels[3] and both.shared_ratio == alone.shared_ratio
    # a level whose templates spread widely raises the ratio, and the other levels' errors
    wide_b, wide_c, wide_k = _levels({5: [10] * 8}, seed=3, shared=0.3)
    wider = paired_bootstrap(base | wide_b, cand | wide_c, clusters=clusters | wide_k)
    assert wider.shared_ratio > alone.shared_ratio
    assert wider.levels[3].mean_diff == alone.levels[3].mean_diff
    assert wider.levels[3].share_ge0 == alone.levels[3].share_ge0
    assert wider.levels[3].se > alone.levels[3].se


def test_one_template_that_really_changed_counts_at_most_the_cap() -> None:
    # a template far off its level (a real change, not noise) moves the pooled ratio by a
    # bounded amount: each standardized squared deviation counts at most CAP·(1 + n·ρ), so once
    # the level's templates are all capped, how far it fell no longer matters.  The bound is
    # not small when the level's templates are large: the other levels then lose most of their
    # degrees of freedom (docs/PLUGIN.md, "hiding"), while the level itself is flagged
    spec = {0: [25, 25, 25, 25], 1: [13] * 15, 2: [20] * 10, 4: [6] * 16}
    base, cand, clusters = _levels(spec, seed=6)
    plain = paired_bootstrap(base, cand, clusters=clusters)
    falls = [paired_bootstrap(*_levels(spec, seed=6, shifts={(0, 0): -x})[:2],
                              clusters=clusters) for x in (0.3, 3.0, 30.0)]
    ratios = [r.shared_ratio for r in falls]
    assert plain.shared_ratio < ratios[0] <= ratios[1]
    assert ratios[1] == pytest.approx(ratios[2], rel=1e-9)
    assert ratios[2] < 2.0  # uncapped, a fall of 30 would count (30/0.02)² ≈ 2·10⁶
    assert falls[1].levels[0].p_drop < 1e-6
    assert falls[1].levels[2].df < plain.levels[2].df / 10


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


_ROWS = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 4), st.floats(0, 1),
                           st.floats(0, 1)), min_size=2, max_size=40)


def _runs(rows: list[tuple[int, int, float, float]]
          ) -> tuple[dict[str, tuple[int, float]], dict[str, tuple[int, float]], dict[str, str]]:
    base = {f"i{k}": (2 * lv, b) for k, (lv, _, b, _) in enumerate(rows)}
    cand = {f"i{k}": (2 * lv, c) for k, (lv, _, _, c) in enumerate(rows)}
    clusters = {f"i{k}": f"{lv}-{g}" for k, (lv, g, _, _) in enumerate(rows)}
    return base, cand, clusters


@settings(max_examples=60, deadline=None)
@given(_ROWS)
def test_the_interval_and_p_drop_agree(rows: list[tuple[int, int, float, float]]) -> None:
    base, cand, clusters = _runs(rows)
    r = paired_bootstrap(base, cand, clusters=clusters, b=50)
    for lv, d in r.levels.items():
        assert 0.0 <= d.p_drop <= 1.0 and d.df >= 0 and d.se >= 0
        assert -1.0 <= d.low <= d.mean_diff <= d.high <= 1.0
        if d.df > 0 and d.se > 0:
            assert (d.high < 0) == (d.p_drop < 0.025) or abs(d.p_drop - 0.025) < 1e-9
        # a lower candidate never makes a drop less likely: a shift moves no spread
        lower = {i: (x, s - 0.1) for i, (x, s) in cand.items()}
        moved = paired_bootstrap(base, lower, clusters=clusters, b=50)
        assert moved.shared_ratio == pytest.approx(r.shared_ratio, rel=1e-6, abs=1e-12)
        assert moved.levels[lv].p_drop <= d.p_drop + 1e-12


@settings(max_examples=60, deadline=None)
@given(_ROWS, st.floats(0.1, 10))
def test_a_level_s_scale_is_its_own(rows: list[tuple[int, int, float, float]],
                                    factor: float) -> None:
    # the shared-noise ratio is scale-free: stretching one level's differences stretches its
    # standard error and changes nothing else (its p-value, the ratio, the other level)
    base, cand, clusters = _runs(rows)
    stretched = {i: (lv, base[i][1] + factor * (s - base[i][1]) if lv == 0 else s)
                 for i, (lv, s) in cand.items()}
    r = paired_bootstrap(base, cand, clusters=clusters, b=20)
    t = paired_bootstrap(base, stretched, clusters=clusters, b=20)
    assert t.shared_ratio == pytest.approx(r.shared_ratio, rel=1e-6, abs=1e-9)
    for lv, d in r.levels.items():
        e = t.levels[lv]
        if lv == 0:
            assert e.se == pytest.approx(factor * d.se, rel=1e-6, abs=1e-12)
            assert e.mean_diff == pytest.approx(factor * d.mean_diff, rel=1e-9, abs=1e-12)
            if d.se > 1e-9:
                assert e.p_drop == pytest.approx(d.p_drop, rel=1e-6, abs=1e-9)
            assert e.df == pytest.approx(d.df, rel=1e-6, abs=1e-9)
        else:
            assert (e.se, e.df, e.p_drop) == (pytest.approx(d.se, rel=1e-9, abs=1e-15),
                                              pytest.approx(d.df, rel=1e-9, abs=1e-12),
                                              pytest.approx(d.p_drop, rel=1e-9, abs=1e-15))



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


def test_the_cap_and_its_mean_are_scipys_values_to_the_last_digit() -> None:
    # written as numbers so that importing the module does not import scipy.stats
    assert float(stats.chi2.ppf(0.99, 1)) == bs.CAP
    assert float(stats.chi2.cdf(bs.CAP, 3) + bs.CAP * stats.chi2.sf(bs.CAP, 1)) == bs.KAPPA
