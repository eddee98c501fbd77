"""Verdicts: the per-constraint outcome of verifying one answer, and their collection.

A :class:`Verdict` is the unit of feedback: which constraint (as written), whether it holds,
what was expected, what was observed, and where it fails.  A :class:`Verification` gathers the
verdicts of one answer to one instruction together with the parse result.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from pytest_graphinstruct.graphs.model import Outcome, ParseResult


class Source(enum.Enum):
    """Where the constraint behind a verdict came from."""

    EXPLICIT = "explicit"  #: the instruction's ``explicit_constraints``
    IMPLICIT = "implicit"  #: the instruction's ``implicit_constraints`` (dataset field)
    INFERRED = "inferred"  #: derived from the graph type (tree ⇒ n−1 edges, …)
    CONTRADICTION = "no_contradiction"  #: self-loops, blank ids, parallel edges, header mismatch
    TASK = "task"  #: L5 task semantics relative to the base graph
    FEASIBILITY = "feasibility"  #: infeasible instruction answered with a graph, or vice versa
    PARSE = "parse"  #: no graph could be recovered


_NO_WHERE: Mapping[str, Any] = MappingProxyType({})


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
        where: JSON-ready locus of the failure, e.g. ``{"nodes": [...]}``, ``{"cycle": [...]}``,
            ``{"components": [[...], ...]}``, ``{"edges": [[u, v], ...]}``; empty when satisfied
            or when no locus applies.
    """

    constraint: str
    key: str
    source: Source
    satisfied: bool
    expected: str
    observed: str
    where: Mapping[str, Any] = field(default_factory=lambda: _NO_WHERE)

    @property
    def inferred(self) -> bool:
        return self.source is Source.INFERRED

    def describe(self) -> str:
        """One line: ``✗ num_edges=4 [explicit]: expected = 4, observed 5 (where: …)``."""
        mark = "ok" if self.satisfied else "FAIL"
        text = (f"{mark} {self.constraint} [{self.source.value}]: expected {self.expected}, "
                f"observed {self.observed}")
        if self.where and not self.satisfied:
            text += f" (where: {_render_where(self.where)})"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "constraint": self.constraint,
            "key": self.key,
            "source": self.source.value,
            "satisfied": self.satisfied,
            "expected": self.expected,
            "observed": self.observed,
            "where": dict(self.where),
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
