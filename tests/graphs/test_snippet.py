"""graphs.snippet: graphs built by networkx code snippets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.graphs.model import DEFAULT_LIMITS, Limits
from pytest_graphinstruct.graphs.parse_errors import LimitExceeded
from pytest_graphinstruct.graphs.snippet import Snippet, find_snippets
from tests.graphs._answers import failure, graph_of

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


# --------------------------------------------------------------------------- the module's parts


def _snippets(text: str, skip: set[int] | None = None) -> list[Snippet]:
    return find_snippets(text, (skip or set()).__contains__, DEFAULT_LIMITS)


def test_each_constructor_starts_a_snippet_for_its_variable() -> None:
    text = "G = nx.Graph()\nG.add_edge(0, 1)\nH = nx.DiGraph()\nH.add_edge('a', 'b')\n"
    g, h = _snippets(text)
    assert (g.var, g.directed, h.var, h.directed) == ("G", False, "H", True)
    assert g.start == 0 and h.start == text.index("H =") and g.end <= h.start
    assert g.graph is not None and set(g.graph.graph.edges()) == {("0", "1")}
    assert h.graph is not None and set(h.graph.graph.edges()) == {("a", "b")}


def test_skipped_offsets_are_not_read() -> None:
    text = "G = nx.Graph()\nG.add_edge(0, 1)\n"
    assert _snippets(text, set(range(len(text)))) == []


def test_a_computed_snippet_is_incomplete_with_a_reason() -> None:
    (s,) = _snippets("G = nx.Graph()\nfor i in range(3):\n    G.add_edge(i, i + 1)\n")
    assert s.graph is None and s.error is not None


def test_a_removal_is_not_replayed_so_the_snippet_is_unusable() -> None:
    (s,) = _snippets("G = nx.Graph()\nG.add_edges_from([(0, 1), (1, 2)])\nG.remove_edge(0, 1)\n")
    assert s.graph is None and s.error is not None
    assert "remove_edge() which the parser does not replay" in str(s.error).replace(",", "")


def test_a_limit_exceeded_propagates() -> None:
    """As for every other format, a limit ends the whole parse (it is not one snippet's
    problem that an earlier draft could paper over)."""
    with pytest.raises(LimitExceeded):
        find_snippets("G = nx.Graph()\nG.add_nodes_from([0, 1, 2])\n", lambda _: False,
                      Limits(max_nodes=2))
    text = "Graph[] { edge_list = [(0, 1)]; }\nG = nx.Graph()\nG.add_nodes_from([0, 1, 2])\n"
    assert "max_nodes" in failure(text, limits=Limits(max_nodes=2))


@settings(deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=30),
       st.booleans())
def test_listed_edges_come_back(pairs_: list[tuple[int, int]], directed: bool) -> None:
    cls = "DiGraph" if directed else "Graph"
    (s,) = _snippets(f"G = nx.{cls}()\nG.add_edges_from({pairs_!r})\n")
    assert s.graph is not None and s.graph.directed is directed
    want = {(str(u), str(v)) for u, v in pairs_}
    got = set(s.graph.graph.edges())
    if not directed:
        got, want = {frozenset(e) for e in got}, {frozenset(e) for e in want}  # type: ignore[assignment]
    assert got == want
