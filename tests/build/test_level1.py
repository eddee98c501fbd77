"""Level 1 builder: one graph type per instruction, unique-answer types, stratification."""

from __future__ import annotations

from collections import Counter

import networkx as nx
import pytest

from pytest_graphinstruct.build.common import as_instruction, isomorphic
from pytest_graphinstruct.build.level1 import TEMPLATES, build_level1
from pytest_graphinstruct.graphs.parse import parse_graph
from pytest_graphinstruct.suite.constraints import parse_constraint
from pytest_graphinstruct.verify.verifier import DEFAULT_VERIFIER
from tests.suite.agreement import disagreements

#: Templates whose instructions admit one graph up to isomorphism (grid: when n factors once).
UNIQUE = {"path", "directed_path", "cycle", "directed_cycle", "star", "wheel", "complete",
          "complete_bipartite"}


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return build_level1(0, 200)


def test_counts_types_and_buckets(records: list[dict]) -> None:
    assert len(records) == 200
    buckets = Counter(r["graph_sizes"][0] for r in records)
    assert min(buckets.values()) >= 15
    assert {r["template"] for r in records} == {t.name for t in TEMPLATES}
    types = {parse_constraint(c).value for r in records for c in r["explicit_constraints"]
             if c.startswith("graph_type=")}
    assert len(types) == 14  # every GraphInstruct type except 'acyclic' (a forest here)
    assert all(any(c.startswith("graph_type=") for c in r["explicit_constraints"])
               for r in records)


def test_references_pass_and_are_distinct_unless_the_type_forces_one_answer(
        records: list[dict]) -> None:
    for r in records:
        inst = as_instruction(r)
        graphs = [parse_graph(ref).graph for ref in r["reference_solutions"]]
        for ref in r["reference_solutions"]:
            assert DEFAULT_VERIFIER.verify(inst, ref).passed, r["id"]
        assert disagreements(r) == [], r["id"]
        if r["template"] in UNIQUE:
            assert isomorphic(*graphs), r["id"]  # the claim of uniqueness is at least consistent
        elif r["template"] == "grid":
            n = inst.num_nodes
            shapes = [p for p in range(2, int(n ** 0.5) + 1) if n % p == 0]
            assert isomorphic(*graphs) == (len(shapes) == 1), r["id"]
        else:
            assert not isomorphic(*graphs), r["id"]


def test_unique_types_really_have_one_answer() -> None:
    # a wheel on 6 nodes: any graph passing the verifier is the wheel
    inst = as_instruction({"id": "x", "level": 1, "instruction": "t",
                           "explicit_constraints": ["graph_type=wheel", "num_nodes=6"]})
    from pytest_graphinstruct.graphs.serialize import serialize

    for g in (nx.wheel_graph(6), nx.relabel_nodes(nx.wheel_graph(6), {0: 5, 5: 0})):
        assert DEFAULT_VERIFIER.verify(inst, serialize(nx.relabel_nodes(g, str))).passed
    assert not DEFAULT_VERIFIER.verify(
        inst, serialize(nx.relabel_nodes(nx.complete_graph(6), str))).passed


def test_deterministic(records: list[dict]) -> None:
    assert build_level1(0, 200, indices={3, 150}) == [records[2], records[149]]
