"""parse_answer / parse_graph: GraphEdit answers, abbreviations, refusal vs failure, limits,
hostile input, the strict reader."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.errors import GraphSyntaxError
from pytest_graphinstruct.graphs import (
    DEFAULT_LIMITS,
    Limits,
    Outcome,
    ParseResult,
    parse_answer,
    parse_graph,
)
from tests.graphs._answers import BASIC, failure, graph_of, undirected

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
