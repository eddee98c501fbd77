"""Graphs spelled out as networkx python code.

A snippet is a run of statements about one graph variable::

    G = nx.Graph()                      # nx.DiGraph() -> directed; networkx.Graph also fine
    G.add_nodes_from([0, 1, 2])
    G.add_node(3, label='x')
    G.add_edges_from([(0, 1), (1, 2)])
    G.add_edge(2, 3, weight=2)
    G.add_weighted_edges_from([(0, 3, 1.5)])
    G.remove_edge(0, 1)                 # remove_edges_from / remove_node / remove_nodes_from too

Arguments must be literals, or names assigned a literal earlier at the start of a line
(``edges = [(0, 1), (1, 2)]`` then ``G.add_edges_from(edges)``).  ``nx.Graph(<edge list>)`` and
``nx.Graph({0: [1, 2]})`` (dict of lists) are understood.  A snippet whose edges are computed
(loops, comprehensions, generators like ``nx.cycle_graph(5)``, unknown variables) is *not*
complete: it is reported with the reason, never guessed at.

Each ``X = nx.Graph(...)`` starts a new snippet for ``X``; method calls on a variable without a
constructor start an undirected one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from pytest_graphinstruct.graphs.build import (
    GraphBuilder,
    edge_parts,
    node_id,
    node_parts,
    ordered_items,
)
from pytest_graphinstruct.graphs.literals import (
    Abbreviation,
    Call,
    Lexer,
    Name,
    ReadOptions,
    read_value,
)
from pytest_graphinstruct.graphs.model import Limits, ParsedGraph
from pytest_graphinstruct.graphs.parse_errors import (
    AbbreviationError,
    LimitExceeded,
    ParseError,
    TruncatedError,
)

_EVENT_RE: Final = re.compile(
    r"\b([A-Za-z_]\w*+)\s*+=\s*+(?:nx|networkx)\s*+\.\s*+(Graph|DiGraph|MultiGraph|MultiDiGraph)"
    r"\s*+\("
    r"|\b([A-Za-z_]\w*+)\s*+\.\s*+(add_edges_from|add_weighted_edges_from|add_edge|add_nodes_from"
    r"|add_node|remove_edges_from|remove_edge|remove_nodes_from|remove_node)\s*+\("
    r"|^[ \t]*+([A-Za-z_]\w*+)[ \t]*+=[ \t]*+(?=[\[({])",
    re.MULTILINE,
)
#: Cheap test whether a text may hold a snippet at all.
HINT_RE: Final = re.compile(r"\.\s*+add_(?:weighted_)?(?:edge|node)")


@dataclass
class Snippet:
    """One graph variable's statements; ``error`` says why it cannot be used when set."""

    var: str
    start: int
    end: int
    directed: bool = False
    graph: ParsedGraph | None = None
    error: ParseError | None = None
    ops: list[tuple[str, tuple[Any, ...], dict[str, Any], int]] = field(default_factory=list)


class _Unresolved(Exception):
    """An argument is code, not a literal."""


def find_snippets(text: str, skip: Callable[[int], bool], limits: Limits) -> list[Snippet]:
    """All snippets of ``text``, ignoring statements at offsets where ``skip`` is true.

    A :class:`~.parse_errors.LimitExceeded` propagates.
    """
    if HINT_RE.search(text) is None:
        return []
    opts = ReadOptions(
        max_depth=limits.max_depth,
        max_items=max(limits.max_nodes, limits.max_edges),
        bare_names=False,
    )
    assigned: dict[str, tuple[int, Any]] = {}
    current: dict[str, Snippet] = {}
    snippets: list[Snippet] = []
    pos = 0
    while True:
        m = _EVENT_RE.search(text, pos)
        if m is None:
            break
        start = m.start()
        pos = m.end()
        if skip(start):
            continue
        lx = Lexer(text, m.end())
        try:
            if m.group(1):  # constructor
                var = m.group(1)
                args, kwargs = _read_call(lx, opts, m.start(2))
                _check_abbreviations(lx)
                snip = Snippet(var, start, lx.last_end, directed="Di" in m.group(2))
                snip.ops.append(("init", args, kwargs, start))
                current[var] = snip
                snippets.append(snip)
            elif m.group(3):  # method call
                var = m.group(3)
                args, kwargs = _read_call(lx, opts, m.start(4))
                _check_abbreviations(lx)
                if var in current:
                    snip = current[var]
                else:
                    snip = Snippet(var, start, lx.last_end)
                    current[var] = snip
                    snippets.append(snip)
                snip.ops.append((m.group(4), args, kwargs, start))
                snip.end = lx.last_end
            else:  # name = literal
                assigned[m.group(5)] = (start, read_value(lx, opts))
            pos = max(pos, lx.last_end)
        except TruncatedError as exc:
            if not m.group(5):
                _fail(current, m, start, snippets, exc)
                current[m.group(1) or m.group(3)].end = len(text)
            break  # the rest of the text is inside the unfinished call
        except AbbreviationError as exc:
            _fail(current, m, start, snippets, exc)
        except ParseError as exc:
            if m.group(5):
                continue  # not a literal assignment; uses of the name stay unresolved
            reason = f"python snippet computes values instead of listing them ({exc})"
            _fail(current, m, start, snippets, ParseError(reason))
    for snip in snippets:
        if snip.error is None:
            _evaluate(snip, assigned, limits)
    return snippets


