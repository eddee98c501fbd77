"""Bipartiteness of one graph's undirected view: a 2-colouring or an odd cycle, and the side
sizes its colourings can have (:class:`Bipartition`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from functools import cached_property

import networkx as nx

from pytest_graphinstruct.verify.components import Components
from pytest_graphinstruct.verify.node_order import Node


class Bipartition:
    """One BFS 2-colouring of an undirected graph (or the odd cycle that forbids one), computed
    on first use.

    Args:
        undirected: an ``nx.Graph``, never modified.
        components: its components (the side sizes are per component).
    """

    def __init__(self, undirected: nx.Graph, components: Components) -> None:
        self.undirected = undirected
        self.components = components

    @cached_property
    def _two_colouring(self) -> tuple[dict[Node, int] | None, list[Node] | None]:
        """BFS 2-colouring: ``(colour, None)`` or ``(None, odd_cycle)``."""
        u = self.undirected
        colour: dict[Node, int] = {}
        parent: dict[Node, Node | None] = {}
        for root in u:
            if root in colour:
                continue
            colour[root] = 0
            parent[root] = None
            queue = deque([root])
            while queue:
                x = queue.popleft()
                for y in u[x]:
                    if y not in colour:
                        colour[y] = 1 - colour[x]
                        parent[y] = x
                        queue.append(y)
                    elif colour[y] == colour[x]:
                        return None, _odd_cycle(x, y, parent)
        return colour, None

    @property
    def bipartite(self) -> bool:
        """Whether the graph is bipartite (the empty graph is)."""
        return self._two_colouring[0] is not None

    @property
    def colouring(self) -> Mapping[Node, int] | None:
        """One proper 2-colouring (0/1), or ``None`` if not bipartite."""
        return self._two_colouring[0]

    @property
    def odd_cycle(self) -> list[Node] | None:
        """Nodes of one odd cycle, in cycle order (a self-loop gives one node); ``None`` when
        bipartite."""
        return self._two_colouring[1]

    @cached_property
    def component_sides(self) -> tuple[tuple[int, int], ...]:
        """Per component, the sizes of its two colour classes (sorted), in
        :attr:`Components.components` order; empty when not bipartite.  An isolated node gives
        ``(0, 1)``."""
        colour = self.colouring
        if colour is None:
            return ()
        out = []
        for comp in self.components.components:
            ones = sum(colour[v] for v in comp)
            a, b = sorted((len(comp) - ones, ones))
            out.append((a, b))
        return tuple(out)

    @cached_property
    def achievable_side_sizes(self) -> frozenset[int]:
        """Every size one side can have over all proper 2-colourings (components flip
        independently: a subset-sum); empty when not bipartite."""
        if self.colouring is None:
            return frozenset()
        reach = 1  # bit s set <=> one side can have exactly s nodes
        for a, b in self.component_sides:
            reach = (reach << a) | (reach << b)
        return frozenset(s for s in range(self.undirected.number_of_nodes() + 1)
                         if reach >> s & 1)

    def sides_achievable(self, p: int, q: int) -> bool:
        """Whether some proper 2-colouring has side sizes ``{p, q}``."""
        return p + q == self.undirected.number_of_nodes() and p in self.achievable_side_sizes

    @property
    def side_pairs(self) -> list[tuple[int, int]]:
        """All achievable sorted side-size pairs ``(a, b)``, ``a <= b``; empty if not bipartite."""
        n = self.undirected.number_of_nodes()
        return sorted({(min(s, n - s), max(s, n - s)) for s in self.achievable_side_sizes})


def _odd_cycle(x: Node, y: Node, parent: Mapping[Node, Node | None]) -> list[Node]:
    """The odd cycle closed by the same-colour edge ``x–y`` of a BFS tree given by ``parent``.

    In a BFS tree a same-colour edge joins two nodes of one level, so the two tree paths up to
    their lowest common ancestor have equal length and the cycle through the edge is odd.
    """
    if x == y:
        return [x]
    path_x = [x]
    seen = {x}
    v = x
    while parent[v] is not None:
        v = parent[v]
        path_x.append(v)
        seen.add(v)
    path_y = [y]
    v = y
    while v not in seen:
        v = parent[v]
        path_y.append(v)
    lca = v
    path_x = path_x[: path_x.index(lca) + 1]
    return path_x + path_y[-2::-1]
