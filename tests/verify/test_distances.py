"""verify.distances: exact diameter and average path length on both routes, within the budget."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import pytest

from pytest_graphinstruct.verify import distances
from pytest_graphinstruct.verify.properties import GraphFacts


def test_distances_in_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(distances, "_DISTANCE_BLOCK_ENTRIES", 7)
    g = nx.random_regular_graph(3, 20, seed=3)
    f = GraphFacts(g)
    assert f.diameter == nx.diameter(g)
    assert f.average_path_length == pytest.approx(nx.average_shortest_path_length(g))


def _old_distance_stats(g: nx.Graph) -> tuple[float, float]:
    """The implementation before the product route (to_scipy_sparse_array + blocked Dijkstra),
    kept here as the reference the new one must match exactly."""
    from scipy.sparse.csgraph import shortest_path

    u = GraphFacts(g).undirected
    n = u.number_of_nodes()
    adj = nx.to_scipy_sparse_array(u, nodelist=list(u), weight=None, format="csr")
    dist = shortest_path(adj, method="D", directed=False, unweighted=True)
    return int(float(dist.max())), float(dist.sum()) / (n * (n - 1))


_DISTANCE_FAMILIES = [
    nx.path_graph(40), nx.cycle_graph(33), nx.star_graph(25), nx.complete_graph(30),
    nx.balanced_tree(2, 6), nx.grid_2d_graph(7, 9), nx.barbell_graph(12, 5),
    nx.lollipop_graph(20, 30), nx.connected_watts_strogatz_graph(200, 6, 0.1, seed=1),
    nx.gnp_random_graph(300, 0.4, seed=2), nx.barabasi_albert_graph(400, 3, seed=3),
    nx.random_regular_graph(3, 120, seed=4),
    nx.DiGraph([(0, 1), (2, 1), (2, 3), (3, 3), (4, 3), (1, 4), (4, 1)]),
]


@pytest.mark.parametrize("g", _DISTANCE_FAMILIES, ids=lambda g: f"{type(g).__name__}{len(g)}")
def test_distances_match_old_implementation_on_both_routes(g: nx.Graph,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    want = _old_distance_stats(g)
    assert (GraphFacts(g).diameter, GraphFacts(g).average_path_length) == want
    monkeypatch.setattr(distances, "_DENSE_MAX_NODES", 0)  # per-source BFS only
    assert (GraphFacts(g).diameter, GraphFacts(g).average_path_length) == want
    monkeypatch.setattr(distances, "_DENSE_MAX_NODES", 10_000)
    monkeypatch.setattr(distances, "_BFS_TO_PRODUCT_COST", 10**9)  # products only
    assert (GraphFacts(g).diameter, GraphFacts(g).average_path_length) == want


@pytest.mark.parametrize("g", [
    *_DISTANCE_FAMILIES[:4], nx.Graph([("b", "b"), ("b", "a"), ("c", "a"), ("c", "c")]),
    nx.empty_graph(3), nx.lollipop_graph(5, 4),
], ids=lambda g: f"{type(g).__name__}{len(g)}")
def test_adjacency_matrix_is_networkx_adjacency_matrix(g: nx.Graph) -> None:
    u = GraphFacts(g).undirected
    want = nx.to_scipy_sparse_array(u, nodelist=list(u), weight=None, format="csr")
    adj = distances._Adjacency(u)
    got = adj.sparse()
    assert adj.nnz == want.nnz == got.nnz
    assert got.has_sorted_indices and got.dtype == "int8"
    assert (got.toarray() == want.toarray()).all()
    assert (adj.dense() == want.toarray().astype("float32")).all()


def test_dense_route_gives_up_after_its_level_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    adj = distances._Adjacency(nx.path_graph(10))
    assert distances._distance_sum_by_products(adj.dense(), 3) is None  # diameter 9 > 3 levels
    assert distances._distance_sum_by_products(adj.dense(), 9) == (9, 330)
    assert distances._dense_level_budget(10, adj.nnz) == 166 * 18 // 100
    assert distances._dense_level_budget(distances._DENSE_MAX_NODES + 1, 10**9) == 0


def test_large_dense_answer_distances_take_the_product_route(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a 1,000-node, 100k-edge answer: the product route (2 levels) must be the one taken
    g = nx.gnm_random_graph(1000, 100_000, seed=5)
    monkeypatch.setattr(distances, "_distance_sum_by_bfs", None)  # calling it would fail
    f = GraphFacts(g)
    assert f.diameter == 2
    assert f.average_path_length == (1000 * 999 + (1000 * 999 - 200_000)) / (1000 * 999)


# -- the work budget of exact distances ----------------------------------------------------------

def _star_work(n: int) -> int:
    """``n × (n + m)`` of a star on ``n`` nodes (``m = n - 1``)."""
    return n * (n + n - 1)


def test_distances_above_the_work_limit_are_not_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    # the default limit: a star just above it is refused without running any BFS
    n = next(k for k in itertools.count(2) if _star_work(k) > distances.DISTANCE_WORK_LIMIT)
    monkeypatch.setattr(distances, "_distance_sum_by_bfs", None)  # calling it would fail
    monkeypatch.setattr(distances, "_distance_sum_by_products", None)
    f = GraphFacts(nx.star_graph(n - 1))
    assert f.distance_work == _star_work(n) > distances.DISTANCE_WORK_LIMIT
    assert f.distances_not_computed == (
        f"not computed: answer too large ({n} nodes × ({n} + {n - 1} edges) = {_star_work(n)} "
        f"> {distances.DISTANCE_WORK_LIMIT})")
    assert math.isnan(f.diameter) and math.isnan(f.average_path_length)


@pytest.mark.parametrize("graph", [nx.star_graph, nx.path_graph], ids=["star", "path"])
def test_distance_work_limit_edge(graph: object, monkeypatch: pytest.MonkeyPatch) -> None:
    # n > _DENSE_MAX_NODES, so only the per-source BFS (the bounded one) could compute them
    monkeypatch.setattr(distances, "_DENSE_MAX_NODES", 10)
    g = graph(40)  # type: ignore[operator]
    work = g.number_of_nodes() * (g.number_of_nodes() + g.number_of_edges())
    monkeypatch.setattr(distances, "DISTANCE_WORK_LIMIT", work)
    at = GraphFacts(g)
    assert at.distances_not_computed is None
    assert at.diameter == nx.diameter(g)
    assert at.average_path_length == nx.average_shortest_path_length(g)
    monkeypatch.setattr(distances, "DISTANCE_WORK_LIMIT", work - 1)
    above = GraphFacts(g)
    assert above.distances_not_computed is not None
    assert math.isnan(above.diameter) and math.isnan(above.average_path_length)


def test_the_product_route_is_not_subject_to_the_bfs_work_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    g = nx.complete_graph(50)
    monkeypatch.setattr(distances, "DISTANCE_WORK_LIMIT", 1)
    f = GraphFacts(g)
    assert f.distances_not_computed is None
    assert (f.diameter, f.average_path_length) == (1, 1.0)


def test_disconnected_and_tiny_graphs_never_hit_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(distances, "DISTANCE_WORK_LIMIT", 1)
    monkeypatch.setattr(distances, "_DENSE_MAX_NODES", 0)
    for g, want in ((nx.empty_graph(5), math.inf), (nx.empty_graph(1), 0), (nx.Graph(), math.inf)):
        f = GraphFacts(g)
        assert f.distances_not_computed is None
        assert f.diameter == want
