"""Level 2 builder: joint constraints, and infeasible instructions whose proofs hold."""

from __future__ import annotations

from collections import Counter

import pytest

from pytest_graphinstruct.build.common import as_instruction
from pytest_graphinstruct.build.level2 import FEASIBLE, INFEASIBLE, build_level2, plan
from pytest_graphinstruct.suite.constraints import parse_constraint
from pytest_graphinstruct.verify.verifier import DEFAULT_VERIFIER
from tests.suite.agreement import disagreements

SAMPLE = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 111, 199}


def proof_holds(record: dict) -> bool:
    """Re-derive infeasibility from the explicit constraints alone (independent of the
    builder's own wording of the proof)."""
    c = {}
    for s in record["explicit_constraints"]:
        k = parse_constraint(s)
        c[k.key] = k.value
    n, m = c["num_nodes"], c.get("num_edges")
    theorem = record["infeasibility"]["theorem"]
    if theorem == "tree_edge_count":
        return c["graph_type"] == "tree" and m != n - 1
    if theorem == "handshake_lemma":
        return (n * c["degree"]) % 2 == 1
    if theorem == "euler_planar_bound":
        return c["planar"] is True and n >= 3 and m > 3 * n - 6
    if theorem == "bipartite_edge_bound":
        return c["bipartite"] is True and m > (n // 2) * (n - n // 2)
    return False


def test_plan_places_nine_infeasible_per_two_hundred() -> None:
    p = plan(200)
    assert sum(1 for t, _ in p if t in INFEASIBLE) == 9
    assert {t.name for t, _ in p} == {t.name for t in FEASIBLE + INFEASIBLE}
    assert sum(1 for t, _ in plan(50) if t in INFEASIBLE) == 2


@pytest.fixture(scope="module")
def sample() -> list[dict]:
    bad = {i + 1 for i, (t, _) in enumerate(plan(200)) if t in INFEASIBLE}
    return build_level2(0, 200, indices=SAMPLE | bad)


def test_feasible_records_have_four_constraints_and_passing_references(
        sample: list[dict]) -> None:
    for r in sample:
        assert len(r["explicit_constraints"]) >= 4, r["id"]
        assert disagreements(r) == [], r["id"]
        if r["feasible"]:
            inst = as_instruction(r)
            assert len(r["reference_solutions"]) == 2
            for ref in r["reference_solutions"]:
                assert DEFAULT_VERIFIER.verify(inst, ref).passed, r["id"]


def test_infeasible_records_are_provably_infeasible_and_refusals_pass(sample: list[dict]) -> None:
    bad = [r for r in sample if not r["feasible"]]
    assert len(bad) == 9
    assert {r["infeasibility"]["theorem"] for r in bad} == {
        "tree_edge_count", "handshake_lemma", "euler_planar_bound", "bipartite_edge_bound"}
    for r in bad:
        assert r["reference_solutions"] == []
        assert proof_holds(r), r["id"]
        inst = as_instruction(r)
        refusal = "This is impossible: no graph can satisfy these constraints."
        assert DEFAULT_VERIFIER.verify(inst, refusal).passed, r["id"]


def test_buckets_over_the_whole_plan() -> None:
    buckets = Counter(b for _, b in plan(200))
    assert min(buckets.values()) >= 15
