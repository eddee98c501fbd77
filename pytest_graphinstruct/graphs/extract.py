"""Finding the graph in a raw answer: candidate blocks of every format, and the one that counts.

Formats: code-style blocks (``Graph[...] {...}``, ``DiGraph[...]``, ``GraphEdit[...]``), JSON
graph objects, networkx snippets, and (read from the lines outside all of those) edge/adjacency
list sections.  Each occurrence is an :class:`Attempt`:

- *complete* when its brackets close (a code-style block, a JSON object) — whether or not it is
  a valid graph: a complete block with an abbreviation or a bad ``directed=`` value is the
  model's answer, and a bad one;
- *incomplete* when the text ends inside it (truncation) or, for snippets, when the graph is
  computed rather than listed.

The answer is the complete attempt that starts last (drafts come before final answers).  With no
complete attempt, the last incomplete one explains the failure.  A truncated block reaches to the
end of the text, so nothing after it can be chosen.

Everything here is linear in the answer length: each code-style parse resumes where the previous
one stopped, the text after a truncated block is never rescanned, and a JSON read that fails
continues from the failure point (dicts completed inside it are still seen).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from pytest_graphinstruct.graphs.codestyle import iter_headers, parse_block
from pytest_graphinstruct.graphs.jsonfmt import graph_from_dict, is_graph_dict, key_limits
from pytest_graphinstruct.graphs.linefmt import find_line_graph
from pytest_graphinstruct.graphs.literals import Abbreviation, Lexer, ReadOptions, read_value
from pytest_graphinstruct.graphs.model import GraphEdit, Limits, ParsedGraph
from pytest_graphinstruct.graphs.parse_errors import (
    AbbreviationError,
    LimitExceeded,
    ParseError,
    TruncatedError,
)
from pytest_graphinstruct.graphs.snippet import find_snippets

_JSON_START_RE: Final = re.compile(r"\{\s*+[\"'“”‘’]")
_JSON_GRAPH_KEY_RE: Final = re.compile(
    r"[\"'“”‘’](?:nodes|edges|links|node_list|edge_list|adjacency)[\"'“”‘’]\s*+:", re.I
)
_FORMAT_NAMES: Final = {
    "code": "code-style graph",
    "edit": "GraphEdit",
    "json": "JSON graph",
    "python": "networkx snippet",
    "edgelist": "edge list",
    "adjacency": "adjacency list",
}
#: Formats read from loose lines rather than delimited blocks.
WEAK_FORMATS: Final = frozenset({"edgelist", "adjacency"})


@dataclass
class Attempt:
    """One occurrence of a strong format in the answer."""

    fmt: str  # "code", "edit", "json" or "python"
    start: int
    end: int
    complete: bool
    graph: ParsedGraph | None = None
    edit: GraphEdit | None = None
    error: ParseError | None = None
    evaluate: Callable[[], ParsedGraph] | None = None  # deferred JSON interpretation

    def __post_init__(self) -> None:
        if self.error is not None:
            # a kept traceback pins every frame of the failed parse; thousands of them (hostile
            # input) make each garbage collection slower
            self.error.__traceback__ = None

    @property
    def label(self) -> str:
        return _FORMAT_NAMES[self.fmt]

    @property
    def weak(self) -> bool:
        """True for edge/adjacency lists (a refusal statement outranks them)."""
        return self.fmt in WEAK_FORMATS


def find_attempts(text: str, limits: Limits) -> list[Attempt]:
    """Every strong-format attempt in ``text``, sorted by start offset.

    Raises :class:`~.parse_errors.LimitExceeded` as soon as any limit is exceeded.
    """
    attempts = _code_attempts(text, limits)
    attempts += _json_attempts(text, limits, Spans([(a.start, a.end) for a in attempts]))
    taken = Spans([(a.start, a.end) for a in attempts])
    for snip in find_snippets(text, taken.__contains__, limits):
        attempts.append(
            Attempt(
                "python",
                snip.start,
                snip.end,
                complete=snip.graph is not None,
                graph=snip.graph,
                error=snip.error,
            )
        )
    taken = Spans([(a.start, a.end) for a in attempts])
    lines = find_line_graph(text, limits, taken.gaps(len(text)))
    if lines is not None:
        attempts.append(Attempt(lines.fmt, lines.start, lines.end, True, evaluate=lines.build))
    attempts.sort(key=lambda a: a.start)
    return attempts


def choose(attempts: list[Attempt]) -> Attempt | None:
    """The last complete attempt, else the last incomplete one, else ``None``."""
    for a in reversed(attempts):
        if a.complete:
            return a
    return attempts[-1] if attempts else None


def _code_attempts(text: str, limits: Limits) -> list[Attempt]:
    out: list[Attempt] = []
    resume = 0
    for start in iter_headers(text):
        if start < resume:
            continue  # inside the previous block (a string, a comment)
        fmt = "edit" if text.startswith("GraphEdit", start) else "code"
        try:
            block = parse_block(text, start, limits)
        except LimitExceeded:
            raise
        except TruncatedError as exc:
            out.append(Attempt(fmt, start, len(text), complete=False, error=exc))
            break  # everything after lies inside the truncated block
        except ParseError as exc:
            stop = exc.pos if exc.pos is not None and exc.pos > start else start + 5
            out.append(Attempt(fmt, start, stop, complete=True, error=exc))
            resume = stop
            continue
        if block is None:
            continue
        out.append(
            Attempt(fmt, start, block.end, complete=True, graph=block.graph, edit=block.edit)
        )
        resume = block.end
    return out


class Spans:
    """Sorted, disjoint ``(start, end)`` offset ranges with a fast membership test."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for s, e in sorted(spans):
            if e <= s:
                continue  # holds no offset
            if merged and s < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
            else:
                merged.append((s, e))
        self._starts = [s for s, _ in merged]
        self._ends = [e for _, e in merged]

    def gaps(self, length: int) -> list[tuple[int, int]]:
        """The non-empty ranges of ``[0, length)`` outside every span."""
        out = []
        pos = 0
        for s, e in zip(self._starts, self._ends, strict=True):
            if s >= length:
                break
            if s > pos:
                out.append((pos, s))
            pos = max(pos, e)
        if pos < length:
            out.append((pos, length))
        return out

    def __contains__(self, pos: int) -> bool:
        i = bisect.bisect_right(self._starts, pos) - 1
        return i >= 0 and pos < self._ends[i]


