"""The combined test's power model (issue 48 §4): what it reads from a baseline's items, and
the shape of its figures.  How close they come to the gate's measured power is the
calibration bench's (bench/gate_calibration.py: within ±25 % of the measured MDE80)."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_graphinstruct.score.regression.power import (
    ItemScore,
    detectable_drop,
    noise_by_level,
)
from pytest_graphinstruct.score.regression.suite_power import combined_power, level_samples


def test_the_curve_is_the_mean_score_by_passing_samples_interpolated_where_none_shows() -> None:
    level = level_samples([0.2, 0.4, 0.9, 1.0], [0, 0, 4, 5], samples=5)
    assert level.curve == pytest.approx((0.3, 0.45, 0.6, 0.75, 0.9, 1.0))
    assert level.offsets == pytest.approx((-0.1, 0.1, 0.0, 0.0))
    # runs of one sample read the curve at the same passing share
    assert level.curve_at(1) == pytest.approx([0.3, 1.0])


def test_one_sample_gives_every_instruction_the_levels_rate() -> None:
    level = level_samples([0.1, 0.9, 0.9, 0.9], [0, 1, 1, 1], samples=1)
    assert level.probs == pytest.approx((0.75,) * 4)


def test_several_samples_shrink_each_share_towards_the_levels() -> None:
    passes = [0, 1, 5, 5, 4, 2, 5, 0]
    level = level_samples([0.5] * len(passes), passes, samples=5)
    share = np.array(passes) / 5
    probs = np.array(level.probs)
    mean = share.mean()
    assert np.all(np.abs(probs - mean) <= np.abs(share - mean) + 1e-12)
    assert np.all(np.argsort(probs, kind="stable") == np.argsort(share, kind="stable"))


def test_power_rises_with_the_drop_and_with_the_instructions() -> None:
    level = level_samples(np.linspace(0.3, 1.0, 40), np.arange(40) % 6, samples=5)
    drops, power = combined_power(level, samples=5, instructions=40, delta=0.02,
                                  alpha_level=0.05 / 6)
    assert drops[0] == pytest.approx(0.0) and np.all(np.diff(drops) >= -1e-12)
    assert power.min() >= 0.0 and power.max() <= 1.0 and power[0] < 0.01
    assert np.all(np.diff(power) >= -1e-9)
    more = combined_power(level, samples=5, instructions=400, delta=0.02, alpha_level=0.05 / 6)
    at = np.interp(0.05, drops, power)
    assert np.interp(0.05, *more) > at


def test_a_baseline_with_per_sample_outcomes_is_predicted_by_the_combined_model() -> None:
    rng = np.random.default_rng(0)
    p = rng.uniform(0.3, 0.95, 100)
    x = rng.binomial(5, p)
    items = [ItemScore(2, f"t{i % 7}", 0.4 + 0.11 * xi, xi / 5) for i, xi in enumerate(x)]
    (noise,) = noise_by_level(items, samples=5).values()
    assert noise.scored is not None and noise.scored.samples == 5
    drop = detectable_drop(noise, delta=0.02, tests=6, test="suite")
    assert 0.02 < drop < 0.2
    # without per-sample outcomes the level-score test alone, its own model
    bare = [item._replace(pass_share=None) for item in items]
    (old,) = noise_by_level(bare, samples=5).values()
    assert old.scored is None
    assert detectable_drop(old, delta=0.02, tests=6, test="suite") != drop


def test_the_cached_figures_cannot_be_written() -> None:
    level = level_samples([0.5, 0.9], [0, 1], samples=1)
    drops, power = combined_power(level, samples=1, instructions=2, delta=0.0,
                                  alpha_level=0.01)
    for shared in (drops, power):
        with pytest.raises(ValueError):
            shared[0] = 1.0


def test_across_sample_counts_the_count_test_alone_in_pass_rate() -> None:
    from pytest_graphinstruct.score.regression.suite_power import count_power

    rng = np.random.default_rng(1)
    x = rng.binomial(5, rng.uniform(0.3, 0.95, 200))
    level = level_samples(list(0.4 + 0.1 * x), list(x), samples=5)
    drops, power = count_power(level, samples=1, instructions=200, delta=0.02,
                               alpha_level=0.05 / 6)
    shares = x / 5
    assert drops[-1] <= shares.mean() + 1e-9  # a pass rate cannot fall below 0
    assert np.all(np.diff(power) >= -1e-9) and power[0] < 0.01 and power.max() > 0.99
    # checked against the gate (a five-sample baseline, one-sample runs): 0.99-1.09 of the
    # measured pass-rate MDE80 on our suite's L0-L4; here its order of magnitude
    assert 0.05 < float(np.interp(0.8, power, drops)) < 0.2
