"""serialize: canonical code-style text that parse_graph reads back exactly."""

from __future__ import annotations

import math
from typing import Any

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.graphs import ParsedGraph, parse_answer, parse_graph, serialize
from pytest_graphinstruct.graphs.serialize import literal, quote

HOSTILE = [
    "",
    " ",
    "'",
    '"',
    "’",
    "‘x’",
    "“y”",
    "\\",
    "\\'",
    "a.b",
    "a;b",
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    "#",
    "//",
    "# not a comment",
    "\n",
    "\r\n",
    "\t",
    "\x00",
    "\u200b",
    "\u202e",
    "\ufeff",
    "\xa0",
    "\ud800",
    "é",
    "中文",
    "😀",
    "0",
    "-1",
    "007",
    "-0",
    "1.5",
    "1e3",
    "None",
    "null",
    "true",
    "False",
    "edge",
    "node_list",
    "edge_list",
    "directed",
    "edge(0,1)",
    "Graph[x=1] {",
    "GraphEdit[",
    "...",
    "…",
    "etc.",
    "range(3)",
    "a b",
    "'; DROP TABLE",
    "}; node_list = ['evil'];",
    "a-b",
    "_",
    "x" * 200,
]

names = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False),
    names,
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.sets(scalars, max_size=4),
        st.frozensets(scalars, max_size=3),
        st.dictionaries(scalars, inner, max_size=3),
    ),
    max_leaves=12,
)
attrs = st.dictionaries(names, values, max_size=3)


@st.composite
def parsed_graphs(draw: st.DrawFn) -> ParsedGraph:
    directed = draw(st.booleans())
    g: nx.Graph = nx.DiGraph() if directed else nx.Graph()
    nodes = draw(st.lists(names, unique=True, max_size=8))
    for n in nodes:
        g.add_node(n, **draw(attrs))
    if nodes:
        pairs = st.tuples(st.sampled_from(nodes), st.sampled_from(nodes))
        for u, v in draw(st.lists(pairs, max_size=12)):
            g.add_edge(u, v, **draw(attrs))
    g.graph.update(draw(attrs))
    return ParsedGraph(graph=g, name=draw(st.none() | names))


def _same(a: Any, b: Any) -> bool:
    """Equality that also tells -0.0/0.0 and ints/bools/floats apart in containers."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


@settings(deadline=None)
@given(parsed_graphs())
@pytest.mark.slow
def test_round_trip_hostile_graphs(pg: ParsedGraph) -> None:
    text = serialize(pg)
    back = parse_graph(text)
    assert back.same_graph(pg), text
    assert back.name == pg.name
    assert back.declared_nodes == pg.num_nodes
    for n, data in pg.graph.nodes(data=True):
        assert _same(back.graph.nodes[n], data), text
    assert _same(dict(back.graph.graph), dict(pg.graph.graph)), text
    # the canonical text is a fixed point and parse_answer reads it too
    assert serialize(back) == text
    result = parse_answer(f"Here you go:\n```\n{text}\n```\nBye {{")
    assert result.graph is not None and result.graph.same_graph(pg), result.reason


@settings(deadline=None)
@given(values)
def test_literal_values_read_back_exactly(value: Any) -> None:
    text = serialize(ParsedGraph(graph=nx.Graph(v=value)))
    assert _same(parse_graph(text).graph.graph["v"], value), text


def test_canonical_layout() -> None:
    g = nx.Graph()
    g.add_nodes_from(["1", "0", "10", "2"])
    g.add_edge("0", "1")
    g.add_edge("1", "2", weight=2.5)
    g.add_edge("2", "10", type="cites")
    g.nodes["0"]["label"] = "Alice"
    g.nodes["10"]["label"] = "O'Brien"
    g.graph.update({"domain": "social", "node_list": 1})
    text = serialize(g, name="g1")
    assert text == (
        "Graph[name='g1', directed=false, nodes=4] {\n"
        "    node_list = ['0', '1', '10', '2'];\n"
        "    edge_list = [('0','1'), ('1','2', 2.5), ('10','2')];\n"
        "\n"
        "    0.label = 'Alice';\n"
        "    10.label = 'O\\'Brien';\n"
        "    edge(10,2).type = 'cites';\n"
        "\n"
        "    domain = 'social';\n"
        "    'node_list' = 1;\n"
        "}"
    )
    assert parse_graph(text).same_graph(ParsedGraph(graph=g))


def test_directed_header_and_no_name() -> None:
    text = serialize(nx.DiGraph([("a", "b")]))
    assert text.startswith("Graph[directed=true, nodes=2] {")
    back = parse_graph(text)
    assert back.directed and back.name is None and set(back.graph.edges) == {("a", "b")}


def test_long_lists_wrap() -> None:
    g = nx.path_graph([str(i) for i in range(60)])
    text = serialize(g)
    assert max(len(line) for line in text.splitlines()) <= 72
    assert "\n        '" in text and "\n        ('" in text
    assert parse_graph(text).same_graph(ParsedGraph(graph=g))


def test_parsed_graph_header_extras_are_kept() -> None:
    pg = parse_graph(
        "Graph[name='r', nodes=2, domain='social', type='tree'] { edge_list = [(0, 1)]; }"
    )
    text = serialize(pg)
    assert text.startswith("Graph[name='r', directed=false, nodes=2, domain='social', type='tree']")
    assert serialize(pg, name="other").startswith("Graph[name='other',")


def test_non_string_ids_and_keys_become_strings() -> None:
    g = nx.Graph()
    g.add_edge(0, 1, **{"w": 1})
    g.nodes[0][5] = "five"
    back = parse_graph(serialize(g))
    assert set(back.graph.nodes) == {"0", "1"}
    assert back.graph.nodes["0"] == {"5": "five"}


def test_special_values() -> None:
    assert literal(float("inf")) == "float('inf')"
    assert literal(float("-inf")) == "float('-inf')"
    assert literal(set()) == "set()"
    assert literal(frozenset()) == "frozenset()"
    assert literal((1,)) == "(1,)"
    assert literal({2, 1}) == "{1, 2}"
    assert literal(True) == "true" and literal(None) == "None"
    back = parse_graph(serialize(nx.Graph(x=float("nan")))).graph.graph["x"]
    assert math.isnan(back)


def test_quote_escapes_only_what_it_must() -> None:
    plain = "plain text, with ’typographic’ quotes & é"
    assert quote(plain) == f"'{plain}'"
    assert quote("it's") == "'it\\'s'"
    assert quote("a\\b\nc\x00\u200b") == "'a\\\\b\\nc\\x00\\u200b'"


def test_multigraph_collapses_parallel_edges() -> None:
    g = nx.MultiGraph()
    g.add_edge("a", "b", k=1)
    g.add_edge("a", "b", k=2)
    back = parse_graph(serialize(g))
    assert back.num_edges == 1 and back.duplicate_edges == (("a", "b"),)
