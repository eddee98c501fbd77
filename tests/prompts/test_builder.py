"""build_messages: roles, per-level system prompts, strategies, L5 base graph, few-shot block."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import networkx as nx
import pytest

from pytest_graphinstruct.answers import Message
from pytest_graphinstruct.graphs.model import Outcome
from pytest_graphinstruct.graphs.parse import parse_answer, parse_graph
from pytest_graphinstruct.prompts import (
    DEFAULT_K,
    MAX_EXEMPLAR_CHARS,
    Exemplar,
    ExemplarPool,
    build_messages,
    check_strategy,
    needs_exemplars,
)
from pytest_graphinstruct.prompts.builder import family, task_text
from pytest_graphinstruct.prompts.texts import PACKAGED
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.verify.tasks import NODE_REMOVING_TASKS
from pytest_graphinstruct.verify.verifier import DEFAULT_VERIFIER
from pytest_graphinstruct.vocab import STRATEGIES
from tests.prompts._factory import make

EXEMPLARS = (
    Exemplar("Build a path on 3 nodes.", "Graph[name='a'] { node_list = [0]; }", "R-one", False,
             "L0-901", 0),
    Exemplar("Build a 3-regular graph on 5 nodes.", "No such graph exists.", "R-two", True,
             "L0-902", 0),
)
BASE_DUPLICATED = (
    "Graph[name='L5-009-base', nodes=8] {\n"
    "    node_list = ['0', '1', '2', '3', '0', '1', '2', '3'];\n"
    "    edge_list = [('0','1'), ('1','2'), ('2','3')];\n}"
)


def by_level() -> dict[int, Instruction]:
    out = {lv: make(f"L{lv}-001", text=f"Level {lv} request.") for lv in range(5)}
    out[4] = make("L4-001", text="Level 4 request.", domain="social")
    out[5] = make("L5-001", text="Make the path a cycle.", base=nx.path_graph(4),
                  constraints=("num_nodes=4", "task_type=graph_transform"))
    return out


LEVEL_INSTRUCTIONS = by_level()


def messages(inst: Instruction, strategy: str, **kw: object) -> tuple[Message, ...]:
    if needs_exemplars(strategy) and "exemplars" not in kw:
        kw["exemplars"] = EXEMPLARS
    return build_messages(inst, strategy, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("level", range(6))
def test_every_prompt_shape(level: int, strategy: str) -> None:
    inst = LEVEL_INSTRUCTIONS[level]
    msgs = messages(inst, strategy)
    assert [m.role for m in msgs] == ["system", "user"]
    assert all(isinstance(m, Message) for m in msgs)
    system, user = msgs[0].content, msgs[1].content
    # format example, completeness rule, infeasibility clause (every level by default)
    assert PACKAGED.render("anti_laziness") in system
    assert PACKAGED.render("infeasibility") in system
    if level == 5:
        assert "GraphEdit[name='edit'" in system and "Graph[name='result'" in system
        assert PACKAGED.render("format_edit") in system
    else:
        assert PACKAGED.render("format_code") in system
    assert (PACKAGED.render("format_attributes") in system) == (level in (3, 4))
    assert "\n\n\n" not in system and system == system.strip()
    # CoT
    cot = strategy.endswith("cot")
    suffix = PACKAGED.render("cot_suffix_edit" if level == 5 else "cot_suffix")
    rule_only = PACKAGED.render("output_only_edit" if level == 5 else "output_only")
    rule_cot = PACKAGED.render("output_reasoned_edit" if level == 5 else "output_reasoned")
    assert (suffix in user) == cot and user.endswith(suffix) == cot
    assert (rule_cot in system) == cot and (rule_only in system) == (not cot)
    # few-shot block
    few = strategy.startswith("few")
    assert (PACKAGED.render("few_shot_header") in user) == few
    assert ("Example 1\n" in user) == few and ("Example 2\n" in user) == few
    assert ("R-one" in user) == (strategy == "few-cot")
    # the task itself
    assert inst.text in user
    if not cot:
        assert user.endswith(inst.text)


def test_l5_user_shows_the_base_graph_then_the_task() -> None:
    inst = LEVEL_INSTRUCTIONS[5]
    user = build_messages(inst, "zero-shot")[1].content
    assert user.startswith("Base graph:\n\nGraph[name='L5-001-base', directed=false, nodes=4]")
    assert "edge_list = [('0','1'), ('1','2'), ('2','3')];" in user
    assert user.endswith("\n\nTask: Make the path a cycle.")
    assert user.index("Base graph:") < user.index("Task:")


def test_l5_base_graph_is_canonical_not_the_quirky_raw_text() -> None:
    inst = make("L5-009", base=BASE_DUPLICATED, text="Close the path.")
    user = build_messages(inst, "zero-shot")[1].content
    assert "nodes=4]" in user and "nodes=8" not in user
    assert user.count("'3'") == 2  # once in node_list, once in edge_list


def test_the_base_graph_is_shown_as_parsed() -> None:
    inst = make("L5-010", text="Do it.")
    raw = "Graph[name='b'] { node_list = [0, 0]; }"  # a quirk of the dataset: a node twice
    inst = replace(inst, base_graph=raw)
    assert task_text(inst) == ("Base graph:\n\nGraph[name='b', directed=false, nodes=1] {\n"
                               "    node_list = ['0'];\n    edge_list = [];\n}\n\nTask: Do it.")
    assert family(inst) == "edit"


def test_families() -> None:
    assert [family(LEVEL_INSTRUCTIONS[lv]) for lv in range(6)] == [
        "default", "default", "default", "attributed", "attributed", "edit"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_infeasibility_levels_can_be_restricted(strategy: str) -> None:
    clause = PACKAGED.render("infeasibility")
    for lv, inst in LEVEL_INSTRUCTIONS.items():
        system, user = (m.content for m in messages(inst, strategy,
                                                    infeasibility_levels=(0, 1, 2)))
        assert (clause in system) == (lv <= 2)
        if strategy.startswith("few"):
            with_note = PACKAGED.render("few_shot_footer_infeasible") in user
            assert with_note == (lv <= 2)
            assert (PACKAGED.render("few_shot_footer") in user) == (lv > 2)
        system = messages(inst, strategy, infeasibility_levels=())[0].content
        assert clause not in system and "\n\n\n" not in system


def test_few_shot_items_in_given_order_with_answers() -> None:
    user = build_messages(LEVEL_INSTRUCTIONS[0], "few-shot", exemplars=EXEMPLARS)[1].content
    one = user.index("Example 1\nInstruction: Build a path on 3 nodes.\nAnswer:\nGraph[name='a']")
    two = user.index("Example 2\nInstruction: Build a 3-regular graph on 5 nodes.\nAnswer:\n"
                     "No such graph exists.")
    assert one < two < user.index(PACKAGED.render("few_shot_footer_infeasible"))
    assert user.index(PACKAGED.render("few_shot_header")) == 0
    assert "R-one" not in user and "Reasoning:" not in user


def test_few_cot_items_show_reasoning() -> None:
    user = build_messages(LEVEL_INSTRUCTIONS[1], "few-cot", exemplars=EXEMPLARS)[1].content
    assert "Instruction: Build a path on 3 nodes.\nReasoning: R-one\nAnswer:\n" in user
    assert "Reasoning: R-two\nAnswer:\nNo such graph exists." in user
    no_reasoning = (Exemplar("Q", "A", None, False),)
    user = build_messages(LEVEL_INSTRUCTIONS[1], "few-cot", exemplars=no_reasoning)[1].content
    assert "Example 1\nInstruction: Q\nAnswer:\nA" in user


def test_unknown_strategy_lists_valid_ones() -> None:
    with pytest.raises(ValueError) as err:
        build_messages(LEVEL_INSTRUCTIONS[0], "one-shot")
    for s in STRATEGIES:
        assert s in str(err.value)
    with pytest.raises(ValueError):
        check_strategy("Zero-Shot")
    with pytest.raises(ValueError):
        needs_exemplars("cot")


def test_exemplar_misuse_is_an_error() -> None:
    with pytest.raises(ValueError, match="takes no exemplars"):
        build_messages(LEVEL_INSTRUCTIONS[0], "zero-shot", exemplars=EXEMPLARS)
    with pytest.raises(ValueError, match="takes no exemplars"):
        build_messages(LEVEL_INSTRUCTIONS[0], "zero-cot", exemplars=EXEMPLARS)
    with pytest.raises(ValueError, match="needs at least one exemplar"):
        build_messages(LEVEL_INSTRUCTIONS[0], "few-shot")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_deterministic(strategy: str) -> None:
    for inst in LEVEL_INSTRUCTIONS.values():
        assert messages(inst, strategy) == messages(inst, strategy)


def test_dollar_signs_in_data_are_left_alone() -> None:
    inst = make("L0-050", text="Use $n nodes and ${x} edges.")
    ex = (Exemplar("Q $a", "A $b", "R $c", False),)
    user = build_messages(inst, "few-cot", exemplars=ex)[1].content
    for s in ("Use $n nodes and ${x} edges.", "Q $a", "A $b", "R $c"):
        assert s in user


def test_zero_shot_prompts_differ_only_where_intended() -> None:
    a = build_messages(LEVEL_INSTRUCTIONS[0], "zero-shot")
    b = build_messages(LEVEL_INSTRUCTIONS[2], "zero-shot")
    assert a[0] == b[0]  # same family, same system message
    c = build_messages(LEVEL_INSTRUCTIONS[3], "zero-shot")
    assert c[0].content != a[0].content


# --- the official suite ----------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.official
def test_official_suite_all_prompts(official_suite_dir: Path) -> None:
    """All 800 × 4 prompts build; exemplars obey the rules; sizes stay bounded."""
    suite = load_suite(official_suite_dir)
    pool = ExemplarPool.from_suite(suite, parse=DEFAULT_VERIFIER.parse)
    assert len(suite) == 800
    count = 0
    for inst in suite:
        chosen = pool.select(inst)
        assert len(chosen) == DEFAULT_K, inst.id
        assert inst.id not in {e.source_id for e in chosen}
        assert {e.level for e in chosen} == {inst.level}, inst.id
        assert sum(e.refusal for e in chosen) == (1 if inst.level == 2 else 0), inst.id
        for strategy in STRATEGIES:
            system, user = build_messages(
                inst, strategy, exemplars=chosen if needs_exemplars(strategy) else ()
            )
            assert system.role == "system" and user.role == "user"
            assert 1000 < len(system.content) < 2500, (inst.id, strategy)
            task = len(task_text(inst))
            budget = task + 1000
            if needs_exemplars(strategy):
                budget += DEFAULT_K * (2 * MAX_EXEMPLAR_CHARS + 1000)
            assert len(user.content) <= budget, (inst.id, strategy)
            assert len(user.content) < 25_000, (inst.id, strategy)
            count += 1
    assert count == 3200


@pytest.mark.official
@pytest.mark.slow
def test_official_exemplar_answers_parse_back(official_suite_dir: Path) -> None:
    """Every exemplar answer reads back as its reference graph (L5: after applying the edit)
    or, for the 9 infeasible L2 instructions, as a refusal."""
    suite = load_suite(official_suite_dir)
    pool = ExemplarPool.from_suite(suite, parse=DEFAULT_VERIFIER.parse)
    assert len(pool) > 700
    for ex in pool.exemplars:
        inst = suite[ex.source_id]
        result = parse_answer(ex.answer, base=inst.base,
                              drop_isolated=inst.task_type in NODE_REMOVING_TASKS)
        if ex.refusal:
            assert result.outcome is Outcome.REFUSAL, ex.source_id
            continue
        assert result.graph is not None, ex.source_id
        ref = parse_graph(inst.references[0]).graph
        got = result.graph.graph
        assert set(got.nodes) == set(ref.nodes), ex.source_id
        edges = (set(got.edges), set(ref.edges)) if ref.is_directed() else (
            {frozenset(e) for e in got.edges}, {frozenset(e) for e in ref.edges})
        assert edges[0] == edges[1], ex.source_id
        assert len(ex.answer) <= MAX_EXEMPLAR_CHARS
        assert len(ex.instruction_text) <= MAX_EXEMPLAR_CHARS
