"""One sample of an iterative method's cell: a chain of :mod:`pytest_graphinstruct.methods.
iterative`, asked through the run's scheduler and graded by the run's verifier and D4.

Every call of a chain is a :class:`~pytest_graphinstruct.models.base.Request` like any other —
same scheduler, cache, rate limit and token budget.  Its cache key holds the whole conversation
and a sample index ``chain·1000 + call`` (:data:`CALLS_PER_CHAIN`), so a rerun after a crash
replays the calls already made and resumes the chain where it stopped.  The chain's answer
carries every call (``Answer.steps``) and is charged all of them: its ``usage`` and ``calls``
are the sums over the chain (the reference release charges only the kept call).
"""

from __future__ import annotations

from dataclasses import replace

from pytest_graphinstruct.answers import Answer, Message, MethodStep, Usage
from pytest_graphinstruct.methods.iterative import (
    DEFAULT_TEMPERATURE,
    Ask,
    ChainResult,
    Grader,
    retry_chain,
    sc_chain,
    vgig_chain,
)
from pytest_graphinstruct.run.config import RunConfig
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.vocab import (
    METHOD_COMBINED,
    METHOD_RETRY,
    METHOD_SC,
    METHOD_VGIG,
    method_parts,
)

CALLS_PER_CHAIN = 1000
"""Sample indexes of chain ``k`` are ``k·CALLS_PER_CHAIN + call`` (a chain makes far fewer)."""


def sample_index(chain: int, call: int) -> int:
    """The request sample index of call ``call`` of chain ``chain``."""
    return chain * CALLS_PER_CHAIN + call


def run_chain(method: str, instruction: Instruction, prompt: tuple[Message, ...], ask: Ask,
              grade: Grader, *, chain: int, config: RunConfig) -> ChainResult:
    """Chain ``chain`` of ``method`` (``vgig[-feedback]``, ``retry``, ``sc``, ``combined``:
    VGIG over the CAAP prompt ``prompt``).

    The rounds ``T`` are :meth:`RunConfig.rounds` of ``method``.  Self-consistency draws
    ``1 + T`` samples per chain: the most calls VGIG or retry
    may make, so the sampling-only controls get the iterative method's budget.

    Raises:
        ValueError: ``method`` is not an iterative method.
    """
    base, level = method_parts(method)
    rounds = config.rounds(method)
    temperature = (config.params.temperature if config.params.temperature is not None
                   else DEFAULT_TEMPERATURE)
    if base in (METHOD_VGIG, METHOD_COMBINED):  # combined: the prompt is CAAP's already
        return vgig_chain(prompt, ask, grade, chain=chain, feasible=instruction.feasible,
                          rounds=rounds, feedback_level=level or config.feedback,
                          temperature=temperature, instruction=instruction)
    if base == METHOD_RETRY:
        return retry_chain(prompt, ask, grade, chain=chain, rounds=rounds,
                           temperature=temperature)
    if base == METHOD_SC:
        return sc_chain(prompt, ask, grade, chain=chain, samples=rounds + 1,
                        temperature=temperature)
    raise ValueError(f"not an iterative method: {method!r}")


def chain_answer(result: ChainResult) -> Answer:
    """The answer of a chain: the kept call's text (or its error, when every call failed),
    charged with every call of the chain."""
    steps = tuple(MethodStep(
        round=c.round, source=c.source, temperature=c.temperature,
        input_tokens=c.answer.usage.input_tokens if c.answer.usage else None,
        output_tokens=c.answer.usage.output_tokens if c.answer.usage else None,
        calls=c.answer.calls, d4=c.grade.d4 if c.grade else None,
        passed=bool(c.grade and c.grade.passed), kept=c.kept) for c in result.calls)
    kept = result.kept_call.answer
    calls = sum(c.answer.calls for c in result.calls)
    if kept.error is not None:
        return Answer(error=kept.error, calls=calls, steps=steps)
    return replace(kept, usage=_summed_usage(result), calls=calls,
                   cached=all(c.answer.cached for c in result.calls), steps=steps)


def _summed_usage(result: ChainResult) -> Usage | None:
    """Token usage over every answered call (failed calls cost calls, not tokens); ``None`` when
    an answered call's usage is unknown — never a partial sum presented as the whole."""
    answered = [c.answer for c in result.calls if c.answer.error is None]
    usages = [a.usage for a in answered]
    if any(u is None or u.input_tokens is None or u.output_tokens is None for u in usages):
        return None
    sources = sorted({u.source for u in usages if u is not None})
    return Usage(sum(u.input_tokens or 0 for u in usages if u is not None),
                 sum(u.output_tokens or 0 for u in usages if u is not None),
                 sources[0] if len(sources) == 1 else "+".join(sources))
