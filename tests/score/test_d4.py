from __future__ import annotations

from typing import Any

import pytest

from pytest_graphinstruct.score import d4
from pytest_graphinstruct.score.d4 import (
    EMPTY_EDIT_RA_RIGHT,
    EMPTY_EDIT_RA_WRONG,
    FULL_GRAPH_RA,
    instruction_d4,
    is_valid,
    sample_d4,
)
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import instruction_from_record
from pytest_graphinstruct.verify.verifier import Verifier

V = Verifier()


def make(**over: Any) -> Instruction:
    rec: dict[str, Any] = {
        "id": "L0-001", "level": 0, "instruction": "A graph with 4 nodes and 3 edges.",
        "explicit_constraints": ["num_nodes=4", "num_edges=3"], "implicit_constraints": [],
    }
    rec.update(over)
    inst = instruction_from_record(rec)
    assert inst is not None
    return inst


def g(nodes: str, edges: str) -> str:
    return f"Graph[name='a'] {{ node_list = [{nodes}]; edge_list = [{edges}]; }}"


PATH4 = g("0,1,2,3", "(0,1),(1,2),(2,3)")


def test_l0_no_implicit_uses_two_thirds_formula() -> None:
    inst = make()
    assert sample_d4(inst, V.verify(inst, PATH4)).score == pytest.approx(1.0)
    # 4 nodes, 2 edges: E = 1/2, NC = 1 -> 2/3 * 1/2 + 1/3
    half = V.verify(inst, g("0,1,2,3", "(0,1),(1,2)"))
    assert sample_d4(inst, half).score == pytest.approx(2 / 3 * 0.5 + 1 / 3)
    # a self-loop breaks no-contradiction: E = 1/2 (4 nodes ok, edges 3 ok?) -> compute
    loop = V.verify(inst, g("0,1,2,3", "(0,1),(1,2),(3,3)"))
    parts = sample_d4(inst, loop)
    assert parts.no_contradiction == 0.0
    assert parts.score == pytest.approx(2 / 3 * parts.explicit)


def test_l1_with_implicit_uses_four_four_two() -> None:
    inst = make(id="L1-001", level=1, explicit_constraints=["graph_type=tree", "num_nodes=4"],
                implicit_constraints=["num_edges=3"])
    v = V.verify(inst, PATH4)
    parts = sample_d4(inst, v)
    assert parts.implicit == 1.0 and parts.score == pytest.approx(1.0)
    # a star with an extra isolated node: tree fails -> not valid -> D4 0
    bad = V.verify(inst, g("0,1,2,3,4", "(0,1),(0,2),(0,3)"))
    assert not is_valid(bad)
    assert instruction_d4(inst, [bad]) == 0.0
    assert instruction_d4(inst, [v, bad]) == pytest.approx(1.0)


def test_explicit_and_implicit_rates_mix() -> None:
    inst = make(id="L2-001", level=2, explicit_constraints=["num_nodes=4", "connected=true"],
                implicit_constraints=["num_edges=4"])
    v = V.verify(inst, PATH4)  # E = 1, I = 0 (3 edges), NC = 1
    assert sample_d4(inst, v).score == pytest.approx(0.4 + 0.0 + 0.2)


def test_infeasible_scores_refusal_share() -> None:
    inst = make(id="L2-009", level=2, explicit_constraints=["degree=3", "num_nodes=5"],
                feasible=False)
    refusal = V.verify(inst, "Impossible: no 3-regular graph on 5 nodes exists.")
    garbage = V.verify(inst, "zzz")
    confab = V.verify(inst, PATH4)
    assert instruction_d4(inst, [refusal, refusal]) == 1.0
    assert instruction_d4(inst, [refusal, garbage, confab, refusal]) == pytest.approx(0.5)
    assert instruction_d4(inst, []) == 0.0


def test_l4_uses_domain_fit_against_references() -> None:
    ref = ("Graph[name='r', nodes=4, domain='social'] { node_list = ['0','1','2','3']; "
           "edge_list = [('0','1'), ('1','2'), ('2','3')]; }")
    inst = make(id="L4-001", level=4, domain="social", reference_solutions=[ref],
                explicit_constraints=["num_nodes=4", "connected=true", "domain=social"])
    parts = sample_d4(inst, V.verify(inst, PATH4))
    assert parts.domain_fit == pytest.approx(1.0) and parts.score == pytest.approx(1.0)
    star = V.verify(inst, g("0,1,2,3", "(0,1),(0,2),(0,3)"))
    p2 = sample_d4(inst, star)
    assert p2.domain_fit is not None and p2.domain_fit < 1.0
    assert p2.score == pytest.approx(0.65 + 0.20 * p2.domain_fit + 0.15)
    no_refs = make(id="L4-002", level=4, domain="social",
                   explicit_constraints=["num_nodes=4", "num_edges=9"])
    p3 = sample_d4(no_refs, V.verify(no_refs, PATH4))
    assert p3.domain_fit is None and p3.score == pytest.approx((0.65 * 0.5 + 0.15) / 0.8)