def _json_attempts(text: str, limits: Limits, taken: Spans) -> list[Attempt]:
    out: list[Attempt] = []
    found: list[tuple[dict[Any, Any], int, int]] = []

    def on_dict(d: dict[Any, Any], start: int, end: int) -> None:
        if is_graph_dict(d):
            found.append((d, start, end))

    opts = ReadOptions(
        max_depth=limits.max_depth,
        max_items=max(limits.max_nodes, limits.max_edges),
        key_limits=key_limits(limits),
        on_dict=on_dict,
    )
    resume = 0
    for m in _JSON_START_RE.finditer(text):
        start = m.start()
        if start < resume or start in taken:
            continue
        lx = Lexer(text, start)
        found.clear()
        try:
            read_value(lx, opts)
            resume = lx.last_end
        except LimitExceeded:
            raise
        except TruncatedError as exc:
            completed_inside = bool(found)
            _add_found(out, found, lx, limits)
            if not completed_inside and _JSON_GRAPH_KEY_RE.search(text, start):
                out.append(Attempt("json", start, len(text), complete=False, error=exc))
            break
        except ParseError as exc:
            resume = exc.pos if exc.pos is not None and exc.pos > start else m.end()
        _add_found(out, found, lx, limits)
    return out


def _add_found(
    out: list[Attempt],
    found: list[tuple[dict[Any, Any], int, int]],
    lx: Lexer,
    limits: Limits,
) -> None:
    """Attempts for the outermost graph-like dicts completed during one read."""
    kept_end = -1
    for d, start, end in sorted(found, key=lambda f: (f[1], -f[2])):
        if start < kept_end:
            continue  # nested in a graph dict already kept
        kept_end = end
        abbreviation = next((a for a in lx.abbreviations if start <= a.pos < end), None)
        out.append(
            Attempt(
                "json",
                start,
                end,
                complete=True,
                evaluate=_json_evaluator(d, limits, abbreviation, lx.text),
            )
        )
    found.clear()


def _json_evaluator(
    d: dict[Any, Any], limits: Limits, abbreviation: Abbreviation | None, text: str
) -> Callable[[], ParsedGraph]:
    def evaluate() -> ParsedGraph:
        if abbreviation is not None:
            raise AbbreviationError(
                f"abbreviation {abbreviation.text!r} used instead of listing every item",
                text,
                abbreviation.pos,
            )
        return graph_from_dict(d, limits)

    return evaluate
