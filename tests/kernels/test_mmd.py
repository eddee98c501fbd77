from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pytest_graphinstruct.kernels import mmd
from pytest_graphinstruct.kernels.mmd import (
    FEATURES,
    FeatureBlock,
    FeatureTable,
    ReferenceSet,
    clustering_histogram,
    degree_histogram,
    mmd_score,
    pairwise_emd,
    spectral_histogram,
)
from tests.score._d1graphs import shuffled, synthetic_pool_graphs
from tests.verify._graphgen import gnp_graphs


def er(n: int, p: float, count: int, seed: int) -> list[nx.Graph]:
    return [nx.gnp_random_graph(n, p, seed=seed + i) for i in range(count)]


# -- features -------------------------------------------------------------------------------------

def test_degree_histogram_hand_computed() -> None:
    star = nx.star_graph(3)  # degrees 3, 1, 1, 1
    assert degree_histogram(star).tolist() == [0.0, 0.75, 0.0, 0.25]
    assert degree_histogram(nx.Graph()).tolist() == [1.0]
    d = nx.DiGraph([(0, 1), (0, 2)])  # in + out: 2, 1, 1
    assert degree_histogram(d).tolist() == pytest.approx([0, 2 / 3, 1 / 3])


def test_clustering_histogram_hand_computed() -> None:
    # triangle with a pendant: clustering 1, 1, 1/3, 0
    g = nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3)])
    h = clustering_histogram(g)
    assert len(h) == 10 and h.sum() == pytest.approx(1.0)
    assert h[0] == 0.25 and h[3] == 0.25 and h[9] == 0.5
    assert clustering_histogram(nx.Graph()).tolist() == [0.1] * 10


def test_spectral_histogram_whole_spectrum_on_fixed_bins() -> None:
    # K2: normalized Laplacian eigenvalues 0 and 2
    h = spectral_histogram(nx.complete_graph(2))
    assert h is not None and len(h) == mmd.SPECTRAL_BINS
    assert h[0] == 0.5 and h[-1] == 0.5
    # star K1,3: eigenvalues 0, 1, 1, 2
    s = spectral_histogram(nx.star_graph(3))
    assert s is not None
    assert s[0] == 0.25 and s[100] == 0.5 and s[-1] == 0.25
    assert spectral_histogram(nx.Graph()) is not None


def test_spectral_cap_gives_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mmd, "SPECTRAL_MAX_NODES", 5)
    assert spectral_histogram(nx.path_graph(6)) is None
    t = FeatureTable.of_graphs([nx.path_graph(6), nx.path_graph(4)])
    assert t.oversize() == 1


# -- EMD ------------------------------------------------------------------------------------------

def naive_emd(a: np.ndarray, b: np.ndarray) -> float:
    n = max(len(a), len(b))
    pa = np.zeros(n)
    pa[: len(a)] = a
    pb = np.zeros(n)
    pb[: len(b)] = b
    total, ca, cb = 0.0, 0.0, 0.0
    for x, y in zip(pa, pb, strict=True):
        ca += x
        cb += y
        total += abs(ca - cb)
    return total


def histograms(min_size: int = 1) -> st.SearchStrategy[list[np.ndarray]]:
    def normalise(v: np.ndarray) -> np.ndarray:
        return v / v.sum() if v.sum() > 0 else np.eye(1, len(v)).ravel()
    one = st.integers(1, 12).flatmap(
        lambda n: hnp.arrays(np.float64, n, elements=st.floats(0, 10))).map(normalise)
    return st.lists(one, min_size=min_size, max_size=6)


@settings(max_examples=200, deadline=None)
@given(histograms(), histograms())
@pytest.mark.slow
def test_vectorised_emd_equals_naive_loop(xs: list[np.ndarray], ys: list[np.ndarray]) -> None:
    a = FeatureBlock.from_histograms(xs)
    b = FeatureBlock.from_histograms(ys)
    d = pairwise_emd(a.cdf, b.cdf)
    for i, x in enumerate(xs):
        for j, y in enumerate(ys):
            assert d[i, j] == pytest.approx(naive_emd(x, y), abs=1e-9)


def test_emd_of_shifted_point_masses() -> None:
    a = FeatureBlock.from_histograms([np.array([1.0, 0, 0, 0])])
    b = FeatureBlock.from_histograms([np.array([0, 0, 0, 1.0])])
    assert pairwise_emd(a.cdf, b.cdf)[0, 0] == pytest.approx(3.0)
    # different lengths: the shorter CDF continues at 1
    c = FeatureBlock.from_histograms([np.array([0, 0, 0, 0, 0, 1.0])])
    assert pairwise_emd(a.cdf, c.cdf)[0, 0] == pytest.approx(5.0)
    assert pairwise_emd(c.cdf, a.cdf)[0, 0] == pytest.approx(5.0)


# -- MMD ------------------------------------------------------------------------------------------

def test_identical_sets_score_one() -> None:
    graphs = er(15, 0.3, 8, seed=0)
    r = mmd_score(graphs, graphs)
    for f in FEATURES:
        assert r.features[f].mmd == pytest.approx(0.0, abs=1e-7)
        assert r.features[f].score == pytest.approx(1.0)
    assert r.mean == pytest.approx(1.0)


