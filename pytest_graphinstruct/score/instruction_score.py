"""Scoring one instruction: all five dimensions and the level score, from verdicts and answers.

This is the one place that decides which dimension functions run for an instruction; the plugin
and the ``score`` command share it.  A dimension that cannot be computed (not implemented for
this level, no pool, unknown token usage) is reported *absent* (``None``) with a reason and the
level score is renormalized over the present weighted dimensions, naming what was missing —
never silently replaced by something else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.pools import PoolGraph, ReferencePools
from pytest_graphinstruct.score.d1 import instruction_d1
from pytest_graphinstruct.score.d2 import instruction_d2
from pytest_graphinstruct.score.d3 import D3Config, D3Result, graph_sets_d3
from pytest_graphinstruct.score.d4 import instruction_d4, is_valid
from pytest_graphinstruct.score.d5 import D5Result, Spend, infeasible_d5, instruction_d5
from pytest_graphinstruct.score.details import ScoreDetails
from pytest_graphinstruct.score.domain_fit import DomainProfile
from pytest_graphinstruct.score.levels import LevelScore, effective_weights, level_score
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.verdict import Verification
from pytest_graphinstruct.vocab import DIMENSIONS

#: Pool graphs (first matches in pool order) used beside the instruction's own references as D3
#: and L4 domain-fit yardsticks; bounded because every reference costs a GCN training.
POOL_REFERENCES = 3

# Keyed by the pool graph itself (a frozen dataclass; the dict keeps it alive), so a profile is
# computed once per pool graph and never confused with another pool's graph.
_POOL_PROFILES: dict[PoolGraph, DomainProfile] = {}


def _pool_references(instruction: Instruction, pools: ReferencePools | None) -> list[PoolGraph]:
    if pools is None or instruction.level not in (3, 4) or not instruction.feasible:
        return []
    match = pools.match(instruction)
    return [] if match is None else list(match.graphs[:POOL_REFERENCES])


def pool_profiles(instruction: Instruction,
                  pools: ReferencePools | None) -> tuple[DomainProfile, ...]:
    """The pool yardsticks of ``instruction``'s L4 domain fit: exactly those
    :func:`score_instruction` passes to D4, so a method grading candidates with
    :func:`~.d4.instruction_d4` and these optimises what is scored."""
    return tuple(_profile(g) for g in _pool_references(instruction, pools))


def _profile(g: PoolGraph) -> DomainProfile:
    prof = _POOL_PROFILES.get(g)
    if prof is None:
        prof = _POOL_PROFILES[g] = DomainProfile(g.graph)
    return prof


@dataclass(frozen=True)
class InstructionScores:
    """All dimensions of one instruction in one cell, and its level scores."""

    dimensions: dict[str, float | None]
    absent: dict[str, str]  # dimension -> why it is absent
    level: LevelScore  # quality-only (the leaderboard default)
    level_with_d5: LevelScore
    d5: D5Result
    details: ScoreDetails = field(default_factory=ScoreDetails)

    def to_json(self) -> dict[str, Any]:
        return {
            "dimension_scores": dict(self.dimensions),
            "absent_dimensions": dict(self.absent),
            "level_score": self.level.score,
            "level_score_with_d5": self.level_with_d5.score,
            "missing_dimensions": list(self.level.missing),
            "tpv": self.d5.tpv,
            "api_per_valid": self.d5.api,
            "tokens": self.d5.tokens,
            "d5_valid": self.d5.valid,
            "details": {k: v for k, v in (
                ("pool_references", None if self.details.pool_references is None
                 else list(self.details.pool_references)),
                ("d1", self.details.d1), ("d2", self.details.d2), ("d3", self.details.d3),
                ("caap", self.details.caap)) if v is not None},
        }


def score_instruction(
    instruction: Instruction,
    answers: Sequence[Answer],
    verifications: Sequence[Verification],
    pools: ReferencePools | None = None,
    d3: D3Result | None = None,
) -> InstructionScores:
    """Score the k samples of one instruction (``answers[i]`` produced ``verifications[i]``).

    ``pools`` are the run's reference pools: D1's MMD at L3/L4, and up to
    :data:`POOL_REFERENCES` matching (L4: same-domain) pool graphs join the instruction's own
    references as D3 and L4 domain-fit yardsticks (``details["pool_references"]`` lists them).
    Without pools D1 uses the constraint formula and says so in ``details["d1"]``.
    """
    dims: dict[str, float | None] = dict.fromkeys(DIMENSIONS)
    absent: dict[str, str] = {}
    details = ScoreDetails()
    spends = [Spend.of_answer(a) for a in answers]
    pool_graphs = _pool_references(instruction, pools)
    if pool_graphs:
        details = replace(details, pool_references=tuple(g.id for g in pool_graphs))
    d1 = instruction_d1(instruction, verifications, pools)
    dims["D1"] = d1.score
    details = replace(details, d1=d1.to_json())
    if not instruction.feasible:
        refusals = sum(1 for v in verifications if v.parse.refusal)
        d5 = infeasible_d5(spends, refusals, len(verifications))
        dims["D4"] = refusals / len(verifications) if verifications else 0.0
    else:
        valid = sum(1 for v in verifications if is_valid(v))
        d5 = instruction_d5(spends, valid)
        dims["D4"] = instruction_d4(instruction, verifications,
                                    [_profile(g) for g in pool_graphs])
    dims["D5"] = d5.d5
    if d5.d5 is None:
        absent["D5"] = "token usage unknown for some sample"
    weighted = effective_weights(instruction.level, quality_only=False)
    if weighted.get("D2", 0) > 0 and instruction.feasible:
        d2 = instruction_d2(instruction, verifications)
        dims["D2"] = d2.value
        details = replace(details, d2={"presence": d2.presence, "similarity": d2.similarity})
        if d2.value is None:
            absent["D2"] = d2.reason or "not computed"
    if weighted.get("D3", 0) > 0 and instruction.feasible:
        d3 = d3 or d3_results([(instruction, verifications)], pools)[0]
        assert d3 is not None  # computed for every instruction whose level score uses D3
        dims["D3"] = d3.value
        details = replace(details, d3={"grassmann": d3.grassmann, "mmd": d3.mmd,
                                       "gcn": d3.gcn})
        if d3.value is None:
            absent["D3"] = d3.reason or "not computed"  # names each missing part once
    for d, v in dims.items():
        if v is None:
            absent.setdefault(d, "not weighted at this level"
                              if weighted.get(d, 0) == 0 else "not computed")
    quality = level_score(instruction.level, dims, quality_only=True)
    full = level_score(instruction.level, dims, quality_only=False)
    return InstructionScores(dims, {d: r for d, r in absent.items() if dims[d] is None},
                             quality, full, d5, details)


DEFAULT_D3 = D3Config()
"""The benchmark's D3 (on the CPU)."""


