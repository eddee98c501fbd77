"""The average local clustering coefficient of one undirected graph (:func:`average_clustering`),
bit for bit as networkx computes it, with each neighbourhood built once."""

from __future__ import annotations

import networkx as nx


def average_clustering(undirected: nx.Graph) -> float:
    """``nx.average_clustering(undirected)`` (unweighted, nodes of degree < 2 counting 0) to the
    last bit; ``undirected`` must have at least one node.

    Same arithmetic in the same order: per node (graph order) the number of ordered neighbour
    pairs joined by an edge ``t`` (self-loops ignored) gives ``0`` or ``t / (d·(d−1))``; these
    are summed left to right from ``0`` and divided by the node count.  networkx rebuilds the
    neighbour set of every neighbour for every node; here each is built once.
    """
    neighbours = {v: set(nbrs) for v, nbrs in undirected.adjacency()}
    for v, vs in neighbours.items():
        vs.discard(v)
    total: float = 0
    for vs in neighbours.values():
        t = sum([len(vs & neighbours[w]) for w in vs])
        if t:
            d = len(vs)
            total += t / (d * (d - 1))
    return total / len(neighbours)
