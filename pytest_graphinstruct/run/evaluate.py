"""The one evaluation path: an instruction and its answers (+ pools) → a typed :class:`ItemResult`.

The plugin, the ``score`` command and users' code all evaluate through here, in two steps so
a caller can decide an item's outcome at once and score many items together:

1. :func:`check` verifies every sample and applies the pass rule (cheap: parse + verdicts);
2. :func:`score` turns many checked items into results, D3's GCNs trained in one batch.

:func:`evaluate` does both for one item.

>>> from pytest_graphinstruct.answers import Answer
>>> from pytest_graphinstruct.suite.instruction import Instruction
>>> from pytest_graphinstruct.suite.loader import constraints_of
>>> instruction = Instruction(id="L1-demo", level=1, text="A connected graph: 3 nodes, 2 edges.",
...                           explicit=constraints_of(["num_nodes=3", "num_edges=2",
...                                                    "connected=true"]))
>>> answer = Answer(text="Graph[name='g'] { node_list = [0, 1, 2]; "
...                      "edge_list = [(0, 1), (1, 2)]; }")
>>> check(instruction, [answer], cell=Cell("model", "zero-shot")).passed
True
>>> evaluate(instruction, [answer]).outcome
'passed'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.pools import ReferencePools
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.records.results import (
    ItemResult,
    SampleResult,
    ViolationDetail,
    bounded_answer,
)
from pytest_graphinstruct.score.d3 import D3Config
from pytest_graphinstruct.score.d4 import is_valid
from pytest_graphinstruct.score.gcn import GcnConfig
from pytest_graphinstruct.score.instruction_score import InstructionScores, score_instructions
from pytest_graphinstruct.suite.clusters import cluster_of
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.verdict import Source, Verdict, Verification
from pytest_graphinstruct.verify.verifier import Verifier
from pytest_graphinstruct.vocab import PASS_RULES, D3Device, Outcome, PassRule, as_dimension

_WRITTEN = (Source.EXPLICIT, Source.IMPLICIT)


@dataclass(frozen=True)
class Checked:
    """One item after verification: every sample's verdicts and the pass-rule outcome."""

    instruction: Instruction
    cell: Cell
    answers: tuple[Answer, ...]
    verifications: tuple[Verification, ...]
    passed: bool

    @property
    def passing_samples(self) -> int:
        return sum(v.passed for v in self.verifications)


def check(instruction: Instruction, answers: Sequence[Answer], *, cell: Cell,
          verifier: Verifier | None = None, pass_rule: PassRule = "all") -> Checked:
    """Verify every answer of one item and decide its outcome with ``pass_rule``.

    An answer with no text (an infrastructure error) is verified as an empty answer; callers
    that can tell infrastructure errors apart report them with :func:`error_result` instead.
    """
    verifier = verifier or Verifier()
    verifications = tuple(verifier.verify(instruction, a.text or "") for a in answers)
    ok = sum(v.passed for v in verifications)
    return Checked(instruction, cell, tuple(answers), verifications,
                   PASS_RULES[pass_rule](ok, len(verifications)))


def score(items: Sequence[Checked], pools: ReferencePools | None = None, *,
          d3_device: D3Device = "cpu") -> list[ItemResult]:
    """The results of checked items: D1–D5 and level scores, D3 batched over all of them,
    its GCNs trained on ``d3_device``.

    The same items always give the same results, whatever their grouping or order.

    Raises:
        GraphInstructError: ``d3_device`` is ``cuda`` and CUDA is not usable.
    """
    d3 = D3Config(gcn_config=GcnConfig(device=d3_device))
    scores = iter(score_instructions(
        [(c.instruction, c.answers, c.verifications) for c in items if c.answers], pools, d3))
    return [_result(c, next(scores) if c.answers else None) for c in items]


def evaluate(instruction: Instruction, answers: Sequence[Answer], *,
             cell: Cell | None = None, verifier: Verifier | None = None,
             pools: ReferencePools | None = None, pass_rule: PassRule = "all") -> ItemResult:
    """Verify and score one item (:func:`check` then :func:`score`)."""
    checked = check(instruction, answers, cell=cell or Cell("model", "zero-shot"),
                    verifier=verifier, pass_rule=pass_rule)
    return score([checked], pools)[0]


