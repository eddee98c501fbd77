"""verify.planarity: the same answer as ``nx.check_planarity`` on every graph."""

from __future__ import annotations

import itertools

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.verify.planarity import _reduced, is_planar
from tests.verify._graphgen import gnp_graphs


def _expected(g: nx.Graph) -> bool:
    return bool(nx.check_planarity(g)[0])


def _subdivided(g: nx.Graph, times: int) -> nx.Graph:
    """``g`` with every edge replaced by a path of ``times + 1`` edges (homeomorphic to it)."""
    out = nx.Graph()
    out.add_nodes_from(g)
    for k, (u, v) in enumerate(g.edges()):
        path = [u, *((u, v, k, i) for i in range(times)), v]
        nx.add_path(out, path)
    return out


_KNOWN = [
    (nx.complete_graph(5), False), (nx.complete_bipartite_graph(3, 3), False),
    (nx.petersen_graph(), False), (nx.complete_graph(4), True), (nx.grid_2d_graph(6, 7), True),
    (nx.icosahedral_graph(), True), (nx.dodecahedral_graph(), True),
    (nx.complete_bipartite_graph(2, 9), True), (nx.empty_graph(0), True),
    (nx.balanced_tree(3, 4), True), (nx.cycle_graph(40), True), (nx.wheel_graph(30), True),
]


@pytest.mark.parametrize(("g", "planar"), _KNOWN, ids=lambda x: str(x)[:20])
def test_known_graphs(g: nx.Graph, planar: bool) -> None:
    assert is_planar(g) is planar
    assert is_planar(_subdivided(g, 2)) is planar  # subdividing never changes planarity


def test_kuratowski_graphs_with_trees_and_paths_attached_are_still_not_planar() -> None:
    g = _subdivided(nx.complete_bipartite_graph(3, 3), 1)
    nx.add_path(g, [0, "p1", "p2", "p3"])
    g.add_edges_from([("t", 1), ("t", "t2"), ("t", "t3"), (4, 4)])
    assert not is_planar(g)
    assert len(_reduced(g)) == 6  # only K3,3's nodes are left


def test_series_parallel_graphs_reduce_to_nothing() -> None:
    g = nx.Graph()
    for a, b in itertools.pairwise(range(10)):
        g.add_edges_from([(a, b), (a, (a, b)), ((a, b), b)])  # parallel paths between neighbours
    assert _reduced(g) == {}
    assert is_planar(g)


@given(gnp_graphs(max_nodes=14, directed=False))
def test_same_answer_as_networkx_on_random_graphs(g: nx.Graph) -> None:
    assert is_planar(g) == _expected(g)


@given(st.integers(5, 60), st.integers(0, 3), st.integers(0, 2**32 - 1), st.integers(0, 2))
def test_same_answer_as_networkx_on_sparse_graphs(n: int, extra: int, seed: int,
                                                    subdivide: int) -> None:
    # near the planarity threshold: a random tree plus a few chords, sometimes subdivided
    g = nx.gnm_random_graph(n, n - 1 + extra * n // 3, seed=seed)
    g = _subdivided(g, subdivide) if subdivide else g
    assert is_planar(g) == _expected(g)
