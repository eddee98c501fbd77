"""graphs.model: the parser's records and the invariants they enforce."""

from __future__ import annotations

import networkx as nx
import pytest

from pytest_graphinstruct.graphs.model import (
    DEFAULT_LIMITS,
    GraphEdit,
    Limits,
    Outcome,
    ParsedGraph,
    ParseResult,
)


def pg(g: nx.Graph) -> ParsedGraph:
    return ParsedGraph(g)


@pytest.mark.parametrize("field", ["max_chars", "max_nodes", "max_edges", "max_depth"])
@pytest.mark.parametrize("value", [0, -1, True, 1.5, "10", None])
def test_limits_must_be_positive_integers(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"Limits.{field} must be a positive integer"):
        Limits(**{field: value})  # type: ignore[arg-type]


def test_limits_accept_one_and_default_to_the_documented_values() -> None:
    assert Limits(max_chars=1, max_nodes=1, max_edges=1, max_depth=1).max_depth == 1
    assert Limits(2_000_000, 20_000, 200_000, 64) == DEFAULT_LIMITS


def test_parse_result_has_a_graph_exactly_when_the_outcome_is_graph() -> None:
    g = pg(nx.Graph())
    with pytest.raises(ValueError, match="exactly when"):
        ParseResult(Outcome.GRAPH)
    with pytest.raises(ValueError, match="exactly when"):
        ParseResult(Outcome.FAILURE, graph=g)
    with pytest.raises(ValueError, match="exactly when"):
        ParseResult(Outcome.REFUSAL, graph=g)
    ok = ParseResult(Outcome.GRAPH, graph=g)
    assert ok.parsed and not ok.refusal
    refused = ParseResult(Outcome.REFUSAL, reason="impossible")
    assert refused.refusal and not refused.parsed


def test_parsed_graph_counts_and_direction() -> None:
    g = pg(nx.DiGraph([("a", "b"), ("b", "c")]))
    assert (g.directed, g.num_nodes, g.num_edges) == (True, 3, 2)
    assert dict(g.header) == {} and g.duplicate_edges == () and g.edit is None


def test_same_graph_ignores_undirected_orientation_and_insertion_order() -> None:
    a = nx.Graph([("0", "1"), ("1", "2")])
    b = nx.Graph()
    b.add_nodes_from(["2", "1", "0"])
    b.add_edges_from([("2", "1"), ("1", "0")])
    assert pg(a).same_graph(pg(b))


def test_same_graph_keeps_directed_orientation_and_directedness() -> None:
    assert not pg(nx.DiGraph([("0", "1")])).same_graph(pg(nx.DiGraph([("1", "0")])))
    assert not pg(nx.DiGraph([("0", "1")])).same_graph(pg(nx.Graph([("0", "1")])))


@pytest.mark.parametrize("change", ["node", "edge", "graph", "extra node"])
def test_same_graph_compares_attributes_and_nodes(change: str) -> None:
    a = nx.Graph([("0", "1")], name="g")
    b = a.copy()
    if change == "node":
        b.nodes["0"]["label"] = "x"
    elif change == "edge":
        b.edges["0", "1"]["weight"] = 2
    elif change == "graph":
        b.graph["name"] = "h"
    else:
        b.add_node("2")
    assert pg(a).same_graph(pg(a.copy()))
    assert not pg(a).same_graph(pg(b))


def test_graph_edit_defaults_are_empty_and_immutable() -> None:
    e = GraphEdit()
    assert e.add_edges == () and e.remove_nodes == () and dict(e.properties) == {}
    with pytest.raises(TypeError):
        e.header["x"] = 1  # type: ignore[index]
