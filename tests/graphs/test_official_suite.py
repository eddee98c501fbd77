"""Every official reference solution and L5 base graph parses and round-trips.

Reads ../shared/official-suite (via the ``official_suite_dir`` fixture); skipped when absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.graphs import Outcome, parse_answer, parse_graph, serialize

pytestmark = pytest.mark.official


@pytest.fixture(scope="module")
def records(official_suite_dir: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for level in range(6):
        out += json.loads((official_suite_dir / f"level_{level}.json").read_text("utf-8"))
    return out


@pytest.mark.slow
def test_all_references_parse_and_round_trip(records: list[dict[str, Any]]) -> None:
    count = 0
    for rec in records:
        for text in rec["reference_solutions"]:
            pg = parse_graph(text)
            assert pg.num_nodes > 0, rec["id"]
            assert pg.declared_nodes == pg.num_nodes, rec["id"]
            back = parse_graph(serialize(pg))
            assert back.same_graph(pg), rec["id"]
            answer = parse_answer(text)
            assert answer.outcome is Outcome.GRAPH and answer.graph is not None
            assert answer.graph.same_graph(pg), rec["id"]
            count += 1
    assert count == 1582


def test_reference_details(records: list[dict[str, Any]]) -> None:
    by_id = {r["id"]: r for r in records}
    l3 = parse_graph(by_id["L3-001"]["reference_solutions"][0])
    assert l3.graph.graph["partition"] == [{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}]
    assert l3.graph.nodes["10"]["block"] == 1
    l4 = parse_graph(by_id["L4-001"]["reference_solutions"][0])
    assert l4.graph.nodes["0"]["label"] == "Alice" and l4.header["domain"] == "social"
    directed = [
        parse_graph(t).directed
        for r in records
        for t in r["reference_solutions"]
        if "directed=true" in t.splitlines()[0]
    ]
    assert directed and all(directed)


def test_base_graphs_and_graph_edits(records: list[dict[str, Any]]) -> None:
    wrong_header = []
    for rec in records:
        if "base_graph" not in rec:
            continue
        base = parse_graph(rec["base_graph"])
        assert parse_graph(serialize(base)).same_graph(base), rec["id"]
        if base.declared_nodes != base.num_nodes:
            wrong_header.append(rec["id"])
            assert base.declared_nodes == 2 * base.num_nodes
        for edit in rec["graph_edits"]:
            result = parse_answer(edit, base=base)
            assert result.outcome is Outcome.GRAPH, (rec["id"], result.reason)
            assert result.graph is not None and result.graph.fmt == "edit"
            assert "base graph" in (parse_answer(edit).reason or "")
    assert sorted(wrong_header) == ["L5-005", "L5-008", "L5-016", "L5-017", "L5-033", "L5-047"]
    assert sum("base_graph" in r for r in records) == 50


def test_reference_edits_reproduce_reference_solutions(records: list[dict[str, Any]]) -> None:
    """edit_i applied to the base is ref_i (node-removing tasks need ``drop_isolated``)."""
    for rec in records:
        if "base_graph" not in rec:
            continue
        base = parse_graph(rec["base_graph"])
        for edit, ref in zip(rec["graph_edits"], rec["reference_solutions"], strict=True):
            expected = parse_graph(ref)
            results = [parse_answer(edit, base=base, drop_isolated=d).graph for d in (False, True)]
            assert any(
                g is not None
                and set(g.graph.nodes) == set(expected.graph.nodes)
                and {frozenset(e) for e in g.graph.edges}
                == {frozenset(e) for e in expected.graph.edges}
                for g in results
            ), rec["id"]
