"""score.canon: the canonical node order is a permutation that depends only on the structure."""

from __future__ import annotations

import random

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.score.canon import (
    canonical_form,
    canonical_graph,
    undirected_adjacency,
)
from tests.score._d3graphs import FAMILIES, graphs, relabelled


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_canonical_form_is_invariant_on_symmetric_families(family: str, seed: int) -> None:
    rng = random.Random(seed)
    g = nx.Graph(FAMILIES[family](rng))
    base = canonical_graph(g)
    assert base.exact
    for _ in range(3):
        other = canonical_graph(relabelled(g, rng))
        assert other.certificate == base.certificate
        assert np.array_equal(other.adjacency, base.adjacency)


@pytest.mark.slow
def test_canonical_certificate_decides_isomorphism_on_small_graphs() -> None:
    rng = random.Random(5)
    for _ in range(800):
        n = rng.randint(1, 7)
        a = nx.gnp_random_graph(n, rng.random(), seed=rng.randrange(10**6))
        b = nx.gnp_random_graph(n, rng.random(), seed=rng.randrange(10**6))
        same = canonical_graph(a).certificate == canonical_graph(b).certificate
        assert same == nx.is_isomorphic(a, b)


def test_canonical_form_uses_the_undirected_simple_view() -> None:
    d = nx.DiGraph([("a", "b"), ("b", "a"), ("b", "c"), ("c", "c")])
    u = nx.Graph([("x", "y"), ("y", "z")])
    assert canonical_graph(d).certificate == canonical_graph(u).certificate
    with pytest.raises(ValueError):
        canonical_form(np.array([[0, 1], [0, 0]], dtype=bool))


def test_canonical_budget_is_reported() -> None:
    g = nx.random_regular_graph(3, 40, seed=1)
    tight = canonical_graph(g, max_leaves=2)
    assert not tight.exact and tight.leaves <= 2
    assert canonical_graph(g).exact




def test_undirected_adjacency_keeps_insertion_order_and_drops_loops_and_direction() -> None:
    g = nx.DiGraph()
    g.add_nodes_from(["z", "a", "m"])
    g.add_edges_from([("a", "z"), ("m", "m")])
    nodes, a = undirected_adjacency(g)
    assert nodes == ["z", "a", "m"]
    assert a.dtype == bool
    assert a.tolist() == [[False, True, False], [True, False, False], [False, False, False]]


@pytest.mark.parametrize("bad", [
    np.zeros((2, 3), dtype=bool),  # not square
    np.zeros(4, dtype=bool),  # not a matrix
    np.eye(2, dtype=bool),  # a self-loop on the diagonal
])
def test_canonical_form_rejects_a_bad_matrix(bad: np.ndarray) -> None:
    with pytest.raises(ValueError, match="adjacency must be"):
        canonical_form(bad)


def test_the_empty_graph_has_an_empty_exact_form() -> None:
    c = canonical_form(np.zeros((0, 0), dtype=bool))
    assert c.n == 0 and c.exact and c.order.size == 0
    assert c.certificate == canonical_graph(nx.Graph()).certificate


def test_the_form_is_read_only() -> None:
    c = canonical_graph(nx.path_graph(4))
    with pytest.raises(ValueError):
        c.adjacency[0, 1] = False
    with pytest.raises(ValueError):
        c.order[0] = 3


def test_components_are_sorted_by_size_then_certificate() -> None:
    """A disjoint union lists its smaller components first, whatever the input order."""
    g = nx.disjoint_union_all([nx.complete_graph(4), nx.path_graph(2), nx.path_graph(3)])
    a = canonical_graph(g).adjacency
    assert a[:2, :2].sum() == 2 and not a[:2, 2:].any()  # the edge first
    assert a[2:5, 2:5].sum() == 4 and not a[2:5, 5:].any()  # then the 3-path
    assert a[5:, 5:].sum() == 12  # then K4


@settings(max_examples=60, deadline=None)
@given(g=graphs(min_nodes=0, max_nodes=10), seed=st.integers(0, 2**32 - 1))
def test_any_permutation_of_the_matrix_gives_the_same_form(g: nx.Graph, seed: int) -> None:
    _, a = undirected_adjacency(g)
    perm = np.random.default_rng(seed).permutation(a.shape[0])
    base, other = canonical_form(a), canonical_form(a[np.ix_(perm, perm)])
    assert base.exact and other.exact
    assert sorted(base.order.tolist()) == list(range(a.shape[0]))  # a permutation
    assert np.array_equal(base.adjacency, a[np.ix_(base.order, base.order)])
    assert other.certificate == base.certificate
    assert np.array_equal(other.adjacency, base.adjacency)


def test_random_relabelling_keeps_the_certificate() -> None:
    rng = random.Random(7)
    g = nx.relabel_nodes(nx.gnm_random_graph(12, 20, seed=7), str)
    assert canonical_graph(relabelled(g, rng)).certificate == canonical_graph(g).certificate
