"""verify.degrees: degrees of one graph (directed: in + out), and the nodes a rule picks."""

from __future__ import annotations

import networkx as nx

from pytest_graphinstruct.verify.degrees import DegreeFacts


def test_undirected_degrees_and_their_summaries() -> None:
    d = DegreeFacts(nx.Graph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]))
    assert d.degrees == {"a": 2, "b": 2, "c": 3, "d": 1}
    assert d.in_degrees is d.degrees and d.out_degrees is d.degrees
    assert d.degree_counts == {2: 2, 3: 1, 1: 1}
    assert (d.min_degree, d.max_degree, d.majority_degree, d.regular_degree) == (1, 3, 2, None)
    assert d.nodes_where(lambda k: k >= 2) == ["a", "b", "c"]


def test_directed_degrees_and_a_chosen_degree_map() -> None:
    d = DegreeFacts(nx.DiGraph([("10", "2"), ("2", "10"), ("2", "3")]))
    assert d.degrees == {"10": 2, "2": 3, "3": 1}
    assert d.out_degrees == {"10": 1, "2": 2, "3": 0}
    assert d.nodes_where(lambda k: k == 1, d.in_degrees) == ["2", "3", "10"]  # natural order


def test_regular_majority_ties_and_the_empty_graph() -> None:
    assert DegreeFacts(nx.cycle_graph(4)).regular_degree == 2
    assert DegreeFacts(nx.path_graph(4)).majority_degree == 1  # 1 and 2 twice each: smallest
    empty = DegreeFacts(nx.Graph())
    assert (empty.min_degree, empty.max_degree) == (0, 0)
    assert empty.regular_degree is None and empty.majority_degree is None
