"""verify.witnesses: what locates a failed structural check."""

from __future__ import annotations

import networkx as nx

from pytest_graphinstruct.verify.properties import GraphFacts
from pytest_graphinstruct.verify.witnesses import antiparallel_pairs, kuratowski_edges, one_cycle


def test_kuratowski_witness() -> None:
    g = nx.grid_2d_graph(3, 3)
    g = nx.convert_node_labels_to_integers(g)
    g.add_edges_from((100 + a, 200 + b) for a in range(3) for b in range(3))  # K3,3
    f = GraphFacts(g)
    assert not f.planar
    edges = f.kuratowski_edges or []
    assert all(g.has_edge(u, v) for u, v in edges)
    assert not nx.check_planarity(nx.Graph(edges))[0]


def test_no_witness_where_the_check_holds() -> None:
    assert one_cycle(nx.path_graph(4)) is None
    assert one_cycle(nx.DiGraph([(0, 1), (1, 2), (0, 2)])) is None  # a DAG
    assert kuratowski_edges(nx.complete_graph(4)) is None
    assert antiparallel_pairs(nx.DiGraph([(0, 1), (1, 2)])) == []


def test_a_directed_cycle_and_the_pairs_joined_both_ways_in_natural_order() -> None:
    d = nx.DiGraph([("10", "2"), ("2", "10"), ("b", "a"), ("a", "b"), ("a", "c")])
    assert antiparallel_pairs(d) == [["2", "10"], ["a", "b"]]
    cycle = one_cycle(nx.DiGraph([(0, 1), (1, 2), (2, 0)])) or []
    assert sorted(map(tuple, cycle)) == [(0, 1), (1, 2), (2, 0)]
