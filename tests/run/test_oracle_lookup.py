"""OracleLookup: the instruction a chat prompt asks, found from the prompt's text, and the
oracle's answer to it (what the serve-oracle endpoint answers)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_graphinstruct.prompts.builder import base_graph_text, build_messages
from pytest_graphinstruct.prompts.exemplars import ExemplarPool
from pytest_graphinstruct.run import oracle_lookup
from pytest_graphinstruct.run.oracle import REFUSAL
from pytest_graphinstruct.run.oracle_lookup import OracleLookup, message_texts
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import Suite, instruction_from_record
from pytest_graphinstruct.verify.verifier import Verifier

PATH3 = ("Graph[name='p', nodes=3] {\n    node_list = ['0', '1', '2'];\n"
         "    edge_list = [('0','1'), ('1','2')];\n}")
TRIANGLE = ("Graph[name='t', nodes=3] {\n    node_list = ['0', '1', '2'];\n"
            "    edge_list = [('0','1'), ('0','2'), ('1','2')];\n}")
STAR4 = ("Graph[name='s', nodes=4] {\n    node_list = ['0', '1', '2', '3'];\n"
         "    edge_list = [('0','1'), ('0','2'), ('0','3')];\n}")
BASE_A = ("Graph[name='a', nodes=3] {\n    node_list = ['0', '1', '2'];\n"
          "    edge_list = [('0','1'), ('1','2'), ('0','2')];\n}")
BASE_B = ("Graph[name='b', nodes=4] {\n    node_list = ['0', '1', '2', '3'];\n"
          "    edge_list = [('0','1'), ('1','2'), ('2','3'), ('0','2'), ('1','3')];\n}")
ONE_OFF_A = ("Graph[name='a2', nodes=3] {\n    node_list = ['0', '1', '2'];\n"
             "    edge_list = [('0','1'), ('1','2')];\n}")
ONE_OFF_B = ("Graph[name='b2', nodes=4] {\n    node_list = ['0', '1', '2', '3'];\n"
             "    edge_list = [('0','1'), ('1','2'), ('2','3')];\n}")

RECORDS: list[dict[str, Any]] = [
    {"id": "L0-001", "level": 0, "instruction": "Create a graph with 3 nodes and 2 edges.",
     "explicit_constraints": ["num_nodes=3", "num_edges=2"], "reference_solutions": [PATH3]},
    # its text holds L0-001's whole text: found only when it is the one asked
    {"id": "L0-002", "level": 0,
     "instruction": "Create a graph with 3 nodes and 2 edges. Make it a path.",
     "explicit_constraints": ["num_nodes=3", "num_edges=2"], "reference_solutions": [PATH3]},
    # quoted exactly as L0-004: one prompt, one answer; L0-003's reference (a path) fails
    # both, L0-004's (a triangle) passes both
    {"id": "L0-003", "level": 0, "instruction": "A graph with 3 nodes and 3 edges.",
     "explicit_constraints": ["num_nodes=3", "num_edges=3"], "reference_solutions": [PATH3]},
    {"id": "L0-004", "level": 0, "instruction": "A graph with 3 nodes and 3 edges.",
     "explicit_constraints": ["num_nodes=3", "num_edges=3"],
     "reference_solutions": [TRIANGLE]},
    {"id": "L1-001", "level": 1, "instruction": "Generate a star with 4 nodes.",
     "explicit_constraints": ["graph_type=star", "num_nodes=4"], "reference_solutions": [STAR4]},
    {"id": "L2-001", "level": 2, "instruction": "A 3-regular graph with 5 nodes.",
     "explicit_constraints": ["degree=3", "num_nodes=5"], "reference_solutions": [],
     "feasible": False},
    # two edits worded alike: their base graphs tell them apart
    {"id": "L5-001", "level": 5, "instruction": "Remove edges so that the graph is a path.",
     "explicit_constraints": ["task_type=remove_edges"], "base_graph": BASE_A,
     "reference_solutions": [ONE_OFF_A]},
    {"id": "L5-002", "level": 5, "instruction": "Remove edges so that the graph is a path.",
     "explicit_constraints": ["task_type=remove_edges"], "base_graph": BASE_B,
     "reference_solutions": [ONE_OFF_B]},
    {"id": "L5-003", "level": 5, "instruction": "Delete edges until the graph is a path.",
     "explicit_constraints": ["task_type=remove_edges"], "base_graph": BASE_B,
     "reference_solutions": [ONE_OFF_B]},
]
STRATEGIES = ("zero-shot", "few-shot", "zero-cot", "few-cot")


@pytest.fixture(scope="module")
def suite() -> Suite:
    return Suite(tuple(instruction_from_record(r) for r in RECORDS))


@pytest.fixture(scope="module")
def lookup(suite: Suite) -> OracleLookup:
    return OracleLookup(suite)


def _messages(inst: Instruction, strategy: str, suite: Suite) -> list[dict[str, str]]:
    pool = ExemplarPool.from_suite(suite, parse=Verifier().parse)
    exemplars = pool.select(inst, k=3) if strategy.startswith("few") else ()
    return [m.to_json() for m in build_messages(inst, strategy, exemplars=exemplars)]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_instruction_is_found_under_every_strategy(strategy: str, suite: Suite,
                                                         lookup: OracleLookup) -> None:
    verifier = Verifier()
    for inst in suite:
        asked = lookup.find(_messages(inst, strategy, suite))
        assert asked is not None, inst.id
        assert inst.id in asked.instruction_ids, (inst.id, asked.instruction_ids)
        assert asked.answer.text is not None
        assert verifier.verify(inst, asked.answer.text).passed, inst.id


def test_a_few_shot_prompt_quoting_another_instruction_is_the_last_one_asked(
        suite: Suite, lookup: OracleLookup) -> None:
    """An exemplar quotes another instruction of the suite; the task comes after it."""
    a, b = suite["L0-001"], suite["L1-001"]
    text = (f"Worked examples:\n\nInstruction: {b.text}\nAnswer:\n{STAR4}\n\n"
            f"Now answer the following request.\n\n{a.text}\n\nThink step by step.")
    asked = lookup.find([{"role": "user", "content": text}])
    assert asked is not None and asked.instruction_ids == ("L0-001",)
    swapped = text.replace(a.text, "@").replace(b.text, a.text).replace("@", b.text)
    asked = lookup.find([{"role": "user", "content": swapped}])
    assert asked is not None and asked.instruction_ids == ("L1-001",)


def test_a_text_inside_a_longer_one_is_not_taken_for_it(lookup: OracleLookup) -> None:
    asked = lookup.find([{"role": "user", "content":
                          "Create a graph with 3 nodes and 2 edges. Make it a path."}])
    assert asked is not None and asked.instruction_ids == ("L0-002",)


def test_edits_worded_alike_are_told_apart_by_their_base_graphs(
        suite: Suite, lookup: OracleLookup) -> None:
    for inst_id, answer in (("L5-001", ONE_OFF_A), ("L5-002", ONE_OFF_B)):
        for strategy in STRATEGIES:
            asked = lookup.find(_messages(suite[inst_id], strategy, suite))
            assert asked is not None and asked.instruction_ids == (inst_id,), strategy
            assert asked.answer.text == answer
    # the wording alone, without either base graph, asks neither
    assert lookup.find([{"role": "user",
                         "content": "Remove edges so that the graph is a path."}]) is None
    # the nearer base graph wins when a prompt shows both (an exemplar's, then the task's)
    base_a, base_b = base_graph_text(suite["L5-001"]), base_graph_text(suite["L5-002"])
    both = (f"Base graph:\n\n{base_a}\n\nTask: Remove edges so that the graph is a path.\n\n"
            f"Base graph:\n\n{base_b}\n\nTask: Remove edges so that the graph is a path.")
    asked = lookup.find([{"role": "user", "content": both}])
    assert asked is not None and asked.instruction_ids == ("L5-002",)


def test_instructions_quoted_alike_get_one_answer_that_passes_both(
        suite: Suite, lookup: OracleLookup) -> None:
    asked = lookup.find(_messages(suite["L0-003"], "zero-shot", suite))
    assert asked is not None and asked.instruction_ids == ("L0-003", "L0-004")
    assert ("L0-003", "L0-004") in lookup.shared
    assert asked.answer.text is not None
    for inst_id in asked.instruction_ids:  # L0-003's own reference fails; L0-004's passes both
        assert Verifier().verify(suite[inst_id], asked.answer.text).passed
    assert len(lookup) == len(RECORDS) - 1


def test_an_infeasible_instruction_gets_the_oracles_refusal(suite: Suite,
                                                           lookup: OracleLookup) -> None:
    asked = lookup.find(_messages(suite["L2-001"], "few-cot", suite))
    assert asked is not None and asked.answer.text == REFUSAL
    assert lookup.unanswered == ()


def test_a_follow_up_turn_is_found_by_the_first_user_message(suite: Suite,
                                                             lookup: OracleLookup) -> None:
    first = _messages(suite["L1-001"], "zero-shot", suite)
    turns = [*first, {"role": "assistant", "content": PATH3},
             {"role": "user", "content": "Your previous graph does not satisfy every "
                                         "constraint of the instruction. Try again."}]
    asked = lookup.find(turns)
    assert asked is not None and asked.instruction_ids == ("L1-001",)


def test_text_parts_count_and_anything_else_is_ignored(suite: Suite,
                                                       lookup: OracleLookup) -> None:
    text = suite["L1-001"].text
    parts = [{"role": "user", "content": [{"type": "text", "text": "Please:"},
                                          {"type": "text", "text": text},
                                          {"type": "image_url", "image_url": {"url": text}}]}]
    asked = lookup.find(parts)
    assert asked is not None and asked.instruction_ids == ("L1-001",)
    # the instruction quoted by a system or assistant message only asks nothing
    for role in ("system", "assistant"):
        assert lookup.find([{"role": role, "content": text}]) is None


@pytest.mark.parametrize("messages", [
    None, "Generate a star with 4 nodes.", 7, {"role": "user"}, [None, 3, "x"],
    [{"role": "user", "content": None}], [{"role": "user", "content": 5}],
    [{"role": "user", "content": [1, None, {"text": 3}]}], [{"role": 1, "content": "hi"}],
    [{"role": "user", "content": "Tell me a joke."}], [],
    [{"role": "user", "content": "\ud800\x00\u202e"}],
])
def test_an_unknown_or_malformed_prompt_is_none(messages: object,
                                                lookup: OracleLookup) -> None:
    assert lookup.find(messages) is None


def test_message_texts_reads_only_text() -> None:
    assert message_texts([{"role": "user", "content": "a"}, {"role": "system", "content": "b"},
                          {"role": "user", "content": [{"text": "c"}, {"text": "d"}]},
                          "junk"], role="user") == ["a", "c\nd"]
    assert message_texts({"messages": []}) == []


def test_found_prompts_are_remembered_within_a_bound(suite: Suite,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    lookup = OracleLookup(suite)
    monkeypatch.setattr(oracle_lookup, "REMEMBERED", 2)
    prompts = [_messages(suite[i], "zero-shot", suite) for i in ("L0-001", "L1-001", "L2-001")]
    first = lookup.find(prompts[0])
    assert lookup.find(prompts[0]) is first
    for p in prompts:
        lookup.find(p)
        lookup.find([{"role": "user", "content": f"unknown {len(p)}"}])
    assert len(lookup._seen) == 2


def test_no_answer_is_said_per_instruction() -> None:
    """A feasible instruction without a reference the oracle can make pass has no answer."""
    suite = Suite((instruction_from_record(
        {"id": "L5-009", "level": 5, "instruction": "Remove one edge.",
         "explicit_constraints": ["task_type=remove_edges"], "base_graph": BASE_A,
         "reference_solutions": []}),))
    lookup = OracleLookup(suite)
    assert lookup.unanswered == ("L5-009",)
    base = base_graph_text(suite["L5-009"])
    asked = lookup.find([{"role": "user", "content": f"Base graph:\n\n{base}\n\nTask: "
                                                     "Remove one edge."}])
    assert asked is not None and asked.answer.error is not None
