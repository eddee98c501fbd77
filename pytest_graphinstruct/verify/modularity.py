"""Greedy (Clauset–Newman–Moore) modularity, the same to the last bit as networkx's, faster.

The verifier's ``modularity`` is ``nx.community.modularity(G, greedy_modularity_communities(G))``
(unweighted, resolution 1).  :func:`greedy_modularity` returns the same communities, in the same
order, and the same float, about 10× faster on the verifier's graphs (bench/modularity_bench.py):

* **The merge order.**  networkx keeps a heap of merge gains per community and a heap of the
  rows' best; what it pops is the largest gain ``ΔQ`` (a float), ties going to the smallest
  ordered pair ``(u, v)`` of node ids (so ``u < v``), and ``u`` is merged *into* ``v`` (the
  community keeps ``v``'s name).  It stops before the first merge whose gain is negative (a zero
  gain still merges) or when no two communities are joined by an edge.  Here one lazy heap of
  ``(−ΔQ, u, v)`` over the pairs ``u < v`` pops the same pair: the order is the same total order
  on the same current pairs.  An entry whose gain is no longer the pair's is skipped when popped
  (one equal to it stands for the current pair); a negative gain is never pushed, since networkx
  stops before taking one, so the heap running dry is networkx's stop.
* **The gains are networkx's floats, not exact values.**  Two gains that are equal as rationals
  can differ in their last bit after networkx's roundings, and the tie rule then does not apply,
  so the gains are computed with networkx's operations, grouped as it groups them:
  ``a_x = (d_x·(1/m))·0.5``, the first gain ``1/m − (a_u·a_v + a_u·a_v)``, after a merge the sum
  of the two gains for a common neighbour, else the gain less ``a_u·a_w + a_u·a_w`` (``a_u`` of
  the community that was not the neighbour's, before the merge), then ``a_v += a_u``.  IEEE
  addition and multiplication of two floats are commutative, so only the grouping had to be kept.
* **The modularity** sums, over the communities sorted by size (largest first, stable on the
  graph's order of each community's name), ``L_c / (Σd / 2) − D_c·D_c·(1 / (Σd)²)``, with
  ``L_c`` the edges inside (self-loops included) and ``D_c`` the degree sum (a self-loop adds 2),
  added left to right by the built-in ``sum``, as networkx adds them.

Graphs whose node ids are not all ``str`` or all ``int`` (the ids are compared on ties) are
handed to networkx itself.  tests/verify/test_modularity.py checks communities and float with
``==`` against networkx on every reference graph of both suites and on Hypothesis graphs.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

import networkx as nx

from pytest_graphinstruct.verify.node_order import Node

#: The node ids merged here: all ``str`` or all ``int`` (ordered as networkx orders them).
K = TypeVar("K", str, int)


@dataclass(frozen=True)
class Communities:
    """A greedy modularity partition and its modularity.

    Attributes:
        parts: the communities, as networkx's ``greedy_modularity_communities`` lists them
            (largest first; equal sizes in the graph's order of the node each is named by).
        modularity: ``nx.community.modularity`` of ``parts`` (unweighted, resolution 1).
    """

    parts: tuple[frozenset[Node], ...]
    modularity: float


def greedy_modularity(graph: nx.Graph) -> Communities:
    """The communities and modularity networkx's greedy modularity gives ``graph``, unweighted.

    Args:
        graph: an undirected simple ``nx.Graph`` (self-loops allowed) with at least one edge;
            edge attributes are ignored.

    Returns the same communities (same order) and the same float as
    ``greedy_modularity_communities(graph, weight=None)`` followed by
    ``modularity(graph, parts, weight=None)``.

    >>> g = nx.Graph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e"), ("e", "f"),
    ...               ("f", "d")])
    >>> result = greedy_modularity(g)
    >>> [sorted(part) for part in result.parts], round(result.modularity, 6)
    ([['a', 'b', 'c'], ['d', 'e', 'f']], 0.357143)
    """
    adj = graph._adj
    kinds = set(map(type, adj))
    if kinds != {str} and kinds != {int}:
        return _networkx(graph)
    degree = {v: len(nbrs) + (v in nbrs) for v, nbrs in adj.items()}
    members = _merge(adj, degree)
    return _scored(adj, degree, members)


def _networkx(graph: nx.Graph) -> Communities:
    parts = nx.community.greedy_modularity_communities(graph, weight=None)
    return Communities(tuple(frozenset(p) for p in parts),
                       float(nx.community.modularity(graph, parts, weight=None)))


def _merge(adj: Mapping[K, Mapping[K, object]], degree: Mapping[K, int]) -> dict[K, list[K]]:
    """The members of every community left when the greedy merges stop, by the node that
    names it (the community that absorbed the others keeps its name, as in networkx)."""
    m = sum(degree.values()) // 2
    q0 = 1 / m
    a = {v: d * q0 * 0.5 for v, d in degree.items()}
    rows: dict[K, dict[K, float]] = {v: {} for v in adj}
    heap: list[tuple[float, K, K]] = []
    for u, nbrs in adj.items():
        row, au = rows[u], a[u]
        for w in nbrs:
            if u < w:
                dq = row[w] = rows[w][u] = q0 - (au * a[w] + au * a[w])
                if dq >= 0:  # a negative gain is never taken: networkx stops first
                    heap.append((-dq, u, w))
    heapq.heapify(heap)
    members = {v: [v] for v in adj}
    bound = 3 * m + 64  # stale entries past this are dropped (at most m pairs are current)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        neg, u, v = pop(heap)
        row_u = rows[u]
        if row_u.get(v) != -neg:
            continue  # stale: the pair's gain has changed, or one of the two is merged away
        row_v = rows[v]
        del row_u[v], row_v[u]
        au, av = a[u], a[v]
        for w, dvw in row_v.items():
            row_w = rows[w]
            duw = row_u.pop(w, None)
            if duw is None:
                t = au * a[w]
                dq = dvw - (t + t)
            else:
                dq = dvw + duw
                del row_w[u]
            row_v[w] = row_w[v] = dq
            if dq >= 0:
                push(heap, (-dq, w, v) if w < v else (-dq, v, w))
        for w, duw in row_u.items():
            t = av * a[w]
            row_w = rows[w]
            del row_w[u]
            dq = row_v[w] = row_w[v] = duw - (t + t)
            if dq >= 0:
                push(heap, (-dq, w, v) if w < v else (-dq, v, w))
        rows[u] = {}
        a[v] = av + au
        members[v] += members.pop(u)
        if len(heap) > bound:
            heap = [e for e in heap if rows[e[1]].get(e[2]) == -e[0]]
            heapq.heapify(heap)
    return members


def _scored(adj: Mapping[K, Mapping[K, object]], degree: Mapping[K, int],
            members: dict[K, list[K]]) -> Communities:
    """The communities in networkx's order, with their modularity summed as networkx sums it."""
    deg_sum = sum(degree.values())
    m = deg_sum / 2
    norm = 1 / deg_sum**2
    parts = []
    contributions = []
    for c in sorted((c for c in adj if c in members), key=lambda c: len(members[c]),
                    reverse=True):
        group = frozenset(members[c])
        d = twice_inside = 0
        for v in group:
            nbrs = adj[v]
            d += degree[v]
            # an edge inside is met from both ends; a self-loop once, plus once more here
            twice_inside += len(nbrs.keys() & group) + degree[v] - len(nbrs)
        parts.append(group)
        contributions.append(twice_inside // 2 / m - d * d * norm)
    return Communities(tuple(parts), sum(contributions))
