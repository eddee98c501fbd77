"""verify.components: every node in one component, largest first."""

from __future__ import annotations

import itertools

import networkx as nx
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.verify.components import Components
from pytest_graphinstruct.verify.properties import GraphFacts


@given(st.integers(0, 12), st.integers(0, 2**31))
def test_components_cover_nodes_once(n: int, seed: int) -> None:
    g = nx.gnp_random_graph(n, 0.15, seed=seed)
    f = GraphFacts(g)
    listed = list(itertools.chain.from_iterable(f.components))
    assert sorted(listed) == sorted(g)
    sizes = [len(c) for c in f.components]
    assert sizes == sorted(sizes, reverse=True)


def test_components_largest_first_then_by_first_node() -> None:
    g = nx.Graph([("b", "c"), ("10", "2")])
    g.add_nodes_from(["a", "x", "y"])
    g.add_edge("x", "y")
    parts = Components(g)
    assert parts.components == (("2", "10"), ("b", "c"), ("x", "y"), ("a",))
    assert parts.count == 4 and not parts.connected
    assert not Components(nx.Graph()).connected and Components(nx.path_graph(3)).connected
