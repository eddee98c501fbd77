"""ExemplarPool: what goes in, and the deterministic leave-one-out selection."""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.graphs.model import Outcome
from pytest_graphinstruct.graphs.parse import parse_answer, parse_graph
from pytest_graphinstruct.prompts import (
    DEFAULT_K,
    MAX_EXEMPLAR_CHARS,
    Exemplar,
    ExemplarPool,
)
from pytest_graphinstruct.prompts.exemplars import FALLBACK_OFFSETS, PROVENANCE_KEYS
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.verifier import DEFAULT_VERIFIER
from tests.prompts._factory import graph_text, level_suite, make

PARSE = DEFAULT_VERIFIER.parse  # how a run reads an answer (prompts.exemplars.AnswerParser)

SUITE = level_suite({0: 6, 1: 6, 2: 8, 3: 5}, infeasible={2: 3})
POOL = ExemplarPool.from_suite(SUITE, parse=PARSE)


def ids(exemplars: tuple[Exemplar, ...]) -> list[str]:
    return [e.source_id for e in exemplars]


# --- pool contents ---------------------------------------------------------------------------

def test_pool_has_one_candidate_per_usable_instruction() -> None:
    assert len(POOL) == len(SUITE)
    refusals = [e for e in POOL.exemplars if e.refusal]
    assert {e.source_id for e in refusals} == {i.id for i in SUITE if not i.feasible}
    assert all(e.level == 2 for e in refusals)


def test_feasible_answer_is_the_canonical_first_reference() -> None:
    inst = make("L1-001", constraints=("graph_type=tree", "num_nodes=5"),
                ref=nx.star_graph(4))
    (ex,) = ExemplarPool.from_suite([inst], parse=PARSE).exemplars
    assert ex.answer.startswith("Graph[name='example', directed=false, nodes=5]")
    got, want = parse_graph(ex.answer).graph, parse_graph(inst.references[0]).graph
    assert set(got.edges) == set(want.edges) and set(got.nodes) == set(want.nodes)
    assert ex.instruction_text == inst.text and not ex.refusal and ex.reasoning


def test_provenance_properties_are_dropped_but_attributes_kept() -> None:
    g = nx.path_graph(3)
    g.graph.update(name="path_graph(3)", model="sbm", subgroup="S1", k=2)
    nx.set_node_attributes(g, {0: "A", 1: "B", 2: "C"}, "label")
    (ex,) = ExemplarPool.from_suite([make("L4-001", ref=g)], parse=PARSE).exemplars
    parsed = parse_graph(ex.answer).graph
    assert not set(parsed.graph) & PROVENANCE_KEYS and parsed.graph["k"] == 2
    assert parsed.nodes["1"]["label"] == "B"


def test_unparseable_reference_is_used_verbatim() -> None:
    bad = "Graph[name='x'] { node_list = [0, 1, ...]; }"
    (ex,) = ExemplarPool.from_suite([make("L0-001", ref=bad)], parse=PARSE).exemplars
    assert ex.answer == bad
    assert ex.reasoning is not None and "num_nodes=4" in ex.reasoning


def test_instructions_without_references_are_skipped() -> None:
    inst = make("L0-001")
    inst = dataclasses.replace(inst, references=())
    assert len(ExemplarPool.from_suite([inst], parse=PARSE)) == 0


def test_long_candidates_are_capped() -> None:
    big = make("L1-001", ref=nx.path_graph(300))
    small = make("L1-002")
    long_text = make("L1-003", text="x" * (MAX_EXEMPLAR_CHARS + 1))
    pool = ExemplarPool.from_suite([big, small, long_text], parse=PARSE)
    assert [e.source_id for e in pool.exemplars] == ["L1-002"]
    assert len(ExemplarPool.from_suite([big], max_chars=10**6, parse=PARSE)) == 1
    assert len(ExemplarPool.from_suite([small], max_chars=10, parse=PARSE)) == 0
    with pytest.raises(ValueError):
        ExemplarPool.from_suite([small], max_chars=0, parse=PARSE)


