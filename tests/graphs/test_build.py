"""graphs.build: the order a set of nodes or edges is read in."""

from __future__ import annotations

from pytest_graphinstruct.graphs import parse_answer
from pytest_graphinstruct.graphs.build import ordered_items
from pytest_graphinstruct.graphs.model import GraphEdit


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
