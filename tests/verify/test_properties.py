"""GraphFacts: hand cases, caching, non-mutation, and agreement with networkx on random graphs."""

from __future__ import annotations

import math

import networkx as nx
import pytest
from hypothesis import given

from pytest_graphinstruct.verify import properties
from pytest_graphinstruct.verify.modularity import Communities
from pytest_graphinstruct.verify.properties import GraphFacts
from tests.verify._graphgen import gnp_graphs


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


def test_distances_from_one_bfs() -> None:
    f = GraphFacts(nx.path_graph(5))
    assert f.diameter == 4
    assert f.average_path_length == pytest.approx(nx.average_shortest_path_length(nx.path_graph(5)))
    d = GraphFacts(nx.DiGraph([(0, 1), (2, 1)]))  # undirected view is a path
    assert d.diameter == 2 and d.average_path_length == pytest.approx(4 / 3)


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
    real_greedy = properties.greedy_modularity

    def planar(*a: object, **k: object) -> object:
        calls["planar"] += 1
        return real_planar(*a, **k)  # type: ignore[arg-type]

    def greedy(g: nx.Graph) -> Communities:
        calls["greedy"] += 1
        return real_greedy(g)

    monkeypatch.setattr(nx, "check_planarity", planar)
    monkeypatch.setattr(properties, "greedy_modularity", greedy)
    f = GraphFacts(nx.petersen_graph())
    for _ in range(3):
        assert f.planar is False
        _ = f.modularity
    assert calls == {"planar": 1, "greedy": 1}


def test_edge_connectivity() -> None:
    assert GraphFacts(nx.cycle_graph(6)).edge_connectivity == 2
    assert GraphFacts(nx.Graph([(0, 1), (2, 3)])).edge_connectivity == 0
    assert GraphFacts(nx.DiGraph(nx.cycle_graph(4, create_using=nx.DiGraph))).edge_connectivity == 1


def test_self_loops_are_in_no_cut() -> None:
    # networkx answers 3 and 3 here (the least degree, a loop counted twice)
    assert GraphFacts(nx.Graph([("0", "0"), ("0", "1"), ("1", "1")])).edge_connectivity == 1
    star = nx.star_graph(3)
    star.add_edges_from((v, v) for v in (1, 2, 3))
    assert GraphFacts(star).edge_connectivity == 1


# -- agreement with networkx on random graphs -----------------------------------------------------

@given(gnp_graphs())
def test_facts_agree_with_networkx(g: nx.Graph) -> None:
    f = GraphFacts(g)
    u = nx.Graph(g.to_undirected())
    n = g.number_of_nodes()
    assert f.n == n and f.m == g.number_of_edges()
    assert f.undirected_m == u.number_of_edges()
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
        assert f.clustering == nx.average_clustering(u)  # bit for bit
    assert f.planar == nx.is_planar(u)
    assert f.bipartite == nx.is_bipartite(u)
    assert f.density == nx.density(g)  # bit for bit
    assert set(f.self_loops) == {v for v, _ in nx.selfloop_edges(g)}
    if f.connected and n > 1:
        assert f.diameter == nx.diameter(u)
        assert f.average_path_length == pytest.approx(nx.average_shortest_path_length(u))
        loopless = g.copy()  # networkx counts a loop in the least degree it may answer
        loopless.remove_edges_from(list(nx.selfloop_edges(g)))
        assert f.edge_connectivity == nx.edge_connectivity(loopless)
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


def test_what_the_parts_hold_is_computed_once_and_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"components": 0}
    real = nx.connected_components

    def counted(*a: object, **k: object) -> object:
        calls["components"] += 1
        return real(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(nx, "connected_components", counted)
    f = GraphFacts(nx.Graph([(0, 1), (2, 3)]))
    for _ in range(3):
        assert f.components == ((0, 1), (2, 3)) and f.num_components == 2
        assert not f.connected and f.bipartite and f.component_sides == ((1, 1), (1, 1))
        assert f.acyclic and math.isinf(f.diameter)
    assert calls == {"components": 1}
    assert f.component_facts is f.bipartition.components  # one Components, shared
    assert {"components", "connected", "bipartite"} <= set(vars(f))  # later reads: plain reads
    assert GraphFacts.connected is vars(GraphFacts)["connected"]  # on the class: no value
