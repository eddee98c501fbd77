"""The :class:`Instruction`: one benchmark task, typed and immutable, constraints parsed.

Fields mirror the GraphInstruct JSON schema (``id, level, instruction, explicit_constraints,
implicit_constraints, graph_sizes, reference_solutions, feasible`` plus ``domain`` at L4 and
``base_graph, graph_edits, reasoning_steps, solution_verification`` at L5).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

from pytest_graphinstruct.graphs.model import ParsedGraph
from pytest_graphinstruct.suite.constraints import Constraint, Op
from pytest_graphinstruct.vocab import Level, size_bucket


@dataclass(frozen=True)
class Instruction:
    """One instruction of a suite.

    Attributes:
        id: ``L{level}-{NNN}``.
        level: 0–5.
        text: the English instruction.
        explicit: parsed ``explicit_constraints`` (order kept; ``text`` as written).
        implicit: parsed ``implicit_constraints`` (the dataset field; may be empty).
        graph_sizes: size buckets as written.
        references: reference solutions as code-style strings (empty for infeasible ones).
        feasible: ``False`` for deliberately infeasible instructions.
        domain: L4 domain, else ``None``.
        base_graph: L5 base graph text, else ``None``; :attr:`base` is its parsed form.
        graph_edits / reasoning_steps / solution_verification: L5 metadata, kept verbatim.
        source: the file the record came from (for error messages).
        template: the record's ``template`` field (our suites name the template that made each
            instruction; the official suite has none), else ``None``.
    """

    id: str
    level: Level
    text: str
    explicit: tuple[Constraint, ...]
    implicit: tuple[Constraint, ...] = ()
    graph_sizes: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    feasible: bool = True
    domain: str | None = None
    base_graph: str | None = None
    graph_edits: tuple[str, ...] = ()
    reasoning_steps: tuple[Mapping[str, Any], ...] = ()
    solution_verification: Mapping[str, Any] = field(
        default_factory=lambda: MappingProxyType({})
    )
    source: str = ""
    template: str | None = None

    def first(self, key: str) -> Constraint | None:
        """The first explicit constraint with ``key``, or ``None``."""
        for c in self.explicit:
            if c.key == key:
                return c
        return None

    @cached_property
    def base(self) -> ParsedGraph | None:
        """``base_graph`` parsed, else ``None``: parsed by the loader where it validated the
        suite (:func:`~.loader.load_suite`), else on first use.

        Raises:
            GraphInstructError: ``base_graph`` is not a valid graph (only on a first use: the
                loader reports it with the suite's other problems).
        """
        if self.base_graph is None:
            return None
        from pytest_graphinstruct.graphs.parse import parse_graph

        return parse_graph(self.base_graph)

    @cached_property
    def graph_type(self) -> str | None:
        """The value of the first explicit ``graph_type=`` constraint, if any."""
        c = self.first("graph_type")
        return c.value if c is not None and c.op is Op.EQ else None  # type: ignore[return-value]

    @cached_property
    def task_type(self) -> str | None:
        """The L5 ``task_type=`` value, if any."""
        c = self.first("task_type")
        return c.value if c is not None else None  # type: ignore[return-value]

    @cached_property
    def num_nodes(self) -> int | None:
        """The explicit ``num_nodes=`` value, if any."""
        c = self.first("num_nodes")
        return c.value if c is not None and c.op is Op.EQ else None  # type: ignore[return-value]

    @cached_property
    def reference_graphs(self) -> tuple[ParsedGraph, ...]:
        """The reference solutions, parsed (once, on first use).

        Raises:
            GraphSyntaxError: a reference is not a valid code-style graph.
        """
        from pytest_graphinstruct.graphs.parse import parse_graph

        return tuple(parse_graph(r) for r in self.references)

    @property
    def size(self) -> str | None:
        """The instruction's size bucket (from ``graph_sizes``, else from ``num_nodes``)."""
        if self.graph_sizes:
            return self.graph_sizes[0]
        return size_bucket(self.num_nodes) if self.num_nodes is not None else None
