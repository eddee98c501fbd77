"""Graph-type validators: hand cases, directed semantics, and agreement with isomorphism oracles."""

from __future__ import annotations

import json
import random

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.suite.constraints import GRAPH_TYPES
from pytest_graphinstruct.verify.graph_types import (
    VALIDATORS,
    TypeCheck,
    check_graph_type,
    grid_shapes,
)
from pytest_graphinstruct.verify.locus import Locus
from pytest_graphinstruct.verify.properties import GraphFacts
from tests.verify._graphgen import gnp_graphs, orient, relabel_randomly


def grid(p: int, q: int) -> nx.Graph:
    """The ``p×q`` grid with integer node ids (a locus names string or integer ids)."""
    return nx.convert_node_labels_to_integers(nx.grid_2d_graph(p, q))


def ok(name: str, g: nx.Graph) -> bool:
    return check_graph_type(name, GraphFacts(g)).ok


def test_validators_cover_the_vocabulary() -> None:
    assert set(VALIDATORS) == set(GRAPH_TYPES)


def test_unknown_type_raises() -> None:
    with pytest.raises(ValueError, match="unknown graph type"):
        check_graph_type("hypercube", GraphFacts(nx.Graph()))


def test_typecheck_is_frozen_and_hashable() -> None:
    tc = TypeCheck(True, "tree")
    with pytest.raises(AttributeError):
        tc.ok = False  # type: ignore[misc]
    assert hash(tc) == hash(TypeCheck(True, "tree", Locus().with_nodes("nodes", [1])))


# -- positive and negative hand cases (undirected) ------------------------------------------------

POSITIVE = {
    "tree": [nx.path_graph(1), nx.star_graph(4), nx.balanced_tree(2, 3)],
    "forest": [nx.Graph(), nx.empty_graph(3), nx.Graph([(0, 1), (2, 3), (3, 4)])],
    "path": [nx.path_graph(1), nx.path_graph(2), nx.path_graph(7)],
    "cycle": [nx.cycle_graph(3), nx.cycle_graph(10)],
    "star": [nx.path_graph(1), nx.path_graph(2), nx.path_graph(3), nx.star_graph(6)],
    "wheel": [nx.complete_graph(4), nx.wheel_graph(5), nx.wheel_graph(12)],
    "grid": [grid(2, 2), grid(2, 5), grid(4, 4), grid(3, 7)],
    "complete": [nx.complete_graph(1), nx.complete_graph(2), nx.complete_graph(6)],
    "complete_bipartite": [nx.path_graph(2), nx.star_graph(3), nx.complete_bipartite_graph(3, 4),
                           nx.cycle_graph(4)],
    "bipartite": [nx.Graph(), nx.cycle_graph(6), grid(3, 3),
                  nx.Graph([(0, 1), (2, 3)])],
    "connected": [nx.path_graph(1), nx.petersen_graph()],
    "regular": [nx.path_graph(1), nx.empty_graph(3), nx.petersen_graph(), nx.cycle_graph(5)],
    "planar": [nx.Graph(), nx.complete_graph(4), grid(4, 4)],
    "acyclic": [nx.Graph(), nx.balanced_tree(3, 2), nx.empty_graph(4)],
}

