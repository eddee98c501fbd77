from __future__ import annotations

from typing import Any

from pytest_graphinstruct.graphs.model import Limits, Outcome
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import instruction_from_record
from pytest_graphinstruct.verify.verdict import Source
from pytest_graphinstruct.verify.verifier import Verifier

V = Verifier()


def make(**over: Any) -> Instruction:
    rec: dict[str, Any] = {
        "id": "L1-001", "level": 1, "instruction": "Generate a tree with 4 nodes.",
        "explicit_constraints": ["graph_type=tree", "num_nodes=4"],
        "implicit_constraints": ["num_edges=3"], "graph_sizes": ["small"],
    }
    rec.update(over)
    inst = instruction_from_record(rec)
    assert inst is not None
    return inst


TREE = "Graph[name='t', nodes=4] { node_list = [0, 1, 2, 3]; edge_list = [(0,1), (1,2), (1,3)]; }"
CYCLE = ("Graph[name='c', nodes=4] { node_list = [0, 1, 2, 3]; "
         "edge_list = [(0,1), (1,2), (2,3), (3,0)]; }")


def test_correct_tree_passes_every_verdict() -> None:
    v = V.verify(make(), TREE)
    assert v.outcome is Outcome.GRAPH and v.passed, [x.describe() for x in v.violations]
    sources = {x.source for x in v.verdicts}
    assert {Source.EXPLICIT, Source.IMPLICIT, Source.INFERRED, Source.CONTRADICTION} <= sources
    # the dataset already states num_edges=3, so it is not inferred a second time
    inferred = [x.constraint for x in v.of(Source.INFERRED)]
    assert "num_edges=3" not in inferred and "connected=true" in inferred


def test_violations_name_constraints_with_expected_and_observed() -> None:
    v = V.verify(make(), CYCLE)
    assert not v.passed
    failed = {x.constraint: x for x in v.violations}
    assert "graph_type=tree" in failed and "num_edges=3" in failed
    assert failed["num_edges=3"].observed.startswith("4")
    assert failed["num_edges=3"].source is Source.IMPLICIT
    assert "acyclic=true" in failed and failed["acyclic=true"].where


def test_parse_failure_and_refusal_on_feasible_instruction() -> None:
    v = V.verify(make(), "I am not sure.")
    assert v.outcome is Outcome.FAILURE and not v.passed
    assert [x.source for x in v.verdicts] == [Source.PARSE]
    r = V.verify(make(), "This is impossible: no such graph exists.")
    assert r.outcome is Outcome.REFUSAL and not r.passed
    assert r.verdicts[0].source is Source.FEASIBILITY


def test_infeasible_instruction_rewards_refusal_only() -> None:
    inst = make(id="L2-001", level=2, instruction="A 3-regular graph with 5 nodes.",
                explicit_constraints=["degree=3", "num_nodes=5"], implicit_constraints=[],
                feasible=False)
    ok = V.verify(inst, "No such graph exists: 3*5 is odd, so the constraints are contradictory.")
    assert ok.outcome is Outcome.REFUSAL and ok.passed
    garbage = V.verify(inst, "asdf qwer")
    assert garbage.outcome is Outcome.FAILURE and not garbage.passed
    confab = V.verify(inst, TREE)
    assert confab.outcome is Outcome.GRAPH and not confab.passed
    assert confab.verdicts[0].constraint == "feasible=false"
    assert "confabulated" in confab.verdicts[0].observed


def test_metadata_keys_are_not_checked_as_graph_properties() -> None:
    inst = make(id="L4-001", level=4, explicit_constraints=["num_nodes=4", "domain=social"],
                implicit_constraints=[], domain="social")
    v = V.verify(inst, TREE)
    assert all(x.key != "domain" for x in v.verdicts)


