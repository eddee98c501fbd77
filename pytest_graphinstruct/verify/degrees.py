"""The degrees of one graph, computed lazily, at most once (:class:`DegreeFacts`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from functools import cached_property

import networkx as nx

from pytest_graphinstruct.verify.node_order import Node, sorted_nodes


class DegreeFacts:
    """Degrees of a graph (directed: in + out; a self-loop adds 2), cached.

    Args:
        graph: an ``nx.Graph`` or ``nx.DiGraph``, never modified.
    """

    def __init__(self, graph: nx.Graph) -> None:
        self.graph = graph

    @cached_property
    def degrees(self) -> Mapping[Node, int]:
        """Degree of every node (directed: in + out; a self-loop adds 2)."""
        return dict(self.graph.degree())

    @cached_property
    def in_degrees(self) -> Mapping[Node, int]:
        """In-degrees (directed graphs); for an undirected graph, the degrees."""
        if not self.graph.is_directed():
            return self.degrees
        return dict(self.graph.in_degree())

    @cached_property
    def out_degrees(self) -> Mapping[Node, int]:
        """Out-degrees (directed graphs); for an undirected graph, the degrees."""
        if not self.graph.is_directed():
            return self.degrees
        return dict(self.graph.out_degree())

    @cached_property
    def degree_counts(self) -> Mapping[int, int]:
        """How many nodes have each degree."""
        return dict(Counter(self.degrees.values()))

    @cached_property
    def min_degree(self) -> int:
        """Smallest degree; 0 for the empty graph."""
        return min(self.degree_counts, default=0)

    @cached_property
    def max_degree(self) -> int:
        """Largest degree; 0 for the empty graph."""
        return max(self.degree_counts, default=0)

    @cached_property
    def regular_degree(self) -> int | None:
        """The common degree when every node has the same degree; ``None`` otherwise.

        The empty graph is not regular (``None``).
        """
        if len(self.degree_counts) == 1:
            return next(iter(self.degree_counts))
        return None

    @cached_property
    def majority_degree(self) -> int | None:
        """The most common degree (smallest on ties); ``None`` for the empty graph."""
        if not self.degree_counts:
            return None
        return min(self.degree_counts, key=lambda d: (-self.degree_counts[d], d))

    def nodes_where(self, predicate: Callable[[int], bool],
                    degrees: Mapping[Node, int] | None = None) -> list[Node]:
        """Nodes ``v`` (natural order) with ``predicate(degree(v))`` true.

        Args:
            predicate: a function of one int.
            degrees: which degree map to use (default :attr:`degrees`).
        """
        deg = self.degrees if degrees is None else degrees
        return sorted_nodes(v for v, d in deg.items() if predicate(d))
