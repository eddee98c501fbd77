"""Constrained decoding: the grammar accepts the answers we want and only what the parser reads;
the JSON schema is strict and its answers parse."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from pytest_graphinstruct.graphs.model import Outcome
from pytest_graphinstruct.graphs.parse import parse_answer, parse_graph
from pytest_graphinstruct.graphs.serialize import serialize
from pytest_graphinstruct.methods.constrained import (
    grammar,
    request_extra,
    resolve_format,
    response_format,
)
from tests.plugin._suite import CYCLE4, EMPTY3, TREE4

from ._gbnf import Grammar

GRAPHS = Grammar(grammar(1))
EDITS = Grammar(grammar(5))


def _structure(g: nx.Graph) -> nx.Graph:
    """The graph with its node and edge attributes, without dataset header extras."""
    h = g.__class__()
    h.add_nodes_from(g.nodes(data=True))
    h.add_edges_from(g.edges(data=True))
    return h


def test_formats_resolve_per_model() -> None:
    assert resolve_format("auto", "local") == "gbnf"
    assert resolve_format("auto", "gpt-4o") == "json-schema"
    assert resolve_format("gbnf", "gpt-4o") == "gbnf"
    with pytest.raises(ValueError, match="unknown constrained format"):
        resolve_format("regex", "local")
    (key, value), = request_extra("gbnf", 5)
    assert key == "grammar" and value.startswith("root ::= edit | graph | refusal\n")
    (key, value), = request_extra("json-schema", 1)
    assert key == "response_format" and value == response_format()


@pytest.mark.parametrize("text", [TREE4, CYCLE4, EMPTY3])
def test_canonical_graphs_match(text: str) -> None:
    written = serialize(_structure(parse_graph(text).graph), name="g")
    assert GRAPHS.matches(written) and EDITS.matches(written)


@pytest.mark.slow
def test_every_official_reference_written_canonically_matches(official_suite_dir: Path) -> None:
    checked = 0
    for level in range(6):
        records = json.loads((official_suite_dir / f"level_{level}.json").read_text())
        for rec in records:
            for ref in rec["reference_solutions"]:
                pg = parse_graph(ref)
                if pg.edit is not None:
                    continue
                written = serialize(_structure(pg.graph), name=rec["id"])
                assert GRAPHS.matches(written), written[:500]
                checked += 1
    assert checked > 1000


def test_edits_and_refusals() -> None:
    edit = ("GraphEdit[name='edit', base='given-graph'] {\n    add_edges = [('0','3')];\n"
            "    remove_edges = [];\n}")
    assert EDITS.matches(edit) and not GRAPHS.matches(edit)
    refusal = "No such graph exists: 3 × 5 is odd."
    assert GRAPHS.matches(refusal) and EDITS.matches(refusal)
    for text in ["Sure! Here is the graph: " + TREE4, "I think no such graph exists.",
                 "Graph[name='" + "x" * 81 + "'] {\n    node_list = [];\n    edge_list = [];\n}",
                 TREE4 + "\nThat's it."]:
        assert not GRAPHS.matches(text), text


@pytest.mark.parametrize("seed", range(3))
def test_whatever_the_grammar_allows_parses_as_a_graph_or_a_refusal(seed: int) -> None:
    rng = random.Random(seed)
    base = parse_graph(TREE4)
    for _ in range(100):
        text = GRAPHS.sample(rng)
        assert GRAPHS.matches(text)
        assert parse_answer(text).outcome in (Outcome.GRAPH, Outcome.REFUSAL), text
        text = EDITS.sample(rng)
        assert parse_answer(text, base=base).outcome in (Outcome.GRAPH, Outcome.REFUSAL), text


def _strict(schema: dict[str, Any]) -> None:
    """OpenAI's strict mode: every object closed and every property required."""
    if schema.get("type") == "object":
        assert schema["additionalProperties"] is False
        assert sorted(schema["required"]) == sorted(schema["properties"])
        for sub in schema["properties"].values():
            _strict(sub)
    for sub in schema.get("anyOf", []):
        _strict(sub)
    if "items" in schema:
        _strict(schema["items"])


def test_json_schema_is_strict_and_its_answers_parse() -> None:
    rf = response_format()
    assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
    _strict(rf["json_schema"]["schema"])
    graph = {"answer": {"directed": False, "nodes": ["0", "1", "2"],
                        "edges": [{"source": "0", "target": "1"},
                                  {"source": "1", "target": "2"}]}}
    result = parse_answer(json.dumps(graph))
    assert result.outcome is Outcome.GRAPH and result.graph is not None
    assert (result.graph.num_nodes, result.graph.num_edges) == (3, 2)
    refusal = {"answer": {"refusal": "No such graph exists because 3 × 5 is odd."}}
    assert parse_answer(json.dumps(refusal)).outcome is Outcome.REFUSAL