def _check_abbreviations(lx: Lexer) -> None:
    if lx.abbreviations:
        ab = lx.abbreviations[0]
        raise AbbreviationError(
            f"abbreviation {ab.text!r} used instead of listing every item", lx.text, ab.pos
        )


def _fail(
    current: dict[str, Snippet],
    m: re.Match[str],
    start: int,
    snippets: list[Snippet],
    exc: ParseError,
) -> None:
    var = m.group(1) or m.group(3)
    snip = current.get(var)
    if snip is None or m.group(1):
        snip = Snippet(var, start, start)
        current[var] = snip
        snippets.append(snip)
    if snip.error is None:
        snip.error = exc


def _read_call(
    lx: Lexer, opts: ReadOptions, name_pos: int
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Positional and keyword arguments of the call whose function name starts at ``name_pos``."""
    lx.seek(name_pos)
    value = read_value(lx, opts)
    if isinstance(value, Abbreviation):
        raise AbbreviationError(f"abbreviation {value.text!r} used instead of listing items")
    assert isinstance(value, Call)  # the event pattern ends with "name("
    return value.args, dict(value.kwargs)


def _resolve(value: Any, assigned: dict[str, tuple[int, Any]], before: int) -> Any:
    """Replace variable names by their literal values; raise :class:`_Unresolved` for code."""
    if isinstance(value, Name):
        found = assigned.get(str(value))
        if found is None or found[0] >= before:
            raise _Unresolved(f"uses the variable {value!s} whose value is not a literal")
        return found[1]
    if isinstance(value, Call):
        raise _Unresolved(f"computes values with {value.name}(...)")
    if isinstance(value, Abbreviation):
        raise AbbreviationError(f"abbreviation {value.text!r} used instead of listing items")
    return value


def _evaluate(snip: Snippet, assigned: dict[str, tuple[int, Any]], limits: Limits) -> None:
    builder = GraphBuilder(limits)
    try:
        for op, raw_args, kwargs, at in snip.ops:
            args = [_resolve(a, assigned, at) for a in raw_args]
            kw = {k: _resolve(v, assigned, at) for k, v in kwargs.items()}
            _apply(builder, op, args, kw if op != "init" else {}, assigned, at)
    except _Unresolved as exc:
        snip.error = ParseError(f"python snippet {exc}; edges must be written out")
        return
    except LimitExceeded:
        raise
    except ParseError as exc:
        snip.error = exc
        return
    if builder.num_nodes == 0:
        snip.error = ParseError("python snippet adds no nodes or edges")
        return
    snip.graph = builder.build(snip.directed, fmt="python")


def _deep(value: Any, assigned: dict[str, tuple[int, Any]], at: int) -> Any:
    if isinstance(value, list | tuple):
        return [_deep(_resolve(v, assigned, at), assigned, at) for v in value]
    return _resolve(value, assigned, at)


def _apply(
    builder: GraphBuilder,
    op: str,
    args: list[Any],
    kwargs: dict[str, Any],
    assigned: dict[str, tuple[int, Any]],
    at: int,
) -> None:
    attrs = {str(k): v for k, v in kwargs.items()}
    if op == "init":
        if args:
            data = _deep(args[0], assigned, at)
            if isinstance(data, dict):
                for u, vs in data.items():
                    builder.add_node(node_id(u))
                    targets = vs if isinstance(vs, list | tuple | set | dict) else [vs]
                    for v in ordered_items(targets):
                        builder.add_edge(node_id(u), node_id(v))
            elif isinstance(data, list):
                builder.add_edge_items(data)
            else:
                raise _Unresolved("passes a non-literal to the graph constructor")
        return
    if op == "add_edge":
        if len(args) != 2:
            raise ParseError(f"add_edge takes 2 node ids, got {len(args)}")
        builder.add_edge(node_id(args[0]), node_id(args[1]), attrs or None)
    elif op == "add_node":
        if len(args) != 1:
            raise ParseError(f"add_node takes 1 node id, got {len(args)}")
        builder.add_node(node_id(args[0]), attrs or None)
    elif op in ("add_edges_from", "add_weighted_edges_from"):
        for item in _items(op, args, assigned, at):
            if op == "add_weighted_edges_from" and isinstance(item, list) and len(item) == 3:
                u, v, w = item
                builder.add_edge(node_id(u), node_id(v), {"weight": w, **attrs})
                continue
            u, v, a = edge_parts(item)
            builder.add_edge(u, v, {**attrs, **(a or {})} or None)
    elif op == "add_nodes_from":
        for item in _items(op, args, assigned, at):
            n, a = node_parts(item)
            builder.add_node(n, {**attrs, **(a or {})} or None)
    else:
        raise _Unresolved(f"removes with {op}(), which the parser does not replay")


def _items(op: str, args: list[Any], assigned: dict[str, tuple[int, Any]], at: int) -> list[Any]:
    """The one list/tuple/set argument of an ``*_from`` call, variables resolved."""
    if len(args) != 1:
        raise ParseError(f"{op} takes one list, got {len(args)} arguments")
    items = _deep(args[0], assigned, at)
    if isinstance(items, set | frozenset):
        return list(ordered_items(items))
    if not isinstance(items, list):
        raise ParseError(f"{op} needs a list, got {type(items).__name__}")
    return items