NEGATIVE = {
    "tree": [nx.Graph(), nx.cycle_graph(4), nx.Graph([(0, 1), (2, 3)]), nx.Graph([(0, 0)])],
    "forest": [nx.cycle_graph(3), nx.Graph([(0, 0)])],
    "path": [nx.Graph(), nx.star_graph(3), nx.cycle_graph(5), nx.Graph([(0, 1), (2, 3)])],
    "cycle": [nx.Graph(), nx.path_graph(2), nx.path_graph(5),
              nx.disjoint_union(nx.cycle_graph(3), nx.cycle_graph(3)), nx.complete_graph(4)],
    "star": [nx.Graph(), nx.path_graph(4), nx.complete_graph(3), nx.empty_graph(2)],
    "wheel": [nx.Graph(), nx.complete_graph(3), nx.complete_graph(5), nx.cycle_graph(6),
              # hub of degree n-1 and rim nodes of degree 3, but the rim is two triangles
              nx.Graph([(0, i) for i in range(1, 7)] + [(1, 2), (2, 3), (3, 1),
                                                        (4, 5), (5, 6), (6, 4)])],
    "grid": [nx.Graph(), nx.path_graph(4), nx.cycle_graph(6), nx.complete_graph(4),
             grid(1, 5), nx.path_graph(7)],
    "complete": [nx.Graph(), nx.empty_graph(2), nx.cycle_graph(4)],
    "complete_bipartite": [nx.Graph(), nx.path_graph(1), nx.empty_graph(3), nx.path_graph(4),
                           nx.complete_graph(3),
                           nx.disjoint_union(nx.complete_bipartite_graph(2, 2), nx.path_graph(1))],
    "bipartite": [nx.cycle_graph(5), nx.Graph([(0, 0)])],
    "dag": [nx.Graph(), nx.path_graph(3)],
    "connected": [nx.Graph(), nx.empty_graph(2)],
    "regular": [nx.Graph(), nx.path_graph(3)],
    "planar": [nx.complete_graph(5), nx.complete_bipartite_graph(3, 3), nx.petersen_graph()],
    "acyclic": [nx.cycle_graph(3), nx.Graph([(0, 0)])],
}


@pytest.mark.parametrize(("name", "index"),
                         [(k, i) for k, v in POSITIVE.items() for i in range(len(v))])
def test_positive(name: str, index: int) -> None:
    tc = check_graph_type(name, GraphFacts(POSITIVE[name][index]))
    assert tc.ok, tc
    assert tc.where == Locus()


@pytest.mark.parametrize(("name", "index"),
                         [(k, i) for k, v in NEGATIVE.items() for i in range(len(v))])
def test_negative(name: str, index: int) -> None:
    tc = check_graph_type(name, GraphFacts(NEGATIVE[name][index]))
    assert not tc.ok, tc
    json.dumps(tc.where.to_json())  # JSON-ready


def test_failure_loci() -> None:
    tc = check_graph_type("tree", GraphFacts(nx.Graph([(0, 1), (2, 3)])))
    assert tc.where.to_json()["count"] == 2 and tc.observed.startswith("not a tree: disconnected")
    tc = check_graph_type("tree", GraphFacts(nx.cycle_graph(4)))
    assert len(tc.where.to_json()["cycle"]) == 4
    tc = check_graph_type("cycle", GraphFacts(nx.path_graph(5)))
    assert tc.where.to_json()["nodes"] == [0, 4]
    tc = check_graph_type("planar", GraphFacts(nx.complete_graph(5)))
    assert tc.where.to_json()["count"] == 10
    tc = check_graph_type("bipartite", GraphFacts(nx.cycle_graph(5)))
    assert len(tc.where.to_json()["odd_cycle"]) == 5
    g = nx.complete_bipartite_graph(2, 3)
    g.remove_edge(0, 2)
    tc = check_graph_type("complete_bipartite", GraphFacts(g))
    assert tc.where.to_json()["nodes"] == [0, 2] and "K{2,3} has 6" in tc.observed


def test_grid_shapes() -> None:
    assert grid_shapes(12) == [(2, 6), (3, 4)]
    assert grid_shapes(13) == []
    assert grid_shapes(4) == [(2, 2)]
    assert grid_shapes(1) == []


