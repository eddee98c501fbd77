"""D1 structural quality of one instruction's k samples.

Terms:

* ``VR`` (valid rate) = samples that parsed *and* pass the instruction's explicit
  ``graph_type`` (:func:`~pytest_graphinstruct.score.d4.is_valid`) over all k samples.
* ``Uniq`` (uniqueness) = exact isomorphism classes among the *parsed* samples / parsed samples;
  0 when fewer than 2 parsed.  Classes are exact (:mod:`~pytest_graphinstruct.score.isomorphism`:
  directedness is part of the class — a directed and an undirected graph never coincide,
  directed graphs are compared with arc orientation; WL hashing is only a bucket key).  When a
  pair cannot be decided within the documented caps, the *lower* bound on the class count is
  used (no credit for diversity that was not proven) and the result says so
  (``uniqueness.exact = false``).  Not used for single-answer types
  (:data:`SINGLE_ANSWER_TYPES`).
* ``MMD̄`` = mean of the degree, clustering and spectral MMD scores of the parsed samples
  against the instruction's reference-pool subset (:mod:`~pytest_graphinstruct.kernels.mmd`;
  bandwidths from the pool subset alone).

Formulas (:attr:`D1Result.formula` says which one was used, and :attr:`D1Result.reason` why the
constraint formula was used at L3/L4):

* ``"constraint"`` — L0, L1, L2, L5, and the L3/L4 fallback: ``0.7·VR + 0.3·Uniq``; ``VR`` alone
  for single-answer types.
* ``"distribution"`` — L3/L4 when the level has a pool, at least :data:`MIN_POOL_MATCHES` pool
  graphs satisfy the instruction's explicit constraints (same domain at L4), and at least
  :data:`MIN_PARSED` samples parsed (an MMD needs two samples per side; the release's
  estimator would return MMD 0, i.e. a perfect score, for one sample): ``0.3·VR + 0.5·MMD̄ +
  0.2·Uniq``; ``(0.3·VR + 0.5·MMD̄)/0.8`` for single-answer types (as the release).  Fallback
  reasons: ``"no pool"``, ``"N pool graphs match (fewer than 20)"``, ``"fewer than 2 parsed
  samples"``.
* ``"refusal"`` — infeasible instructions: the share of samples that are refusals (a parse
  failure or a confabulated graph scores 0 for that sample).

Every score lies in [0, 1]; D1 is invariant under renaming or reordering the nodes of any sample.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import networkx as nx

from pytest_graphinstruct.kernels.mmd import FeatureTable, MMDResult
from pytest_graphinstruct.pools import ReferencePools
from pytest_graphinstruct.score.d4 import is_valid
from pytest_graphinstruct.score.isomorphism import isomorphism_classes
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.verdict import Verification

#: Graph types with a single answer up to isomorphism (given their size parameters).
SINGLE_ANSWER_TYPES: frozenset[str] = frozenset(
    {"complete", "path", "cycle", "star", "wheel", "grid", "complete_bipartite"})
DISTRIBUTION_LEVELS: frozenset[int] = frozenset({3, 4})
#: Fewest matching pool graphs for the distribution formula (paper §3.3).
MIN_POOL_MATCHES = 20
#: Fewest parsed samples for the distribution formula.
MIN_PARSED = 2

Formula = Literal["constraint", "distribution", "refusal"]


@dataclass(frozen=True)
class Uniqueness:
    """Uniqueness of the parsed samples.

    ``value`` = ``classes_min / parsed`` (0 when ``parsed < 2``); ``classes`` is the class count
    (an upper bound when not ``exact``), ``classes_min`` the proven lower bound.
    """

    value: float
    parsed: int
    classes: int
    classes_min: int
    exact: bool

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "parsed": self.parsed, "classes": self.classes,
                "classes_min": self.classes_min, "exact": self.exact}


def uniqueness(graphs: Sequence[nx.Graph]) -> Uniqueness:
    """Uniqueness of ``graphs`` (exact isomorphism classes; see the module docstring)."""
    n = len(graphs)
    if n == 0:
        return Uniqueness(0.0, 0, 0, 0, True)
    if n == 1:
        return Uniqueness(0.0, 1, 1, 1, True)
    iso = isomorphism_classes(graphs)
    return Uniqueness(iso.classes_min / n, n, iso.classes, iso.classes_min, iso.exact)


@dataclass(frozen=True)
class D1Result:
    """D1 of one instruction and everything it was computed from.

    Attributes:
        score: D1 in [0, 1].
        formula: ``"constraint"``, ``"distribution"`` or ``"refusal"`` (module docstring).
        reason: why an L3/L4 instruction used the constraint formula; ``None`` otherwise.
        samples / parsed / valid: counts over the k samples.
        valid_rate: ``valid / samples`` (0 without samples).
        uniqueness: ``None`` for single-answer types and infeasible instructions.
        pool_matches: matching pool graphs (``None`` when no pool applies to the level).
        mmd: the MMD terms when the distribution formula was used.
    """

    score: float
    formula: Formula
    reason: str | None
    samples: int
    parsed: int
    valid: int
    valid_rate: float
    uniqueness: Uniqueness | None = None
    pool_matches: int | None = None
    mmd: MMDResult | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "formula": self.formula,
            "reason": self.reason,
            "samples": self.samples,
            "parsed": self.parsed,
            "valid": self.valid,
            "valid_rate": self.valid_rate,
            "uniqueness": None if self.uniqueness is None else self.uniqueness.to_json(),
            "pool_matches": self.pool_matches,
            "mmd": None if self.mmd is None else self.mmd.to_json(),
        }


def _clamp(x: float) -> float:
    return min(1.0, max(0.0, x))


def instruction_d1(instruction: Instruction, samples: Sequence[Verification],
                   pools: ReferencePools | None = None) -> D1Result:
    """D1 of ``instruction`` over its k ``samples`` (see the module docstring).

    Args:
        instruction: the instruction the samples answer.
        samples: one verification per sample, in sample order.
        pools: the run's reference pools (``None``: no pool configured).
    """
    k = len(samples)
    graphs = [s.parse.graph.graph for s in samples if s.parse.graph is not None]
    parsed = len(graphs)
    valid = sum(1 for s in samples if is_valid(s))
    vr = valid / k if k else 0.0
    if not instruction.feasible:
        share = sum(1 for s in samples if s.parse.refusal) / k if k else 0.0
        return D1Result(_clamp(share), "refusal", None, k, parsed, valid, vr)
    single = instruction.graph_type in SINGLE_ANSWER_TYPES
    uniq = None if single else uniqueness(graphs)
    u = 0.0 if uniq is None else uniq.value

    reason: str | None = None
    matches: int | None = None
    if instruction.level in DISTRIBUTION_LEVELS:
        match = None if pools is None else pools.match(instruction)
        if match is None:
            reason = "no pool"
        else:
            matches = match.count
            if matches < MIN_POOL_MATCHES:
                reason = f"{matches} pool graphs match (fewer than {MIN_POOL_MATCHES})"
            elif parsed < MIN_PARSED:
                reason = f"fewer than {MIN_PARSED} parsed samples"
            else:
                result = match.reference_set().score(FeatureTable.of_graphs(graphs))
                if single:
                    score = (0.3 * vr + 0.5 * result.mean) / 0.8
                else:
                    score = 0.3 * vr + 0.5 * result.mean + 0.2 * u
                return D1Result(_clamp(score), "distribution", None, k, parsed, valid, vr,
                                uniq, matches, result)
    score = vr if single else 0.7 * vr + 0.3 * u
    return D1Result(_clamp(score), "constraint", reason, k, parsed, valid, vr, uniq, matches)
