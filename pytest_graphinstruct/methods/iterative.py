"""Methods that make several calls per answer: VGIG, retry and self-consistency.

Each method turns one item into ``chains`` kept answers by calling ``ask(messages, temperature)``
(the run's scheduler: same cache, rate limit and token budget as any request) and grading every
candidate with ``grade(answer)`` — the run's verifier and D4, so a method optimises exactly what
is scored.  Every call is returned as a :class:`Call`, the discarded ones too: a method's cost is
all of them (the reference release charges only the call that produced the kept answer).

**VGIG** (paper App. E, Alg. 1; release §4.2), per chain ``k``:

* temperature ``τ_k = clip(τ + δ_k, 0.1, 1.5)`` with ``δ`` cycling over
  :data:`CHAIN_OFFSETS` (``τ = 0`` stays 0: greedy decoding is not jittered); refinements at
  ``max(0.2, 0.6·τ_k)`` (0 stays 0);
* round 0 asks the item's prompt; an infeasible instruction keeps round 0;
* rounds ``1..T``: stop when the best candidate passes; when the best did not parse, ask the
  round-0 prompt again (a fresh generation) — two parse failures in a row end the chain; else
  ask a refinement (the prompt, the previous answer, the feedback of :mod:`.feedback`) — empty
  feedback ends the chain; a candidate replaces the best only if its grade is strictly higher.

**Retry** (the sampling-only control): up to ``1 + T`` fresh calls of the item's prompt at
``τ_k``, stopping at the first that passes; the best is kept.  **Self-consistency**: ``n`` fresh
calls, the best kept.  Both use the same chains and temperatures as VGIG.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytest_graphinstruct.answers import Answer, Message
from pytest_graphinstruct.methods.feedback import feedback
from pytest_graphinstruct.prompts.texts import PACKAGED, TemplateSet
from pytest_graphinstruct.score.d4 import instruction_d4
from pytest_graphinstruct.score.domain_fit import DomainProfile
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.verdict import Verification
from pytest_graphinstruct.verify.verifier import Verifier
from pytest_graphinstruct.vocab import FeedbackLevel

CHAIN_OFFSETS: tuple[float, ...] = (-0.10, 0.0, 0.10, -0.05, 0.05)
"""Per-chain temperature offsets, cycling (paper App. E)."""

MIN_TEMPERATURE, MAX_TEMPERATURE = 0.1, 1.5
MIN_REFINE_TEMPERATURE, REFINE_FACTOR = 0.2, 0.6
DEFAULT_TEMPERATURE = 0.7
"""The base temperature of methods when the run sets none (paper, release)."""

Ask = Callable[[tuple[Message, ...], float, int], Answer]
"""``ask(messages, temperature, call) -> Answer``: one model call; ``call`` numbers the chain's
calls from 0 (so two identical requests of one chain, e.g. retries, stay distinct)."""


@dataclass(frozen=True)
class Grade:
    """How good one candidate is, in the order :meth:`key` compares: it passes every check,
    it parsed, its D4 (the scorer's, over this one sample)."""

    verification: Verification
    passed: bool
    d4: float

    def key(self) -> tuple[bool, bool, float]:
        return (self.passed, self.verification.parse.parsed, self.d4)


Grader = Callable[[Answer], Grade]


def verifier_grader(instruction: Instruction, verifier: Verifier,
                    pool: Sequence[DomainProfile] = ()) -> Grader:
    """Grade answers to ``instruction`` with the run's verifier and D4 (what is scored).

    ``pool``: the run's L4 domain-fit yardsticks for this instruction
    (:func:`~pytest_graphinstruct.score.instruction_score.pool_profiles`); without them an L4
    candidate's domain fit is measured against the instruction's references only, which is not
    what a run with pools scores.
    """
    profiles = tuple(pool)

    def grade(answer: Answer) -> Grade:
        v = verifier.verify(instruction, answer.text or "")
        return Grade(v, v.passed, instruction_d4(instruction, [v], profiles))

    return grade


@dataclass(frozen=True)
class Call:
    """One model call a method made.  ``source`` is ``round0``, ``retry<t>`` (a fresh
    generation after a parse failure, or a retry), ``round<t>`` (a refinement) or
    ``sample<i>``; ``kept`` is true for the call whose answer the chain kept."""

    chain: int
    round: int
    source: str
    temperature: float
    answer: Answer
    grade: Grade | None  # None: the call failed (no answer to grade)
    kept: bool = False


@dataclass(frozen=True)
class ChainResult:
    """One chain: the kept answer, every call made (in order) and the rounds used."""

    answer: Answer
    calls: tuple[Call, ...]
    rounds: int

    @property
    def kept_call(self) -> Call:
        return next(c for c in self.calls if c.kept)


def chain_temperature(base: float, chain: int) -> float:
    """``τ_k`` of chain ``chain`` (0-based) around ``base``."""
    if base == 0:
        return 0.0
    t = base + CHAIN_OFFSETS[chain % len(CHAIN_OFFSETS)]
    return round(min(MAX_TEMPERATURE, max(MIN_TEMPERATURE, t)), 6)


def refine_temperature(chain_temp: float) -> float:
    """The refinement temperature of a chain at ``chain_temp``."""
    if chain_temp == 0:
        return 0.0
    return round(max(MIN_REFINE_TEMPERATURE, REFINE_FACTOR * chain_temp), 6)


def refinement_messages(prompt: Sequence[Message], previous: str, notes: str,
                        round_no: int, templates: TemplateSet = PACKAGED
                        ) -> tuple[Message, ...]:
    """The conversation of a refinement round: the item's prompt, the previous answer as the
    assistant's turn, then the verifier's feedback as the user's next turn (worded by
    ``templates``, the run's prompt texts)."""
    return (*prompt, Message("assistant", previous),
            Message("user", templates.render_section("feedback", "refinement", round=round_no,
                                                     notes=notes)))


class _Chain:
    """Bookkeeping of one chain: its calls and its best candidate."""

    def __init__(self, index: int, ask: Ask, grade: Grader) -> None:
        self.index, self._ask, self._grade = index, ask, grade
        self.calls: list[Call] = []
        self.best: int | None = None  # index into calls

    def call(self, messages: tuple[Message, ...], temperature: float, round_no: int,
             source: str) -> Call:
        answer = self._ask(messages, temperature, len(self.calls))
        grade = self._grade(answer) if answer.error is None else None
        c = Call(self.index, round_no, source, temperature, answer, grade)
        self.calls.append(c)
        if grade is not None and (self.best is None or grade.key() > self._best_key()):
            self.best = len(self.calls) - 1
        return c

    def _best_key(self) -> tuple[bool, bool, float]:
        best = self.calls[self.best] if self.best is not None else None
        assert best is not None and best.grade is not None
        return best.grade.key()

    @property
    def best_grade(self) -> Grade | None:
        return None if self.best is None else self.calls[self.best].grade

    def result(self, rounds: int) -> ChainResult:
        keep = self.best if self.best is not None else len(self.calls) - 1
        calls = tuple(Call(c.chain, c.round, c.source, c.temperature, c.answer, c.grade,
                           kept=(i == keep)) for i, c in enumerate(self.calls))
        return ChainResult(calls[keep].answer, calls, rounds)


def vgig_chain(prompt: Sequence[Message], ask: Ask, grade: Grader, *, chain: int = 0,
               feasible: bool = True, rounds: int = 3, feedback_level: FeedbackLevel = "fine",
               temperature: float = DEFAULT_TEMPERATURE,
               instruction: Instruction | None = None,
               templates: TemplateSet = PACKAGED) -> ChainResult:
    """Chain ``chain`` of verification-guided iterative generation (module docstring);
    ``instruction`` lets fine feedback compare an L4 answer with its domain's prior;
    ``templates`` (the run's prompt texts) word the feedback and the refinement turn."""
    if rounds < 0 or chain < 0:
        raise ValueError("vgig needs chain >= 0 and rounds >= 0")
    prompt = tuple(prompt)
    tau = chain_temperature(temperature, chain)
    run = _Chain(chain, ask, grade)
    run.call(prompt, tau, 0, "round0")
    used = 0
    parse_failures = 0
    for t in range(1, rounds + 1 if feasible else 1):
        best = run.best_grade
        if best is not None and best.passed:
            break
        if best is None or not best.verification.parse.parsed:
            parse_failures += 1
            if parse_failures >= 2:
                break
            run.call(prompt, tau, t, f"retry{t}")
            used = t
            continue
        parse_failures = 0
        notes = feedback(best.verification, feedback_level, instruction=instruction,
                         templates=templates)
        if not notes:
            break
        assert run.best is not None  # a best grade exists
        previous = run.calls[run.best].answer.text or ""
        run.call(refinement_messages(prompt, previous, notes, t, templates),
                 refine_temperature(tau), t,
                 f"round{t}")
        used = t
    return run.result(used)


def retry_chain(prompt: Sequence[Message], ask: Ask, grade: Grader, *, chain: int = 0,
                rounds: int = 3, temperature: float = DEFAULT_TEMPERATURE) -> ChainResult:
    """Up to ``1 + rounds`` fresh calls, stopping at the first that passes."""
    if rounds < 0 or chain < 0:
        raise ValueError("retry needs chain >= 0 and rounds >= 0")
    prompt = tuple(prompt)
    tau = chain_temperature(temperature, chain)
    run = _Chain(chain, ask, grade)
    used = 0
    for t in range(rounds + 1):
        run.call(prompt, tau, t, "round0" if t == 0 else f"retry{t}")
        used = t
        best = run.best_grade
        if best is not None and best.passed:
            break
    return run.result(used)


def sc_chain(prompt: Sequence[Message], ask: Ask, grade: Grader, *, chain: int = 0,
             samples: int = 3, temperature: float = DEFAULT_TEMPERATURE) -> ChainResult:
    """Self-consistency: ``samples`` fresh calls; the best graded one is kept."""
    if samples < 1 or chain < 0:
        raise ValueError("self-consistency needs chain >= 0 and samples >= 1")
    prompt = tuple(prompt)
    tau = chain_temperature(temperature, chain)
    run = _Chain(chain, ask, grade)
    for i in range(samples):
        run.call(prompt, tau, i, f"sample{i}")
    return run.result(0)


def vgig(prompt: Sequence[Message], ask: Ask, grade: Grader, *, feasible: bool = True,
         chains: int = 3, rounds: int = 3, feedback_level: FeedbackLevel = "fine",
         temperature: float = DEFAULT_TEMPERATURE) -> list[ChainResult]:
    """``chains`` chains of :func:`vgig_chain`."""
    if chains < 1:
        raise ValueError("vgig needs chains >= 1")
    return [vgig_chain(prompt, ask, grade, chain=k, feasible=feasible, rounds=rounds,
                       feedback_level=feedback_level, temperature=temperature)
            for k in range(chains)]


def retry(prompt: Sequence[Message], ask: Ask, grade: Grader, *, chains: int = 3,
          rounds: int = 3, temperature: float = DEFAULT_TEMPERATURE) -> list[ChainResult]:
    """``chains`` chains of :func:`retry_chain`."""
    return [retry_chain(prompt, ask, grade, chain=k, rounds=rounds, temperature=temperature)
            for k in range(chains)]


def self_consistency(prompt: Sequence[Message], ask: Ask, grade: Grader, *, chains: int = 3,
                     samples: int = 3,
                     temperature: float = DEFAULT_TEMPERATURE) -> list[ChainResult]:
    """``chains`` chains of :func:`sc_chain`."""
    return [sc_chain(prompt, ask, grade, chain=k, samples=samples, temperature=temperature)
            for k in range(chains)]