def test_grid_right_counts_but_wrong_structure() -> None:
    # a 3x4 grid with two edges rewired so that edge and degree counts stay those of 3x4
    g = nx.convert_node_labels_to_integers(nx.grid_2d_graph(3, 4), ordering="sorted")
    # nodes (i, j) -> 4i + j ; swap edges (1-5, 2-6) for (1-6, 2-5)
    g.remove_edges_from([(1, 5), (2, 6)])
    g.add_edges_from([(1, 6), (2, 5)])
    f = GraphFacts(g)
    assert not nx.is_isomorphic(g, nx.grid_2d_graph(3, 4))
    tc = check_graph_type("grid", f)
    assert not tc.ok


# -- directed semantics ---------------------------------------------------------------------------

def test_directed_tree_must_be_rooted() -> None:
    t = nx.balanced_tree(2, 3)
    assert ok("tree", orient(t, "out")) and ok("tree", orient(t, "in"))
    assert "out-tree" in check_graph_type("tree", GraphFacts(orient(t, "out"))).observed
    mixed = nx.DiGraph([(0, 1), (2, 1), (2, 3)])  # a polytree, not rooted
    tc = check_graph_type("tree", GraphFacts(mixed))
    assert not tc.ok and tc.where.to_json()["nodes"] == [1]
    assert not ok("tree", orient(t, "both"))


def test_directed_forest() -> None:
    g = nx.DiGraph([(0, 1), (0, 2), (4, 3), (5, 3)])
    assert ok("forest", g)  # one out-tree and one in-tree
    g.add_edge(6, 4)  # 4 now has in- and out-arcs in a tree that points at 3
    assert ok("forest", g)
    g.add_edge(4, 7)  # 4 -> 3, 4 -> 7, 6 -> 4, 5 -> 3: neither rooted direction
    assert not ok("forest", g)


def test_directed_path_cycle_star() -> None:
    assert ok("path", nx.path_graph(6, create_using=nx.DiGraph))
    assert not ok("path", nx.DiGraph([(0, 1), (2, 1)]))
    assert ok("cycle", nx.cycle_graph(5, create_using=nx.DiGraph))
    # reference release accepts any orientation of a cycle; we need a directed cycle
    zigzag = nx.DiGraph([(0, 1), (2, 1), (2, 3), (0, 3)])
    tc = check_graph_type("cycle", GraphFacts(zigzag))
    assert not tc.ok and tc.where.to_json()["nodes"] == [0, 1, 2, 3]
    assert ok("star", nx.DiGraph([(0, i) for i in range(1, 5)]))
    assert ok("star", nx.DiGraph([(i, 0) for i in range(1, 5)]))
    assert not ok("star", nx.DiGraph([(0, 1), (2, 0), (0, 3)]))
    assert ok("star", nx.DiGraph([(1, 0)]))


def test_directed_orientation_types() -> None:
    for name, g in (("wheel", nx.wheel_graph(7)), ("grid", grid(3, 3)),
                    ("complete_bipartite", nx.complete_bipartite_graph(2, 3))):
        assert ok(name, orient(g, "random", seed=1)), name
        tc = check_graph_type(name, GraphFacts(orient(g, "both")))
        assert not tc.ok and "antiparallel" in tc.where.to_json(), name


def test_directed_complete_means_complete_digraph() -> None:
    assert ok("complete", nx.complete_graph(4, create_using=nx.DiGraph))
    tournament = nx.DiGraph([(i, j) for i in range(4) for j in range(i + 1, 4)])
    assert not ok("complete", tournament)


def test_dag_and_acyclic_directed() -> None:
    assert ok("dag", nx.DiGraph())
    assert ok("dag", nx.DiGraph([(0, 1), (0, 2), (1, 2)]))
    assert not ok("dag", nx.cycle_graph(3, create_using=nx.DiGraph))
    assert ok("acyclic", nx.DiGraph([(0, 1), (0, 2), (1, 2)]))  # undirected triangle, no cycle


@given(gnp_graphs(max_nodes=14, directed=True))
def test_every_type_gives_a_verdict_on_directed_graphs(g: nx.DiGraph) -> None:
    f = GraphFacts(g)
    for name in VALIDATORS:
        tc = check_graph_type(name, f)
        assert isinstance(tc.ok, bool) and tc.observed
        json.dumps(tc.where.to_json())


