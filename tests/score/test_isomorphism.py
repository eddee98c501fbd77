from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.score import isomorphism as iso
from pytest_graphinstruct.score.isomorphism import is_isomorphic, isomorphism_classes
from tests.score._d1graphs import k33, prism, shuffled
from tests.verify._graphgen import gnp_graphs


@pytest.mark.filterwarnings("ignore::UserWarning")  # networkx 3.5+ notes a WL hash change
def test_k33_and_prism_are_two_classes_although_wl_merges_them() -> None:
    a, b = k33(), prism()
    assert nx.weisfeiler_lehman_graph_hash(a) == nx.weisfeiler_lehman_graph_hash(b)
    assert is_isomorphic(a, b) is False
    classes = isomorphism_classes([a, b, shuffled(a, 1), shuffled(b, 2)])
    assert classes.labels == (0, 1, 0, 1)
    assert classes.classes == classes.classes_min == 2 and classes.exact


def test_rook_and_shrikhande_strongly_regular_pair() -> None:
    # both srg(16, 6, 2, 2): same degrees, same WL colours, same spectrum
    rook = nx.convert_node_labels_to_integers(
        nx.cartesian_product(nx.complete_graph(4), nx.complete_graph(4)))
    shr = nx.Graph()
    for i in range(4):
        for j in range(4):
            for di, dj in ((0, 1), (1, 0), (1, 1)):
                shr.add_edge((i, j), ((i + di) % 4, (j + dj) % 4))
    shr = nx.convert_node_labels_to_integers(shr)
    assert is_isomorphic(rook, shr) is False
    assert is_isomorphic(shr, shuffled(shr, 5)) is True


@pytest.mark.parametrize("n", [20, 100, 400])
def test_random_regular_pairs(n: int) -> None:
    a = nx.random_regular_graph(3, n, seed=1)
    b = nx.random_regular_graph(3, n, seed=2)
    assert is_isomorphic(a, b) is False
    assert is_isomorphic(a, shuffled(a, 3)) is True


def test_directedness_is_part_of_the_class() -> None:
    und = nx.path_graph(3)
    both = nx.DiGraph(und)  # both arc directions
    fwd = nx.DiGraph([(0, 1), (1, 2)])
    rev = nx.DiGraph([(2, 1), (1, 0)])
    out = nx.DiGraph([(1, 0), (1, 2)])
    classes = isomorphism_classes([und, both, fwd, rev, out])
    assert classes.labels == (0, 1, 2, 2, 3)


def test_self_loops_count() -> None:
    a = nx.Graph([(0, 1), (1, 2), (0, 0)])
    b = nx.Graph([(0, 1), (1, 2), (1, 1)])
    assert is_isomorphic(a, b) is False
    assert is_isomorphic(a, shuffled(a, 1)) is True


def test_symmetric_and_empty_graphs_are_cheap() -> None:
    star = nx.star_graph(2000)
    assert is_isomorphic(star, shuffled(star, 1)) is True
    assert is_isomorphic(nx.empty_graph(500), nx.empty_graph(500)) is True
    assert is_isomorphic(nx.Graph(), nx.Graph()) is True


def test_budget_exhaustion_is_reported_not_guessed() -> None:
    a = nx.random_regular_graph(3, 60, seed=1)
    b = shuffled(a, 7)
    assert is_isomorphic(a, b, work_budget=10) is None
    c = isomorphism_classes([a, b], work_budget=10)
    assert not c.exact and c.undecided_pairs == ((0, 1),)
    assert (c.classes_min, c.classes) == (1, 2)


def test_size_cap_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(iso, "ISO_MAX_NODES", 10)
    a = nx.cycle_graph(12)
    b = shuffled(a, 1)
    assert is_isomorphic(a, b) is None  # invariants agree, no exact test allowed
    assert is_isomorphic(a, nx.path_graph(12)) is False  # invariants differ: still decided
    assert is_isomorphic(a, a.copy()) is True  # verbatim repeat: still decided


@settings(max_examples=300, deadline=None)
@given(gnp_graphs(max_nodes=9), gnp_graphs(max_nodes=9), st.integers(0, 10**6))
@pytest.mark.slow
def test_agrees_with_networkx(g: nx.Graph, h: nx.Graph, seed: int) -> None:
    h2 = h if g.is_directed() == h.is_directed() else (h.to_directed() if g.is_directed()
                                                        else h.to_undirected())
    assert is_isomorphic(g, h2) == nx.is_isomorphic(g, h2)
    assert is_isomorphic(g, shuffled(g, seed)) is True


@settings(max_examples=100, deadline=None)
@given(st.lists(gnp_graphs(max_nodes=6, directed=False), min_size=1, max_size=6))
def test_classes_match_pairwise_networkx(graphs: list[nx.Graph]) -> None:
    c = isomorphism_classes(graphs)
    assert c.exact
    for i, g in enumerate(graphs):
        for j, h in enumerate(graphs):
            assert (c.labels[i] == c.labels[j]) == nx.is_isomorphic(g, h)
