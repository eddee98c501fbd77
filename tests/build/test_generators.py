"""Property tests: every generator of build/generators.py keeps its promise."""

from __future__ import annotations

import random

import networkx as nx
from hypothesis import assume, given
from hypothesis import strategies as st

from pytest_graphinstruct.build import generators as gen

seeds = st.integers(0, 2**32 - 1)


def _ids_ok(g: nx.Graph, n: int) -> bool:
    return sorted(g.nodes()) == list(range(n))


@given(st.integers(1, 60), seeds, st.one_of(st.none(), st.integers(2, 5)))
def test_random_tree_is_a_tree_within_the_degree_cap(n: int, seed: int, cap: int | None) -> None:
    g = gen.random_tree(n, random.Random(seed), max_degree=cap)
    assert _ids_ok(g, n)
    assert nx.is_tree(g)
    if cap is not None:
        assert max(d for _, d in g.degree()) <= cap


@given(st.integers(2, 60), st.integers(1, 10), seeds)
def test_random_forest_has_exactly_the_components(n: int, c: int, seed: int) -> None:
    assume(c < n)
    g = gen.random_forest(n, c, random.Random(seed))
    assert _ids_ok(g, n)
    assert nx.is_forest(g)
    assert nx.number_connected_components(g) == c


@given(st.integers(2, 40), st.data(), seeds)
def test_random_connected_meets_n_and_m(n: int, data: st.DataObject, seed: int) -> None:
    m = data.draw(st.integers(n - 1, n * (n - 1) // 2))
    g = gen.random_connected(n, m, random.Random(seed))
    assert g is not None and _ids_ok(g, n)
    assert g.number_of_edges() == m and nx.is_connected(g)
    assert gen.random_connected(n, n - 2, random.Random(seed)) is None


@given(st.integers(4, 40), st.data(), seeds)
def test_random_planar_is_planar_with_m_edges_or_none(n: int, data: st.DataObject,
                                                       seed: int) -> None:
    m = data.draw(st.integers(n - 1, 3 * n - 6))
    g = gen.random_planar(n, m, random.Random(seed), connected=True)
    if g is not None:  # the greedy fill may stall below a near-maximal m
        assert g.number_of_edges() == m and nx.is_connected(g)
        assert nx.check_planarity(g)[0]
    assert gen.random_planar(n, 3 * n - 5, random.Random(seed)) is None


@given(st.integers(4, 40), st.data(), seeds, st.booleans())
def test_random_bipartite(n: int, data: st.DataObject, seed: int, connected: bool) -> None:
    m = data.draw(st.integers(n - 1, n * n // 4))
    g = gen.random_bipartite(n, m, random.Random(seed), connected=connected)
    if g is None:  # the drawn split may be too unbalanced for m
        return
    assert _ids_ok(g, n) and g.number_of_edges() == m and nx.is_bipartite(g)
    if connected:
        assert nx.is_connected(g)


@given(st.integers(2, 40), st.data(), seeds, st.booleans())
def test_random_dag(n: int, data: st.DataObject, seed: int, connected: bool) -> None:
    m = data.draw(st.integers(n - 1, n * (n - 1) // 2))
    g = gen.random_dag(n, m, random.Random(seed), connected=connected)
    assert g is not None and g.is_directed() and _ids_ok(g, n)
    assert g.number_of_edges() == m and nx.is_directed_acyclic_graph(g)
    if connected:
        assert nx.is_weakly_connected(g)


@given(st.integers(4, 40), st.integers(1, 6), seeds)
def test_random_regular(n: int, k: int, seed: int) -> None:
    g = gen.random_regular(n, k, random.Random(seed), connected=False)
    if (n * k) % 2 or k >= n:
        assert g is None
        return
    assert g is not None and _ids_ok(g, n)
    assert {d for _, d in g.degree()} == {k}


@given(st.integers(5, 40), st.integers(0, 3), st.integers(1, 3), st.data(), seeds)
def test_random_degree_bounded(n: int, lo: int, width: int, data: st.DataObject,
                               seed: int) -> None:
    hi = min(n - 1, lo + width)
    m = data.draw(st.integers((n * lo + 1) // 2, n * hi // 2))
    g = gen.random_degree_bounded(n, m, lo, hi, random.Random(seed))
    if g is None:  # drawn sequence not graphical
        return
    assert _ids_ok(g, n) and g.number_of_edges() == m
    assert all(lo <= d <= hi for _, d in g.degree())


def test_shuffled_keeps_the_structure_and_attributes() -> None:
    g = nx.path_graph(6)
    g.nodes[0]["label"] = "end"
    h = gen.shuffled(g, random.Random(3))
    assert nx.is_isomorphic(g, h)
    assert [d for _, d in h.nodes(data=True) if d] == [{"label": "end"}]
    assert h.degree(next(v for v, d in h.nodes(data=True) if d)) == 1
