"""graphs.build: the order a set of nodes or edges is read in; the graph a builder makes is
the one networkx's own ``add_nodes_from``/``add_edges_from`` would make."""

from __future__ import annotations

from typing import Any

import networkx as nx
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.graphs import parse_answer
from pytest_graphinstruct.graphs.build import GraphBuilder, ordered_items
from pytest_graphinstruct.graphs.model import DEFAULT_LIMITS, GraphEdit


def test_a_set_is_taken_in_natural_order_and_a_list_as_written() -> None:
    assert ordered_items({"10", "2", "b", "1", "a"}) == ["1", "2", "10", "a", "b"]
    assert ordered_items({("10", "2"), ("2", "1"), ("1", "10"), (2, 0)}) == [
        ("1", "10"), (2, 0), ("2", "1"), ("10", "2")]
    listed = ["10", "2", "1"]
    assert ordered_items(listed) is listed
    assert ordered_items(("b", "a")) == ("b", "a")
    assert ordered_items({1, "1"}) == ["1", 1]  # a tie is broken by the item's repr


def _order(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    pg = parse_answer(text).graph
    assert pg is not None
    return list(pg.graph), list(pg.graph.edges())


def test_set_literals_give_the_graph_a_fixed_node_and_edge_order() -> None:
    want_edges = [("1", "10"), ("10", "2"), ("2", "1")]  # networkx lists them node by node
    code = "Graph[directed=true] {\n    edge_list = {('10','2'), ('2','1'), ('1','10')};\n}"
    assert _order(code) == (["1", "10", "2"], want_edges)
    nodes = "Graph[directed=true] {\n    node_list = {'2', '10', '1'};\n    edge_list = [];\n}"
    assert _order(nodes)[0] == ["1", "2", "10"]
    snippet = "```python\nG = nx.DiGraph()\nG.add_edges_from({(10, 2), (2, 1), (1, 10)})\n```"
    assert _order(snippet) == (["1", "10", "2"], want_edges)
    constructor = "G = nx.Graph({1: {10, 2}})\nG.add_node(9)"
    assert _order(constructor)[0] == ["1", "2", "10", "9"]
    adjacency = '{"directed": true, "adjacency": {"1": {"10", "2"}}}'
    assert _order(adjacency) == (["1", "2", "10"], [("1", "2"), ("1", "10")])


def test_a_graph_edit_with_sets_applies_them_in_natural_order() -> None:
    base = parse_answer("Graph[directed=false] {\n    node_list = ['0'];\n    edge_list = [];\n}")
    assert base.graph is not None
    text = "GraphEdit[] {\n    add_edges = {('0','10'), ('0','2')};\n    add_nodes = {'9', '1'};\n}"
    edited = parse_answer(text, base=base.graph)
    assert edited.graph is not None and isinstance(edited.graph.edit, GraphEdit)
    assert edited.graph.edit.add_edges == (("0", "2"), ("0", "10"))
    assert list(edited.graph.graph) == ["0", "1", "9", "2", "10"]


_IDS = st.sampled_from(["0", "1", "2", "10", "a", "b", "", " "])
_ATTRS = st.none() | st.dictionaries(st.sampled_from(["weight", "label", "w"]),
                                     st.integers(0, 3), max_size=2)
_ITEMS = st.lists(st.tuples(_IDS, _IDS, _ATTRS), max_size=25)


def _networkx_graph(directed: bool, nodes: list[tuple[str, dict[str, Any] | None]],
                    items: list[tuple[str, str, dict[str, Any] | None]]) -> nx.Graph:
    """The graph made with networkx's public API, as the builder promises to make it."""
    g: nx.Graph = nx.DiGraph() if directed else nx.Graph()
    for n, attrs in nodes:
        g.add_node(n, **(attrs or {}))
    for u, v, _ in items:
        g.add_node(u)
        g.add_node(v)
    g.add_edges_from((u, v, a) if a else (u, v) for u, v, a in items)
    return g


def _layout(g: nx.Graph) -> tuple[object, ...]:
    """Everything order- or sharing-sensitive about ``g``: node data, each adjacency in order
    (both directions for a digraph), and which edges share one attribute dict."""
    pred = [(n, list(p.items())) for n, p in g.pred.items()] if g.is_directed() else None
    shared = [g.adj[u][v] is g.adj[v][u] for u, v in g.edges() if g.has_edge(v, u)]
    return (list(g.nodes(data=True)), [(n, list(a.items())) for n, a in g.adj.items()], pred,
            shared)


@given(st.booleans(), st.lists(st.tuples(_IDS, _ATTRS), max_size=6), _ITEMS)
def test_built_graph_is_networkx_built_graph(
        directed: bool, nodes: list[tuple[str, dict[str, Any] | None]],
        items: list[tuple[str, str, dict[str, Any] | None]]) -> None:
    b = GraphBuilder(DEFAULT_LIMITS)
    for n, attrs in nodes:
        b.add_node(n, attrs)
    plain = [(u, v) for u, v, a in items if a is None]
    if len(plain) == len(items):
        b.add_edge_pairs(plain)  # the fast-path route
    else:
        for u, v, a in items:
            b.add_edge(u, v, dict(a) if a else None)
    pg = b.build(directed, fmt="code")
    want = _networkx_graph(directed, nodes, items)
    assert _layout(pg.graph) == _layout(want)
    seen: dict[tuple[str, str], int] = {}
    repeats = []
    for u, v, _ in items:
        key = (u, v) if directed or u <= v else (v, u)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            repeats.append((u, v))
    assert pg.duplicate_edges == tuple(repeats)
    assert pg.blank_nodes == tuple(n for n in want if not n.strip())