def _detail(x: Verdict) -> ViolationDetail:
    gap, category = x.gap, x.category
    if category == "parse":
        raise ValueError("a parse verdict has no violation detail")
    return ViolationDetail(x.constraint, category, None if gap is None else gap.gap,
                           x.expected, x.observed, x.where)


def sample_result(v: Verification, answer: Answer | None = None) -> SampleResult:
    """The report entry of one sample (its answer gives usage, calls, truncation and the
    raw answer, bounded by :func:`~.results.bounded_answer`)."""
    usage = answer.usage if answer is not None else None
    return SampleResult(
        parsed=v.parse.parsed, refusal=v.parse.refusal,
        violations=tuple(x.constraint for x in v.violations if x.source in _WRITTEN),
        derived_violations=tuple(x.constraint for x in v.violations
                                 if x.source not in _WRITTEN and x.source is not Source.PARSE),
        error=v.parse.reason if v.parse.outcome.value == "failure" else None,
        input_tokens=usage.input_tokens if usage else None,
        output_tokens=usage.output_tokens if usage else None,
        usage_source=usage.source if usage else None,
        api_calls=answer.calls if answer is not None else 1,
        truncated=answer.truncated if answer is not None else False,
        cached=answer.cached if answer is not None else False,
        raw_answer=bounded_answer(answer.text) if answer is not None else None,
        steps=answer.steps if answer is not None else (),
        violation_details=tuple(_detail(x) for x in v.violations
                                if x.source is not Source.PARSE),
    )


def _tokens(answers: Sequence[Answer]) -> int | None:
    totals = [a.usage.total if a.usage is not None else None for a in answers]
    if not answers or any(t is None for t in totals):
        return None
    return sum(t for t in totals if t is not None)


def _result(c: Checked, scores: InstructionScores | None) -> ItemResult:
    inst, cell = c.instruction, c.cell
    samples = tuple(sample_result(v, a) for v, a in zip(c.verifications, c.answers,
                                                        strict=True))
    valid = sum(1 for v in c.verifications if is_valid(v))
    base = ItemResult(
        instruction_id=inst.id, level=inst.level, cell=cell.label, model=cell.model,
        strategy=cell.strategy, method=cell.method, feasible=inst.feasible, size=inst.size,
        cluster=cluster_of(inst),
        outcome="passed" if c.passed else "failed", samples=samples, valid_samples=valid,
        valid_rate=valid / len(samples) if samples else None, tokens=_tokens(c.answers),
        api_calls=sum(a.calls for a in c.answers), d4_instruction_score=0.0,
        passing_samples=c.passing_samples if len(samples) > 1 else None,
    )
    if scores is None:  # no sample at all: nothing to score
        return base
    return replace(
        base, d4_instruction_score=scores.dimensions["D4"],
        dimension_scores={as_dimension(d): v for d, v in scores.dimensions.items()},
        absent_dimensions={as_dimension(d): why for d, why in scores.absent.items()},
        level_score=scores.level.score, level_score_with_d5=scores.level_with_d5.score,
        missing_dimensions=tuple(map(as_dimension, scores.level.missing)), tpv=scores.d5.tpv,
        api_per_valid=scores.d5.api, d5_valid=scores.d5.valid, details=scores.details,
    )


def error_result(instruction: Instruction, cell: Cell, answers: Sequence[Answer], *,
                 outcome: Outcome, error: str | None) -> ItemResult:
    """An item that has no scores: no answer could be obtained (``error``) or it was
    ``skipped`` (e.g. the token budget ran out before it was asked)."""
    return ItemResult(
        instruction_id=instruction.id, level=instruction.level, cell=cell.label,
        model=cell.model, strategy=cell.strategy, method=cell.method,
        feasible=instruction.feasible, size=instruction.size, outcome=outcome, error=error,
        api_calls=sum(a.calls for a in answers), cluster=cluster_of(instruction),
    )
