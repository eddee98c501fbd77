"""verify.bipartition: a 2-colouring or an odd cycle, and the side sizes colourings reach."""

from __future__ import annotations

import networkx as nx
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.verify.properties import GraphFacts
from tests.verify._graphgen import gnp_graphs


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
    assert f.bipartition.achievable_side_sizes == frozenset(brute)
    p = data.draw(st.integers(0, len(nodes)))
    assert f.sides_achievable(p, len(nodes) - p) == (p in brute)