def test_refusal_exemplar_explains_why() -> None:
    inst = make("L2-009", text="Generate a 3-regular graph with 5 nodes.",
                constraints=("degree=3", "num_nodes=5"), feasible=False)
    (ex,) = ExemplarPool.from_suite([inst], parse=PARSE).exemplars
    assert ex.refusal and "3 × 5 = 15" in ex.answer and "odd" in ex.answer
    assert ex.answer.endswith("no such graph exists.")
    assert parse_answer(ex.answer).outcome is Outcome.REFUSAL
    assert ex.reasoning is not None and "3 × 5 = 15" in ex.reasoning
    assert ex.reasoning.startswith("Before building anything")


# --- L5 exemplars ----------------------------------------------------------------------------

def _l5(edit: str, ref: nx.Graph, task: str = "make_connected") -> Instruction:
    base = nx.Graph([(0, 1), (2, 3)])
    return make("L5-001", text="Connect the two pieces.", base=base, ref=ref,
                constraints=("num_nodes=4", "connected=true", f"task_type={task}"),
                edits=(edit,))


def test_l5_uses_the_graph_edit_when_it_reproduces_the_reference() -> None:
    edit = ("GraphEdit[name='e1', base='given-graph'] {\n    add_edges = [('1','2')];\n"
            "    remove_edges = [];\n}")
    inst = _l5(edit, nx.path_graph(4))
    (ex,) = ExemplarPool.from_suite([inst], parse=PARSE).exemplars
    assert ex.answer == edit
    assert ex.instruction_text.startswith("Base graph:\n\nGraph[name='L5-001-base'")
    assert ex.instruction_text.endswith("Task: Connect the two pieces.")
    assert ex.reasoning is not None
    assert "removing 0 and adding 1 edges" in ex.reasoning


def test_l5_falls_back_to_the_full_graph_when_the_edit_disagrees() -> None:
    edit = ("GraphEdit[name='e1', base='given-graph'] {\n    add_edges = [('0','3')];\n"
            "    remove_edges = [];\n}")
    inst = _l5(edit, nx.path_graph(4))
    (ex,) = ExemplarPool.from_suite([inst], parse=PARSE).exemplars
    assert ex.answer.startswith("Graph[name='example'")
    assert ex.reasoning is not None and "written out in full" in ex.reasoning


# --- selection -------------------------------------------------------------------------------

@pytest.mark.parametrize("inst", SUITE, ids=lambda i: i.id)
def test_select_never_returns_the_asked_instruction(inst: Instruction) -> None:
    chosen = POOL.select(inst)
    assert len(chosen) == DEFAULT_K
    assert inst.id not in ids(chosen)
    assert all(e.instruction_text != inst.text for e in chosen)
    assert len(set(ids(chosen))) == DEFAULT_K


def test_same_text_under_another_id_is_excluded() -> None:
    held_out = [make("X0-001", level=0, text="Same words."), make("X0-002", level=0)]
    asked = make("L0-001", text="Same   words.")
    chosen = ExemplarPool.from_suite(held_out, parse=PARSE).select(asked, k=3)
    assert ids(chosen) == ["X0-002"]


def test_same_level_first() -> None:
    for inst in SUITE:
        assert {e.level for e in POOL.select(inst)} == {inst.level}


def test_level_with_infeasible_gets_exactly_one_refusal() -> None:
    for inst in SUITE:
        chosen = POOL.select(inst)
        expected = 1 if inst.level == 2 else 0
        assert sum(e.refusal for e in chosen) == expected, inst.id
        assert sum(e.refusal for e in POOL.select(inst, k=1)) == 0
        if inst.level == 2:
            assert sum(e.refusal for e in POOL.select(inst, k=5)) == 1


def test_refusal_position_varies() -> None:
    positions = {[e.refusal for e in POOL.select(i)].index(True) for i in SUITE if i.level == 2}
    assert len(positions) > 1


def test_fallback_order_plus_one_before_minus_one() -> None:
    assert FALLBACK_OFFSETS == (1, -1, 2, -2)
    suite = level_suite({1: 5, 2: 2, 3: 5})
    pool = ExemplarPool.from_suite(suite, parse=PARSE)
    asked = suite[5]  # L2-001: one other L2 candidate
    assert asked.id == "L2-001"
    chosen = pool.select(asked, k=3)
    assert Counter(e.level for e in chosen) == {2: 1, 3: 2}
    chosen = pool.select(asked, k=8)
    assert Counter(e.level for e in chosen) == {2: 1, 3: 5, 1: 2}
    far = level_suite({0: 3, 4: 3})
    far_pool = ExemplarPool.from_suite(far, parse=PARSE)
    assert Counter(e.level for e in far_pool.select(make("L2-001"))) == {
        4: 3}
    lonely = ExemplarPool.from_suite([make("L0-001")], parse=PARSE)
    assert lonely.select(make("L0-001")) == ()
    assert lonely.select(make("L5-001")) == ()


