"""What the gate can detect (score/power): noise measured on a baseline, power, detectable drop,
and the prediction against the gate itself."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.score.regression.bootstrap import paired_bootstrap
from pytest_graphinstruct.score.regression.multiple import regressions
from pytest_graphinstruct.score.regression.power import (
    ItemScore,
    LevelNoise,
    detectable_drop,
    detectable_drops,
    detectable_pass_drops,
    gate_power,
    instructions_needed,
    level_noise,
    noise_by_level,
    samples_needed,
)


def noise(n: int = 100, clusters: int = 10, variance: float = 0.05, samples: int = 5
          ) -> LevelNoise:
    sizes = [n // clusters] * clusters
    return LevelNoise(n, tuple(sizes), variance, samples, False)


def test_the_gap_and_within_instruction_variance_with_several_samples() -> None:
    shares = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0] * 5
    scores = [0.3 + 0.5 * p for p in shares]  # failing 0.3, passing 0.8: the gap is 0.5
    got = level_noise(scores, [str(k % 3) for k in range(30)], samples=5, pass_shares=shares)
    within = np.mean([p * (1 - p) for p in shares]) * 5 / 4
    assert not got.conservative
    assert got.sample_variance == pytest.approx(0.25 * within)
    assert (got.instructions, got.clusters, got.samples) == (30, 3, 5)
    assert got.mean_variance() == pytest.approx(2 * got.sample_variance / (5 * 30))
    assert got.mean_variance(samples=10, instructions=60) == pytest.approx(
        2 * got.sample_variance / 600)


def test_one_sample_bounds_the_noise_by_the_gap_and_the_pass_rate() -> None:
    scores = [0.2, 0.9, 0.5, 0.7]
    got = level_noise(scores, ["a", "a", "b", "b"], samples=1, pass_shares=[0, 1, 0, 1])
    # gap: the slope of the scores on pass/fail, (0.9 + 0.7)/2 − (0.2 + 0.5)/2 = 0.45; the
    # pass rate 1/2 bounds the mean p(1 − p) by 1/4
    assert got.conservative and got.sample_variance == pytest.approx(0.45 ** 2 * 0.25)
    # tighter than the spread of the scores, which holds the instructions' own differences
    assert got.sample_variance < np.var(scores, ddof=1)
    # without outcomes, the spread of the scores (an upper bound)
    plain = level_noise(scores, ["a", "a", "b", "b"], samples=1)
    assert plain.conservative and plain.sample_variance == pytest.approx(np.var(scores, ddof=1))
    # no per-sample outcomes with k samples: k times the spread (an upper bound)
    five = level_noise(scores, ["a", "a", "b", "b"], samples=5)
    assert five.conservative and five.sample_variance == pytest.approx(5 * np.var(scores,
                                                                                  ddof=1))


def test_a_drop_that_follows_the_pass_rate_falls_unevenly() -> None:
    # cluster a always passes (nothing to lose), cluster b passes half the time: a drop falls
    # on b alone and raises the level's own shared-noise estimate
    shares = [1.0] * 10 + [0.6, 0.4] * 5
    scores = [0.2 + 0.6 * p for p in shares]
    got = level_noise(scores, ["a"] * 10 + ["b"] * 10, samples=5, pass_shares=shares)
    assert sum(per for per, _ in got.uneven) > 0
    assert got.cluster_variances is not None
    assert got.cluster_variances[0] < 1e-3 * got.cluster_variances[1]  # a never varies
    even = level_noise(scores, [str(k % 2) for k in range(20)], samples=5, pass_shares=shares)
    assert sum(per for per, _ in even.uneven) == pytest.approx(0.0, abs=1e-12)
    assert even.cluster_variances is not None
    assert even.cluster_variances[0] == pytest.approx(even.cluster_variances[1])


def test_design_and_within_degrees_of_freedom() -> None:
    n = noise(n=100, clusters=4)
    assert n.design() == pytest.approx(25.0)  # equal variances: the cluster size
    assert n.within_df() == pytest.approx(96.0)  # n − G
    assert n.design(instructions=200) == pytest.approx(50.0)
    # unequal variances: the noisier clusters weigh more
    tilted = LevelNoise(40, (30, 10), 0.05, 5, False, (1.0, 3.0))
    assert tilted.design() == pytest.approx((900 * 1 + 100 * 3) / (30 + 30))
    singles = LevelNoise(20, (1,) * 20, 0.05, 5, False)
    assert singles.within_df() == 0.0
    assert singles.df == pytest.approx(19.0)  # the one-sample t


def test_bad_input() -> None:
    with pytest.raises(ValueError):
        level_noise([], [], samples=1)
    with pytest.raises(ValueError):
        level_noise([0.5], ["a", "b"], samples=1)
    with pytest.raises(ValueError):
        level_noise([0.5], ["a"], samples=0)
    with pytest.raises(ValueError):
        level_noise([0.5, 0.6], ["a", "a"], samples=2, pass_shares=[0.5, 1.5])
    with pytest.raises(ValueError):
        gate_power(noise(), 0.05, delta=-1)
    with pytest.raises(ValueError):
        detectable_drop(noise(), delta=0.02, power=1.0)


def test_power_grows_with_the_drop_samples_and_instructions() -> None:
    n = noise()
    low, mid, high = (gate_power(n, d, delta=0.02) for d in (0.01, 0.05, 0.2))
    assert low < mid < high and high > 0.99 and low < 0.05
    assert gate_power(n, 0.05, delta=0.02, samples=20) > mid
    assert gate_power(n, 0.05, delta=0.02, instructions=400) > mid
    assert gate_power(n, 0.05, delta=0.02, tests=60) < mid  # a larger family
    assert gate_power(n, 0.05, delta=0.04) <= mid  # a larger tolerance ...
    assert gate_power(n, 0.05, delta=0.049) < mid  # ... lowers it once it binds


def test_no_drop_is_detectable_with_one_cluster() -> None:
    one = LevelNoise(50, (50,), 0.05, 5, False)
    assert gate_power(one, 0.5, delta=0.02) == 0.0
    assert detectable_drop(one, delta=0.02) == math.inf
    assert samples_needed(one, 0.05, delta=0.02) is None
    assert instructions_needed(one, 0.05, delta=0.02) is None


def test_a_noise_free_baseline_still_counts_the_drops_own_spread() -> None:
    """A baseline without run-to-run noise (the oracle, greedy decoding) does not promise to
    see every drop above the tolerance: the changed run's answers that flip add D·(1 − D)."""
    quiet = LevelNoise(40, (10, 10, 10, 10), 0.0, 5, False)
    assert gate_power(quiet, 0.01, delta=0.02) < 0.01
    d = detectable_drop(quiet, delta=0.02)
    assert 0.03 < d < 0.2
    assert gate_power(quiet, 0.3, delta=0.02) > 0.99
    assert detectable_drop(replace(quiet, mean=0.6), delta=0.02) == d
    assert detectable_drop(replace(quiet, mean=0.0), delta=0.02) == math.inf  # nothing to lose


