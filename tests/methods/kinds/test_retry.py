"""``retry`` (methods/kinds/retry.py): the sampling-only control — up to ``1 + T`` fresh calls of
the item's prompt at the chain's temperature, stopping at the first that passes."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_graphinstruct.answers import Answer, Message, Usage
from pytest_graphinstruct.methods import iterative
from pytest_graphinstruct.methods.iterative import chain_temperature, verifier_grader
from pytest_graphinstruct.methods.kinds.retry import RETRY
from pytest_graphinstruct.methods.registry import method_of, parse_method
from pytest_graphinstruct.methods.spec import MethodContext, MethodSpec
from pytest_graphinstruct.verify.verifier import Verifier
from tests.methods.kinds._tree import CYCLE4, TREE4, tree_instruction

PROMPT = (Message("system", "s"), Message("user", "Generate a tree with 4 nodes."))


class Scripted:
    """Answers from a script, one entry per call (``None``: a failed call); records calls."""

    def __init__(self, *answers: str | None) -> None:
        self.script = list(answers)
        self.asked: list[tuple[tuple[Message, ...], float, int]] = []

    def __call__(self, messages: tuple[Message, ...], temperature: float, call: int) -> Answer:
        self.asked.append((messages, temperature, call))
        text = self.script[call]
        if text is None:
            return Answer(error="HTTP 500", calls=1)
        return Answer(text=text, usage=Usage(10, 5), calls=1)


def _run(model: Scripted, spec: MethodSpec, *, chain: int = 0,
         temperature: float | None = 0.5) -> iterative.ChainResult:
    inst = tree_instruction()
    context = MethodContext(chains=3, rounds=3, feedback="fine", temperature=temperature)
    return RETRY.chain(spec, inst, PROMPT, model, verifier_grader(inst, Verifier()),
                       chain=chain, context=context)


def test_flags() -> None:
    assert RETRY.name == "retry"
    assert (RETRY.selectable, RETRY.iterative, RETRY.feedback, RETRY.caap,
            RETRY.constrained) == (True, True, False, False, False)
    assert method_of(parse_method("retry@T2")) is RETRY


@pytest.mark.parametrize(("spec", "rounds"), [
    (MethodSpec("retry", "retry"), 3), (MethodSpec("retry@T0", "retry", None, 0), 0),
    (MethodSpec("retry@T7", "retry", None, 7), 7)])
@pytest.mark.parametrize(("temperature", "base"), [(None, 0.7), (0.2, 0.2)])
def test_a_chain_takes_the_specs_rounds_else_the_runs_at_the_base_temperature(
        monkeypatch: pytest.MonkeyPatch, spec: MethodSpec, rounds: int,
        temperature: float | None, base: float) -> None:
    seen: dict[str, Any] = {}

    def fake(prompt: Any, ask: Any, grade: Any, **kw: Any) -> str:
        seen.update(kw, prompt=prompt, ask=ask, grade=grade)
        return "chain"

    monkeypatch.setattr(iterative, "retry_chain", fake)
    context = MethodContext(chains=2, rounds=3, feedback="coarse", temperature=temperature)
    assert RETRY.chain(spec, tree_instruction(), PROMPT, "ask", "grade",  # type: ignore[arg-type]
                       chain=2, context=context) == "chain"
    assert seen == {"prompt": PROMPT, "ask": "ask", "grade": "grade", "chain": 2,
                    "rounds": rounds, "temperature": base}


def test_retry_stops_at_the_first_pass_with_fresh_calls_only() -> None:
    model = Scripted(CYCLE4, None, TREE4, CYCLE4)
    result = _run(model, MethodSpec("retry", "retry"), chain=1)
    assert [c.source for c in result.calls] == ["round0", "retry1", "retry2"]
    assert result.answer.text == TREE4 and result.rounds == 2
    tau = chain_temperature(0.5, 1)
    assert model.asked == [(PROMPT, tau, 0), (PROMPT, tau, 1), (PROMPT, tau, 2)]


def test_a_first_pass_ends_the_chain_at_round_zero() -> None:
    model = Scripted(TREE4, TREE4)
    result = _run(model, MethodSpec("retry", "retry"))
    assert [c.source for c in result.calls] == ["round0"] and result.rounds == 0


def test_at_most_one_plus_t_calls_when_nothing_passes() -> None:
    model = Scripted(*[CYCLE4] * 10)
    result = _run(model, MethodSpec("retry@T4", "retry", None, 4))
    assert len(model.asked) == 5 and result.rounds == 4
    assert result.answer.text == CYCLE4  # the best failing answer is still the chain's answer


def test_a_zero_temperature_run_stays_greedy() -> None:
    model = Scripted(CYCLE4, TREE4)
    _run(model, MethodSpec("retry", "retry"), chain=2, temperature=0.0)
    assert {t for _, t, _ in model.asked} == {0.0}


@pytest.mark.parametrize(("temperature", "base"), [(None, 0.7), (1.1, 1.1)])
def test_settings_are_chains_rounds_and_base_temperature(temperature: float | None,
                                                         base: float) -> None:
    context = MethodContext(chains=4, rounds=2, feedback="fine", temperature=temperature,
                            model_tiers=(("m", "T1"),))
    assert RETRY.settings(MethodSpec("retry", "retry"), context) == {
        "chains": 4, "rounds": 2, "temperature": base}
    assert RETRY.settings(MethodSpec("retry@T5", "retry", None, 5), context)["rounds"] == 5
