"""The (weak) connected components of one graph, in a fixed order (:class:`Components`), and
the graph that edge connectivity is asked of (:func:`without_self_loops`)."""

from __future__ import annotations

from functools import cached_property

import networkx as nx

from pytest_graphinstruct.verify.node_order import Node, node_sort_key, sorted_nodes


class Components:
    """The connected components of an undirected graph (a directed graph's undirected view:
    its weak components), computed on first use.

    Args:
        undirected: an ``nx.Graph``, never modified.
    """

    def __init__(self, undirected: nx.Graph) -> None:
        self.undirected = undirected

    @cached_property
    def _node_sets(self) -> list[set[Node]]:
        """The components as found, unsorted (what :attr:`count` needs)."""
        return list(nx.connected_components(self.undirected))

    @cached_property
    def components(self) -> tuple[tuple[Node, ...], ...]:
        """The components: each sorted naturally; largest first, then by first node."""
        comps = [tuple(sorted_nodes(c)) for c in self._node_sets]
        comps.sort(key=lambda c: (-len(c), node_sort_key(c[0])))
        return tuple(comps)

    @property
    def count(self) -> int:
        """Number of components; 0 for the empty graph (the natural order is not needed)."""
        return len(self._node_sets)

    @property
    def connected(self) -> bool:
        """Connected and non-empty (the empty graph is not connected)."""
        return self.count == 1


def without_self_loops(g: nx.Graph) -> nx.Graph:
    """``g`` itself, or a read-only view of it without its self-loops.

    A self-loop joins no two nodes, so it is in no cut; but networkx's ``edge_connectivity``
    answers the least degree — which counts a self-loop twice — when one node dominates the
    graph (a graph of two nodes with a loop on each: 3, not 1)."""
    loops = list(nx.selfloop_edges(g))
    return nx.restricted_view(g, [], loops) if loops else g
