"""GraphFacts: hand cases, caching, non-mutation, and agreement with networkx on random graphs."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.verify import properties
from pytest_graphinstruct.verify.properties import GraphFacts, node_sort_key, sorted_nodes
from tests.verify._graphgen import gnp_graphs


def test_node_sort_key_is_natural_and_total() -> None:
    assert sorted_nodes(["10", "2", "1", "a", "b2", "b10", 3]) == ["1", "2", 3, "10", "a", "b2",
                                                                    "b10"]
    assert node_sort_key("x") != node_sort_key("y")


def test_rejects_multigraphs_and_non_graphs() -> None:
    with pytest.raises(TypeError):
        GraphFacts(nx.MultiGraph())
    with pytest.raises(TypeError):
        GraphFacts([(1, 2)])  # type: ignore[arg-type]


def test_empty_graph() -> None:
    f = GraphFacts(nx.Graph())
    assert (f.n, f.m, f.num_components) == (0, 0, 0)
    assert f.connected is False  # deviation from networkx/reference: empty is not connected
    assert f.acyclic and f.planar and f.bipartite
    assert (f.min_degree, f.max_degree, f.regular_degree) == (0, 0, None)
    assert math.isinf(f.diameter) and math.isinf(f.average_path_length)
    assert f.density == 0.0 and f.modularity == 0.0 and f.clustering == 0.0
    assert f.edge_connectivity == 0
    assert f.cycle is None and f.odd_cycle is None and f.kuratowski_edges is None
    assert f.side_pairs == [(0, 0)]


def test_single_node() -> None:
    g = nx.Graph()
    g.add_node("0")
    f = GraphFacts(g)
    assert f.connected and f.acyclic and f.regular_degree == 0
    assert f.diameter == 0 and f.average_path_length == 0.0
    assert f.edge_connectivity == 0 and f.modularity == 0.0 and f.density == 0.0
    assert f.side_pairs == [(0, 1)]


def test_directed_degree_is_in_plus_out_and_views() -> None:
    d = nx.DiGraph([("a", "b"), ("b", "a"), ("b", "c")])
    f = GraphFacts(d)
    assert f.degrees == {"a": 2, "b": 3, "c": 1}
    assert f.in_degrees["b"] == 1 and f.out_degrees["b"] == 2
    assert f.m == 3 and f.undirected_m == 2 and f.has_antiparallel
    assert f.antiparallel_pairs == [["a", "b"]]
    assert f.connected and f.num_components == 1
    assert not f.acyclic and f.cycle == [["a", "b"], ["b", "a"]]
    assert f.edge_connectivity == 0  # weakly but not strongly connected
    assert not f.undirected.is_directed()


def test_self_loops() -> None:
    g = nx.Graph([("0", "0"), ("0", "1")])
    f = GraphFacts(g)
    assert f.self_loops == ("0",)
    assert f.degrees["0"] == 3 and f.m == 2
    assert not f.acyclic and f.cycle == [["0", "0"]]
    assert not f.bipartite and f.odd_cycle == ["0"]


def test_forest_and_cycle() -> None:
    f = GraphFacts(nx.Graph([(1, 2), (3, 4), (4, 5)]))
    assert f.acyclic and f.num_components == 2 and not f.connected
    assert f.components == ((3, 4, 5), (1, 2))
    c = GraphFacts(nx.cycle_graph(5))
    assert not c.acyclic and len(c.cycle or []) == 5


def test_bipartite_sides_subset_sum_over_components() -> None:
    # components with sides (1,2), (1,1), (0,1): one side has (1|2) + 1 + (0|1) = 2..4 nodes
    g = nx.Graph([(0, 1), (0, 2), (3, 4)])
    g.add_node(5)
    f = GraphFacts(g)
    assert f.bipartite
    assert sorted(f.component_sides) == [(0, 1), (1, 1), (1, 2)]
    assert f.side_pairs == [(2, 4), (3, 3)]
    assert f.sides_achievable(2, 4) and f.sides_achievable(4, 2) and f.sides_achievable(3, 3)
    assert not f.sides_achievable(1, 5) and not f.sides_achievable(2, 3)
    # an arbitrary colouring may give 3,3 only; flipping components reaches 2,4
    assert GraphFacts(nx.Graph([(0, 1), (2, 3), (4, 5)])).side_pairs == [(3, 3)]


def test_odd_cycle_is_an_odd_cycle_of_the_graph() -> None:
    g = nx.cycle_graph(9)
    g.add_edges_from([(0, 20), (20, 21), (21, 4)])
    f = GraphFacts(g)
    cyc = f.odd_cycle
    assert cyc is not None and len(cyc) % 2 == 1 and len(set(cyc)) == len(cyc)
    assert all(g.has_edge(cyc[i], cyc[(i + 1) % len(cyc)]) for i in range(len(cyc)))


def test_kuratowski_witness() -> None:
    g = nx.grid_2d_graph(3, 3)
    g = nx.convert_node_labels_to_integers(g)
    g.add_edges_from((100 + a, 200 + b) for a in range(3) for b in range(3))  # K3,3
    f = GraphFacts(g)
    assert not f.planar
    edges = f.kuratowski_edges or []
    assert all(g.has_edge(u, v) for u, v in edges)
    assert not nx.check_planarity(nx.Graph(edges))[0]


def test_distances_from_one_bfs() -> None:
    f = GraphFacts(nx.path_graph(5))
    assert f.diameter == 4
    assert f.average_path_length == pytest.approx(nx.average_shortest_path_length(nx.path_graph(5)))
    d = GraphFacts(nx.DiGraph([(0, 1), (2, 1)]))  # undirected view is a path
    assert d.diameter == 2 and d.average_path_length == pytest.approx(4 / 3)


def test_distances_in_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(properties, "_DISTANCE_BLOCK_ENTRIES", 7)
    g = nx.random_regular_graph(3, 20, seed=3)
    f = GraphFacts(g)
    assert f.diameter == nx.diameter(g)
    assert f.average_path_length == pytest.approx(nx.average_shortest_path_length(g))


def test_modularity_is_unweighted_and_does_not_touch_the_graph() -> None:
    g = nx.barbell_graph(5, 1)
    for u, v in g.edges():
        g[u][v]["weight"] = "heavy" if u == 0 else 7.5
    before = {(u, v): dict(d) for u, v, d in g.edges(data=True)}
    f = GraphFacts(g)
    plain = nx.Graph(g.edges())
    expected = nx.community.modularity(
        plain, nx.community.greedy_modularity_communities(plain, weight=None), weight=None)
    assert f.modularity == pytest.approx(expected)
    assert {(u, v): d for u, v, d in g.edges(data=True)} == before


def test_clustering_uses_the_undirected_view() -> None:
    d = nx.DiGraph([(0, 1), (1, 2), (2, 0)])
    assert GraphFacts(d).clustering == 1.0


def test_density_matches_networkx() -> None:
    d = nx.DiGraph([(0, 1), (1, 0)])
    assert GraphFacts(d).density == 1.0
    assert GraphFacts(nx.Graph([(0, 1)])).density == 1.0


def test_each_property_is_computed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"planar": 0, "greedy": 0}
    real_planar = nx.check_planarity
    real_greedy = nx.community.greedy_modularity_communities

    def planar(*a: object, **k: object) -> object:
        calls["planar"] += 1
        return real_planar(*a, **k)  # type: ignore[arg-type]

    def greedy(*a: object, **k: object) -> object:
        calls["greedy"] += 1
        return real_greedy(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(nx, "check_planarity", planar)
    monkeypatch.setattr(nx.community, "greedy_modularity_communities", greedy)
    f = GraphFacts(nx.petersen_graph())
    for _ in range(3):
        assert f.planar is False
        _ = f.modularity
    assert calls == {"planar": 1, "greedy": 1}


def test_edge_connectivity() -> None:
    assert GraphFacts(nx.cycle_graph(6)).edge_connectivity == 2
    assert GraphFacts(nx.Graph([(0, 1), (2, 3)])).edge_connectivity == 0
    assert GraphFacts(nx.DiGraph(nx.cycle_graph(4, create_using=nx.DiGraph))).edge_connectivity == 1


# -- agreement with networkx on random graphs -----------------------------------------------------

@given(gnp_graphs())
def test_facts_agree_with_networkx(g: nx.Graph) -> None:
    f = GraphFacts(g)
    u = nx.Graph(g.to_undirected())
    n = g.number_of_nodes()
    assert f.n == n and f.m == g.number_of_edges()
    assert f.degrees == dict(g.degree())
    assert f.num_components == nx.number_connected_components(u)
    if n:
        connected = nx.is_weakly_connected(g) if g.is_directed() else nx.is_connected(g)
        assert f.connected == connected
        acyclic = nx.is_directed_acyclic_graph(g) if g.is_directed() else nx.is_forest(g)
        assert f.acyclic == acyclic
        assert f.min_degree == min(d for _, d in g.degree())
        assert f.max_degree == max(d for _, d in g.degree())
        if g.is_directed():  # nx.is_regular wants equal in- and out-degrees; we use in+out
            assert f.regular == (len({d for _, d in g.degree()}) == 1)
        else:
            assert f.regular == nx.is_regular(g)
        assert f.clustering == pytest.approx(nx.average_clustering(u))
    assert f.planar == nx.is_planar(u)
    assert f.bipartite == nx.is_bipartite(u)
    assert f.density == pytest.approx(nx.density(g))
    assert set(f.self_loops) == {v for v, _ in nx.selfloop_edges(g)}
    if f.connected and n > 1:
        assert f.diameter == nx.diameter(u)
        assert f.average_path_length == pytest.approx(nx.average_shortest_path_length(u))
        assert f.edge_connectivity == nx.edge_connectivity(g)
    elif n != 1:
        assert math.isinf(f.diameter) and math.isinf(f.average_path_length)
        assert f.edge_connectivity == 0
    if n >= 2 and u.number_of_edges():
        parts = nx.community.greedy_modularity_communities(u, weight=None)
        assert f.modularity == pytest.approx(nx.community.modularity(u, parts, weight=None))
    else:
        assert f.modularity == 0.0
    # locators describe real structure
    if f.cycle is not None:
        assert all(g.has_edge(a, b) for a, b in f.cycle)
        assert f.cycle[0][0] == f.cycle[-1][1]
    if f.odd_cycle is not None:
        cyc = f.odd_cycle
        assert len(cyc) % 2 == 1
        assert all(u.has_edge(cyc[i], cyc[(i + 1) % len(cyc)]) for i in range(len(cyc)))
    if f.kuratowski_edges is not None:
        assert all(u.has_edge(a, b) for a, b in f.kuratowski_edges)
        assert not nx.is_planar(nx.Graph(f.kuratowski_edges))


@given(gnp_graphs(max_nodes=10), st.data())
def test_achievable_sides_match_brute_force(g: nx.Graph, data: st.DataObject) -> None:
    f = GraphFacts(g)
    u = nx.Graph(g.to_undirected())
    nodes = list(u)
    brute: set[int] = set()
    for mask in range(1 << len(nodes)):
        side = {nodes[i] for i in range(len(nodes)) if mask >> i & 1}
        if all((a in side) != (b in side) for a, b in u.edges()):
            brute.add(len(side))
    assert f.achievable_side_sizes == frozenset(brute)
    p = data.draw(st.integers(0, len(nodes)))
    assert f.sides_achievable(p, len(nodes) - p) == (p in brute)


@given(st.integers(0, 12), st.integers(0, 2**31))
def test_components_cover_nodes_once(n: int, seed: int) -> None:
    g = nx.gnp_random_graph(n, 0.15, seed=seed)
    f = GraphFacts(g)
    listed = list(itertools.chain.from_iterable(f.components))
    assert sorted(listed) == sorted(g)
    sizes = [len(c) for c in f.components]
    assert sizes == sorted(sizes, reverse=True)


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
    monkeypatch.setattr(properties, "_DENSE_MAX_NODES", 0)  # per-source BFS only
    assert (GraphFacts(g).diameter, GraphFacts(g).average_path_length) == want
    monkeypatch.setattr(properties, "_DENSE_MAX_NODES", 10_000)
    monkeypatch.setattr(properties, "_BFS_TO_PRODUCT_COST", 10**9)  # products only
    assert (GraphFacts(g).diameter, GraphFacts(g).average_path_length) == want


def test_dense_route_gives_up_after_its_level_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    adj = properties._undirected_csr(nx.path_graph(10))
    assert properties._distance_sum_by_products(adj, 3) is None  # diameter 9 > 3 levels
    assert properties._distance_sum_by_products(adj, 9) == (9, 330)
    assert properties._dense_level_budget(10, adj.nnz) == 166 * 18 // 100
    assert properties._dense_level_budget(properties._DENSE_MAX_NODES + 1, 10**9) == 0


def test_large_dense_answer_distances_take_the_product_route(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a 1,000-node, 100k-edge answer: the product route (2 levels) must be the one taken
    g = nx.gnm_random_graph(1000, 100_000, seed=5)
    monkeypatch.setattr(properties, "_distance_sum_by_bfs", None)  # calling it would fail
    f = GraphFacts(g)
    assert f.diameter == 2
    assert f.average_path_length == (1000 * 999 + (1000 * 999 - 200_000)) / (1000 * 999)


# -- the work budget of exact distances ----------------------------------------------------------

def _star_work(n: int) -> int:
    """``n × (n + m)`` of a star on ``n`` nodes (``m = n - 1``)."""
    return n * (n + n - 1)


def test_distances_above_the_work_limit_are_not_computed(monkeypatch: pytest.MonkeyPatch) -> None:
    # the default limit: a star just above it is refused without running any BFS
    n = next(k for k in itertools.count(2) if _star_work(k) > properties.DISTANCE_WORK_LIMIT)
    monkeypatch.setattr(properties, "_distance_sum_by_bfs", None)  # calling it would fail
    monkeypatch.setattr(properties, "_distance_sum_by_products", None)
    f = GraphFacts(nx.star_graph(n - 1))
    assert f.distance_work == _star_work(n) > properties.DISTANCE_WORK_LIMIT
    assert f.distances_not_computed == (
        f"not computed: answer too large ({n} nodes × ({n} + {n - 1} edges) = {_star_work(n)} "
        f"> {properties.DISTANCE_WORK_LIMIT})")
    assert math.isnan(f.diameter) and math.isnan(f.average_path_length)


@pytest.mark.parametrize("graph", [nx.star_graph, nx.path_graph], ids=["star", "path"])
def test_distance_work_limit_edge(graph: object, monkeypatch: pytest.MonkeyPatch) -> None:
    # n > _DENSE_MAX_NODES, so only the per-source BFS (the bounded one) could compute them
    monkeypatch.setattr(properties, "_DENSE_MAX_NODES", 10)
    g = graph(40)  # type: ignore[operator]
    work = g.number_of_nodes() * (g.number_of_nodes() + g.number_of_edges())
    monkeypatch.setattr(properties, "DISTANCE_WORK_LIMIT", work)
    at = GraphFacts(g)
    assert at.distances_not_computed is None
    assert at.diameter == nx.diameter(g)
    assert at.average_path_length == nx.average_shortest_path_length(g)
    monkeypatch.setattr(properties, "DISTANCE_WORK_LIMIT", work - 1)
    above = GraphFacts(g)
    assert above.distances_not_computed is not None
    assert math.isnan(above.diameter) and math.isnan(above.average_path_length)


def test_the_product_route_is_not_subject_to_the_bfs_work_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    g = nx.complete_graph(50)
    monkeypatch.setattr(properties, "DISTANCE_WORK_LIMIT", 1)
    f = GraphFacts(g)
    assert f.distances_not_computed is None
    assert (f.diameter, f.average_path_length) == (1, 1.0)


def test_disconnected_and_tiny_graphs_never_hit_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(properties, "DISTANCE_WORK_LIMIT", 1)
    monkeypatch.setattr(properties, "_DENSE_MAX_NODES", 0)
    for g, want in ((nx.empty_graph(5), math.inf), (nx.empty_graph(1), 0), (nx.Graph(), math.inf)):
        f = GraphFacts(g)
        assert f.distances_not_computed is None
        assert f.diameter == want