def test_detectable_drop_is_where_the_power_reaches_80_percent() -> None:
    n = noise()
    d = detectable_drop(n, delta=0.02)
    assert gate_power(n, d, delta=0.02) == pytest.approx(0.8, abs=1e-3)
    assert detectable_drop(n, delta=0.02, samples=20) < d
    assert detectable_drop(n, delta=0.02, power=0.95) > d


def test_samples_and_instructions_needed() -> None:
    n = noise(variance=0.1, samples=1)
    k = samples_needed(n, 0.05, delta=0.02)
    assert k is not None and k > 1
    assert gate_power(n, 0.05, delta=0.02, samples=k) >= 0.8
    assert gate_power(n, 0.05, delta=0.02, samples=k - 1) < 0.8
    m = instructions_needed(n, 0.05, delta=0.02)
    assert m is not None and m > 100
    assert gate_power(n, 0.05, delta=0.02, instructions=m) >= 0.8
    assert gate_power(n, 0.05, delta=0.02, instructions=m - 1) < 0.8
    assert samples_needed(n, 0.05, delta=0.02, limit=2) is None


@settings(max_examples=40, deadline=None)
@given(st.floats(0.001, 0.3), st.floats(0.0, 0.2), st.integers(2, 40), st.floats(0, 5))
def test_power_is_a_probability_rising_with_an_even_drop(variance: float, drop: float,
                                                         clusters: int, rise: float) -> None:
    even = LevelNoise(clusters * 5, (5,) * clusters, variance, 3, False)
    a = gate_power(even, drop, delta=0.02)
    b = gate_power(even, drop + 0.05, delta=0.02)
    assert 0.0 <= a <= b + 1e-9 <= 1.0 + 1e-9
    assert gate_power(even, drop, delta=0.02) == a  # the same draws on every call
    # a drop that raises the level's own shared-noise estimate is not easier to see — with six
    # clusters or more.  With fewer, the larger estimate's extra degrees of freedom can outweigh
    # it (measured on a grid of variances 0-0.25, drops 0-0.5, rises 0.25-2: up to +0.16 power
    # with 4 clusters, +0.04 with 5, +0.002 with 6, none from 7).
    spread = LevelNoise(clusters * 5, (5,) * clusters, variance, 3, False,
                        uneven=((rise, 1.0),) * clusters)
    if clusters >= 6:
        assert gate_power(spread, drop, delta=0.02) <= a + 0.01


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 30), min_size=2, max_size=12), st.floats(0.01, 0.2),
       st.integers(1, 10))
