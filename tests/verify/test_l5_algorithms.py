"""The bounded algorithms behind the L5 checks, against brute force on small graphs."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.verify.tasks import algorithms as alg
from tests.verify._graphgen import gnp_graphs

# ----------------------------------------------------------------------------- strategies


@st.composite
def small_graphs(draw: st.DrawFn, max_nodes: int = 6) -> nx.Graph:
    n = draw(st.integers(3, max_nodes))
    pairs = list(itertools.combinations(range(n), 2))
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs)))
    g = nx.Graph()
    g.add_nodes_from(str(i) for i in range(n))
    g.add_edges_from((str(u), str(v)) for u, v in chosen)
    return g


@st.composite
def trees(draw: st.DrawFn, max_nodes: int = 9) -> nx.Graph:
    n = draw(st.integers(1, max_nodes))
    g = nx.Graph()
    g.add_node("0")
    for i in range(1, n):
        g.add_edge(str(i), str(draw(st.integers(0, i - 1))))
    return g


@st.composite
def small_digraphs(draw: st.DrawFn) -> nx.DiGraph:
    n = draw(st.integers(2, 5))
    arcs = [(u, v) for u in range(n) for v in range(n) if u != v]
    chosen = draw(st.lists(st.sampled_from(arcs), unique=True, max_size=8))
    g = nx.DiGraph()
    g.add_nodes_from(str(i) for i in range(n))
    g.add_edges_from((str(u), str(v)) for u, v in chosen)
    return g


def brute_min_additions(g: nx.Graph, ok: Callable[[nx.Graph], bool]) -> int | None:
    non_edges = list(nx.non_edges(g))
    for k in range(len(non_edges) + 1):
        for combo in itertools.combinations(non_edges, k):
            h = g.copy()
            h.add_edges_from(combo)
            if ok(h):
                return k
    return None


def brute_min_removals(g: nx.Graph, ok: Callable[[nx.Graph], bool]) -> int:
    edges = list(g.edges())
    for k in range(len(edges) + 1):
        for combo in itertools.combinations(edges, k):
            h = g.copy()
            h.remove_edges_from(combo)
            if ok(h):
                return k
    raise AssertionError("removing every edge always works for these properties")


# ----------------------------------------------------------------------------- tests


@given(trees())
def test_greedy_path_cover_on_trees_matches_dp(t: nx.Graph) -> None:
    assert t.number_of_nodes() - alg.max_linear_forest_edges(t) == alg.path_cover_dp(t)


def _hamiltonian(h: nx.Graph) -> bool:
    return nx.is_connected(h) and any(
        all(h.has_edge(p[i], p[(i + 1) % len(p)]) for i in range(len(p)))
        for p in itertools.permutations(sorted(h)) if p[0] == min(h))


@settings(max_examples=40)
@given(small_graphs(max_nodes=5))
def test_hamiltonian_completion_matches_brute_force(g: nx.Graph) -> None:
    assert alg.min_hamiltonian_completion(g) == brute_min_additions(g, _hamiltonian)


@given(small_graphs(max_nodes=6))
def test_hamiltonian_cycle_matches_brute_force(g: nx.Graph) -> None:
    assert alg.hamiltonian_cycle(g) is _hamiltonian(g)


def test_hamiltonian_cycle_budget_gives_unknown() -> None:
    # Petersen graph: no Hamiltonian cycle, but not refuted within 5 steps.
    assert alg.hamiltonian_cycle(nx.petersen_graph(), max_steps=5) is None
    assert alg.hamiltonian_cycle(nx.petersen_graph()) is False
    assert alg.hamiltonian_cycle(nx.cycle_graph(40)) is True


@given(small_digraphs())
def test_min_fas_matches_brute_force(g: nx.DiGraph) -> None:
    want = brute_min_removals(g, nx.is_directed_acyclic_graph)
    assert alg.min_feedback_arc_set(g) == want


def test_min_fas_caps() -> None:
    # Six disjoint 2-cycles need 6 removals: found at the cap, unknown beyond it.
    g = nx.DiGraph()
    for i in range(7):
        g.add_edges_from([(f"a{i}", f"b{i}"), (f"b{i}", f"a{i}")])
    assert alg.min_feedback_arc_set(g) is None
    assert alg.min_feedback_arc_set(g, max_size=7) == 7


def _two_edge_connected(h: nx.Graph) -> bool:
    return nx.is_connected(h) and not any(True for _ in nx.bridges(h))


@settings(max_examples=40)
@given(small_graphs(max_nodes=5))
def test_bridge_augmentation_matches_brute_force(g: nx.Graph) -> None:
    assert alg.min_bridge_augmentation(g) == brute_min_additions(g, _two_edge_connected)


def _eulerian(h: nx.Graph) -> bool:
    return alg.is_eulerian(h)[0]


@settings(max_examples=40)
@given(small_graphs(max_nodes=6))
def test_eulerian_additions_match_brute_force(g: nx.Graph) -> None:
    core = g.subgraph([v for v in g if g.degree(v)])
    got = alg.min_eulerian_additions(g)
    if core.number_of_nodes() and not nx.is_connected(core):
        assert got is None
        return
    assert got == brute_min_additions(g, _eulerian)


@given(small_graphs(max_nodes=6))
@pytest.mark.slow
def test_bipartization_matches_brute_force(g: nx.Graph) -> None:
    assert alg.min_bipartization_removals(g) == brute_min_removals(g, nx.is_bipartite)


def test_min_edge_removals_planarity_and_caps() -> None:
    k5 = nx.relabel_nodes(nx.complete_graph(5), str)
    k33 = nx.relabel_nodes(nx.complete_bipartite_graph(3, 3), str)
    assert alg.min_edge_removals(k5, alg.is_planar) == 1
    assert alg.min_edge_removals(k33, alg.is_planar) == 1
    k7 = nx.relabel_nodes(nx.complete_graph(7), str)
    # K7 needs 21 - 15 = 6 removals: beyond the size cap → unknown
    assert alg.min_edge_removals(k7, alg.is_planar, start=6 - 2) is None


def test_isomorphism_prefilters_and_cap() -> None:
    c6 = nx.cycle_graph(6)
    two_triangles = nx.disjoint_union(nx.cycle_graph(3), nx.cycle_graph(3))
    assert alg.isomorphic(c6, two_triangles) is False  # same degrees, WL/VF2 reject
    assert alg.isomorphic(c6, nx.relabel_nodes(c6, {i: f"x{i}" for i in range(6)})) is True
    assert alg.isomorphic(nx.path_graph(3), nx.DiGraph(nx.path_graph(3))) is False
    big = nx.cycle_graph(50)
    assert alg.isomorphic(big, big, max_nodes=10) is None


def test_undirected_keeps_the_digraph_order() -> None:
    g = nx.DiGraph([("b", "a"), ("c", "b"), ("a", "c"), ("b", "c")])
    u = alg.undirected(g)
    assert not u.is_directed() and list(u) == ["b", "a", "c"]
    assert {x: list(u[x]) for x in u} == {"b": ["a", "c"], "a": ["b", "c"], "c": ["b", "a"]}
    undirected = nx.Graph(g)
    assert alg.undirected(undirected) is undirected


def test_graph_power_and_unique_order() -> None:
    p = alg.graph_power(nx.path_graph(5), 2)
    assert sorted(p.edges()) == [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (2, 4), (3, 4)]
    d = alg.graph_power(nx.DiGraph([(0, 1), (1, 2)]), 2)
    assert set(d.edges()) == {(0, 1), (1, 2), (0, 2)}
    assert alg.has_unique_topological_order(nx.DiGraph([(0, 1), (1, 2), (0, 2)]))
    assert not alg.has_unique_topological_order(nx.DiGraph([(0, 1), (0, 2)]))


def _old_triangles(g: nx.Graph, limit: int = 1_000) -> list[tuple[str, str, str]]:
    """``triangles`` before it stopped copying the graph: the reference it must match."""
    u = nx.Graph(alg.undirected(g))
    order = {v: i for i, v in enumerate(sorted(u, key=str))}
    out: list[tuple[str, str, str]] = []
    for a in u:
        for b in u[a]:
            if order[b] <= order[a]:
                continue
            for c in u[a]:
                if c in u[b] and order[c] > order[b]:
                    out.append(tuple(sorted((str(a), str(b), str(c)))))  # type: ignore[arg-type]
                    if len(out) >= limit:
                        return sorted(out)
    return sorted(out)


@settings(max_examples=200, deadline=None)
@given(gnp_graphs(max_nodes=14), st.integers(1, 12), st.integers(0, 2**31))
def test_triangles_match_the_copying_reference_even_when_cut(g: nx.Graph, limit: int,
                                                             seed: int) -> None:
    # shuffled insertion order: the copy's adjacency order then differs from the original's
    edges = list(g.edges())
    random.Random(seed).shuffle(edges)
    h = g.__class__()
    h.add_nodes_from(random.Random(seed + 1).sample(list(g), len(g)))
    h.add_edges_from(edges)
    assert alg.triangles(h, limit) == _old_triangles(h, limit)
    assert alg.triangles(h) == _old_triangles(h)
