"""Graphs as the verifier sees them: parsing raw model answers, applying edits, serializing.

Public API::

    parse_answer(text, *, base=None, drop_isolated=False, limits=DEFAULT_LIMITS) -> ParseResult
    parse_graph(text, *, limits=DEFAULT_LIMITS) -> ParsedGraph          # strict, raises
    apply_edit(base, edit, *, drop_isolated=False) -> ParsedGraph
    serialize(graph, *, name=None) -> str                              # canonical code-style
    find_refusal(text) -> str | None

See docs/PARSING.md for the accepted formats and rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_graphinstruct.graphs.model import (
    DEFAULT_LIMITS,
    GraphEdit,
    Limits,
    Outcome,
    ParsedGraph,
    ParseResult,
)
from pytest_graphinstruct.lazy import lazy_attribute

if TYPE_CHECKING:
    from pytest_graphinstruct.graphs.edit import apply_edit
    from pytest_graphinstruct.graphs.parse import parse_answer, parse_graph
    from pytest_graphinstruct.graphs.refusal import find_refusal
    from pytest_graphinstruct.graphs.serialize import serialize

_LAZY = {"apply_edit": ".edit", "parse_answer": ".parse", "parse_graph": ".parse",
         "find_refusal": ".refusal", "serialize": ".serialize"}
"""The functions, each imported from its module on first use: a process that only reads
records (the xdist controller writing the report) never imports the parser nor networkx."""


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _LAZY, globals(), name)


__all__ = [
    "DEFAULT_LIMITS",
    "GraphEdit",
    "Limits",
    "Outcome",
    "ParseResult",
    "ParsedGraph",
    "apply_edit",
    "find_refusal",
    "parse_answer",
    "parse_graph",
    "serialize",
]