def test_l5_graph_edit_is_applied_to_the_base() -> None:
    base = ("Graph[name='b', nodes=4] { node_list = [0, 1, 2, 3]; "
            "edge_list = [(0,1), (1,2), (2,3), (3,0), (0,2)]; }")
    inst = make(id="L5-001", level=5, instruction="Remove the minimum number of edges to produce "
                "a spanning tree.", explicit_constraints=["num_nodes=4", "graph_type=tree",
                                                           "task_type=spanning_tree"],
                implicit_constraints=["num_edges=3"], base_graph=base)
    edit = "GraphEdit[name='e'] { add_edges = []; remove_edges = [(3,0), (0,2)]; }"
    v = V.verify(inst, edit)
    assert v.outcome is Outcome.GRAPH and v.parse.graph is not None
    assert v.parse.graph.fmt == "edit"
    assert v.passed, [x.describe() for x in v.violations]
    assert v.of(Source.TASK)
    # a tree that is not a subgraph of the base breaks the task, not the tree constraints
    bad = ("Graph[name='x', nodes=4] { node_list = [0, 1, 2, 3]; "
           "edge_list = [(0,1), (1,3), (3,2)]; }")
    w = V.verify(inst, bad)
    assert not w.passed
    assert all(x.source is Source.TASK for x in w.violations)


def test_limits_are_enforced_by_the_verifier() -> None:
    v = Verifier(Limits(max_nodes=3)).verify(make(), TREE)
    assert v.outcome is Outcome.FAILURE and "max_nodes" in (v.parse.reason or "")


# ----------------------------------------------------------------------------- Verifier.parse

STAR_BASE = ("Graph[name='b', nodes=4] { node_list = [0, 1, 2, 3]; "
             "edge_list = [(0,1), (0,2), (0,3), (1,2)]; }")
DROP_03 = "GraphEdit[name='e'] { remove_edges = [(0,3)]; }"


def l5(task: str, **over: Any) -> Instruction:
    rec: dict[str, Any] = {"id": "L5-001", "level": 5, "instruction": "Edit the graph.",
                           "explicit_constraints": [f"task_type={task}"],
                           "implicit_constraints": [], "base_graph": STAR_BASE}
    rec.update(over)
    return make(**rec)


def test_parse_drops_isolated_nodes_for_node_removing_tasks_only() -> None:
    # k_core keeps only some base nodes: node 3, isolated by the edit, is dropped
    core = V.parse(l5("k_core"), DROP_03)
    assert core.graph is not None and set(core.graph.graph.nodes) == {"0", "1", "2"}
    # not a node-removing task (an isolated node may be part of a right answer): node 3 stays
    kept = V.parse(l5("make_bipartite"), DROP_03)
    assert kept.graph is not None and set(kept.graph.graph.nodes) == {"0", "1", "2", "3"}
    # variants and unknown task types fall back to the registry's lookup (keep nodes)
    for task in ("remove_edges_random", "rewire_randomly"):
        res = V.parse(l5(task), DROP_03)
        assert res.graph is not None and res.graph.num_nodes == 4


def test_parse_is_what_verify_sees() -> None:
    inst = l5("k_core", explicit_constraints=["task_type=k_core", "min_degree=2"])
    seen, parsed = V.verify(inst, DROP_03).parse, V.parse(inst, DROP_03)
    assert seen.graph is not None and parsed.graph is not None
    assert seen.outcome is parsed.outcome is Outcome.GRAPH
    assert set(seen.graph.graph.nodes) == set(parsed.graph.graph.nodes) == {"0", "1", "2"}
    assert set(seen.graph.graph.edges) == set(parsed.graph.graph.edges)
    # without a base graph a GraphEdit is a parse failure, with the verifier's limits applied
    assert V.parse(make(), DROP_03).outcome is Outcome.FAILURE
    limited = Verifier(Limits(max_nodes=3)).parse(make(), TREE)
    assert limited.outcome is Outcome.FAILURE and "max_nodes" in (limited.reason or "")