def _needs_d3(instruction: Instruction) -> bool:
    weights = effective_weights(instruction.level, quality_only=False)
    return weights.get("D3", 0) > 0 and instruction.feasible


def d3_results(items: Sequence[tuple[Instruction, Sequence[Verification]]],
               pools: ReferencePools | None = None,
               config: D3Config = DEFAULT_D3) -> list[D3Result | None]:
    """D3 of many instructions with every GCN trained in one batch (bit-identical to one by one).

    Each instruction's valid samples are scored against its own references and, with
    ``pools``, its first :data:`POOL_REFERENCES` matching pool graphs (the closest reference
    wins).  ``None`` for an instruction whose level score does not use D3 (below L3, or
    infeasible): nothing is computed for it.
    """
    results: list[D3Result | None] = [None] * len(items)
    sets: list[tuple[list[Any], list[Any]]] = []
    where: list[int] = []
    for n, (instruction, verifications) in enumerate(items):
        if not _needs_d3(instruction):
            continue
        valid_graphs = [v.parse.graph.graph for v in verifications
                        if is_valid(v) and v.parse.graph is not None]
        references = [r.graph for r in instruction.reference_graphs]
        pool_graphs = _pool_references(instruction, pools)
        sets.append((valid_graphs, [*references, *(g.graph for g in pool_graphs)]))
        where.append(n)
    if sets:
        for n, res in zip(where, graph_sets_d3(sets, config), strict=True):
            results[n] = res
    return results


def score_instructions(
    items: Sequence[tuple[Instruction, Sequence[Answer], Sequence[Verification]]],
    pools: ReferencePools | None = None,
    d3: D3Config = DEFAULT_D3,
) -> list[InstructionScores]:
    """:func:`score_instruction` for many instructions, with D3's GCNs trained in one batch
    (same values as scoring one by one: D3 is bit-identical batched or not); ``d3`` configures
    D3 (its device: ``d3.gcn_config.device``)."""
    d3s = d3_results([(i, v) for i, _, v in items], pools, d3)
    return [score_instruction(i, a, v, pools, d3) for (i, a, v), d3 in zip(items, d3s, strict=True)]
