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
from pytest_graphinstruct.methods.iterative import Ask, ChainResult, Grader, chain_temperature
from pytest_graphinstruct.methods.kinds.base_temperature import base_temperature
from pytest_graphinstruct.methods.registry import method_of, parse_method
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.run.config import RunConfig
from pytest_graphinstruct.suite.instruction import Instruction

CALLS_PER_CHAIN = 1000
"""Sample indexes of chain ``k`` are ``k·CALLS_PER_CHAIN + call`` (a chain makes far fewer)."""


def sample_index(chain: int, call: int) -> int:
    """The request sample index of call ``call`` of chain ``chain``."""
    return chain * CALLS_PER_CHAIN + call


def first_call(request: Request, chain: int, config: RunConfig) -> Request:
    """The first call of chain ``chain`` of an iterative cell whose plain request is
    ``request``, as the chain asks it: the same messages at the chain's sample index and at
    the chain's temperature around the run's base temperature (every iterative method starts
    there; its follow-up calls depend on the answers).  Not the plain cell's sample ``chain``:
    that one is asked at the run's temperature and index, so the two are not one request."""
    tau = chain_temperature(base_temperature(config.method_context), chain)
    return replace(request, sample_index=sample_index(chain, 0),
                   params=replace(request.params, temperature=tau))


def run_chain(method: str, instruction: Instruction, prompt: tuple[Message, ...], ask: Ask,
              grade: Grader, *, chain: int, config: RunConfig) -> ChainResult:
    """Chain ``chain`` of ``method`` (``vgig[-feedback]``, ``retry``, ``sc``, ``combined``:
    VGIG over the CAAP prompt ``prompt``), run by the registry's method
    (:meth:`~pytest_graphinstruct.methods.protocol.Method.chain`) with the run's
    :attr:`RunConfig.method_context`.

    Raises:
        ValueError: ``method`` is not an iterative method.
    """
    spec = parse_method(method, internal=True)
    return method_of(spec).chain(spec, instruction, prompt, ask, grade, chain=chain,
                                 context=config.method_context)


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
        return Answer(error=kept.error, calls=calls, steps=steps, failure_kind=kept.failure_kind)
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
