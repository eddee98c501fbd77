"""verify.clustering: the average clustering coefficient, equal (==) to networkx's."""

from __future__ import annotations

import networkx as nx
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.verify.clustering import average_clustering
from tests.verify._graphgen import gnp_graphs


def _expected(g: nx.Graph) -> float:
    return float(nx.average_clustering(g))


def test_known_values() -> None:
    assert average_clustering(nx.complete_graph(5)) == 1.0
    assert average_clustering(nx.star_graph(6)) == 0.0
    assert average_clustering(nx.empty_graph(1)) == 0.0
    # a triangle with a pendant node: 1, 1, 1/3 and 0
    g = nx.Graph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    assert average_clustering(g) == (1 + 1 + 1 / 3) / 4


def test_self_loops_are_ignored() -> None:
    g = nx.Graph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("c", "c"), ("d", "d")])
    assert average_clustering(g) == _expected(g) == (1 + 1 + 1 / 3) / 4


@given(gnp_graphs(max_nodes=30, directed=False).filter(lambda g: len(g) > 0))
def test_bit_for_bit_networkx_on_random_graphs(g: nx.Graph) -> None:
    assert average_clustering(g) == _expected(g)


@given(st.integers(3, 150), st.integers(1, 8), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1))
def test_bit_for_bit_networkx_on_clustered_graphs(n: int, k: int, p: float, seed: int) -> None:
    g = nx.powerlaw_cluster_graph(n, min(k, n - 1), p, seed=seed)  # many triangles
    assert average_clustering(g) == _expected(g)