@pytest.mark.parametrize("mode", ["random", "both", "out", "in"])
@pytest.mark.parametrize("name", sorted(VALIDATORS))
def test_directed_shapes_never_raise(name: str, mode: str) -> None:
    # the reference release crashes on a directed wheel/grid whose arc count matches
    for g in (nx.wheel_graph(6), grid(3, 4), nx.complete_graph(5), nx.Graph()):
        check_graph_type(name, GraphFacts(orient(g, mode)))


# -- agreement with independent (isomorphism-based) oracles ---------------------------------------

def _weak_components(g: nx.Graph) -> list[set[object]]:
    return list(nx.weakly_connected_components(g) if g.is_directed()
                else nx.connected_components(g))


def _rooted(g: nx.DiGraph) -> bool:
    return nx.is_arborescence(g) or nx.is_arborescence(g.reverse(copy=False))


def oracle(name: str, g: nx.Graph) -> bool:
    """An independent definition of each type (brute force / isomorphism)."""
    n = g.number_of_nodes()
    directed = g.is_directed()
    cls = nx.DiGraph if directed else nx.Graph
    u = nx.Graph(g.to_undirected())
    loops = nx.number_of_selfloops(g) > 0
    antiparallel = directed and u.number_of_edges() != g.number_of_edges()

    def iso(a: nx.Graph, b: nx.Graph) -> bool:
        return nx.is_isomorphic(a, b)

    if name == "tree":
        return n > 0 and (_rooted(g) if directed else nx.is_tree(g))
    if name == "forest":
        if n == 0:
            return True
        if directed:
            return all(_rooted(g.subgraph(c)) for c in _weak_components(g))
        return nx.is_forest(g)
    if name == "path":
        return n > 0 and iso(g, nx.path_graph(n, create_using=cls))
    if name == "cycle":
        return n >= 3 and iso(g, nx.cycle_graph(n, create_using=cls))
    if name == "star":
        if n == 0:
            return False
        out_star = nx.star_graph(n - 1, create_using=cls)
        return iso(g, out_star) or (directed and iso(g, out_star.reverse()))
    if name == "wheel":
        return n >= 4 and not loops and not antiparallel and iso(u, nx.wheel_graph(n))
    if name == "grid":
        return not antiparallel and any(
            iso(u, nx.grid_2d_graph(p, q)) for p in range(2, n) for q in range(p, n)
            if p * q == n)
    if name == "complete":
        return n > 0 and iso(g, nx.complete_graph(n, create_using=cls))
    if name == "complete_bipartite":
        return n >= 2 and not antiparallel and any(
            iso(u, nx.complete_bipartite_graph(p, n - p)) for p in range(1, n // 2 + 1))
    if name == "bipartite":
        return nx.is_bipartite(u)
    if name == "dag":
        return directed and nx.is_directed_acyclic_graph(g)
    if name == "connected":
        return n > 0 and len(_weak_components(g)) == 1
    if name == "regular":
        return n > 0 and len({d for _, d in g.degree()}) == 1
    if name == "planar":
        return nx.is_planar(u)
    if name == "acyclic":
        return nx.is_directed_acyclic_graph(g) if directed else (n == 0 or nx.is_forest(g))
    raise AssertionError(name)


def _shape(kind: str, a: int, b: int, seed: int) -> nx.Graph:
    if kind == "tree":
        return nx.random_labeled_tree(a, seed=seed)
    if kind == "forest":
        return nx.disjoint_union(nx.random_labeled_tree(a, seed=seed),
                                 nx.random_labeled_tree(b, seed=seed + 1))
    if kind == "path":
        return nx.path_graph(a)
    if kind == "cycle":
        return nx.cycle_graph(a)
    if kind == "star":
        return nx.star_graph(a - 1)
    if kind == "wheel":
        return nx.wheel_graph(a)
    if kind == "grid":
        return nx.grid_2d_graph(min(a, 5), min(b, 5))
    if kind == "complete":
        return nx.complete_graph(a)
    if kind == "complete_bipartite":
        return nx.complete_bipartite_graph(a, b)
    if kind == "regular":
        k = min(3, a - 1)
        return nx.random_regular_graph(k, a, seed=seed) if (a * k) % 2 == 0 else nx.cycle_graph(a)
    return nx.gnp_random_graph(a, 0.3, seed=seed)


@st.composite
def shaped_graphs(draw: st.DrawFn, perturbed: bool = True) -> nx.Graph:
    """A graph of some type, then maybe perturbed, maybe oriented, with shuffled str ids."""
    kind = draw(st.sampled_from(["tree", "forest", "path", "cycle", "star", "wheel", "grid",
                                 "complete", "complete_bipartite", "regular", "gnp"]))
    a = draw(st.integers(1, 9))
    b = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 10_000))
    g = nx.convert_node_labels_to_integers(_shape(kind, a, b, seed))
    rng = random.Random(seed)
    perturb = draw(st.sampled_from(["none", "none", "add_edge", "remove_edge", "add_node",
                                    "self_loop"])) if perturbed else "none"
    nodes = list(g)
    if perturb == "add_edge" and len(nodes) >= 2:
        g.add_edge(*rng.sample(nodes, 2))
    elif perturb == "remove_edge" and g.number_of_edges():
        g.remove_edge(*rng.choice(list(g.edges())))
    elif perturb == "add_node":
        g.add_edge(len(nodes), rng.choice(nodes))
    elif perturb == "self_loop":
        v = rng.choice(nodes)
        g.add_edge(v, v)
    mode = draw(st.sampled_from(["undirected", "undirected", "random", "both", "out", "in",
                                 "cyclic"]))
    if mode == "cyclic":  # directed versions of path/cycle with consistent direction
        d = nx.DiGraph()
        d.add_nodes_from(g)
        d.add_edges_from((u, v) if u < v else (v, u) for u, v in g.edges())
        if kind == "cycle" and a >= 3 and d.has_edge(0, a - 1):  # perturbation may drop it
            d.remove_edge(0, a - 1)
            d.add_edge(a - 1, 0)
        g = d
    elif mode != "undirected":
        g = orient(g, mode, seed)
    return relabel_randomly(g, seed)