def test_more_samples_never_hurt(sizes: list[int], variance: float, k: int) -> None:
    n = LevelNoise(sum(sizes), tuple(sizes), variance, k, False)
    drops = [detectable_drop(n, delta=0.02, samples=s) for s in (k, 2 * k, 4 * k)]
    assert drops[0] >= drops[1] - 1e-4 and drops[1] >= drops[2] - 1e-4
    for d, s in zip(drops, (k, 2 * k, 4 * k), strict=True):
        if math.isfinite(d):
            assert gate_power(n, d, delta=0.02, samples=s) >= 0.8 - 1e-3


def test_a_drop_in_one_of_four_templates_is_seen_with_other_levels_to_pool() -> None:
    # one of four equal templates falls: the level's own spread rises (capped), but the
    # shared-noise ratio also comes from the other levels' templates, so a large enough drop
    # is seen (the CR2 test, before, never saw it: its t stayed below 1)
    items = [ItemScore(0, f"t{k % 4}", 0.5, 0.5) for k in range(100)]
    items += [ItemScore(lv, f"L{lv}-t{k % 15}", 0.5, 0.5) for lv in (1, 2, 4) for k in range(150)]
    pooled = noise_by_level(items, samples=5)[0]
    one_of_four = dataclasses.replace(pooled, sample_variance=0.01, uneven=(
        (40.0, 0.02), (0.0, 0.02), (0.0, 0.02), (0.0, 0.02)))
    assert math.isfinite(detectable_drop(one_of_four, delta=0.02))
    assert gate_power(one_of_four, 0.25, delta=0.02) > 0.8
    alone = dataclasses.replace(one_of_four, pool=None, own=-1)
    assert detectable_drop(alone, delta=0.02) > detectable_drop(one_of_four, delta=0.02)


def test_noise_by_level_and_detectable_drops() -> None:
    items = [ItemScore(lv, f"t{k % 4}", 0.5 + 0.1 * ((k * 7) % 5) / 5, ((k * 3) % 6) / 5)
             for lv in (0, 2) for k in range(40)]
    per_level = noise_by_level(items, samples=5)
    assert sorted(per_level) == [0, 2] and per_level[0].clusters == 4
    # the shared-noise ratio is pooled over both levels, as the gate pools it
    assert per_level[0].pool is not None and len(per_level[0].pool) == 2
    assert (per_level[0].own, per_level[2].own) == (0, 1)
    drops = detectable_drops(items, samples=5, delta=0.02)
    assert set(drops) == {0, 2}
    assert drops[0] == pytest.approx(detectable_drop(per_level[0], delta=0.02))


