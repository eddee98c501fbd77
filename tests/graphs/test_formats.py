"""The non-code-style answer formats: JSON, networkx snippets, edge lists, adjacency lists."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.graphs import Outcome, ParsedGraph, parse_answer


def graph_of(text: str) -> ParsedGraph:
    result = parse_answer(text)
    assert result.outcome is Outcome.GRAPH, result.reason
    assert result.graph is not None
    return result.graph


def failure(text: str) -> str:
    result = parse_answer(text)
    assert result.outcome is Outcome.FAILURE, result
    assert result.reason
    return result.reason


def undirected(pg: ParsedGraph) -> set[frozenset[str]]:
    return {frozenset(e) for e in pg.graph.edges()}


def pairs(*edges: str) -> set[frozenset[str]]:
    return {frozenset(e.split("-")) for e in edges}


# --------------------------------------------------------------------------- JSON


def test_json_basic() -> None:
    pg = graph_of('{"directed": false, "nodes": [0, 1, 2], "edges": [[0, 1], [1, 2]]}')
    assert pg.fmt == "json" and not pg.directed
    assert undirected(pg) == pairs("0-1", "1-2")


def test_json_directed_and_weights() -> None:
    pg = graph_of('{"directed": "true", "nodes": ["a", "b"], "edges": [["a", "b", 3]]}')
    assert pg.directed and pg.graph.edges["a", "b"] == {"weight": 3}


@pytest.mark.parametrize("src, dst", [("source", "target"), ("u", "v"), ("from", "to")])
def test_json_edge_objects(src: str, dst: str) -> None:
    text = f'{{"nodes": [0, 1], "edges": [{{"{src}": 0, "{dst}": 1, "label": "x"}}]}}'
    pg = graph_of(text)
    assert pg.graph.edges["0", "1"] == {"label": "x"}


def test_networkx_node_link_style() -> None:
    text = """```json
    {"directed": true, "multigraph": false, "graph": {"domain": "citation"},
     "nodes": [{"id": "p1", "label": "Paper 1"}, {"id": "p2"}],
     "links": [{"source": "p1", "target": "p2", "type": "cites"}]}
    ```"""
    pg = graph_of(text)
    assert pg.directed
    assert pg.graph.nodes["p1"] == {"label": "Paper 1"}
    assert pg.graph.edges["p1", "p2"] == {"type": "cites"}
    assert pg.graph.graph == {"domain": "citation"}
    assert pg.header["multigraph"] is False


def test_json_key_variants_and_adjacency() -> None:
    assert graph_of('{"node_list": [0, 1], "edge_list": [[0, 1]]}').num_edges == 1
    pg = graph_of('{"adjacency": {"0": [1, 2], "1": [0, 2], "2": [0, 1]}}')
    assert undirected(pg) == pairs("0-1", "0-2", "1-2")
    assert pg.duplicate_edges == ()  # both directions of an undirected edge are expected
    pg = graph_of('{"Nodes": {"a": {"label": "A"}, "b": {}}, "Edges": [["a", "b"]]}')
    assert pg.graph.nodes["a"] == {"label": "A"}


def test_json_python_dict_and_typographic_quotes() -> None:
    assert graph_of("{'nodes': [0, 1], 'edges': [(0, 1)]}").num_edges == 1
    assert graph_of("{“nodes”: [“a”, “b”], “edges”: [[“a”, “b”]]}").num_edges == 1


def test_json_nested_in_a_wrapper_object() -> None:
    text = '{"answer": {"nodes": [1, 2], "edges": [[1, 2]]}, "explanation": "it is a path"}'
    assert graph_of(text).num_edges == 1


def test_json_graph_inside_broken_outer_object_is_found() -> None:
    text = '{"graph": {"nodes": [1, 2], "edges": [[1, 2]]}, "note": bad bad}'
    assert graph_of(text).num_edges == 1


def test_json_declared_nodes_and_name() -> None:
    pg = graph_of('{"name": "g", "num_nodes": 3, "nodes": [0, 1, 2], "edges": []}')
    assert pg.declared_nodes == 3 and pg.name == "g"


def test_json_not_a_graph_is_ignored() -> None:
    assert "no graph found" in failure('Stats: {"nodes": 5, "edges": 4}')


def test_json_failures() -> None:
    assert "abbreviation" in failure('{"nodes": [0, 1, ..., 9], "edges": []}')
    assert failure('{"nodes": [0, 1], "edges": [[0, 1], [1').startswith("truncated")
    assert "directed must be true or false" in failure('{"directed": "maybe", "edges": [[0, 1]]}')
    assert "edge" in failure('{"edges": [[0, 1, 2, 3]]}')


def test_last_json_graph_wins() -> None:
    text = 'Draft: {"nodes": [0], "edges": []}\nFinal: {"nodes": [0, 1], "edges": [[0, 1]]}'
    assert graph_of(text).num_edges == 1


# --------------------------------------------------------------------------- networkx snippets


def test_networkx_snippet() -> None:
    text = """```python
import networkx as nx
G = nx.DiGraph()
G.add_nodes_from([0, 1, 2, 3])
G.add_node('x', label='X')
G.add_edges_from([(0, 1), (1, 2)])
G.add_edge(2, 3, weight=2)
G.add_weighted_edges_from([(3, 0, 1.5)])
```"""
    pg = graph_of(text)
    assert pg.fmt == "python" and pg.directed
    assert set(pg.graph.edges) == {("0", "1"), ("1", "2"), ("2", "3"), ("3", "0")}
    assert pg.graph.edges["2", "3"] == {"weight": 2}
    assert pg.graph.edges["3", "0"] == {"weight": 1.5}
    assert pg.graph.nodes["x"] == {"label": "X"}


def test_snippet_variables_and_constructor_data() -> None:
    text = "edges = [(0, 1), (1, 2)]\nnodes = [0, 1, 2, 3]\nG = networkx.Graph()\n"
    text += "G.add_nodes_from(nodes)\nG.add_edges_from(edges)\n"
    pg = graph_of(text)
    assert pg.num_nodes == 4 and pg.num_edges == 2
    assert graph_of("G = nx.Graph([(0, 1), (1, 2)])\nG.add_node(5)").num_nodes == 4
    assert graph_of("G = nx.Graph({0: [1, 2], 1: [2]})\nG.add_node(9)").num_edges == 3


def test_snippet_that_computes_edges_fails_with_reason() -> None:
    reason = failure("G = nx.Graph()\nfor i in range(9):\n    G.add_edge(i, i + 1)\n")
    assert "python snippet" in reason
    assert "abbreviation" in failure("G = nx.Graph()\nG.add_nodes_from(range(10))\n")
    assert "not a literal" in failure("G = nx.Graph()\nG.add_edges_from(edge_list)\n")
    generator = "G = nx.Graph()\nG.add_edges_from(nx.cycle_graph(5).edges)\n"
    assert "python snippet computes values" in failure(generator)


def test_verification_snippet_does_not_override_the_answer() -> None:
    text = (
        "Graph[name='g'] { node_list = [0, 1]; edge_list = [(0, 1)]; }\n"
        "Check:\n```python\nG = nx.Graph()\nG.add_edges_from(edge_list)\nprint(nx.is_tree(G))\n```"
    )
    assert graph_of(text).fmt == "code"


# --------------------------------------------------------------------------- edge lists


@pytest.mark.parametrize("sep", [" ", ", ", "-", " - ", " -- ", "–"])
def test_edge_list_separators(sep: str) -> None:
    pg = graph_of(f"0{sep}1\n1{sep}2\n2{sep}0")
    assert pg.fmt == "edgelist" and not pg.directed
    assert undirected(pg) == pairs("0-1", "1-2", "0-2")


def test_edge_list_parenthesised_and_tuples_line() -> None:
    assert graph_of("(0, 1)\n(1, 2)").num_edges == 2
    assert graph_of("[0, 1],\n[1, 2],").num_edges == 2
    assert graph_of("(0, 1), (1, 2), (2, 3)").num_edges == 3


@pytest.mark.parametrize("arrow", ["->", "-->", "→", "=>"])
def test_arrows_mean_directed(arrow: str) -> None:
    pg = graph_of(f"Edges:\nA {arrow} B\nB {arrow} C")
    assert pg.directed and set(pg.graph.edges) == {("A", "B"), ("B", "C")}


def test_directed_line_is_honoured() -> None:
    assert not graph_of("Directed: false\n0 -> 1\n1 -> 2").directed
    assert graph_of("Directed: true\n0 - 1\n1 - 2").directed
    assert graph_of("Directed: yes\n0 1\n1 2").directed
    assert graph_of("Edges (directed): 0-1, 1-2").directed
    assert not graph_of("Undirected edges: 0->1, 1->2").directed


def test_nodes_and_edges_headers() -> None:
    text = "Directed: false\nNodes: 0, 1, 2, 3\nEdges:\n0 1\n1 2\n"
    pg = graph_of(text)
    assert set(pg.graph.nodes) == {"0", "1", "2", "3"} and pg.num_edges == 2
    pg = graph_of("**Nodes:** [a, b, c]\n**Edges:** (a, b), (b, c)")
    assert undirected(pg) == pairs("a-b", "b-c")
    pg = graph_of("Nodes: 0\nEdges:")
    assert set(pg.graph.nodes) == {"0"} and pg.num_edges == 0
    pg = graph_of("Nodes: 3 nodes\nEdges:\n0 1\n1 2")
    assert pg.declared_nodes == 3
    pg = graph_of("### Edges\n- 0 - 1\n- 1 - 2\n* 2 - 3\n• 3 - 0")
    assert pg.num_edges == 4


def test_edge_list_with_quoted_and_word_ids() -> None:
    pg = graph_of("Edges:\nAlice - Bob\nBob - Carol")
    assert undirected(pg) == pairs("Alice-Bob", "Bob-Carol")
    pg = graph_of("'New York' -> 'Boston'\n'Boston' -> 'Chicago'")
    assert set(pg.graph.edges) == {("New York", "Boston"), ("Boston", "Chicago")}


@pytest.mark.parametrize(
    "text",
    [
        "hello world",
        "hello world\nfoo bar\nbaz qux",
        "I am\nso we",
        "Alice - Bob\nBob - Carol",  # word ids with a loose style need a header
        "The graph is below.\n0 1\nThat was one edge.",
        "0: 3\n1: 3\n2: 2",  # 'degree' tables: one value each, no header
        "Step 1: 2 3\nStep 2: 4 5",
        "well-known\nup-to-date",
        "0 - 1\n1 2\n2, 3",  # mixed styles are not one list
    ],
)
def test_prose_never_becomes_edges(text: str) -> None:
    assert parse_answer(text).outcome is not Outcome.GRAPH


def test_last_section_wins_and_sections_end_at_prose() -> None:
    text = "Draft:\n0 1\n1 2\nActually, final:\n\n5 6\n6 7\n\nDone."
    assert set(graph_of(text).graph.nodes) == {"5", "6", "7"}


def test_edge_list_after_a_code_style_draft_wins() -> None:
    text = "Graph[name='draft'] { edge_list = [(0, 1)]; }\nThat was wrong. Final:\nEdges:\n7 8\n8 9"
    assert set(graph_of(text).graph.nodes) == {"7", "8", "9"}


def test_edge_lines_inside_a_truncated_block_are_not_an_edge_list() -> None:
    text = "Graph[name='g'] {\n  edge_list = [\n    (0, 1),\n    (1, 2),\n"
    assert failure(text).startswith("truncated")


@pytest.mark.parametrize(
    "text",
    [
        "0 1\n1 2\n...\n8 9",
        "0 1\n1 2\netc.",
        "Nodes: 0, 1, ..., 9\nEdges:\n0 1\n1 2",
        "Nodes: 0-9\nEdges:\n0 1\n1 2",
        "Nodes: 0 to 9\nEdges:\n0 1\n1 2",
        "Edges: 0-1, 1-2, ..., 8-9",
        "0: 1, 2, ...\n1: 0, 2",
    ],
)
def test_line_format_abbreviations_fail(text: str) -> None:
    assert "abbreviation" in failure(text)


def test_summary_lines_after_a_block_are_not_a_graph() -> None:
    block = "Graph[name='g'] { node_list = [0, 1, 2]; edge_list = [(0, 1), (1, 2)]; }\n"
    for tail in ["Summary:\nNodes: 10\nEdges: 15", "Nodes: 3\nEdges: 2 edges", "Nodes: 3"]:
        assert graph_of(block + tail).fmt == "code", tail


def test_heading_lines_are_prose_not_adjacency_entries() -> None:
    assert graph_of("Answer:\n0 1\n1 2").num_edges == 2
    assert parse_answer("Note: 1, 2\nMore: 3, 4").outcome is not Outcome.GRAPH


def test_ids_listed_on_the_nodes_line_count_as_ids() -> None:
    pg = graph_of("Nodes: Alice, Bob, Carol\nAlice Bob\nBob Carol")
    assert undirected(pg) == pairs("Alice-Bob", "Bob-Carol")


def test_refusal_outranks_a_line_format_reading() -> None:
    text = "No such graph exists.\nDegrees would be:\n0: 1, 2\n1: 0, 2"
    assert parse_answer(text).outcome is Outcome.REFUSAL


# --------------------------------------------------------------------------- adjacency lists


def test_adjacency_list() -> None:
    pg = graph_of("Adjacency list:\n0: 1, 2\n1: 0, 2\n2: 0, 1\n3:")
    assert pg.fmt == "adjacency" and not pg.directed
    assert undirected(pg) == pairs("0-1", "0-2", "1-2")
    assert "3" in pg.graph and pg.duplicate_edges == ()


def test_adjacency_variants() -> None:
    assert graph_of("0: 1 2\n1: 2").num_edges == 3
    assert graph_of("0: [1, 2]\n1: [2]\n2: []").num_edges == 3
    assert graph_of("Node 0: 1, 2\nNode 1: 0").num_edges == 2
    pg = graph_of("Directed: true\nAdjacency list:\na: b, c\nb: c")
    assert pg.directed and set(pg.graph.edges) == {("a", "b"), ("a", "c"), ("b", "c")}


def test_adjacency_needs_header_for_single_neighbours_or_word_ids() -> None:
    assert parse_answer("0: 1\n1: 2").outcome is not Outcome.GRAPH
    assert graph_of("Adjacency:\n0: 1\n1: 2").num_edges == 2
    assert graph_of("Adjacency list:\nAlice: Bob\nBob: Carol").num_edges == 2
