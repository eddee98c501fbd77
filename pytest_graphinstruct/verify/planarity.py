"""Whether one undirected graph is planar (:func:`is_planar`): networkx's planarity test, run
only on what is left after reductions that never change the answer, and skipped where edge
counts decide."""

from __future__ import annotations

from collections.abc import Hashable

import networkx as nx


def is_planar(undirected: nx.Graph) -> bool:
    """``nx.check_planarity(undirected)[0]``, computed on a smaller graph with the same answer.

    Each reduction keeps planarity either way: self-loops and repeated edges never matter; a
    node of degree 0 or 1 can be dropped; a node of degree 2 can be replaced by an edge between
    its two neighbours (the graphs are homeomorphic).  On what remains, simple with ``n`` nodes
    and ``k`` edges: ``k <= 8`` is planar (a subdivision of K5 or K3,3, which every non-planar
    graph contains, has at least 9 edges) and ``k > 3n - 6`` is not (Euler's bound); otherwise
    networkx's left-right test decides.
    """
    adj = _reduced(undirected)
    n = len(adj)
    k = sum(map(len, adj.values())) // 2
    if k <= 8:
        return True
    if k > 3 * n - 6:
        return False
    rest = nx.Graph()
    rest.add_nodes_from(adj)
    rest.add_edges_from((v, w) for v, ws in adj.items() for w in ws)
    ok, _ = nx.check_planarity(rest)
    return bool(ok)


def _reduced(undirected: nx.Graph) -> dict[Hashable, set[Hashable]]:
    """Neighbour sets of ``undirected`` without self-loops after dropping nodes of degree < 2
    and replacing nodes of degree 2 by an edge, until no node has degree < 3."""
    adj = {v: set(nbrs) for v, nbrs in undirected.adjacency()}
    for v, nbrs in adj.items():
        nbrs.discard(v)
    stack = [v for v, nbrs in adj.items() if len(nbrs) <= 2]
    while stack:
        v = stack.pop()
        ws = adj.get(v)
        if ws is None or len(ws) > 2:
            continue
        del adj[v]
        for w in ws:
            adj[w].discard(v)
        if len(ws) == 2:
            a, b = ws
            if b not in adj[a]:
                adj[a].add(b)
                adj[b].add(a)
                continue  # a and b keep their degrees
        stack.extend(ws)
    return adj