@given(shaped_graphs())
def test_validators_agree_with_oracles(g: nx.Graph) -> None:
    f = GraphFacts(g)
    for name in VALIDATORS:
        tc = check_graph_type(name, f)
        assert tc.ok == oracle(name, g), (name, tc, sorted(g.edges()))
        if tc.ok:
            assert tc.where == Locus()


@given(shaped_graphs(perturbed=False))
def test_validators_agree_with_oracles_on_exact_shapes(g: nx.Graph) -> None:
    f = GraphFacts(g)
    for name in VALIDATORS:
        assert check_graph_type(name, f).ok == oracle(name, g), (name, sorted(g.edges()))


@given(st.integers(2, 7), st.integers(2, 7), st.integers(0, 1000))
def test_grid_recognised_under_relabelling(p: int, q: int, seed: int) -> None:
    g = relabel_randomly(nx.convert_node_labels_to_integers(nx.grid_2d_graph(p, q)), seed)
    tc = check_graph_type("grid", GraphFacts(g))
    assert tc.ok and tc.observed == f"{min(p, q)}x{max(p, q)} grid"


def test_grid_recognised_on_a_large_relabelled_grid() -> None:
    g = relabel_randomly(nx.convert_node_labels_to_integers(nx.grid_2d_graph(60, 80)), 1)
    assert ok("grid", g)
    g.remove_edge(*next(iter(g.edges())))
    assert not ok("grid", g)
