"""graphs.jsonfmt: graphs written as JSON (or python dict) objects."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.graphs.jsonfmt import graph_from_dict, is_graph_dict, key_limits
from pytest_graphinstruct.graphs.model import DEFAULT_LIMITS, Limits
from pytest_graphinstruct.graphs.parse_errors import ParseError
from tests.graphs._answers import failure, graph_of, pairs, undirected

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


# --------------------------------------------------------------------------- the module's parts


def test_is_graph_dict_needs_a_graph_key_holding_a_container() -> None:
    assert is_graph_dict({"Nodes": [1]}) and is_graph_dict({"adj": {}})
    assert is_graph_dict({"links": ()})
    assert not is_graph_dict({"nodes": 5})  # a count, not a graph
    assert not is_graph_dict({"name": "g", 1: [2]})


def test_key_limits_bound_node_keys_by_nodes_and_edge_keys_by_edges() -> None:
    limits = key_limits(Limits(max_nodes=3, max_edges=7))
    assert limits["vertices"] == (3, "max_nodes") and limits["arcs"] == (7, "max_edges")
    assert limits["adjacency"] == (7, "max_edges")


def test_graph_from_dict_reads_counts_header_and_graph_attributes() -> None:
    g = graph_from_dict({"Directed": "1", "num_nodes": 4, "NAME": "g", "note": "x",
                         "graph": {"colour": "red"}, "edges": [["a", "b", 2.5]]}, DEFAULT_LIMITS)
    assert g.directed and g.declared_nodes == 4 and g.name == "g" and g.fmt == "json"
    assert dict(g.header) == {"Directed": "1", "num_nodes": 4, "NAME": "g", "note": "x"}
    assert g.graph.graph["colour"] == "red"
    assert g.graph.edges["a", "b"] == {"weight": 2.5}


@pytest.mark.parametrize(("d", "message"), [
    ({"edges": "0-1"}, "'edges' must be a list, got str"),
    ({"edges": {"0": "1"}}, "'edges' must be a list, got dict"),
    ({"directed": "maybe", "edges": []}, "directed must be true or false"),
])
def test_graph_from_dict_errors(d: dict[str, object], message: str) -> None:
    with pytest.raises(ParseError, match=message):
        graph_from_dict(d, DEFAULT_LIMITS)


def test_adjacency_dict_neighbours_are_not_counted_twice() -> None:
    g = graph_from_dict({"adjacency": {"0": [1], "1": [0]}}, DEFAULT_LIMITS)
    assert g.num_edges == 1 and g.duplicate_edges == ()
    g = graph_from_dict({"edges": [[0, 1], [1, 0]]}, DEFAULT_LIMITS)
    assert len(g.duplicate_edges) == 1  # (0, 1) and (1, 0): one undirected edge twice


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=40),
       st.booleans())
def test_edges_written_as_json_come_back(pairs_: list[tuple[int, int]], directed: bool) -> None:
    g = graph_from_dict({"directed": directed, "nodes": [0], "edges": [list(p) for p in pairs_]},
                        DEFAULT_LIMITS)
    want = {(str(u), str(v)) for u, v in pairs_}
    got = set(g.graph.edges())
    if directed:
        assert got == want
    else:
        assert {frozenset(e) for e in got} == {frozenset(e) for e in want}
    assert set(g.graph.nodes) == {"0"} | {x for e in want for x in e}
