"""graphs.linefmt: edge-list and adjacency-list sections read from loose lines."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.graphs import Outcome, parse_answer
from pytest_graphinstruct.graphs.linefmt import find_line_graph
from pytest_graphinstruct.graphs.model import DEFAULT_LIMITS
from pytest_graphinstruct.graphs.parse_errors import AbbreviationError
from tests.graphs._answers import failure, graph_of, pairs, undirected

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


# --------------------------------------------------------------------------- the module's parts


def test_find_line_graph_gives_the_last_section_and_its_span() -> None:
    text = "Edges:\n0 1\n1 2\nSome prose here.\nEdges:\na -> b\nb -> c\n"
    lines = find_line_graph(text, DEFAULT_LIMITS)
    assert lines is not None and lines.fmt == "edgelist"
    assert text[lines.start:lines.end] == "Edges:\na -> b\nb -> c\n"
    g = lines.build()
    assert g.directed and set(g.graph.edges()) == {("a", "b"), ("b", "c")}


def test_a_section_never_crosses_regions() -> None:
    text = "0 1\n1 2\n"
    assert find_line_graph(text, DEFAULT_LIMITS, [(0, 4), (4, 8)]) is None
    assert find_line_graph(text, DEFAULT_LIMITS, [(0, 8)]) is not None
    assert find_line_graph(text, DEFAULT_LIMITS, []) is None


def test_adjacency_sections_are_undirected_unless_told() -> None:
    lines = find_line_graph("0: 1, 2\n1: 2\n", DEFAULT_LIMITS)
    assert lines is not None and lines.fmt == "adjacency"
    g = lines.build()
    assert not g.directed and g.num_edges == 3


def test_build_raises_for_an_abbreviated_section() -> None:
    lines = find_line_graph("Edges:\n0 1\n1 2\n...\n", DEFAULT_LIMITS)
    assert lines is not None
    with pytest.raises(AbbreviationError):
        lines.build()


def test_prose_alone_is_no_graph() -> None:
    assert find_line_graph("The answer is a tree.\nIt has 3 nodes.\n", DEFAULT_LIMITS) is None


@given(st.lists(st.tuples(st.integers(0, 99), st.integers(0, 99)), min_size=2, max_size=30),
       st.sampled_from([" ", ", ", " - ", " -> "]))
def test_edge_lines_come_back(pairs_: list[tuple[int, int]], sep: str) -> None:
    text = "".join(f"{u}{sep}{v}\n" for u, v in pairs_)
    lines = find_line_graph(text, DEFAULT_LIMITS)
    assert lines is not None
    g = lines.build()
    assert g.directed is (sep == " -> ")
    want = {(str(u), str(v)) for u, v in pairs_}
    if g.directed:
        assert set(g.graph.edges()) == want
    else:
        assert {frozenset(e) for e in g.graph.edges()} == {frozenset(e) for e in want}
