"""Helpers of the answer-parser tests: read an answer that must parse, or must fail."""

from __future__ import annotations

from pytest_graphinstruct.graphs import Outcome, ParsedGraph, parse_answer


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


def pairs(*edges: str) -> set[frozenset[str]]:
    """Undirected edges written ``'u-v'``."""
    return {frozenset(e.split("-")) for e in edges}
