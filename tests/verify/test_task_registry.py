"""The L5 task registry: one TaskSpec per task type, one lookup, derived task sets."""

from __future__ import annotations

import dataclasses

import networkx as nx
import pytest

from pytest_graphinstruct.graphs.model import ParsedGraph
from pytest_graphinstruct.verify.tasks import (
    CHECKED_TASKS,
    NODE_REMOVING_TASKS,
    TASKS,
    TaskSpec,
    check_task,
    minimal_edit,
    removes_nodes,
    resolve_task,
    task_spec,
)
from pytest_graphinstruct.verify.tasks import semantics as sem
from pytest_graphinstruct.verify.tasks.minimal import NOT_COMPUTABLE, ByCount, Determined

#: Tasks whose answer is determined by the base (their minimal edit is that answer's size).
DETERMINED = {
    "spanning_tree", "mst", "complement", "transpose", "graph_power", "k_core",
    "extract_subgraph", "prune_tree", "relabel", "edge_contraction", "maximize_planar",
    "make_regular", "complete_bipartite",
}
#: Tasks whose minimum is an edit count in one unit: (unit, has a computed minimum).
BY_COUNT = {
    "make_connected": ("add", True), "make_acyclic": (None, True), "add_edges_dag": ("add", False),
    "break_cycles": ("remove", True), "make_bipartite": ("remove", True),
    "make_planar": ("remove", True), "add_edges_planar": ("add", False),
    "make_eulerian": ("add", True), "make_hamiltonian": ("add", True),
    "increase_connectivity": ("add", True), "reduce_diameter": ("add", False),
    "add_edges": ("add", False), "remove_edges": ("remove", False),
    "split_graph": ("remove", True), "modify_bipartite": ("add", False),
    "graph_transform": ("add", True),
}


def pg(edges: list[tuple[int, int]], directed: bool = False) -> ParsedGraph:
    g: nx.Graph = nx.DiGraph() if directed else nx.Graph()
    g.add_edges_from((str(u), str(v)) for u, v in edges)
    return ParsedGraph(graph=g)


def test_one_frozen_spec_per_task_under_its_own_name() -> None:
    assert len(TASKS) == 30
    for name, spec in TASKS.items():
        assert isinstance(spec, TaskSpec) and spec.name == name == name.strip().lower()
        assert spec.check.__name__ == f"check_{name}"
        assert getattr(sem, spec.check.__name__) is spec.check
    spec = TASKS["k_core"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.removes_nodes = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        TASKS["new_task"] = spec  # type: ignore[index]


def test_minimum_rules_keep_their_kinds() -> None:
    assert {n for n, s in TASKS.items() if isinstance(s.minimum, Determined)} == DETERMINED
    assert TASKS["line_graph"].minimum is NOT_COMPUTABLE
    by_count = {n: s.minimum for n, s in TASKS.items() if isinstance(s.minimum, ByCount)}
    assert set(by_count) == set(BY_COUNT)
    for name, (unit, computed) in BY_COUNT.items():
        rule = by_count[name]
        assert (rule.minimum is not None) is computed, name
        if unit is not None:
            assert rule.unit == unit, name
        else:
            assert callable(rule.unit), name  # make_acyclic: remove or reverse, by the text


def test_derived_sets_come_from_the_specs() -> None:
    assert frozenset(TASKS) == CHECKED_TASKS
    removing = {"k_core", "prune_tree", "extract_subgraph", "edge_contraction", "line_graph",
                "relabel"}
    assert removing == NODE_REMOVING_TASKS
    assert {n for n, s in TASKS.items() if s.removes_nodes} == NODE_REMOVING_TASKS
    assert {n for n, s in TASKS.items() if s.renames_nodes} == {
        "line_graph", "relabel", "edge_contraction"}


def test_one_lookup_for_names_variants_and_unknowns() -> None:
    assert task_spec("k_core") is TASKS["k_core"]
    assert task_spec("  K_Core ") is TASKS["k_core"]
    assert task_spec("add_edges_triangle") is TASKS["add_edges"]
    assert task_spec("remove_edges_random") is TASKS["remove_edges"]
    assert task_spec("add_edges_dag") is TASKS["add_edges_dag"]  # own entry wins
    for unknown in ("rewire_randomly", "add_edgesx", "", None):
        assert task_spec(unknown) is None
    assert resolve_task("Remove_Edges_Random") == "remove_edges"
    assert resolve_task("rewire_randomly") is None
    assert removes_nodes("prune_tree") and removes_nodes(" PRUNE_TREE")
    assert not removes_nodes("complement") and not removes_nodes(None)
    assert not removes_nodes("rewire_randomly")


def test_check_task_and_minimal_edit_dispatch_through_the_spec() -> None:
    c4 = pg([(0, 1), (1, 2), (2, 3), (3, 0)])
    path = pg([(0, 1), (1, 2), (2, 3)])
    text = "Remove the minimum number of edges to produce a spanning tree."
    verdicts = check_task("spanning_tree", base=c4, result=path, explicit=(), text=text)
    assert verdicts and all(v.satisfied for v in verdicts)
    assert all(v.constraint.startswith("task:spanning_tree:") for v in verdicts)
    # the verdict names keep the task type as asked (lower-cased), the spec is the fallback's
    variant = check_task("Remove_Edges_Random", base=c4, result=path, explicit=(),
                         text="Remove exactly 1 edge.")
    assert variant and all(v.key == "task:remove_edges_random" for v in variant)
    assert minimal_edit("spanning_tree", base=c4, explicit=(), text=text) == 1
    # ByCount: a stated count in the task's unit is the edit size; a reversal counts 2
    assert minimal_edit("add_edges", base=c4, explicit=(), text="Add exactly 3 edges.") == 3
    dag = pg([(0, 1), (1, 2), (2, 0)], directed=True)
    rev = "Reverse exactly 1 edge to make the graph acyclic."
    assert minimal_edit("make_acyclic", base=dag, explicit=(), text=rev) == 2
    assert minimal_edit("add_edges", base=c4, explicit=(), text="Add some edges.") is None
    assert minimal_edit("line_graph", base=c4, explicit=(), text="Its line graph.") is None
    assert minimal_edit("rewire_randomly", base=c4, explicit=(), text="") is None
    assert check_task("rewire_randomly", base=c4, result=c4, explicit=(), text="") == ()
