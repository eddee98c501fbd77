"""``vgig`` (methods/kinds/vgig.py): a chain runs VGIG with the spec's rounds and feedback, else
the run's, at the run's base temperature; its settings say so."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_graphinstruct.answers import Answer, Message, Usage
from pytest_graphinstruct.methods import iterative
from pytest_graphinstruct.methods.iterative import chain_temperature, verifier_grader
from pytest_graphinstruct.methods.kinds.vgig import VGIG, Vgig
from pytest_graphinstruct.methods.spec import MethodContext, MethodSpec
from pytest_graphinstruct.prompts.texts import PACKAGED
from pytest_graphinstruct.verify.verifier import Verifier
from tests.methods.kinds._tree import CYCLE4, TREE4, tree_instruction

PROMPT = (Message("user", "Generate a tree with 4 nodes."),)


def test_flags() -> None:
    assert VGIG.name == "vgig"
    assert (VGIG.selectable, VGIG.iterative, VGIG.feedback, VGIG.caap, VGIG.constrained) == \
        (True, True, True, False, False)
    own = Vgig("v2", caap=True, feedback=False)
    assert (own.name, own.caap, own.feedback) == ("v2", True, False)


@pytest.mark.parametrize(("spec", "rounds", "feedback"), [
    (MethodSpec("vgig", "vgig"), 3, "fine"),
    (MethodSpec("vgig-coarse@T1", "vgig", "coarse", 1), 1, "coarse"),
    (MethodSpec("vgig@T0", "vgig", None, 0), 0, "fine"),
])
def test_a_chain_takes_the_specs_rounds_and_feedback_else_the_runs(
        monkeypatch: pytest.MonkeyPatch, spec: MethodSpec, rounds: int, feedback: str) -> None:
    seen: dict[str, Any] = {}

    def fake(prompt: Any, ask: Any, grade: Any, **kw: Any) -> str:
        seen.update(kw, prompt=prompt)
        return "chain"

    monkeypatch.setattr(iterative, "vgig_chain", fake)
    context = MethodContext(chains=2, rounds=3, feedback="fine", temperature=None)
    inst = tree_instruction(feasible=False)
    assert VGIG.chain(spec, inst, PROMPT, None, None,  # type: ignore[arg-type]
                      chain=1, context=context) == "chain"
    assert seen == {"prompt": PROMPT, "chain": 1, "feasible": False, "rounds": rounds,
                    "feedback_level": feedback, "temperature": 0.7, "instruction": inst,
                    "templates": PACKAGED}


def test_a_failed_answer_is_refined_with_the_verifiers_feedback() -> None:
    asked: list[tuple[tuple[Message, ...], float]] = []
    script = [CYCLE4, TREE4]

    def ask(messages: tuple[Message, ...], temperature: float, call: int) -> Answer:
        asked.append((messages, temperature))
        return Answer(text=script[call], usage=Usage(10, 5), calls=1)

    inst = tree_instruction()
    context = MethodContext(chains=1, rounds=3, feedback="fine", temperature=0.5)
    result = VGIG.chain(MethodSpec("vgig", "vgig"), inst, PROMPT, ask,
                        verifier_grader(inst, Verifier()), chain=0, context=context)
    assert [c.source for c in result.calls] == ["round0", "round1"]
    assert result.answer.text == TREE4 and result.rounds == 1
    assert asked[0] == (PROMPT, chain_temperature(0.5, 0))
    refinement = asked[1][0]
    assert refinement[: len(PROMPT)] == PROMPT
    assert refinement[len(PROMPT)] == Message("assistant", CYCLE4)
    assert refinement[-1].role == "user" and refinement[-1].content  # the feedback turn


def test_an_infeasible_instruction_keeps_round_zero() -> None:
    calls: list[int] = []

    def ask(messages: tuple[Message, ...], temperature: float, call: int) -> Answer:
        calls.append(call)
        return Answer(text=CYCLE4, usage=Usage(10, 5), calls=1)

    inst = tree_instruction(feasible=False)
    context = MethodContext(chains=1, rounds=3, feedback="fine")
    result = VGIG.chain(MethodSpec("vgig", "vgig"), inst, PROMPT, ask,
                        verifier_grader(inst, Verifier()), chain=0, context=context)
    assert calls == [0] and result.rounds == 0


def test_settings_say_what_a_cell_runs_with() -> None:
    context = MethodContext(chains=3, rounds=2, feedback="none", temperature=0.2,
                            model_tiers=(("m", "T1"),))
    assert VGIG.settings(MethodSpec("vgig-fine@T4", "vgig", "fine", 4), context) == {
        "chains": 3, "rounds": 4, "temperature": 0.2, "feedback": "fine"}
    assert VGIG.settings(MethodSpec("vgig", "vgig"), context) == {
        "chains": 3, "rounds": 2, "temperature": 0.2, "feedback": "none"}