def test_detectable_pass_drops_across_sample_counts() -> None:
    # a baseline of five samples: its levels' smallest pass-rate drops a run of k samples shows
    items = [ItemScore(lv, f"t{k % 4}", 0.5 + 0.1 * ((k * 7) % 5) / 5, ((k * 3) % 6) / 5)
             for lv in (0, 2) for k in range(200)]
    one = detectable_pass_drops(items, baseline_samples=5, samples=1, delta=0.02)
    three = detectable_pass_drops(items, baseline_samples=5, samples=3, delta=0.02)
    assert set(one) == set(three) == {0, 2}
    assert all(0.02 < three[lv] < one[lv] < 0.5 for lv in (0, 2))
    # fewer instructions, larger drops; more tests in the family, larger drops
    few = detectable_pass_drops(items[:40] + items[200:240], baseline_samples=5, samples=1,
                                delta=0.02)
    assert few[0] > one[0]
    wide = detectable_pass_drops(items, baseline_samples=5, samples=1, delta=0.02, tests=60)
    assert wide[0] > one[0]
    # no share of passing samples: no figure rather than a weaker one
    bare = [ItemScore(0, "t", 0.5, None) for _ in range(20)]
    assert detectable_pass_drops(bare, baseline_samples=5, samples=1, delta=0.02) == {}
    with pytest.raises(ValueError):
        detectable_pass_drops(items, baseline_samples=5, samples=0, delta=0.02)


def test_more_levels_pin_the_shared_noise_down() -> None:
    # a level of four templates alone knows the ratio from three degrees of freedom; with
    # other levels' templates its test has more
    def item(lv: int, cluster: str, k: int) -> ItemScore:
        share = ((k * 3) % 6) / 5
        return ItemScore(lv, cluster, 0.3 + 0.5 * share, share)

    items = [item(0, f"t{k % 4}", k) for k in range(100)]
    alone = noise_by_level(items, samples=5)[0]
    items += [item(lv, f"L{lv}-t{k % 15}", k) for lv in (1, 2, 4) for k in range(150)]
    pooled = noise_by_level(items, samples=5)[0]
    assert alone.pool is None and pooled.pool is not None
    assert pooled.df > alone.df
    assert detectable_drop(pooled, delta=0.02) < detectable_drop(alone, delta=0.02)


def test_the_prediction_matches_the_gate() -> None:
    # a level of 12 templates × 15 instructions, 5 samples, pass probabilities spread by
    # template and instruction; the candidate's pass probabilities are lower by an amount that
    # lowers the expected level score by 0.05.  Measured over 300 pairs with the gate itself
    # (paired_bootstrap with clusters + regressions over six levels, five of them unchanged).
    rng = np.random.default_rng(7)
    g, m, k, pairs = 12, 15, 5, 300
    clusters = np.repeat(np.arange(g), m)
    n = g * m
    fail = rng.uniform(0.2, 0.5, n)
    gap = rng.uniform(0.3, 0.6, n)
    logit = rng.normal(0.8, 0.5, g)[clusters] + rng.normal(0, 1.0, n)
    p = 1 / (1 + np.exp(-logit))
    drop = 0.05
    p_low = np.clip(p - drop * p * (1 - p) / np.mean(gap * p * (1 - p)), 0, 1)
    ids = [f"i{j:03d}" for j in range(n)]
    names = {i: f"t{c}" for i, c in zip(ids, clusters, strict=True)}
    others = {f"L{lv}-{j}": (lv, 0.5) for lv in (0, 1, 3, 4, 5) for j in range(20)}

    def run(prob: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        passes = rng.binomial(k, prob)
        return fail + gap * passes / k, passes / k

    flagged = 0
    for _ in range(pairs):
        base, _ = run(p)
        cand, _ = run(p_low)
        b = {i: (2, float(s)) for i, s in zip(ids, base, strict=True)} | others
        c = {i: (2, float(s)) for i, s in zip(ids, cand, strict=True)} | others
        diffs = paired_bootstrap(b, c, clusters=names, b=20).levels
        flagged += 2 in regressions(diffs, delta=0.02)
    measured = flagged / pairs
    base, shares = run(p)
    predicted = gate_power(level_noise(base.tolist(), [names[i] for i in ids], samples=k,
                                       pass_shares=shares.tolist()), drop, delta=0.02, tests=6)
    assert predicted == pytest.approx(measured, abs=0.15)
