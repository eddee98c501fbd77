"""The L5 (graph editing) suite builder: records, references, GraphEdits, stratification,
text ↔ constraint agreement, determinism, the oracle — and the helpers of l5_graphs."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import networkx as nx
import pytest

from pytest_graphinstruct.build.common import as_instruction
from pytest_graphinstruct.build.l5_templates import TEMPLATES
from pytest_graphinstruct.build.level5 import (
    build_level5,
    edge_diff,
    edit_text,
    schedule,
)
from pytest_graphinstruct.graphs.parse import parse_answer, parse_graph
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.run.oracle import OracleBackend
from pytest_graphinstruct.suite.loader import Suite
from pytest_graphinstruct.verify.tasks import CHECKED_TASKS, NODE_REMOVING_TASKS
from pytest_graphinstruct.verify.verdict import Source
from pytest_graphinstruct.verify.verifier import DEFAULT_VERIFIER
from pytest_graphinstruct.vocab import size_bucket
from tests.suite.agreement import disagreements

Record = dict[str, Any]


@pytest.fixture(scope="module")
def suite50() -> list[Record]:
    return build_level5(0, 50)


@pytest.fixture(scope="module")
def suite150() -> list[Record]:
    return build_level5(3, 150)


def _edges(g: nx.Graph) -> set[Any]:
    if g.is_directed():
        return set(g.edges())
    return {frozenset(e) for e in g.edges()}


def _result_size(rec: Record) -> int:
    return parse_graph(rec["reference_solutions"][0]).num_nodes


# ----------------------------------------------------------------------------- shape


def test_count_ids_and_schema(suite50: list[Record]) -> None:
    assert [r["id"] for r in suite50] == [f"L5-{i:03d}" for i in range(1, 51)]
    for r in suite50:
        assert r["level"] == 5 and r["feasible"] is True
        assert r["template"] in TEMPLATES
        assert len(r["reference_solutions"]) == 2 and len(r["graph_edits"]) == 2
        assert parse_graph(r["base_graph"]).name == f"{r['id']}-base"
        steps = r["reasoning_steps"]
        assert [s["step"] for s in steps] == list(range(1, len(steps) + 1))
        assert all(s["type"] and s["description"] for s in steps)
        sv = r["solution_verification"]
        assert isinstance(sv["has_unique_solution"], bool)
        assert sv["verification_method"] and sv["notes"]
        assert any(c.startswith("directed=") for c in r["explicit_constraints"])
        assert any(c.startswith("num_nodes=") for c in r["explicit_constraints"])


def test_every_task_type_is_checked(suite50: list[Record]) -> None:
    tasks = {as_instruction(r).task_type for r in suite50}
    assert tasks <= CHECKED_TASKS
    assert len(tasks) >= 10


def test_base_graphs_are_listed_in_the_text(suite50: list[Record]) -> None:
    pair = re.compile(r"\((\d+),(\d+)(?:,w=(\d+))?\)")
    for r in suite50:
        base = parse_graph(r["base_graph"]).graph
        n = base.number_of_nodes()
        assert sorted(base.nodes(), key=int) == [str(i) for i in range(n)]
        assert not list(nx.isolates(base))
        listing = re.search(r"\[([^\[\]]*)\]", r["instruction"])
        assert listing is not None
        found = pair.findall(listing.group(1))
        listed = {(u, v) if base.is_directed() else frozenset((u, v)) for u, v, _ in found}
        assert listed == _edges(base), r["id"]
        for u, v, w in found:
            assert (w or None) == (str(base.edges[u, v]["weight"])
                                   if "weight" in base.edges[u, v] else None)


# ----------------------------------------------------------------------------- stratification


def test_buckets_of_50(suite50: list[Record]) -> None:
    sizes = Counter(r["graph_sizes"][0] for r in suite50)
    assert sizes == {"small": 17, "medium": 17, "large": 16}
    for r in suite50:
        n = _result_size(r)
        assert size_bucket(n) == r["graph_sizes"][0], r["id"]
        assert n <= 80
        assert f"num_nodes={n}" in r["explicit_constraints"]


def test_every_template_serves_each_of_its_buckets(suite50: list[Record]) -> None:
    seen = {(r["template"], r["graph_sizes"][0]) for r in suite50}
    want = {(t, b) for t, (_, buckets) in TEMPLATES.items() for b in buckets}
    assert seen == want


def test_buckets_of_150(suite150: list[Record]) -> None:
    assert [r["id"] for r in suite150][-1] == "L5-150"
    sizes = Counter(size_bucket(_result_size(r)) for r in suite150)
    assert sizes == {"small": 50, "medium": 50, "large": 50}
    per_template = Counter(r["template"] for r in suite150)
    assert max(per_template.values()) - min(per_template.values()) <= 3
    assert all(disagreements(r) == [] for r in suite150)


@pytest.mark.parametrize("count", [0, 1, 7, 50, 150, 151])
def test_schedule_is_proportional(count: int) -> None:
    sched = schedule(11, count)
    assert len(sched) == count
    sizes = Counter(b for _, b in sched)
    assert max(sizes.values(), default=0) - min(sizes.get(b, 0) for b in
                                                ("small", "medium", "large")) <= 1
    assert all(b in TEMPLATES[t][1] for t, b in sched)


def test_negative_count_is_rejected() -> None:
    with pytest.raises(ValueError):
        build_level5(0, -1)


# ----------------------------------------------------------------------------- verification


def test_references_pass_the_verifier(suite50: list[Record]) -> None:
    for r in suite50:
        inst = as_instruction(r)
        for j, ref in enumerate(r["reference_solutions"], start=1):
            assert parse_graph(ref).name == f"{r['id']}-ref{j}"
            v = DEFAULT_VERIFIER.verify(inst, ref)
            assert v.passed, (r["id"], [x.constraint for x in v.verdicts if not x.satisfied])
            assert any(x.source is Source.TASK for x in v.verdicts), r["id"]


def test_edits_turn_the_base_into_the_reference(suite50: list[Record]) -> None:
    for r in suite50:
        inst = as_instruction(r)
        drop = inst.task_type in NODE_REMOVING_TASKS
        for j, (edit, ref) in enumerate(zip(r["graph_edits"], r["reference_solutions"],
                                            strict=True), start=1):
            assert edit.startswith(f"GraphEdit[name='{r['id']}-edit{j}', base='given-graph'")
            res = parse_answer(edit, base=inst.base, drop_isolated=drop)
            assert res.graph is not None and res.graph.fmt == "edit", r["id"]
            want = parse_graph(ref).graph
            assert set(res.graph.graph.nodes()) == set(want.nodes()), r["id"]
            assert _edges(res.graph.graph) == _edges(want), r["id"]
            assert res.graph.same_graph(parse_graph(ref)), r["id"]
            assert DEFAULT_VERIFIER.verify(inst, edit).passed, r["id"]


def test_reference_pairs(suite50: list[Record]) -> None:
    """Unique answers: the two references coincide; otherwise they are non-isomorphic."""
    for r in suite50:
        a, b = (parse_graph(x).graph for x in r["reference_solutions"])
        if r["solution_verification"]["has_unique_solution"]:
            assert _edges(a) == _edges(b) and set(a) == set(b), r["id"]
        else:
            assert not nx.vf2pp_is_isomorphic(a, b), r["id"]


def test_stated_minimums_and_counts_are_checked(suite50: list[Record]) -> None:
    """Where the text asks for the minimum or an exact edit count, the verifier has a verdict
    on the edit size for these templates (the claim is checked, not just stated)."""
    sized = {"make_connected", "make_acyclic", "break_cycles", "break_triangles",
             "make_bipartite", "make_regular", "prune_tree"}
    checked = 0
    for r in suite50:
        if r["template"] not in sized:
            continue
        v = DEFAULT_VERIFIER.verify(as_instruction(r), r["reference_solutions"][0])
        aspects = [x.constraint.rsplit(":", 1)[-1] for x in v.verdicts if x.source is Source.TASK]
        assert any(a.startswith("minimal_") or a.endswith("_count") for a in aspects), r["id"]
        checked += 1
    assert checked >= 15


def test_wrong_answers_fail(suite50: list[Record]) -> None:
    """The base graph itself answers no instruction (every task changes it)."""
    for r in suite50:
        v = DEFAULT_VERIFIER.verify(as_instruction(r), r["base_graph"])
        assert not v.passed, r["id"]


def test_text_agrees_with_constraints(suite50: list[Record]) -> None:
    for r in suite50:
        assert disagreements(r) == [], r["id"]


def test_implicit_constraints_hold(suite50: list[Record]) -> None:
    for r in suite50:
        if not r["implicit_constraints"]:
            continue
        v = DEFAULT_VERIFIER.verify(as_instruction(r), r["reference_solutions"][1])
        implicit = [x for x in v.verdicts if x.source is Source.IMPLICIT]
        assert len(implicit) == len(r["implicit_constraints"]) and all(
            x.satisfied for x in implicit), r["id"]


def test_deterministic(suite50: list[Record]) -> None:
    assert json.dumps(build_level5(0, 50)) == json.dumps(suite50)
    assert json.dumps(build_level5(1, 4)) != json.dumps(suite50[:4])


def test_oracle_answers_pass(suite50: list[Record]) -> None:
    suite = Suite(tuple(as_instruction(r) for r in suite50))
    oracle = OracleBackend(suite)
    for r in suite50:
        ans = oracle.complete(Request(model="oracle", messages=(), instruction_id=r["id"]))
        assert ans.text == r["graph_edits"][0], r["id"]
        assert DEFAULT_VERIFIER.verify(suite[r["id"]], ans.text).passed


# ----------------------------------------------------------------------------- edit helpers


def test_edge_diff_and_edit_text_round_trip() -> None:
    base = nx.Graph([("0", "1"), ("1", "2"), ("2", "10")])
    result = nx.Graph([("0", "1"), ("2", "10"), ("10", "3")])
    added, removed = edge_diff(base, result)
    assert added == [("3", "10")] and removed == [("1", "2")]
    text = edit_text("e", "modify", added, removed, "swap")
    base_pg = parse_graph(
        "Graph[directed=false] { edge_list = [('0','1'), ('1','2'), ('2','10')]; }")
    pg = parse_answer(text, base=base_pg)
    assert pg.graph is not None
    assert _edges(pg.graph.graph) == _edges(result)
    assert pg.graph.edit is not None and pg.graph.edit.reasoning == "swap"


def test_edge_diff_directed_sees_reversals() -> None:
    base = nx.DiGraph([("0", "1"), ("1", "2")])
    result = nx.DiGraph([("1", "0"), ("1", "2")])
    assert edge_diff(base, result) == ([("1", "0")], [("0", "1")])


def test_long_edit_lists_wrap_and_parse() -> None:
    removed = [(str(i), str(i + 1)) for i in range(40)]
    text = edit_text("e", "remove_edges", [], removed, "path")
    assert max(len(line) for line in text.splitlines()) <= 80
    base = parse_graph("Graph[directed=false] { edge_list = ["
                       + ", ".join(f"('{u}','{v}')" for u, v in removed) + "]; }")
    res = parse_answer(text, base=base)
    assert res.graph is not None and res.graph.num_edges == 0