def test_prefers_same_graph_type_domain_task_type() -> None:
    plain = [make(f"L1-{i:03d}", constraints=("num_nodes=4",)) for i in range(1, 11)]
    trees = [make(f"L1-{i:03d}", constraints=("graph_type=tree", "num_nodes=4"))
             for i in range(11, 13)]
    pool = ExemplarPool.from_suite(plain + trees, parse=PARSE)
    asked = make("L1-100", constraints=("graph_type=tree", "num_nodes=6"))
    for seed in range(5):
        got = ids(pool.select(asked, k=3, seed=seed))
        assert {"L1-011", "L1-012"} <= set(got)
    social = [make(f"L4-{i:03d}", domain="social") for i in range(1, 3)]
    other = [make(f"L4-{i:03d}", domain="citation") for i in range(3, 12)]
    pool = ExemplarPool.from_suite(social + other, parse=PARSE)
    got = ids(pool.select(make("L4-100", domain="social"), k=2, seed=7))
    assert sorted(got) == ["L4-001", "L4-002"]
    tasks = [make(f"L5-{i:03d}", constraints=(f"task_type={t}",))
             for i, t in enumerate(["mst"] * 6 + ["complement", "complement"], 1)]
    got = ids(ExemplarPool.from_suite(tasks, parse=PARSE).select(
        make("L5-100", constraints=("task_type=complement",)), k=2))
    assert sorted(got) == ["L5-007", "L5-008"]


def test_ranking_is_the_documented_hash() -> None:
    suite = level_suite({1: 9})
    pool = ExemplarPool.from_suite(suite, parse=PARSE)
    asked = suite[0]

    def h(cid: str) -> bytes:
        return hashlib.sha256(f"5:{asked.id}:{cid}".encode()).digest()

    expected = sorted((i.id for i in suite[1:]), key=h)[:3]
    assert ids(pool.select(asked, k=3, seed=5)) == expected


def test_seed_changes_selection() -> None:
    asked = SUITE[0]
    picks = {tuple(ids(POOL.select(asked, seed=s))) for s in range(10)}
    assert len(picks) > 1
    assert POOL.select(asked, seed=3) == POOL.select(asked, seed=3)


def test_k_bounds() -> None:
    assert POOL.select(SUITE[0], k=0) == ()
    with pytest.raises(ValueError):
        POOL.select(SUITE[0], k=-1)
    assert len(POOL.select(SUITE[0], k=1)) == 1


def test_exemplar_is_frozen() -> None:
    ex = POOL.exemplars[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ex.answer = "x"  # type: ignore[misc]


@given(
    order=st.permutations(range(len(SUITE))),
    asked=st.lists(st.integers(0, len(SUITE) - 1), min_size=1, max_size=8),
    seed=st.integers(0, 2**32),
    k=st.integers(1, 5),
)
def test_selection_independent_of_pool_order_and_asked_subset(
    order: list[int], asked: list[int], seed: int, k: int
) -> None:
    shuffled = ExemplarPool.from_suite([SUITE[i] for i in order], parse=PARSE)
    # asking a subset, in any order, repeatedly: same answers as the canonical pool
    for i in asked:
        inst = SUITE[i]
        assert shuffled.select(inst, k=k, seed=seed) == POOL.select(inst, k=k, seed=seed)


@given(drop=st.sets(st.integers(0, len(SUITE) - 1), max_size=6), seed=st.integers(0, 99))
def test_removing_unchosen_candidates_keeps_the_selection(drop: set[int], seed: int) -> None:
    asked = SUITE[0]
    chosen = set(ids(POOL.select(asked, seed=seed)))
    keep = [inst for j, inst in enumerate(SUITE) if j not in drop or inst.id in chosen]
    pool = ExemplarPool.from_suite(keep, parse=PARSE)
    assert pool.select(asked, seed=seed) == POOL.select(asked, seed=seed)


def test_graph_text_helper_round_trips() -> None:
    assert parse_graph(graph_text(nx.path_graph(3))).num_edges == 2
