"""What shows a structural check failed, in natural node order: one cycle, a Kuratowski
subgraph, the node pairs joined in both directions."""

from __future__ import annotations

import networkx as nx

from pytest_graphinstruct.verify.node_order import Node, node_sort_key, sorted_nodes


def one_cycle(graph: nx.Graph) -> list[list[Node]] | None:
    """One cycle of ``graph`` as a list of edges ``[u, v]`` (directed: a directed cycle);
    ``None`` when it has none."""
    orientation = "original" if graph.is_directed() else None
    try:
        found = nx.find_cycle(graph, orientation=orientation)
    except nx.NetworkXNoCycle:
        return None
    return [[e[0], e[1]] for e in found]


def kuratowski_edges(undirected: nx.Graph) -> list[list[Node]] | None:
    """The edges of a Kuratowski subgraph of ``undirected`` (a subdivision of K5 or K3,3),
    sorted; ``None`` when it is planar."""
    planar, witness = nx.check_planarity(undirected, counterexample=True)
    if planar:
        return None
    edges = [sorted_nodes(e) for e in witness.edges()]
    return sorted(edges, key=lambda e: tuple(map(node_sort_key, e)))


def antiparallel_pairs(digraph: nx.DiGraph) -> list[list[Node]]:
    """Pairs ``[u, v]`` (u before v in natural order) joined by arcs in both directions."""
    g = digraph
    pairs = {tuple(sorted_nodes((u, v))) for u, v in g.edges() if u != v and g.has_edge(v, u)}
    return [list(p) for p in sorted(pairs, key=lambda p: tuple(map(node_sort_key, p)))]
