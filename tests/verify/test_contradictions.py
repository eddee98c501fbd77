"""No-contradiction checks: a fixed set of five verdicts per parsed graph."""

from __future__ import annotations

import json

import networkx as nx
from hypothesis import given

from pytest_graphinstruct.graphs.model import ParsedGraph
from pytest_graphinstruct.verify.contradictions import CONTRADICTION_CHECKS, check_contradictions
from pytest_graphinstruct.verify.locus import Locus
from pytest_graphinstruct.verify.verdict import Source, Verdict
from tests.verify._graphgen import gnp_graphs


def by_key(pg: ParsedGraph) -> dict[str, Verdict]:
    verdicts = check_contradictions(pg)
    assert tuple(v.key for v in verdicts) == CONTRADICTION_CHECKS
    assert all(v.source is Source.CONTRADICTION and v.constraint == v.key for v in verdicts)
    return {v.key: v for v in verdicts}


def test_clean_graph_passes_all_five() -> None:
    g = nx.Graph([("0", "1"), ("1", "2")])
    verdicts = check_contradictions(ParsedGraph(graph=g, header={"nodes": 3},
                                                declared_nodes=3))
    assert len(verdicts) == 5 and all(v.satisfied and v.where == Locus() for v in verdicts)


def test_empty_graph_passes() -> None:
    assert all(v.satisfied for v in check_contradictions(ParsedGraph(graph=nx.Graph())))


def test_self_loops() -> None:
    g = nx.Graph([("0", "0"), ("0", "1"), ("10", "10"), ("2", "2")])
    v = by_key(ParsedGraph(graph=g))["no_self_loops"]
    assert not v.satisfied and v.observed == "3 self-loop(s)"
    assert v.where.to_json() == {"nodes": ["0", "2", "10"], "count": 3}


def test_blank_ids() -> None:
    g = nx.Graph([("", "1"), (" ", "2")])
    v = by_key(ParsedGraph(graph=g, blank_nodes=("",)))["no_blank_ids"]
    assert not v.satisfied and v.where.to_json()["nodes"] == ["", " "]


def test_parallel_edges() -> None:
    g = nx.Graph([("0", "1"), ("1", "2")])
    pg = ParsedGraph(graph=g, duplicate_edges=(("0", "1"), ("2", "1")))
    v = by_key(pg)["no_parallel_edges"]
    assert not v.satisfied and v.where.to_json() == {"edges": [["0", "1"], ["2", "1"]], "count": 2}


def test_header_counts() -> None:
    g = nx.DiGraph([("0", "1"), ("1", "0")])
    pg = ParsedGraph(graph=g, header={"nodes": 3, "edges": 2}, declared_nodes=3)
    v = by_key(pg)
    assert not v["header_node_count"].satisfied
    assert v["header_node_count"].observed == "2 nodes"
    assert v["header_edge_count"].satisfied  # arcs are counted
    pg = ParsedGraph(graph=g, header={"nodes": 2, "edges": 1}, declared_nodes=2)
    v = by_key(pg)
    assert v["header_node_count"].satisfied
    assert not v["header_edge_count"].satisfied
    # undeclared or non-integer counts are not contradictions
    pg = ParsedGraph(graph=g, header={"edges": "many", "name": "x"})
    v = by_key(pg)
    assert v["header_node_count"].satisfied and v["header_edge_count"].satisfied
    assert by_key(ParsedGraph(graph=g, header={"edges": True}))["header_edge_count"].satisfied


@given(gnp_graphs(max_nodes=12))
def test_always_five_json_ready_verdicts(g: nx.Graph) -> None:
    pg = ParsedGraph(graph=g, declared_nodes=g.number_of_nodes())
    verdicts = check_contradictions(pg)
    assert [v.key for v in verdicts] == list(CONTRADICTION_CHECKS)
    loops = nx.number_of_selfloops(g)
    assert verdicts[0].satisfied == (loops == 0)
    assert all(v.satisfied for v in verdicts[1:])
    json.dumps([v.to_json() for v in verdicts])
