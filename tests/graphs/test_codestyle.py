"""graphs.codestyle: ``Graph[...] {...}`` blocks, their syntax and directedness."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.graphs import parse_graph
from pytest_graphinstruct.graphs.codestyle import iter_headers, parse_block, parse_directed
from pytest_graphinstruct.graphs.model import DEFAULT_LIMITS
from pytest_graphinstruct.graphs.parse_errors import AbbreviationError, ParseError, TruncatedError
from tests.graphs._answers import BASIC, edges, failure, graph_of, undirected

# --------------------------------------------------------------------------- code-style syntax


def test_basic_code_style_block() -> None:
    pg = graph_of(BASIC)
    assert pg.fmt == "code"
    assert pg.name == "g"
    assert pg.declared_nodes == 3
    assert dict(pg.header) == {"name": "g", "nodes": 3}
    assert not pg.directed
    assert set(pg.graph.nodes) == {"0", "1", "2"}
    assert undirected(pg) == {frozenset(("0", "1")), frozenset(("1", "2"))}
    assert pg.duplicate_edges == () and pg.blank_nodes == ()


def test_int_and_str_ids_are_the_same_node() -> None:
    pg = graph_of(
        "Graph[] { node_list = [0, '0', 1, \"1\", 2]; edge_list = [(0, '1'), ('2', 1)]; }"
    )
    assert set(pg.graph.nodes) == {"0", "1", "2"}
    assert all(isinstance(n, str) for n in pg.graph.nodes)
    assert pg.num_edges == 2


def test_integer_ids_are_canonical_decimal_text() -> None:
    pg = graph_of("Graph[] { node_list = [007, -0, 12]; edge_list = [(7, 12)]; }")
    assert set(pg.graph.nodes) == {"7", "0", "12"}


@pytest.mark.parametrize(
    "quote_open, quote_close",
    [("’", "’"), ("‘", "’"), ("“", "”"), ("”", "”"), ('"', '"'), ("'", "'")],
)
def test_typographic_and_ascii_quotes(quote_open: str, quote_close: str) -> None:
    q = lambda s: f"{quote_open}{s}{quote_close}"  # noqa: E731
    text = (
        f"Graph[name={q('g')}, directed={q('true')}] {{ node_list = [{q('a')}, {q('b')}]; "
        f"edge_list = [({q('a')}, {q('b')})]; {q('a')}.label = {q('Alice')}; }}"
    )
    pg = graph_of(text)
    assert pg.directed and pg.name == "g"
    assert edges(pg) == {("a", "b")}
    assert pg.graph.nodes["a"]["label"] == "Alice"


def test_ascii_string_may_contain_typographic_apostrophe() -> None:
    pg = graph_of("Graph[] { node_list = ['O’Brien', \"it's\"]; edge_list = []; }")
    assert set(pg.graph.nodes) == {"O’Brien", "it's"}


def test_comments_trailing_commas_and_multiline_lists() -> None:
    text = """Graph[name='g',] {
        # a comment with an apostrophe: it's fine { [
        node_list = [
            0,  // first
            1,
            2,  # last
        ];
        edge_list = [
            (0, 1),
            [1, 2],   // a list works as an edge too
        ];
    }"""
    pg = graph_of(text)
    assert set(pg.graph.nodes) == {"0", "1", "2"}
    assert undirected(pg) == {frozenset(("0", "1")), frozenset(("1", "2"))}


def test_missing_semicolons_at_line_ends_are_tolerated() -> None:
    pg = graph_of("Graph[] {\n node_list = [0, 1]\n edge_list = [(0, 1)]\n}")
    assert pg.num_edges == 1


def test_attributes_node_edge_graph() -> None:
    text = """Graph[name='g', domain='social'] {
        node_list = [0, 'a b', 'a.b'];
        edge_list = [(0, 'a b'), ('a b', 'a.b')];
        0.label = 'Alice';
        'a b'.label = "x";
        'a.b'.label = 'dotted';
        edge(0, 'a b').type = 'cites';
        edge('a.b', 'a b').type = 'reverse orientation';
        edge('0', 'a.b').type = 'absent edge: ignored';
        9.label = 'absent node: ignored';
        domain = 'social';
        partition = [{0, 1}, {2}];
        'quoted key' = 1;
    }"""
    pg = graph_of(text)
    g = pg.graph
    assert g.nodes["0"] == {"label": "Alice"}
    assert g.nodes["a b"] == {"label": "x"}
    assert g.nodes["a.b"] == {"label": "dotted"}
    assert g.edges["0", "a b"] == {"type": "cites"}
    assert g.edges["a b", "a.b"] == {"type": "reverse orientation"}
    assert "9" not in g and not g.has_edge("0", "a.b")
    assert g.graph == {
        "domain": "social",
        "partition": [{0, 1}, {2}],
        "quoted key": 1,
    }
    assert pg.header["domain"] == "social"


def test_third_tuple_item_is_weight_or_attribute_dict() -> None:
    pg = graph_of("Graph[] { edge_list = [(0, 1, 2.5), (1, 2, {'type': 'x', 'w': 1})]; }")
    assert pg.graph.edges["0", "1"] == {"weight": 2.5}
    assert pg.graph.edges["1", "2"] == {"type": "x", "w": 1}


@pytest.mark.parametrize("bad_edge", ["(0,)", "(0, 1, 2, 3)", "([0], 1)", "5"])
def test_malformed_edges_fail(bad_edge: str) -> None:
    reason = failure(f"Graph[] {{ edge_list = [{bad_edge}]; }}")
    assert "edge" in reason or "node id" in reason


def test_duplicate_edges_self_loops_and_blank_ids() -> None:
    pg = graph_of(
        "Graph[] { node_list = ['', None, 'x']; "
        "edge_list = [(0, 1), (1, 0), (0, 1), ('x', 'x'), (null, 'x'), ('', 'x')]; }"
    )
    # undirected: (0,1) and (1,0) are one edge; null and '' are the same blank node
    assert pg.duplicate_edges == (("1", "0"), ("", "x"))
    assert pg.graph.has_edge("x", "x")
    assert pg.blank_nodes == ("",)
    assert pg.num_nodes == 4


def test_directed_duplicates_keep_orientation() -> None:
    pg = graph_of("Graph[directed=true] { edge_list = [(0, 1), (1, 0), (0, 1), (0, 1)]; }")
    assert pg.duplicate_edges == (("0", "1"),)
    assert edges(pg) == {("0", "1"), ("1", "0")}


def test_whitespace_ids_are_kept_and_reported_blank() -> None:
    pg = graph_of("Graph[] { node_list = [' ', 'a']; edge_list = [(' ', 'a')]; }")
    assert pg.blank_nodes == (" ",)


def test_node_list_duplicates_are_deduplicated_declared_nodes_kept() -> None:
    pg = parse_graph("Graph[name='b', nodes=6] { node_list = ['0','1','2','0','1','2']; }")
    assert pg.num_nodes == 3
    assert pg.declared_nodes == 6


def test_nodes_and_edges_aliases_when_lists() -> None:
    pg = graph_of("Graph[] { nodes = [0, 1]; edges = [(0, 1)]; }")
    assert pg.num_edges == 1
    pg = graph_of("Graph[] { nodes = 5; node_list = [0]; }")
    assert pg.graph.graph == {"nodes": 5}


# --------------------------------------------------------------------------- directedness


@pytest.mark.parametrize(
    "value, directed",
    [
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("1", True),
        ("'true'", True),
        ('"True"', True),
        ("’1’", True),
        ("false", False),
        ("False", False),
        ("0", False),
        ("'false'", False),
        ('"False"', False),
        ("'0'", False),
    ],
)
def test_directed_values(value: str, directed: bool) -> None:
    assert graph_of(f"Graph[directed={value}] {{ edge_list = [(0, 1)]; }}").directed is directed


@pytest.mark.parametrize("value", ["yes", "'no'", "2", "maybe", "''", "[1]", "1.0", "None"])
def test_invalid_directed_values_fail(value: str) -> None:
    reason = failure(f"Graph[directed={value}] {{ edge_list = [(0, 1)]; }}")
    assert "directed must be true or false" in reason


def test_digraph_prefix_means_directed_unless_header_says_otherwise() -> None:
    assert graph_of("DiGraph[name='d'] { edge_list = [(0, 1)]; }").directed
    assert not graph_of("DiGraph[directed=false] { edge_list = [(0, 1)]; }").directed
    assert graph_of("Graph[directed=true] { edge_list = [(0, 1)]; }").directed
    assert not graph_of("Graph[name='u'] { edge_list = [(0, 1)]; }").directed


def test_body_directed_statement_decides_only_without_header_key() -> None:
    pg = graph_of("Graph[] { directed = true; edge_list = [(0, 1)]; }")
    assert pg.directed and pg.graph.graph["directed"] is True
    pg = graph_of("Graph[directed=false] { directed = true; edge_list = [(0, 1)]; }")
    assert not pg.directed
    pg = graph_of("Graph[] { directed = 'sometimes'; edge_list = [(0, 1)]; }")
    assert not pg.directed and pg.graph.graph["directed"] == "sometimes"


# --------------------------------------------------------------------------- the module's parts


def test_iter_headers_finds_keywords_at_word_starts_only() -> None:
    text = "Graph[] DiGraph[a=1] GraphEdit[] MyGraph[] xDiGraph[] Graph [ ]"
    starts = list(iter_headers(text))
    assert [text[s:s + 5] for s in starts] == ["Graph", "DiGra", "Graph", "Graph"]
    assert starts == [0, 8, 21, text.rindex("Graph [")]
    assert list(iter_headers(text, starts[2] + 1)) == starts[3:]


@pytest.mark.parametrize("value", [True, 1, "TRUE", " true ", "1"])
def test_parse_directed_true(value: object) -> None:
    assert parse_directed(value) is True


@pytest.mark.parametrize("value", [False, 0, "False", "0"])
def test_parse_directed_false(value: object) -> None:
    assert parse_directed(value) is False


@given(st.one_of(st.text(max_size=6), st.integers(-3, 3), st.floats(), st.none()))
def test_parse_directed_is_a_truth_value_or_an_error(value: object) -> None:
    truth = {"true": True, "false": False, "1": True, "0": False}
    expected = (truth.get(value.strip().lower()) if isinstance(value, str)
                else bool(value) if isinstance(value, int) and value in (0, 1) else None)
    if expected is None:
        with pytest.raises(ParseError, match="directed must be true or false"):
            parse_directed(value)
    else:
        assert parse_directed(value) is expected


def test_parse_block_returns_the_block_and_its_end() -> None:
    text = "say: DiGraph[name='d'] { edge_list = [(0, 1)]; } and more"
    start = text.index("DiGraph")
    block = parse_block(text, start, DEFAULT_LIMITS)
    assert block is not None and block.edit is None and block.graph is not None
    assert block.start == start and text[block.end - 1] == "}"
    assert block.graph.directed and block.graph.name == "d"


def test_parse_block_of_an_edit_gives_the_edit() -> None:
    text = "GraphEdit[] { add_edges = [(0, 1)]; remove_nodes = [2]; }"
    block = parse_block(text, 0, DEFAULT_LIMITS)
    assert block is not None and block.graph is None and block.edit is not None
    assert block.edit.add_edges == (("0", "1"),) and block.edit.remove_nodes == ("2",)


@pytest.mark.parametrize("text", ["Graph[] is a notation", "Graph[name=] {}", "nothing here"])
def test_parse_block_returns_none_when_no_block_starts_there(text: str) -> None:
    assert parse_block(text, 0, DEFAULT_LIMITS) is None


@pytest.mark.parametrize("text", ["Graph[name='g']", "Graph[] { edge_list = [(0, 1)];",
                                  "Graph[] { x = [1, 2"])
def test_parse_block_raises_truncated_when_the_text_ends_inside(text: str) -> None:
    with pytest.raises(TruncatedError):
        parse_block(text, 0, DEFAULT_LIMITS)


def test_a_complete_bad_block_resumes_after_its_end() -> None:
    text = "Graph[] { node_list = [0, ...]; } tail"
    with pytest.raises(AbbreviationError) as info:
        parse_block(text, 0, DEFAULT_LIMITS)
    assert info.value.pos == text.index("}") + 1
