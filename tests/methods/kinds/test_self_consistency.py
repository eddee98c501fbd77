"""``sc``, self-consistency (methods/kinds/self_consistency.py): ``1 + T`` fresh samples per
chain at the chain's temperature, the best kept."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.answers import Answer, Message, Usage
from pytest_graphinstruct.methods.iterative import chain_temperature, verifier_grader
from pytest_graphinstruct.methods.kinds.self_consistency import SELF_CONSISTENCY
from pytest_graphinstruct.methods.spec import MethodContext, MethodSpec
from pytest_graphinstruct.verify.verifier import Verifier
from tests.methods.kinds._tree import TREE4, tree_instruction

PROMPT = (Message("user", "Generate a tree with 4 nodes."),)


def test_flags() -> None:
    assert SELF_CONSISTENCY.name == "sc"
    assert (SELF_CONSISTENCY.selectable, SELF_CONSISTENCY.iterative, SELF_CONSISTENCY.feedback,
            SELF_CONSISTENCY.caap, SELF_CONSISTENCY.constrained) == (True, True, False, False,
                                                                    False)


@pytest.mark.parametrize(("spec", "samples"), [
    (MethodSpec("sc", "sc"), 3), (MethodSpec("sc@T0", "sc", None, 0), 1),
    (MethodSpec("sc@T4", "sc", None, 4), 5)])
def test_a_chain_asks_one_plus_t_samples_and_keeps_the_best(spec: MethodSpec,
                                                            samples: int) -> None:
    asked: list[tuple[float, int]] = []
    answers = ["no graph here", TREE4, "still nothing", "x", "y"]

    def ask(messages: tuple[Message, ...], temperature: float, call: int) -> Answer:
        assert messages == PROMPT  # every sample is a fresh call of the item's prompt
        asked.append((temperature, call))
        return Answer(text=answers[call], usage=Usage(10, 5), calls=1)

    context = MethodContext(chains=3, rounds=2, feedback="fine", temperature=0.5)
    inst = tree_instruction()
    result = SELF_CONSISTENCY.chain(spec, inst, PROMPT, ask, verifier_grader(inst, Verifier()),
                                    chain=2, context=context)
    tau = chain_temperature(0.5, 2)
    assert asked == [(tau, k) for k in range(samples)]
    assert [c.source for c in result.calls] == [f"sample{k}" for k in range(samples)]
    assert result.rounds == 0
    assert result.answer.text == (TREE4 if samples > 1 else "no graph here")


def test_settings_count_the_samples_per_chain() -> None:
    context = MethodContext(chains=4, rounds=2, feedback="fine", temperature=None)
    assert SELF_CONSISTENCY.settings(MethodSpec("sc@T5", "sc", None, 5), context) == {
        "chains": 4, "rounds": 5, "temperature": 0.7, "samples_per_chain": 6}
    assert SELF_CONSISTENCY.settings(MethodSpec("sc", "sc"), context)["samples_per_chain"] == 3
