"""Verdicts: the per-constraint outcome of verifying one answer, and their collection.

A :class:`Verdict` is the unit of feedback: which constraint (as written), whether it holds,
what was expected, what was observed, and where it fails; its :attr:`Verdict.category` (one of
:data:`CATEGORIES`) and, for a violated count, degree or numeric constraint, its
:attr:`Verdict.gap` (target, observation, signed gap, direction).  A :class:`Verification`
gathers the verdicts of one answer to one instruction together with the parse result.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, get_args

from pytest_graphinstruct.graphs.model import Outcome, ParseResult
from pytest_graphinstruct.suite.constraints import Op, parse_constraint
from pytest_graphinstruct.verify.locus import Locus

Category = Literal["structural", "direction", "count", "degree", "numeric", "domain", "task"]
"""A verdict's category (a parse failure's is ``parse``)."""

CATEGORIES: tuple[Category, ...] = get_args(Category)
"""Verdict categories, in the order feedback lists them."""

_KEY_CATEGORY: Mapping[str, Category] = MappingProxyType({
    "directed": "direction",
    "num_nodes": "count", "num_edges": "count", "num_components": "count",
    "degree": "degree", "min_degree": "degree", "max_degree": "degree",
    "density": "numeric", "modularity": "numeric", "clustering_coefficient": "numeric",
    "average_path_length": "numeric", "diameter": "numeric", "edge_connectivity": "numeric",
    "domain": "domain",
})


@dataclass(frozen=True)
class Gap:
    """How far a numeric observation is from its constraint's target."""

    target: float
    observed: float

    @property
    def gap(self) -> float:
        """``observed − target`` (signed)."""
        return self.observed - self.target

    @property
    def direction(self) -> str:
        """``high`` when the observation must come down, ``low`` when it must go up."""
        return "high" if self.gap > 0 else "low"


class Source(enum.Enum):
    """Where the constraint behind a verdict came from."""

    EXPLICIT = "explicit"  #: the instruction's ``explicit_constraints``
    IMPLICIT = "implicit"  #: the instruction's ``implicit_constraints`` (dataset field)
    INFERRED = "inferred"  #: derived from the graph type (tree ⇒ n−1 edges, …)
    CONTRADICTION = "no_contradiction"  #: self-loops, blank ids, parallel edges, header mismatch
    TASK = "task"  #: L5 task semantics relative to the base graph
    FEASIBILITY = "feasibility"  #: infeasible instruction answered with a graph, or vice versa
    PARSE = "parse"  #: no graph could be recovered


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check on one graph.

    Attributes:
        constraint: the constraint string exactly as written in the instruction, or the derived
            form (``num_edges=4``) for inferred/contradiction/task checks.
        key: the constraint key (``num_edges``), or a check name (``no_self_loops``,
            ``task:spanning_tree``).
        source: where the check came from.
        satisfied: whether it holds.
        expected: human-readable expectation (``'= 4'``, ``'>= 0.25 (tolerance 0.0125)'``).
        observed: human-readable observation (``'5'``, ``'0.2131'``, ``'2 components'``).
        where: the locus of the failure (:class:`~pytest_graphinstruct.verify.locus.Locus`:
            the nodes, a cycle, the components, the edges …); empty when satisfied or when no
            locus applies.  A check that builds a malformed one fails where it builds it, not in
            the report that reads it.
    """

    constraint: str
    key: str
    source: Source
    satisfied: bool
    expected: str
    observed: str
    where: Locus = field(default_factory=Locus)

    @property
    def inferred(self) -> bool:
        return self.source is Source.INFERRED

    @property
    def category(self) -> Category | Literal["parse"]:
        """One of :data:`CATEGORIES` (``parse`` for a parse failure)."""
        if self.source is Source.PARSE:
            return "parse"
        if self.source is Source.TASK:
            return "task"
        return _KEY_CATEGORY.get(self.key, "structural")

    @functools.cached_property
    def gap(self) -> Gap | None:
        """The gap of a violated count, degree or numeric verdict (``None`` otherwise, or when
        the observation is not a finite number); parsed once per verdict."""
        if self.satisfied or self.category not in ("numeric", "count", "degree"):
            return None
        try:
            c = parse_constraint(self.constraint)
            target = float(c.value)  # type: ignore[arg-type]
            observed = float(self.observed.split()[0])
        except (ValueError, TypeError, IndexError):
            return None
        if not (math.isfinite(target) and math.isfinite(observed)) or c.op is Op.NE:
            return None
        return Gap(target, observed)

    def describe(self) -> str:
        """One line: ``✗ num_edges=4 [explicit]: expected = 4, observed 5 (where: …)``."""
        mark = "ok" if self.satisfied else "FAIL"
        text = (f"{mark} {self.constraint} [{self.source.value}]: expected {self.expected}, "
                f"observed {self.observed}")
        if self.where and not self.satisfied:
            text += f" (where: {_render_where(self.where.to_json())})"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "constraint": self.constraint,
            "key": self.key,
            "source": self.source.value,
            "satisfied": self.satisfied,
            "expected": self.expected,
            "observed": self.observed,
            "where": self.where.to_json(),
        }


def _render_where(where: Mapping[str, Any], limit: int = 8) -> str:
    parts = []
    for k, v in where.items():
        if isinstance(v, list | tuple) and len(v) > limit:
            shown = ", ".join(map(str, v[:limit]))
            parts.append(f"{k}=[{shown}, … {len(v) - limit} more]")
        else:
            parts.append(f"{k}={v}")
    return "; ".join(parts)


@dataclass(frozen=True)
class Verification:
    """Everything the verifier concluded about one answer to one instruction.

    ``verdicts`` holds, in order: feasibility/parse verdicts, then explicit, implicit (dataset),
    inferred, no-contradiction and task verdicts.  An answer with no graph has no constraint
    verdicts (only a parse or feasibility verdict).
    """

    instruction_id: str
    parse: ParseResult
    verdicts: tuple[Verdict, ...] = ()

    @property
    def outcome(self) -> Outcome:
        return self.parse.outcome

    @property
    def passed(self) -> bool:
        """True when every verdict holds (a correct refusal of an infeasible task passes)."""
        return all(v.satisfied for v in self.verdicts)

    @property
    def violations(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if not v.satisfied)

    def of(self, *sources: Source) -> tuple[Verdict, ...]:
        """The verdicts from the given sources, in order."""
        return tuple(v for v in self.verdicts if v.source in sources)

    def rate(self, *sources: Source) -> float | None:
        """Fraction of satisfied verdicts among ``sources``; ``None`` when there are none."""
        chosen = self.of(*sources)
        if not chosen:
            return None
        return sum(v.satisfied for v in chosen) / len(chosen)
