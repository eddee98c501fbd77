"""Why a text is not a graph: the exceptions of the graph parsers.

All derive from :class:`~pytest_graphinstruct.errors.GraphSyntaxError`, so :func:`parse_graph`
callers catch one type.  :func:`parse_answer` never lets them escape; it turns them into the
``reason`` of a failed :class:`~pytest_graphinstruct.graphs.model.ParseResult`.
"""

from __future__ import annotations

from pytest_graphinstruct.errors import GraphSyntaxError


def where(text: str, pos: int) -> str:
    """``'line L, column C'`` (1-based) of ``pos`` in ``text``."""
    pos = max(0, min(pos, len(text)))
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line}, column {col}"


class ParseError(GraphSyntaxError):
    """A syntax problem; ``str()`` ends with the line and column when a position is known.

    ``pos`` is the offset where scanning may resume (the problem's offset unless a caller moved
    it to the end of a complete block).  The line/column is computed only when the message is
    read: computing it eagerly would make many small errors in one long answer quadratic.
    """

    def __init__(self, message: str, text: str | None = None, pos: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos
        self._text = text
        self._at = pos

    def __str__(self) -> str:
        if self._text is not None and self._at is not None:
            return f"{self.message} at {where(self._text, self._at)}"
        return self.message


class TruncatedError(ParseError):
    """The text ended inside a graph block or literal: the answer was cut off."""


class AbbreviationError(ParseError):
    """An ellipsis, ``range(...)``, ``etc.`` or a comprehension stood in for listed items."""


class LimitExceeded(ParseError):
    """A :class:`~pytest_graphinstruct.graphs.model.Limits` bound was exceeded.

    ``limit`` is the field name (``max_chars``, ``max_nodes``, ``max_edges`` or ``max_depth``);
    the message always names it and its value.
    """

    def __init__(self, what: str, limit: str, value: int) -> None:
        super().__init__(f"{what} exceeds {limit} limit ({value})")
        self.limit = limit