def test_l5_edit_quality_and_reasoning() -> None:
    base = g("0,1,2,3", "(0,1),(1,2),(2,3),(3,0),(0,2)")
    inst = make(id="L5-001", level=5, instruction="Remove the minimum number of edges to "
                "produce a spanning tree.", base_graph=base,
                explicit_constraints=["num_nodes=4", "graph_type=tree", "task_type=spanning_tree"],
                implicit_constraints=["num_edges=3"])
    edit = V.verify(inst, "GraphEdit[name='e'] { remove_edges = [(3,0), (0,2)]; }")
    p = sample_d4(inst, edit)
    assert p.edit_quality == pytest.approx(1.0) and p.reasoning == pytest.approx(1.0)
    assert p.score == pytest.approx(1.0)
    full = V.verify(inst, PATH4)
    pf = sample_d4(inst, full)
    assert pf.reasoning == FULL_GRAPH_RA
    assert pf.score == pytest.approx(0.45 * 1.0 + 0.40 + 0.15 * FULL_GRAPH_RA)
    # removing an edge that is not in the base is a no-op operation: RA 2/3
    noisy = V.verify(inst, "GraphEdit[name='e'] { remove_edges = [(3,0), (0,2), (1,3)]; }")
    assert sample_d4(inst, noisy).reasoning == pytest.approx(2 / 3)


def test_l4_defective_references_are_no_yardstick() -> None:
    loop_ref = ("Graph[name='r', nodes=4, domain='social'] { node_list = ['0','1','2','3']; "
                "edge_list = [('0','1'), ('1','2'), ('2','3'), ('3','3')]; }")
    inst = make(id="L4-003", level=4, domain="social", reference_solutions=[loop_ref],
                explicit_constraints=["num_nodes=4", "connected=true", "domain=social"])
    parts = sample_d4(inst, V.verify(inst, PATH4))
    assert parts.domain_fit is None and parts.score == pytest.approx(1.0)


# ----------------------------------------------------------------------------- profile cache


def _l4(ref_edges: str) -> Instruction:
    ref = (f"Graph[name='r', nodes=4, domain='social'] {{ node_list = ['0','1','2','3']; "
           f"edge_list = [{ref_edges}]; }}")
    return make(id="L4-001", level=4, domain="social", reference_solutions=[ref],
                explicit_constraints=["num_nodes=4", "connected=true", "domain=social"])


def test_reference_profiles_are_keyed_by_content_not_id() -> None:
    """Two instructions sharing an id but not their references each get their own yardstick,
    whatever was scored before (a cache keyed by id gave the second the first's profiles)."""
    path_ref = _l4("('0','1'), ('1','2'), ('2','3')")
    star_ref = _l4("('0','1'), ('0','2'), ('0','3')")
    answers = [V.verify(path_ref, PATH4), V.verify(path_ref, g("0,1,2,3", "(0,1),(0,2),(0,3)"))]

    def scores(inst: Instruction) -> list[float]:
        return [instruction_d4(inst, [a]) for a in answers]

    fresh: dict[int, list[float]] = {}
    for inst in (path_ref, star_ref):
        d4._PROFILE_CACHE.clear()
        fresh[id(inst)] = scores(inst)
    assert fresh[id(path_ref)] != fresh[id(star_ref)]  # the references do matter
    for order in ((path_ref, star_ref), (star_ref, path_ref)):
        d4._PROFILE_CACHE.clear()
        for inst in order:
            assert scores(inst) == fresh[id(inst)]
        for inst in order:  # and again, now from the cache
            assert scores(inst) == fresh[id(inst)]


# ----------------------------------------------------------------------------- empty GraphEdit

HAMILTONIAN = ("Add the minimum number of edges to make this graph Hamiltonian (it must contain "
               "a Hamiltonian cycle).")
CYCLE5 = g("0,1,2,3,4", "(0,1),(1,2),(2,3),(3,4),(4,0)")
EMPTY_EDITS = ("GraphEdit[name='e'] { }",
               "GraphEdit[name='e'] { add_edges = []; remove_edges = []; }")


def _hamiltonian(base: str) -> Instruction:
    return make(id="L5-002", level=5, instruction=HAMILTONIAN, base_graph=base,
                explicit_constraints=["num_nodes=5", "task_type=make_hamiltonian"])


def test_empty_edit_is_aligned_when_nothing_needs_to_change() -> None:
    inst = _hamiltonian(CYCLE5)  # already Hamiltonian: the minimal edit is 0
    full = sample_d4(inst, V.verify(inst, CYCLE5))
    assert full.reasoning == FULL_GRAPH_RA and full.score == pytest.approx(0.955)
    for text in EMPTY_EDITS:
        v = V.verify(inst, text)
        assert v.parse.graph is not None and v.parse.graph.fmt == "edit" and v.passed
        p = sample_d4(inst, v)
        assert p.reasoning == EMPTY_EDIT_RA_RIGHT == 1.0
        assert p.edit_quality == pytest.approx(1.0) and p.score == pytest.approx(1.0)


def test_empty_edit_gets_no_alignment_when_an_edit_is_needed() -> None:
    inst = _hamiltonian(g("0,1,2,3,4", "(0,1),(1,2),(2,3),(3,4)"))  # a path: 1 edge needed
    for text in EMPTY_EDITS:
        p = sample_d4(inst, V.verify(inst, text))
        assert p.reasoning == EMPTY_EDIT_RA_WRONG == 0.0
    right = sample_d4(inst, V.verify(inst, "GraphEdit[name='e'] { add_edges = [(4,0)]; }"))
    assert right.reasoning == 1.0 and right.score == pytest.approx(1.0)


def test_empty_edit_with_unknown_minimum_gets_no_alignment() -> None:
    # line_graph has no computable minimum and takes no reference edit size: nothing says
    # that doing nothing is right
    inst = make(id="L5-003", level=5, instruction="Construct the line graph of this graph.",
                base_graph=CYCLE5, explicit_constraints=["task_type=line_graph"])
    p = sample_d4(inst, V.verify(inst, EMPTY_EDITS[0]))
    assert p.reasoning == EMPTY_EDIT_RA_WRONG
