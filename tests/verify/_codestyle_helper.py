"""Test-local stand-ins for the answer parser, used until ``graphs/parse.py`` exists.

``to_parsed(text)`` reads the code-style ``Graph[...] {...}`` strings of the official suite
(``node_list``/``edge_list`` only; ids as ``str``; ``directed=true`` header ⇒ ``DiGraph``).
``edit_lists(text)`` reads a ``GraphEdit`` string's ``add_edges``/``remove_edges``.  When the real
parser is importable, :func:`to_parsed` delegates to it so the tests exercise the real thing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import networkx as nx

from pytest_graphinstruct.graphs.model import ParsedGraph

_HEADER_RE = re.compile(r"(?:Graph|GraphEdit)\[([^\]]*)\]")
_LIST_RE = re.compile(r"\b{name}\s*=\s*\[(.*?)\]\s*;", re.S)
_ATOM_RE = re.compile(r"'([^']*)'|\"([^\"]*)\"|(-?\w+)")
_PAIR_RE = re.compile(r"\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*(?:,[^()]*)?\)")


def _atom(tok: str) -> str:
    return tok.strip().strip("'\"")


def _list(text: str, name: str) -> str | None:
    m = re.search(_LIST_RE.pattern.format(name=name), text, re.S)
    return m.group(1) if m else None


def _pairs(body: str | None) -> list[tuple[str, str]]:
    if body is None:
        return []
    return [(_atom(a), _atom(b)) for a, b in _PAIR_RE.findall(body)]


def _fallback(text: str) -> ParsedGraph:
    header = _HEADER_RE.search(text)
    directed = bool(header and re.search(r"directed\s*=\s*(true|True|1)", header.group(1)))
    g: nx.Graph = nx.DiGraph() if directed else nx.Graph()
    nodes = _list(text, "node_list")
    if nodes is not None:
        for m in _ATOM_RE.finditer(nodes):
            g.add_node(next(x for x in m.groups() if x is not None))
    g.add_edges_from(_pairs(_list(text, "edge_list")))
    return ParsedGraph(graph=g)


def to_parsed(text: str) -> ParsedGraph:
    """A :class:`ParsedGraph` for one official code-style graph string."""
    try:
        from pytest_graphinstruct.graphs.parse import parse_graph
    except ImportError:
        return _fallback(text)
    return parse_graph(text)


def edit_lists(text: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(add_edges, remove_edges)`` of a ``GraphEdit[...]`` string, endpoints as ``str``."""
    return _pairs(_list(text, "add_edges")), _pairs(_list(text, "remove_edges"))


def apply_edit(
    base: ParsedGraph,
    add: Iterable[tuple[str, str]],
    remove: Iterable[tuple[str, str]],
    drop_isolated: bool = False,
) -> ParsedGraph:
    """Base with ``remove`` then ``add`` applied; optionally drop nodes left isolated by it."""
    g = base.graph.copy()
    touched: set[str] = set()
    for u, v in remove:
        if g.has_edge(u, v):
            g.remove_edge(u, v)
            touched.update((u, v))
    g.add_edges_from(add)
    if drop_isolated:
        g.remove_nodes_from([n for n in touched if g.degree(n) == 0])
    return ParsedGraph(graph=g, fmt="edit")