def test_shifting_the_distribution_lowers_the_score() -> None:
    ref = ReferenceSet.of(FeatureTable.of_graphs(er(20, 0.15, 40, seed=0)))
    same = ref.score(FeatureTable.of_graphs(er(20, 0.15, 5, seed=1000))).mean
    shifted = ref.score(FeatureTable.of_graphs(er(20, 0.4, 5, seed=2000))).mean
    far = ref.score(FeatureTable.of_graphs(er(20, 0.9, 5, seed=3000))).mean
    assert 1.0 >= same > shifted > far >= 0.0


def test_bandwidth_comes_from_the_references_only() -> None:
    pool = FeatureTable.of_graphs(synthetic_pool_graphs(40))
    ref = ReferenceSet.of(pool)
    sigma = dict(ref.stats.sigma)
    model_a = FeatureTable.of_graphs(er(16, 0.8, 5, seed=1))
    model_b = FeatureTable.of_graphs(er(16, 0.2, 5, seed=2))
    b_first = ref.score(model_b)
    ref.score(model_a)
    b_after = ref.score(model_b)
    assert dict(ref.stats.sigma) == sigma
    assert b_after == b_first
    # and equal to scoring B against a fresh reference set that never saw model A
    assert ReferenceSet.of(pool).score(model_b) == b_first
    assert all(b_first.features[f].sigma == sigma[f] for f in FEATURES)


def test_hand_computed_estimator() -> None:
    # two features identical per side; degree feature: X = two point masses at 1, Y = two at 2
    ref = ReferenceSet.of(FeatureTable.of_graphs([nx.cycle_graph(4), nx.cycle_graph(5)]))
    gen = FeatureTable.of_graphs([nx.path_graph(2), nx.path_graph(2)])
    r = ref.score(gen)
    # degree: X hist [0,1], Y hist [0,0,1]: EMD(x,y) = 1; within-Y EMD 0 -> sigma = 1 (fallback)
    assert ref.stats.sigma["degree"] == 1.0
    kxy = math.exp(-1 / 2)
    expected = math.sqrt(1 + 1 - 2 * kxy)
    assert r.features["degree"].mmd == pytest.approx(expected)
    assert r.features["degree"].score == pytest.approx(math.exp(-expected))


def test_fewer_than_two_on_a_side_is_zero() -> None:
    ref = ReferenceSet.of(FeatureTable.of_graphs(er(12, 0.3, 5, seed=0)))
    r = ref.score(FeatureTable.of_graphs([nx.complete_graph(12)]))
    assert all(r.features[f].mmd == 0.0 for f in FEATURES)


def test_oversize_graphs_are_one_far_point(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mmd, "SPECTRAL_MAX_NODES", 30)
    ref = ReferenceSet.of(FeatureTable.of_graphs(er(20, 0.3, 10, seed=0)))
    big = FeatureTable.of_graphs(er(40, 0.3, 3, seed=50))
    r = ref.score(big)
    assert r.oversize == 3
    # all X at one far point: MMD² = 1 + kyy − 0
    assert r.features["spectral"].mmd == pytest.approx(math.sqrt(1 + ref.stats.kyy["spectral"]))


def test_large_reference_sets_chunk_and_subsample(monkeypatch: pytest.MonkeyPatch) -> None:
    graphs = er(14, 0.3, 30, seed=0)
    table = FeatureTable.of_graphs(graphs)
    full = ReferenceSet.of(table).stats
    monkeypatch.setattr(mmd, "_CHUNK_ENTRIES", 7)
    chunked = ReferenceSet.of(table).stats
    for f in FEATURES:
        assert chunked.kyy[f] == pytest.approx(full.kyy[f], rel=1e-12)
    monkeypatch.setattr(mmd, "BANDWIDTH_SAMPLE", 10)
    sub = ReferenceSet.of(table).stats
    assert all(sub.sigma[f] > 0 for f in FEATURES)


@settings(max_examples=60, deadline=None)
@given(st.lists(gnp_graphs(max_nodes=12), min_size=0, max_size=5),
       st.lists(gnp_graphs(max_nodes=12), min_size=0, max_size=8))
@pytest.mark.slow
def test_scores_lie_in_unit_interval(xs: list[nx.Graph], ys: list[nx.Graph]) -> None:
    r = ReferenceSet.of(FeatureTable.of_graphs(ys)).score(FeatureTable.of_graphs(xs))
    for f in FEATURES:
        assert 0.0 <= r.features[f].score <= 1.0
        assert r.features[f].mmd >= 0.0
    assert 0.0 <= r.mean <= 1.0


@settings(max_examples=40, deadline=None)
@given(st.lists(gnp_graphs(max_nodes=12), min_size=2, max_size=5), st.integers(0, 10**6))
def test_features_invariant_under_relabelling(xs: list[nx.Graph], seed: int) -> None:
    a = FeatureTable.of_graphs(xs)
    b = FeatureTable.of_graphs([shuffled(g, seed + i) for i, g in enumerate(xs)])
    for f in FEATURES:
        assert np.array_equal(a.blocks[f].hist, b.blocks[f].hist)


@settings(max_examples=100, deadline=None)
@given(gnp_graphs(max_nodes=14))
def test_local_clustering_equals_networkx(g: nx.Graph) -> None:
    u = g.to_undirected(as_view=True) if g.is_directed() else g
    expected = np.array([nx.clustering(u)[v] for v in g]) if len(g) else np.zeros(0)
    got = mmd.local_clustering(g)
    assert np.array_equal(got, expected)
