"""Edge/node differences between a base graph and an edited result (L5 edit size).

Edges are compared *direction-aware* only when both graphs are directed; otherwise both are read
as undirected pairs (a directed answer to an undirected base is compared by its underlying
pairs).  An undirected edge is written ``(u, v)`` with ``u`` first in natural order (numeric ids
numerically), so every pair has one spelling.  A reversed arc (``u→v`` replaced by ``v→u``) is
one removal plus one addition: it counts 2 in :attr:`EditDiff.edge_changes`, exactly as a
``GraphEdit`` has to spell it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx
import numpy as np

from pytest_graphinstruct.graphs.model import Edge, ParsedGraph
from pytest_graphinstruct.vocab import natural_key


def edge_key(directed: bool, u: object, v: object) -> Edge:
    """The canonical spelling of one edge: ``(u, v)`` for arcs, else the pair in
    :func:`natural` order (``('2', '10')``)."""
    a, b = str(u), str(v)
    if directed or (natural(a), a) <= (natural(b), b):
        return (a, b)
    return (b, a)


def edge_set(g: nx.Graph, directed: bool) -> frozenset[Edge]:
    """Every edge of ``g`` in canonical spelling (as :func:`edge_key`); ``directed=False``
    collapses arc pairs.  Each node's natural key is computed once, not once per edge."""
    if directed:
        return frozenset((str(u), str(v)) for u, v in g.edges())
    rank = _natural_ranks(str(v) for v in g)
    out: set[Edge] = set()
    for u, v in g.edges():
        a, b = str(u), str(v)
        out.add((a, b) if rank[a] <= rank[b] else (b, a))
    return frozenset(out)


def node_set(g: nx.Graph) -> frozenset[str]:
    return frozenset(str(n) for n in g.nodes())


def compare_mode(base: ParsedGraph, result: ParsedGraph) -> bool:
    """True when the two graphs are compared arc by arc (both directed)."""
    return base.directed and result.directed


def sorted_edges(edges: Iterable[Edge]) -> tuple[Edge, ...]:
    """``edges`` sorted by (natural first id, first id, natural second id, second id).

    Each distinct id is ranked once in that order; the edges are then ordered by their pair
    of ranks (numpy's stable lexsort for many edges) — the same order as sorting by the keys."""
    items = list(edges)
    if len(items) < 2:
        return tuple(items)
    rank = _natural_ranks(x for e in items for x in e)
    if len(items) < _NUMPY_SORT_FROM:
        return tuple(sorted(items, key=lambda e: (rank[e[0]], rank[e[1]])))
    first = np.fromiter((rank[e[0]] for e in items), dtype=np.int64, count=len(items))
    second = np.fromiter((rank[e[1]] for e in items), dtype=np.int64, count=len(items))
    return tuple(items[i] for i in np.lexsort((second, first)).tolist())


#: Below this many edges a plain ``sorted`` is faster than building numpy arrays.
_NUMPY_SORT_FROM = 256


def _natural_ranks(ids: Iterable[str]) -> dict[str, int]:
    """Each distinct id's position in (natural key, text) order — a total order on strings."""
    return {s: i for i, s in enumerate(sorted(set(ids), key=lambda s: (natural(s), s)))}


def sorted_nodes(nodes: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(nodes, key=lambda s: (natural(s), s)))


natural = natural_key


@dataclass(frozen=True)
class EditDiff:
    """What changed from ``base`` to ``result``.

    All tuples are sorted (numeric ids numerically) and hold canonical spellings (see module
    doc).  ``directed`` says whether edges were compared as arcs.
    """

    added_edges: tuple[Edge, ...]
    removed_edges: tuple[Edge, ...]
    added_nodes: tuple[str, ...]
    removed_nodes: tuple[str, ...]
    directed: bool

    @property
    def edge_changes(self) -> int:
        """Edge additions plus removals: the unit of :func:`minimal_edit` (a reversal is 2)."""
        return len(self.added_edges) + len(self.removed_edges)

    @property
    def size(self) -> int:
        """Alias of :attr:`edge_changes` (the edit size compared with :func:`minimal_edit`)."""
        return self.edge_changes

    @property
    def reversed_edges(self) -> tuple[Edge, ...]:
        """Removed arcs ``(u, v)`` whose reverse ``(v, u)`` was added (directed only)."""
        if not self.directed:
            return ()
        added = set(self.added_edges)
        return tuple(e for e in self.removed_edges if (e[1], e[0]) in added)

    def to_json(self) -> dict[str, object]:
        return {
            "added_edges": [list(e) for e in self.added_edges],
            "removed_edges": [list(e) for e in self.removed_edges],
            "added_nodes": list(self.added_nodes),
            "removed_nodes": list(self.removed_nodes),
            "directed": self.directed,
        }


def edit_distance(base: ParsedGraph, result: ParsedGraph) -> EditDiff:
    """The edges and nodes added and removed going from ``base`` to ``result``.

    Direction-aware when both graphs are directed, else pairs are unordered.  Node ids are
    compared as strings.
    """
    directed = compare_mode(base, result)
    return diff_of(edge_set(base.graph, directed), edge_set(result.graph, directed),
                   node_set(base.graph), node_set(result.graph), directed)


def diff_of(be: frozenset[Edge], re_: frozenset[Edge], bn: frozenset[str], rn: frozenset[str],
            directed: bool) -> EditDiff:
    """The :class:`EditDiff` of edge sets ``be`` → ``re_`` and node sets ``bn`` → ``rn``
    already in canonical spelling (for callers that need the sets themselves too)."""
    return EditDiff(
        added_edges=sorted_edges(re_ - be),
        removed_edges=sorted_edges(be - re_),
        added_nodes=sorted_nodes(rn - bn),
        removed_nodes=sorted_nodes(bn - rn),
        directed=directed,
    )


def edit_size(base: ParsedGraph, result: ParsedGraph) -> int:
    """``edit_distance(base, result).size`` without sorting the changed edges."""
    directed = compare_mode(base, result)
    return len(edge_set(base.graph, directed) ^ edge_set(result.graph, directed))
