"""build.l5_graphs: the graph helpers of the L5 templates (orders, trees, certificates)."""

from __future__ import annotations

import random

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.build import l5_graphs as lg

seeds = st.integers(0, 2**32)


def test_pair_key_and_edge_pairs_use_the_natural_order() -> None:
    assert lg.pair_key(False, "10", "2") == ("2", "10")
    assert lg.pair_key(True, "10", "2") == ("10", "2")
    g = nx.Graph([("10", "2"), ("1", "3")])
    assert lg.edge_pairs(g) == [("1", "3"), ("2", "10")]


@given(st.integers(1, 30), seeds)
def test_relabel_is_a_bijection_onto_string_ids(n: int, seed: int) -> None:
    g = nx.path_graph(n)
    out, mapping = lg.relabel(g, random.Random(seed))
    assert sorted(mapping.values(), key=int) == [str(i) for i in range(n)]
    assert list(out.nodes) == [str(i) for i in range(n)]  # inserted in id order
    assert {frozenset(e) for e in out.edges} == {frozenset((mapping[u], mapping[v]))
                                                 for u, v in g.edges}


def test_rename_gives_equal_insertion_orders_for_equal_inputs() -> None:
    a = nx.Graph([(3, 1), (2, 1)])
    b = nx.Graph([(1, 2), (1, 3)])
    ra, rb = lg.rename(a, {}), lg.rename(b, {})
    assert list(ra.nodes) == list(rb.nodes) == [1, 2, 3]
    assert list(ra.edges) == list(rb.edges)


@given(st.integers(1, 40), seeds, st.sampled_from([None, 1, 3]))
def test_random_tree_is_a_tree(n: int, seed: int, window: int | None) -> None:
    t = lg.random_tree(random.Random(seed), n, window=window)
    assert sorted(t.nodes) == list(range(n)) and nx.is_tree(t)


@given(st.integers(2, 25), st.integers(0, 30), seeds)
def test_connected_graph_is_connected_and_simple(n: int, extra: int, seed: int) -> None:
    g = lg.connected_graph(random.Random(seed), n, extra)
    assert nx.is_connected(g) and nx.number_of_selfloops(g) == 0
    assert g.number_of_edges() == min(n - 1 + extra, n * (n - 1) // 2)


def test_add_random_edges_stops_when_the_graph_is_complete() -> None:
    g = nx.path_graph(4)
    assert lg.add_random_edges(g, random.Random(0), 10) == 3
    assert g.number_of_edges() == 6


@given(st.integers(1, 50), st.integers(1, 6), st.integers(0, 5), seeds)
def test_split_sizes(total: int, parts: int, minimum: int, seed: int) -> None:
    if parts * minimum > total:
        with pytest.raises(ValueError, match="cannot split"):
            lg.split_sizes(random.Random(seed), total, parts, minimum)
        return
    sizes = lg.split_sizes(random.Random(seed), total, parts, minimum)
    assert len(sizes) == parts and sum(sizes) == total and min(sizes) >= minimum


def test_components_sorted() -> None:
    g = nx.Graph([("3", "10"), ("2", "1")])
    g.add_node("0")
    assert lg.components_sorted(g) == [["0"], ["1", "2"], ["3", "10"]]


@given(st.integers(2, 12), st.floats(0.1, 0.9), seeds)
def test_spanning_forests_span_every_component(n: int, p: float, seed: int) -> None:
    rng = random.Random(seed)
    g = nx.gnp_random_graph(n, p, seed=seed)
    for i, (u, v) in enumerate(g.edges):
        g.edges[u, v]["weight"] = i % 3 + 1
    for forest in (lg.kruskal(g, rng), lg.random_spanning_forest(g, rng),
                   lg.search_tree(g, rng, depth_first=True)):
        assert nx.is_forest(forest) and set(forest.edges) <= {tuple(e) for e in g.edges} | {
            (v, u) for u, v in g.edges}
        assert nx.number_connected_components(forest) == nx.number_connected_components(g)
    mst = lg.kruskal(g, rng)
    assert mst.size("weight") == nx.minimum_spanning_tree(g).size("weight")


def test_mst_is_unique() -> None:
    g = nx.Graph()
    g.add_weighted_edges_from([(0, 1, 1), (1, 2, 2), (0, 2, 3)])
    assert lg.mst_is_unique(g, nx.minimum_spanning_tree(g))
    g.edges[0, 2]["weight"] = 2  # a tie with the heaviest tree edge on its cycle
    assert not lg.mst_is_unique(g, nx.minimum_spanning_tree(g))


def test_tight_predecessors_lists_every_shortest_arrival() -> None:
    g = nx.Graph()
    g.add_weighted_edges_from([("s", "a", 1), ("s", "b", 1), ("a", "t", 1), ("b", "t", 1),
                               ("s", "t", 3)])
    dist, preds = lg.tight_predecessors(g, "s")
    assert dist["t"] == 2 and preds["t"] == ["a", "b"] and "s" not in preds


def test_path_union_holds_every_shortest_path() -> None:
    g = nx.Graph([(0, 1), (1, 3), (0, 2), (2, 3), (3, 4), (0, 5), (5, 6), (6, 4)])
    u = lg.path_union(g, 0, 3)
    assert sorted(u.nodes) == [0, 1, 2, 3] and u.number_of_edges() == 4


def test_edge_disjoint_cycles() -> None:
    g = nx.Graph([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 2)])
    cycles = lg.edge_disjoint_cycles(g, [(0, 2), (2, 4)])
    assert cycles == [[2, 1, 0], [4, 3, 2]]
    assert lg.edge_disjoint_cycles(nx.path_graph(3), [(0, 1)]) is None  # a bridge closes nothing


