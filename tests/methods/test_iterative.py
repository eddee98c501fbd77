"""VGIG, retry and self-consistency against a scripted model (methods/iterative.py)."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.answers import Answer, Message, Usage
from pytest_graphinstruct.methods.iterative import (
    ChainResult,
    chain_temperature,
    refine_temperature,
    retry,
    self_consistency,
    verifier_grader,
    vgig,
)
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import instruction_from_record
from pytest_graphinstruct.verify.verifier import Verifier

TREE4 = ("Graph[name='t', nodes=4] { node_list = ['0','1','2','3']; "
         "edge_list = [('0','1'), ('1','2'), ('1','3')]; }")
PATH3 = ("Graph[name='p', nodes=4] { node_list = ['0','1','2','3']; "
         "edge_list = [('0','1'), ('1','2')]; }")  # a forest: 2 components, not a tree
CYCLE4 = ("Graph[name='c', nodes=4] { node_list = ['0','1','2','3']; "
          "edge_list = [('0','1'), ('1','2'), ('2','3'), ('3','0')]; }")
JUNK = "I am not sure."


def _tree_instruction(feasible: bool = True) -> Instruction:
    inst = instruction_from_record({
        "id": "L1-001", "level": 1, "instruction": "Generate a tree with 4 nodes.",
        "explicit_constraints": ["graph_type=tree", "num_nodes=4"],
        "implicit_constraints": ["num_edges=3"], "graph_sizes": ["small"],
        "reference_solutions": [TREE4], "feasible": feasible})
    assert inst is not None
    return inst


class Scripted:
    """A model that answers from a script, one entry per call, and records every call."""

    def __init__(self, *answers: str | None) -> None:
        self.script = list(answers)
        self.calls: list[tuple[tuple[Message, ...], float]] = []
        self.numbers: list[int] = []

    def __call__(self, messages: tuple[Message, ...], temperature: float, call: int) -> Answer:
        self.calls.append((messages, temperature))
        self.numbers.append(call)
        text = self.script.pop(0)
        if text is None:
            return Answer(error="HTTP 500", calls=2)
        return Answer(text=text, usage=Usage(10, len(text) // 4), calls=1)


PROMPT = (Message("system", "s"), Message("user", "Generate a tree with 4 nodes."))


def _grade() -> object:
    return verifier_grader(_tree_instruction(), Verifier())


def _sources(result: ChainResult) -> list[str]:
    return [c.source for c in result.calls]


def test_temperature_schedule() -> None:
    assert [chain_temperature(0.7, k) for k in range(6)] == [0.6, 0.7, 0.8, 0.65, 0.75, 0.6]
    assert chain_temperature(0.05, 0) == 0.1 and chain_temperature(1.5, 2) == 1.5
    assert chain_temperature(0.0, 2) == 0.0 and refine_temperature(0.0) == 0.0
    assert refine_temperature(0.7) == pytest.approx(0.42) and refine_temperature(0.2) == 0.2


def test_vgig_stops_early_when_round_zero_passes() -> None:
    model = Scripted(TREE4)
    [chain] = vgig(PROMPT, model, _grade(), chains=1, rounds=3)  # type: ignore[arg-type]
    assert _sources(chain) == ["round0"] and chain.rounds == 0 and chain.answer.text == TREE4


def test_vgig_refines_with_feedback_and_keeps_strict_improvements() -> None:
    model = Scripted(CYCLE4, CYCLE4, PATH3, TREE4)
    [chain] = vgig(PROMPT, model, _grade(), chains=1, rounds=3,  # type: ignore[arg-type]
                   feedback_level="fine", temperature=0.7)
    assert _sources(chain) == ["round0", "round1", "round2", "round3"]
    assert chain.answer.text == TREE4 and chain.kept_call.source == "round3"
    # refinements show the previous best answer and the verifier's feedback, at 0.6 * 0.6
    messages, temperature = model.calls[1]
    assert temperature == pytest.approx(0.36)
    assert messages[:2] == PROMPT and messages[2] == Message("assistant", CYCLE4)
    assert "graph_type=tree" in messages[3].content and "Round 1" in messages[3].content
    # the second refinement (CYCLE4 again: not strictly better) still refines the round-0 best
    assert model.calls[2][0][2] == Message("assistant", CYCLE4)


def test_vgig_parse_failures_ask_afresh_and_two_in_a_row_end_the_chain() -> None:
    model = Scripted(JUNK, JUNK, TREE4)
    [chain] = vgig(PROMPT, model, _grade(), chains=1, rounds=3)  # type: ignore[arg-type]
    assert _sources(chain) == ["round0", "retry1"]  # the second failure ends it
    assert model.calls[1] == (PROMPT, 0.6)  # the original prompt at the chain temperature
    again = Scripted(JUNK, CYCLE4, TREE4)
    [chain] = vgig(PROMPT, again, _grade(), chains=1, rounds=3)  # type: ignore[arg-type]
    assert _sources(chain) == ["round0", "retry1", "round2"] and chain.answer.text == TREE4


def test_vgig_keeps_round_zero_for_an_infeasible_instruction() -> None:
    model = Scripted(CYCLE4)
    [chain] = vgig(PROMPT, model, _grade(), feasible=False, chains=1,  # type: ignore[arg-type]
                   rounds=3)
    assert _sources(chain) == ["round0"]


def test_vgig_chains_use_their_temperatures_and_every_call_is_returned() -> None:
    model = Scripted(CYCLE4, TREE4, TREE4, CYCLE4, CYCLE4, CYCLE4, CYCLE4)
    chains = vgig(PROMPT, model, _grade(), chains=3, rounds=2)  # type: ignore[arg-type]
    assert [_sources(c) for c in chains] == [["round0", "round1"], ["round0"],
                                            ["round0", "round1", "round2"]]
    assert [c.calls[0].temperature for c in chains] == [0.6, 0.7, 0.8]
    # accounting: the calls the chains report are exactly the calls the model served
    assert sum(len(c.calls) for c in chains) == len(model.calls) == 6
    assert sum(c.answer.calls for ch in chains for c in ch.calls) == 6


def test_a_failed_call_is_charged_and_never_kept() -> None:
    model = Scripted(None, CYCLE4, TREE4)
    [chain] = retry(PROMPT, model, _grade(), chains=1, rounds=3)  # type: ignore[arg-type]
    assert _sources(chain) == ["round0", "retry1", "retry2"]
    assert model.numbers == [0, 1, 2]  # identical requests of a chain stay distinct
    assert chain.calls[0].grade is None and chain.calls[0].answer.calls == 2
    assert chain.answer.text == TREE4


def test_retry_stops_at_the_first_pass_and_never_gives_feedback() -> None:
    model = Scripted(CYCLE4, TREE4, CYCLE4)
    [chain] = retry(PROMPT, model, _grade(), chains=1, rounds=3)  # type: ignore[arg-type]
    assert _sources(chain) == ["round0", "retry1"] and chain.answer.text == TREE4
    assert all(messages == PROMPT for messages, _ in model.calls)


def test_self_consistency_keeps_the_best_of_n() -> None:
    model = Scripted(JUNK, CYCLE4, PATH3)
    [chain] = self_consistency(PROMPT, model, _grade(), chains=1,  # type: ignore[arg-type]
                               samples=3)
    assert len(chain.calls) == 3
    # PATH3 (forest) and CYCLE4 both parse and fail; the better D4 wins, JUNK never does
    assert chain.answer.text in (CYCLE4, PATH3) and chain.kept_call.grade is not None
    kept = chain.kept_call.grade.d4
    assert kept == max(c.grade.d4 for c in chain.calls if c.grade is not None)


@pytest.mark.parametrize("bad", [{"chains": 0}, {"rounds": -1}])
def test_bad_settings_are_rejected(bad: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        vgig(PROMPT, Scripted(), _grade(), **bad)  # type: ignore[arg-type]




def test_the_grade_of_an_l4_candidate_is_the_d4_the_run_scores_with_pools() -> None:
    import networkx as nx

    from pytest_graphinstruct.pools import Pool, PoolGraph, ReferencePools
    from pytest_graphinstruct.score.instruction_score import pool_profiles, score_instruction

    social = [PoolGraph(f"s{i}", nx.relabel_nodes(nx.barabasi_albert_graph(12, 3, seed=i), str),
                        "social") for i in range(25)]
    pools = ReferencePools({4: Pool.from_graphs(social)})
    inst = instruction_from_record({
        "id": "L4-001", "level": 4, "instruction": "A social network of 12 people.",
        "explicit_constraints": ["num_nodes=12"], "implicit_constraints": [],
        "domain": "social", "graph_sizes": ["small"], "reference_solutions": []})
    assert inst is not None
    ring = ("Graph[name='r', nodes=12] { node_list = [" + ", ".join(f"'{i}'" for i in range(12))
            + "]; edge_list = [" + ", ".join(f"('{i}','{(i + 1) % 12}')" for i in range(12))
            + "]; }")
    answer = Answer(text=ring, usage=Usage(10, 10), calls=1)
    scored = score_instruction(inst, [answer], [Verifier().verify(inst, ring)], pools)
    with_pools = verifier_grader(inst, Verifier(), pool_profiles(inst, pools))(answer)
    without = verifier_grader(inst, Verifier())(answer)
    assert with_pools.d4 == pytest.approx(scored.dimensions["D4"], abs=1e-12)
    # without the pools the domain-fit term is dropped and the rest renormalised: another number
    assert without.d4 != pytest.approx(with_pools.d4, abs=1e-6)
