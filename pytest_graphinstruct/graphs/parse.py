"""The entry points of answer parsing: :func:`parse_answer` (lenient) and :func:`parse_graph`
(strict).  The accepted formats and every rule are described in docs/PARSING.md.
"""

from __future__ import annotations

import re
from typing import Any, Final

from pytest_graphinstruct.errors import GraphSyntaxError
from pytest_graphinstruct.graphs.codestyle import iter_headers, parse_block
from pytest_graphinstruct.graphs.edit import apply_edit
from pytest_graphinstruct.graphs.extract import Attempt, choose, find_attempts
from pytest_graphinstruct.graphs.model import (
    DEFAULT_LIMITS,
    Limits,
    Outcome,
    ParsedGraph,
    ParseResult,
)
from pytest_graphinstruct.graphs.parse_errors import (
    AbbreviationError,
    LimitExceeded,
    ParseError,
    TruncatedError,
    where,
)
from pytest_graphinstruct.graphs.refusal import find_refusal

_FENCE_OPEN_RE: Final = re.compile(r"\s*+(?:```[\w+-]*+\s*+)?")
_FENCE_CLOSE_RE: Final = re.compile(r"\s*+(?:```\s*+)?")
_ABBREVIATION_NOTE: Final = (
    " (answers must list every node and edge: no ellipsis, range() or other abbreviations)"
)


def _failure(reason: str) -> ParseResult:
    return ParseResult(Outcome.FAILURE, reason=reason)


def parse_answer(
    text: str,
    *,
    base: ParsedGraph | None = None,
    drop_isolated: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> ParseResult:
    """Recover the graph a model meant from its raw answer.  Never raises.

    Returns a :class:`ParseResult`:

    - ``GRAPH`` with the graph of the last complete code-style block, JSON graph or networkx
      snippet (else of the last edge/adjacency list section).  A ``GraphEdit`` answer is applied
      to ``base`` (``fmt='edit'``; ``drop_isolated`` as in :func:`~.edit.apply_edit`); a full
      ``Graph[...]`` answer is taken as is even when ``base`` is given;
    - ``REFUSAL`` when there is no usable graph and the text states the task is impossible
      (``reason`` quotes the sentence);
    - ``FAILURE`` otherwise, ``reason`` saying why: not a string, a limit exceeded (naming it),
      an abbreviation, a truncated block, a syntax error (with line and column), a GraphEdit
      without a base graph, or nothing graph-like at all.
    """
    try:
        return _parse_answer(text, base, drop_isolated, limits)
    except LimitExceeded as exc:
        return _failure(str(exc))
    except Exception as exc:  # the promise is "never raises": report, don't crash a benchmark
        return _failure(f"internal parser error ({type(exc).__name__}): {exc}")


def _parse_answer(
    text: Any, base: ParsedGraph | None, drop_isolated: bool, limits: Limits
) -> ParseResult:
    if not isinstance(text, str):
        return _failure(f"answer is not a string (got {type(text).__name__})")
    if len(text) > limits.max_chars:
        return _failure(f"answer exceeds max_chars limit ({limits.max_chars})")
    if not text.strip():
        return _failure("empty answer")

    attempts = find_attempts(text, limits)
    chosen = choose(attempts)
    if chosen is not None and chosen.complete and not chosen.weak:
        return _from_attempt(text, chosen, base, drop_isolated)
    # No usable block: a refusal statement outranks a truncated block, a block whose graph is
    # computed, and a reading of loose lines as an edge/adjacency list.
    refusal = find_refusal(text)
    if refusal is not None:
        return ParseResult(Outcome.REFUSAL, reason=refusal)
    if chosen is None:
        return _failure(
            "no graph found: the answer holds no Graph[...] block, JSON graph, networkx "
            "snippet, edge list or adjacency list"
        )
    if chosen.complete:
        return _from_attempt(text, chosen, base, drop_isolated)
    return _failure(_explain(text, chosen))


def _explain(text: str, attempt: Attempt) -> str:
    """The failure reason for an attempt that did not yield a graph."""
    exc = attempt.error
    message = str(exc) if exc is not None else "unknown problem"
    if isinstance(exc, TruncatedError):
        return (
            f"truncated answer: the {attempt.label} starting at {where(text, attempt.start)} "
            f"is not closed ({message})"
        )
    if isinstance(exc, AbbreviationError):
        return f"{attempt.label}: {message}{_ABBREVIATION_NOTE}"
    return f"{attempt.label} at {where(text, attempt.start)}: {message}"


def _from_attempt(
    text: str, attempt: Attempt, base: ParsedGraph | None, drop_isolated: bool
) -> ParseResult:
    if attempt.error is not None:
        return _failure(_explain(text, attempt))
    if attempt.edit is not None:
        if base is None:
            return _failure(
                "a GraphEdit answer needs a base graph to apply it to, and none was given"
            )
        return ParseResult(
            Outcome.GRAPH, graph=apply_edit(base, attempt.edit, drop_isolated=drop_isolated)
        )
    graph = attempt.graph
    if graph is None and attempt.evaluate is not None:
        try:
            graph = attempt.evaluate()
        except LimitExceeded:
            raise
        except ParseError as exc:
            attempt.error = exc
            return _failure(_explain(text, attempt))
    assert graph is not None
    return ParseResult(Outcome.GRAPH, graph=graph)


def parse_graph(text: str, *, limits: Limits = DEFAULT_LIMITS) -> ParsedGraph:
    """Parse a text that must be exactly one code-style ``Graph[...] {...}`` block.

    Surrounding whitespace and a markdown code fence are allowed; anything else (prose, a second
    block, a GraphEdit, a truncated block, an abbreviation, a limit exceeded) raises
    :class:`~pytest_graphinstruct.errors.GraphSyntaxError` with the reason and position.
    Node lists that repeat ids are deduplicated; ``declared_nodes`` keeps the header's value.
    """
    if not isinstance(text, str):
        raise GraphSyntaxError(f"graph text must be a str, got {type(text).__name__}")
    if len(text) > limits.max_chars:
        raise LimitExceeded("graph text", "max_chars", limits.max_chars)
    start = next(iter_headers(text), None)
    if start is None:
        raise ParseError("no Graph[...] { ... } block found")
    if _FENCE_OPEN_RE.fullmatch(text, 0, start) is None:
        raise ParseError("unexpected text before the graph block", text, 0)
    block = parse_block(text, start, limits)
    if block is None:
        raise ParseError("malformed graph header (expected Graph[key=value, ...] {)", text, start)
    if block.graph is None:
        raise ParseError("expected a Graph[...] block, got a GraphEdit", text, start)
    if _FENCE_CLOSE_RE.fullmatch(text, block.end) is None:
        raise ParseError("unexpected text after the graph block", text, block.end)
    return block.graph