@given(st.integers(1, 10), st.integers(1, 10), st.integers(0, 20), seeds)
def test_bipartite_connected(a: int, b: int, extra: int, seed: int) -> None:
    g = lg.bipartite_connected(random.Random(seed), a, b, extra)
    assert nx.is_connected(g)
    assert all((u < a) != (v < a) for u, v in g.edges)  # every edge crosses the sides


def test_relabel_is_a_seeded_permutation() -> None:
    g = nx.path_graph(6)
    a, ma = lg.relabel(g, random.Random(5))
    b, mb = lg.relabel(g, random.Random(5))
    assert ma == mb and sorted(ma.values(), key=int) == [str(i) for i in range(6)]
    assert list(a.edges()) == list(b.edges())
    assert nx.is_isomorphic(a, g)


def test_split_sizes_refuses_a_total_below_the_minimums() -> None:
    sizes = lg.split_sizes(random.Random(1), 20, 4, 3)
    assert sum(sizes) == 20 and len(sizes) == 4 and min(sizes) >= 3
    with pytest.raises(ValueError):
        lg.split_sizes(random.Random(1), 9, 4, 3)


def test_mst_uniqueness_of_kruskal_trees() -> None:
    g = nx.cycle_graph(4)
    nx.set_edge_attributes(g, 1, "weight")
    t = lg.kruskal(g, random.Random(0))
    assert t.number_of_edges() == 3 and not lg.mst_is_unique(g, t)
    g.edges[0, 1]["weight"] = 5
    t = lg.kruskal(g, random.Random(0))
    assert not t.has_edge(0, 1) and lg.mst_is_unique(g, t)


def test_tight_predecessors() -> None:
    g = nx.Graph()
    g.add_weighted_edges_from([(0, 1, 1), (1, 2, 1), (0, 2, 2), (2, 3, 5)])
    dist, preds = lg.tight_predecessors(g, 0)
    assert dist == {0: 0, 1: 1, 2: 2, 3: 7}
    assert preds == {1: [0], 2: [0, 1], 3: [2]}


def test_path_union_of_a_grid_is_the_grid() -> None:
    g = nx.convert_node_labels_to_integers(nx.grid_2d_graph(3, 4))
    g.add_edge(0, 100)  # a pendant decoy
    u = lg.path_union(g, 0, 11)
    assert set(u.nodes()) == set(range(12)) and u.number_of_edges() == 17


def test_edge_disjoint_cycles_of_a_chorded_cycle() -> None:
    g = nx.cycle_graph(5)
    assert lg.edge_disjoint_cycles(g, [(0, 4)]) == [[4, 3, 2, 1, 0]]
    g.add_edge(0, 2)
    assert lg.edge_disjoint_cycles(g, [(0, 2), (0, 4)]) is None


def test_spanning_forest_and_bipartite_constructions() -> None:
    rng = random.Random(3)
    g = lg.connected_graph(rng, 15, 6)
    assert nx.is_connected(g) and g.number_of_edges() == 14 + 6
    for _ in range(5):
        assert nx.is_tree(lg.random_spanning_forest(g, rng))
    b = lg.bipartite_connected(rng, 4, 5, 6)
    assert nx.is_connected(b) and nx.is_bipartite(b) and b.number_of_edges() == 8 + 6
    assert all((u < 4) != (v < 4) for u, v in b.edges())
