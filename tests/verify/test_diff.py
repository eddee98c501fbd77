"""verify.tasks.diff: the rank-based edge sets and sorting give exactly what the per-edge natural
keys gave (the implementation before them, kept here as the reference), on many graphs."""

from __future__ import annotations

import random

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.graphs.model import Edge, ParsedGraph
from pytest_graphinstruct.verify.tasks import diff
from pytest_graphinstruct.vocab import natural_key

#: Ids whose natural order differs from text order, with ties of the numeric value.
_IDS = ["0", "1", "2", "7", "07", "007", "10", "9", "100", "a", "B", "b10", "b2", "", " ", "é",
        "x y", "-1", "1.5", "٣"]


def _old_edge_set(g: nx.Graph, directed: bool) -> frozenset[Edge]:
    return frozenset(diff.edge_key(directed, u, v) for u, v in g.edges())


def _old_sorted_edges(edges: frozenset[Edge] | list[Edge]) -> tuple[Edge, ...]:
    return tuple(sorted(edges, key=lambda e: (natural_key(e[0]), e[0], natural_key(e[1]),
                                               e[1])))


def _relabelled(g: nx.Graph, seed: int) -> nx.Graph:
    rng = random.Random(seed)
    pool = _IDS + [str(rng.randrange(10**6)) for _ in range(len(g))]
    names = rng.sample(pool, len(g))
    return nx.relabel_nodes(g, dict(zip(list(g), names, strict=True)))


@st.composite
def _graphs(draw: st.DrawFn) -> nx.Graph:
    n = draw(st.integers(0, 30))
    p = draw(st.sampled_from([0.0, 0.1, 0.3, 0.7, 1.0]))
    seed = draw(st.integers(0, 2**31))
    g = nx.gnp_random_graph(n, p, seed=seed, directed=draw(st.booleans()))
    if n and draw(st.booleans()):
        g.add_edge(0, 0)
    return _relabelled(g, seed)


@settings(max_examples=150, deadline=None)
@given(_graphs(), _graphs())
def test_edit_distance_matches_the_natural_key_reference(a: nx.Graph, b: nx.Graph) -> None:
    base, result = ParsedGraph(graph=a), ParsedGraph(graph=b)
    directed = a.is_directed() and b.is_directed()
    be, re_ = _old_edge_set(a, directed), _old_edge_set(b, directed)
    assert diff.edge_set(a, directed) == be and diff.edge_set(b, directed) == re_
    got = diff.edit_distance(base, result)
    assert got.added_edges == _old_sorted_edges(re_ - be)
    assert got.removed_edges == _old_sorted_edges(be - re_)
    assert got.size == diff.edit_size(base, result) == len(be ^ re_)


@pytest.mark.parametrize("m", [0, 1, 5, diff._NUMPY_SORT_FROM - 1, diff._NUMPY_SORT_FROM, 5000])
def test_sorted_edges_both_routes_match_the_reference(m: int) -> None:
    rng = random.Random(m)
    ids = _IDS + [str(i) for i in range(300)] + [f"n{i}" for i in range(50)]
    edges = list({(rng.choice(ids), rng.choice(ids)) for _ in range(m)})
    rng.shuffle(edges)
    assert diff.sorted_edges(edges) == _old_sorted_edges(edges)
    assert diff.sorted_edges(iter(edges)) == _old_sorted_edges(edges)


def test_undirected_edges_collapse_and_take_the_natural_first_id() -> None:
    g = nx.DiGraph([("10", "2"), ("2", "10"), ("07", "7"), ("b", "a")])
    assert diff.edge_set(g, False) == {("2", "10"), ("07", "7"), ("a", "b")}
    assert diff.edge_set(g, True) == {("10", "2"), ("2", "10"), ("07", "7"), ("b", "a")}
