"""parse_answer / parse_graph: code-style syntax, extraction, failures, limits, hostile input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.errors import GraphSyntaxError
from pytest_graphinstruct.graphs import (
    DEFAULT_LIMITS,
    Limits,
    Outcome,
    ParsedGraph,
    ParseResult,
    parse_answer,
    parse_graph,
)


def graph_of(text: str, **kwargs: object) -> ParsedGraph:
    result = parse_answer(text, **kwargs)  # type: ignore[arg-type]
    assert result.outcome is Outcome.GRAPH, result.reason
    assert result.graph is not None
    return result.graph


def failure(text: object, **kwargs: object) -> str:
    result = parse_answer(text, **kwargs)  # type: ignore[arg-type]
    assert result.outcome is Outcome.FAILURE, result
    assert result.reason
    return result.reason


def edges(pg: ParsedGraph) -> set[tuple[str, str]]:
    return set(pg.graph.edges())


def undirected(pg: ParsedGraph) -> set[frozenset[str]]:
    return {frozenset(e) for e in pg.graph.edges()}


BASIC = (
    "Graph[name='g', nodes=3] { node_list = ['0', '1', '2']; edge_list = [('0','1'), ('1','2')]; }"
)


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


# --------------------------------------------------------------------------- GraphEdit


EDIT = """GraphEdit[name='e1', base='given-graph', operation='modify'] {
    add_edges = [('0','2')];
    remove_edges = [('1','0')];
    reasoning = "Close the triangle; drop (0,1).";
}"""


def test_graphedit_applied_to_base() -> None:
    base = parse_graph(BASIC)
    pg = graph_of(EDIT, base=base)
    assert pg.fmt == "edit"
    assert pg.edit is not None and pg.edit.reasoning == "Close the triangle; drop (0,1)."
    assert pg.edit.add_edges == (("0", "2"),) and pg.edit.remove_edges == (("1", "0"),)
    assert undirected(pg) == {frozenset(("0", "2")), frozenset(("1", "2"))}
    assert pg.name == "e1" and pg.header["operation"] == "modify"


def test_graphedit_without_base_fails() -> None:
    reason = failure(EDIT)
    assert "base graph" in reason


def test_full_graph_answer_is_taken_as_is_with_a_base() -> None:
    base = parse_graph(BASIC)
    pg = graph_of("Graph[] { edge_list = [(5, 6)]; }", base=base)
    assert pg.fmt == "code" and set(pg.graph.nodes) == {"5", "6"}


def test_graphedit_drop_isolated() -> None:
    base = parse_graph(BASIC)
    edit = "GraphEdit[] { add_edges = []; remove_edges = [(0, 1)]; }"
    assert set(graph_of(edit, base=base).graph.nodes) == {"0", "1", "2"}
    assert set(graph_of(edit, base=base, drop_isolated=True).graph.nodes) == {"1", "2"}


def test_graphedit_node_lists_and_other_statements() -> None:
    base = parse_graph(BASIC)
    text = "GraphEdit[] { remove_nodes = [2]; add_nodes = ['9']; note = 'x'; reasoning = 3; }"
    pg = graph_of(text, base=base)
    assert set(pg.graph.nodes) == {"0", "1", "9"}
    assert pg.edit is not None
    assert dict(pg.edit.properties) == {"note": "x", "reasoning": 3}
    assert pg.edit.reasoning is None


# --------------------------------------------------------------------------- extraction


def test_code_fence_and_prose_around() -> None:
    text = f"Sure! Here it is:\n\n```python\n{BASIC}\n```\n\nHope this helps."
    assert graph_of(text).num_edges == 2


def test_braces_in_trailing_prose_do_not_corrupt_the_graph() -> None:
    text = BASIC + "\n\nNote: the set {0, 1} } and } more braces { and a 'quote."
    pg = graph_of(text)
    assert pg.graph.graph == {} and pg.num_edges == 2


def test_braces_inside_strings_and_comments_do_not_end_the_block() -> None:
    text = (
        "Graph[name='a}b'] { node_list = ['}', '{']; # } not the end\n edge_list = [('}', '{')]; }"
    )
    pg = graph_of(text)
    assert pg.name == "a}b" and edges(pg) == {("}", "{")}


def test_last_complete_graph_wins() -> None:
    text = (
        "Draft:\nGraph[name='draft'] { node_list = [0, 1]; edge_list = [(0, 1)]; }\n"
        "Wait, that is wrong. Final answer:\n"
        "Graph[name='final'] { node_list = [0, 1, 2]; edge_list = [(0, 1), (1, 2)]; }\n"
        "Done {"
    )
    assert graph_of(text).name == "final"


def test_truncated_last_block_falls_back_to_last_complete_one() -> None:
    text = (
        "Graph[name='draft'] { node_list = [0, 1]; edge_list = [(0, 1)]; }\n"
        "Final:\nGraph[name='final'] { node_list = [0, 1, 2]; edge_list = [(0, 1),"
    )
    assert graph_of(text).name == "draft"


def test_only_a_truncated_block_fails_as_truncated() -> None:
    reason = failure("Let me write it:\nGraph[name='g'] { node_list = [0, 1, 2]; edge_list = [(0,")
    assert reason.startswith("truncated")
    assert "line 2" in reason


def test_truncated_inside_string_or_header() -> None:
    assert failure("Graph[name='g'] { reasoning = 'abc").startswith(("truncated", "code-style"))
    assert failure("Graph[name='g', nod").startswith("truncated")
    assert failure("Graph[name='g']").startswith("truncated")


def test_abandoned_block_then_complete_block() -> None:
    text = (
        "Graph[name='a'] { node_list = [0, 1, 2\n\nHmm, let me restart.\n\n"
        "Graph[name='b'] { node_list = [0, 1]; edge_list = [(0, 1)]; }"
    )
    assert graph_of(text).name == "b"


def test_header_written_where_a_statement_belongs_starts_a_new_block() -> None:
    text = "Graph[name='a'] {\nGraph[name='b'] { node_list = [0]; edge_list = []; }"
    assert graph_of(text).name == "b"


def test_header_inside_a_string_of_a_block_is_not_a_block() -> None:
    text = (
        "Graph[name='outer'] { node_list = [0]; "
        "reasoning = \"not this: Graph[name='inner'] { node_list = [9]; }\"; }"
    )
    assert graph_of(text).name == "outer"


def test_graph_mentioned_in_prose_is_not_a_block() -> None:
    text = "Use the Graph[name=..., nodes=N] format. " + BASIC
    assert graph_of(text).name == "g"


def test_malformed_last_block_is_a_failure_not_the_draft() -> None:
    text = BASIC + "\nFinal:\nGraph[name='f'] { node_list = [0, 1; }"
    reason = failure(text)
    assert reason.startswith("code-style graph at line 3")


def test_syntax_error_reports_position() -> None:
    reason = failure("Graph[] {\n  node_list = [0 1];\n}")
    assert "line 2" in reason and "column" in reason


def test_unquoted_word_ids_are_accepted() -> None:
    pg = graph_of("Graph[] { node_list = [A, B, node_1]; edge_list = [(A, B)]; }")
    assert set(pg.graph.nodes) == {"A", "B", "node_1"}


# --------------------------------------------------------------------------- abbreviations


@pytest.mark.parametrize(
    "node_list",
    [
        "[0, 1, ..., 9]",
        "[0, 1, …, 9]",
        "range(10)",
        "list(range(10))",
        "[0, 1, 2, etc.]",
        "[i for i in range(10)]",
        "[0-9]",
    ],
)
def test_abbreviations_fail_with_reason(node_list: str) -> None:
    reason = failure(f"Graph[] {{ node_list = {node_list}; edge_list = [(0, 1)]; }}")
    assert "abbreviation" in reason


def test_abbreviation_in_edges_or_attributes() -> None:
    assert "abbreviation" in failure("Graph[] { edge_list = [(0, 1), ..., (8, 9)]; }")
    assert "abbreviation" in failure("Graph[] { edge_list = [(0,1)]; partition = [{0, ...}]; }")


def test_ellipsis_inside_a_string_is_fine() -> None:
    pg = graph_of("Graph[] { edge_list = [(0, 1)]; note = 'and so on...'; }")
    assert pg.graph.graph["note"] == "and so on..."


# --------------------------------------------------------------------------- refusal vs failure


def test_refusal_when_no_graph() -> None:
    result = parse_answer(
        "A 3-regular graph on 5 nodes would need 7.5 edges. Therefore no such graph exists."
    )
    assert result.outcome is Outcome.REFUSAL
    assert result.reason == "Therefore no such graph exists."


def test_failure_when_no_graph_and_no_refusal() -> None:
    assert "no graph found" in failure("ERROR: rate limit exceeded (429)")
    assert failure("   ") == "empty answer"


def test_complete_graph_beats_a_refusal_sentence() -> None:
    result = parse_answer("This might be impossible, but here goes:\n" + BASIC)
    assert result.outcome is Outcome.GRAPH


def test_refusal_beats_a_truncated_block() -> None:
    result = parse_answer("The constraints are contradictory.\nGraph[name='x'] { node_list = [0,")
    assert result.outcome is Outcome.REFUSAL


def test_bad_complete_block_is_failure_even_with_refusal_words() -> None:
    result = parse_answer("It is infeasible to list them all: Graph[] { node_list = [0, ..., 9]; }")
    assert result.outcome is Outcome.FAILURE


# --------------------------------------------------------------------------- limits


def test_max_chars() -> None:
    reason = failure("x" * 101, limits=Limits(max_chars=100))
    assert reason == "answer exceeds max_chars limit (100)"
    assert parse_answer("x" * 100, limits=Limits(max_chars=100)).outcome is Outcome.FAILURE


def test_max_nodes_in_node_list_and_from_edges() -> None:
    lim = Limits(max_nodes=3)
    assert "max_nodes" in failure("Graph[] { node_list = [0, 1, 2, 3]; }", limits=lim)
    assert "max_nodes" in failure("Graph[] { node_list = [a, b, c, d]; }", limits=lim)
    assert "max_nodes" in failure("Graph[] { edge_list = [(0, 1), (2, 3)]; }", limits=lim)
    assert "max_nodes" in failure('{"nodes": [0, 1, 2, 3], "edges": []}', limits=lim)
    assert "max_nodes" in failure("0 1\n2 3\n4 5", limits=lim)
    assert graph_of("Graph[] { node_list = [0, 1, 2]; }", limits=lim).num_nodes == 3


def test_max_edges() -> None:
    lim = Limits(max_edges=2)
    assert "max_edges" in failure("Graph[] { edge_list = [(0,1), (1,2), (2,3)]; }", limits=lim)
    weighted = "Graph[] { edge_list = [(0,1,1), (1,2,1), (2,3,1)]; }"
    assert "max_edges" in failure(weighted, limits=lim)
    assert "max_edges" in failure('{"edges": [[0,1],[1,2],[2,3]]}', limits=lim)
    assert "max_edges" in failure("0 1\n1 2\n2 3", limits=lim)


def test_max_depth() -> None:
    lim = Limits(max_depth=3)
    assert "max_depth" in failure("Graph[] { x = [[[1]]]; y = [[[[1]]]]; }", limits=lim)
    assert graph_of("Graph[] { x = [[[1]]]; }", limits=lim).graph.graph["x"] == [[[1]]]
    assert "max_depth" in failure('{"nodes": [[[[1]]]]}', limits=lim)


# --------------------------------------------------------------------------- hostile input

_BIG = Limits(max_chars=12_000_000)


def _quick(text: str, limits: Limits = DEFAULT_LIMITS) -> ParseResult:
    """Parse hostile input; the outcome must be a clean result, never an internal error.  (How
    fast, and that time grows linearly with size, is measured by bench/parse_bench.py: tests
    never assert wall-clock limits.)"""
    result = parse_answer(text, limits=limits)
    assert not (result.reason or "").startswith("internal")
    return result


@pytest.mark.slow
def test_ten_megabyte_answer() -> None:
    text = "lorem ipsum it's dolor {x} [y] (z). " * 280_000
    assert _quick(text).reason == "answer exceeds max_chars limit (2000000)"
    assert _quick(text, _BIG).outcome is Outcome.FAILURE


def test_ten_megabyte_answer_with_a_graph_at_the_end() -> None:
    text = "words " * 1_700_000 + BASIC
    assert _quick(text, _BIG).outcome is Outcome.GRAPH


def test_deeply_nested_brackets() -> None:
    assert _quick("[" * 100_000).outcome is Outcome.FAILURE
    assert "max_depth" in (_quick("Graph[] { node_list = " + "[" * 100_000).reason or "")
    assert "max_depth" in (_quick('{"nodes": ' * 100_000).reason or "")
    snippet = "G = nx.Graph()\nG.add_edges_from(" + "(" * 100_000
    assert "max_depth" in (_quick(snippet).reason or "")


def test_huge_node_list_rejected_fast() -> None:
    ids = ", ".join(str(i) for i in range(200_000))
    assert "max_nodes" in (_quick(f"Graph[] {{ node_list = [{ids}]; }}").reason or "")
    words = ", ".join(f"n{i}" for i in range(200_000))
    assert "max_nodes" in (_quick(f"Graph[] {{ node_list = [{words}]; }}").reason or "")
    assert "max_nodes" in (_quick(f'{{"nodes": [{ids}]}}').reason or "")


def test_nul_rtl_and_zero_width_characters() -> None:
    pg = graph_of(
        "\u202e\u200fGraph[name='g'\x00] {\u200b node_list = [0, 1]; "
        "edge_list = [(0,\x001)]; }\u202c"
    )
    assert set(pg.graph.nodes) == {"0", "1"}
    pg = graph_of("Graph[] { node_list = ['\u202ea\x00']; }")
    assert set(pg.graph.nodes) == {"\u202ea\x00"}  # inside strings nothing is stripped
    assert _quick("\x00" * 1_000_000).outcome is Outcome.FAILURE


@pytest.mark.parametrize(
    "text",
    [
        "Graph[name='x'] {\n" * 60_000,
        "Graph[a=1] {\n" + "# Graph[a=1] {\n" * 60_000,
        "Graph[a=1]\n" * 60_000,
        '{"a": [1, 2, @]} ' * 60_000,
        '{"a": 1, ' * 60_000,
        "G.add_edge(x, y)\n" * 60_000,
        "'" * 1_000_000,
        "a" * 1_000_000,
        "1" * 1_000_000,
        "Graph[] { node_list = [" + "1" * 100_000 + "]; }",
        "0: " + "1, " * 300_000,
        "-" * 1_000_000,
    ],
    ids=[
        "unclosed-headers",
        "headers-in-comments",
        "headers-without-body",
        "failing-json",
        "open-json",
        "unresolved-snippet",
        "quotes",
        "long-word",
        "long-number",
        "long-number-in-block",
        "long-adjacency-line",
        "dashes",
    ],
)
@pytest.mark.slow
def test_pathological_inputs_finish(text: str) -> None:
    result = _quick(text)
    assert result.outcome is Outcome.FAILURE and result.reason  # garbage: a named failure


@settings(deadline=None)
@given(st.text(max_size=400))
def test_random_text_never_raises(text: str) -> None:
    result = parse_answer(text)
    assert isinstance(result, ParseResult)
    assert not (result.reason or "").startswith("internal")


_PIECES = st.sampled_from(
    [
        "Graph[",
        "DiGraph[",
        "GraphEdit[",
        "name='g'",
        "directed=true",
        "nodes=3",
        "]",
        "{",
        "}",
        "[",
        "(",
        ")",
        ",",
        ";",
        "=",
        ".",
        ":",
        "'",
        '"',
        "’",
        "“",
        "”",
        "node_list",
        "edge_list",
        "add_edges",
        "0",
        "1",
        "-1",
        "a",
        "edge(0,1)",
        "0.label",
        "...",
        "…",
        "etc.",
        "range(3)",
        "#",
        "//",
        "\n",
        " ",
        "\x00",
        "\u202e",
        '{"nodes": ',
        '"edges"',
        "G = nx.Graph()",
        "G.add_edge(",
        "G.add_edges_from([",
        "Nodes:",
        "Edges:",
        "0 1\n",
        "0 -> 1\n",
        "0: 1, 2\n",
        "impossible",
        "```",
        "\\",
        "True",
        "None",
        "{1: 2}",
        "set()",
    ]
)


@settings(deadline=None)
@given(st.lists(_PIECES, max_size=60).map("".join))
def test_random_fragment_soup_never_raises(text: str) -> None:
    result = parse_answer(text)
    assert not (result.reason or "").startswith("internal"), (text, result.reason)
    if result.outcome is Outcome.GRAPH:
        assert result.graph is not None
        assert all(isinstance(n, str) for n in result.graph.graph.nodes)


@pytest.mark.parametrize("value", [None, 12, b"Graph[] {}", ["Graph"], object()])
def test_non_string_answers_fail(value: object) -> None:
    assert "not a string" in failure(value)


# --------------------------------------------------------------------------- parse_graph


def test_parse_graph_accepts_one_block_with_whitespace_and_fence() -> None:
    assert parse_graph(f"\n```\n{BASIC}\n```\n").num_edges == 2


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "no Graph"),
        ("hello", "no Graph"),
        ("Intro: " + BASIC, "before the graph"),
        (BASIC + " trailing", "after the graph"),
        (BASIC + "\n" + BASIC, "after the graph"),
        ("Graph[name='g'] { node_list = [0,", "text ends"),
        ("Graph[name='g'] { node_list = [0, ...]; }", "abbreviation"),
        ("Graph[directed=yes] { }", "directed must be true or false"),
        ("GraphEdit[] { add_edges = []; }", "GraphEdit"),
        ("Graph[name='g'] nope", "malformed graph header"),
        ("Graph[] { node_list = [0 1]; }", "line 1, column"),
    ],
)
def test_parse_graph_errors(text: str, message: str) -> None:
    with pytest.raises(GraphSyntaxError, match=message):
        parse_graph(text)


def test_parse_graph_limits_and_types() -> None:
    with pytest.raises(GraphSyntaxError, match="max_chars"):
        parse_graph(BASIC, limits=Limits(max_chars=10))
    with pytest.raises(GraphSyntaxError, match="max_nodes"):
        parse_graph(BASIC, limits=Limits(max_nodes=2))
    with pytest.raises(GraphSyntaxError, match="must be a str"):
        parse_graph(None)  # type: ignore[arg-type]
