"""A method's chain as a sample: its answer and its charge (run/method_runner.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.answers import Answer, Message, Usage
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.methods.iterative import retry_chain, verifier_grader
from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.run.method_runner import chain_answer, sample_index
from pytest_graphinstruct.suite.loader import instruction_from_record
from pytest_graphinstruct.verify.verifier import Verifier

ROOT = Path(__file__).resolve().parents[2]
TREE4 = ("Graph[name='t', nodes=4] { node_list = ['0','1','2','3']; "
         "edge_list = [('0','1'), ('1','2'), ('1','3')]; }")
WRONG = "Graph[name='w', nodes=2] { node_list = ['0','1']; edge_list = []; }"
PROMPT = (Message("user", "Generate a tree with 4 nodes."),)


def _grade() -> object:
    inst = instruction_from_record({
        "id": "L1-001", "level": 1, "instruction": "Generate a tree with 4 nodes.",
        "explicit_constraints": ["graph_type=tree", "num_nodes=4"], "implicit_constraints": [],
        "graph_sizes": ["small"], "reference_solutions": [TREE4]})
    assert inst is not None
    return verifier_grader(inst, Verifier())


def _scripted(*answers: Answer) -> object:
    queue = list(answers)
    return lambda messages, temperature, call: queue.pop(0)


def test_a_chain_is_charged_every_call() -> None:
    ask = _scripted(Answer(error="HTTP 500", calls=3),
                    Answer(text=WRONG, usage=Usage(10, 4), calls=1),
                    Answer(text=TREE4, usage=Usage(12, 6, "provider"), calls=2))
    answer = chain_answer(retry_chain(PROMPT, ask, _grade(), rounds=3))  # type: ignore[arg-type]
    assert answer.text == TREE4 and answer.calls == 6
    assert answer.usage == Usage(22, 10, "provider")  # failed calls cost calls, not tokens
    assert [s.source for s in answer.steps] == ["round0", "retry1", "retry2"]
    assert [s.kept for s in answer.steps] == [False, False, True]
    assert answer.steps[0].d4 is None and answer.steps[2].passed


def test_unknown_usage_is_never_a_partial_sum() -> None:
    ask = _scripted(Answer(text=WRONG, usage=None), Answer(text=TREE4, usage=Usage(12, 6)))
    answer = chain_answer(retry_chain(PROMPT, ask, _grade(), rounds=3))  # type: ignore[arg-type]
    assert answer.text == TREE4 and answer.usage is None and answer.calls == 2


def test_a_chain_whose_calls_all_failed_is_an_infrastructure_error() -> None:
    ask = _scripted(*(Answer(error="HTTP 503", calls=2) for _ in range(4)))
    answer = chain_answer(retry_chain(PROMPT, ask, _grade(), rounds=3))  # type: ignore[arg-type]
    assert answer.error == "HTTP 503" and answer.calls == 8 and len(answer.steps) == 4


def test_sample_indexes_of_chains_never_collide() -> None:
    assert len({sample_index(k, c) for k in range(5) for c in range(50)}) == 250


def _config(**raw: object) -> object:
    return build_run_config({"model": "m", **raw}, rootdir=ROOT)


def test_method_options_make_cells() -> None:
    run = _config(method="none,vgig,vgig-coarse,retry,sc", vgig_rounds="5", chains="2",
                  feedback="none", constrained=True)
    labels = [c.label for c in run.cells]  # type: ignore[attr-defined]
    assert labels == ["m-zero-shot", "m-zero-shot-constrained", "m-zero-shot-vgig",
                      "m-zero-shot-vgig-coarse", "m-zero-shot-retry", "m-zero-shot-sc"]
    assert (run.vgig_rounds, run.chains, run.feedback) == (5, 2, "none")  # type: ignore[attr-defined]


@pytest.mark.parametrize(("raw", "message"), [
    ({"method": "caap-ish"}, "unknown --gi-method"),
    ({"method": "vgig-verbose"}, "unknown --gi-method"),
    ({"feedback": "loud"}, "--gi-feedback must be"),
    ({"vgig_rounds": "-1"}, "--gi-vgig-rounds must be >= 0"),
    ({"chains": "0"}, "gi_chains must be >= 1"),
])
def test_bad_method_options_are_one_line(raw: dict[str, str], message: str) -> None:
    with pytest.raises(GraphInstructError, match=message):
        _config(**raw)
