"""Graph facts: every property the constraint checks need, computed lazily, at most once per graph.

A :class:`GraphFacts` wraps one ``nx.Graph`` or ``nx.DiGraph`` (never a multigraph) and exposes
its properties as cached attributes: a property is computed on first access and then reused, so
verifying many constraints against one answer costs each property once.  The wrapped graph is
never modified.

Conventions (see docs/CONSTRAINTS.md for the reasons):

* Directed graphs: degree = in-degree + out-degree; components are *weak* components;
  ``connected`` means weakly connected; ``acyclic`` means "is a DAG"; planarity, bipartiteness,
  distances, modularity and clustering are taken on the underlying undirected graph
  (:attr:`GraphFacts.undirected`); edge connectivity is the *directed* arc-connectivity.
* The empty graph (no nodes) is *not* connected (networkx and the reference release call it
  connected), has 0 components, is acyclic, planar and bipartite, has min/max degree 0, density,
  modularity and clustering 0.0, infinite diameter and average path length, and is not regular.
* Self-loops count as edges (``m``) and add 2 to the degree of their node; a self-loop is a
  cycle (so a graph with one is not acyclic) and an odd cycle (so it is not bipartite).
"""

from __future__ import annotations

import math
import re
from collections import Counter, deque
from collections.abc import Callable, Hashable, Iterable, Mapping
from functools import cached_property
from typing import Any

import networkx as nx
import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import shortest_path

Node = Hashable

#: Distances are computed in blocks of rows so that the distance matrix of a large graph never
#: needs more than about this many entries at once.
_DISTANCE_BLOCK_ENTRIES = 4_000_000

#: The work budget of exact all-pairs distances by per-source BFS, in ``n × (n + m)`` steps of
#: the undirected view (each BFS touches every node and every edge once).  Above it, diameter and
#: average path length are not computed (:attr:`GraphFacts.distances_not_computed` says why)
#: unless the all-at-once product route (at most ``_DENSE_MAX_NODES`` nodes, its own level
#: budget) finishes.  Measured (bench/big_answer.py, docs/PARSING.md): a star just inside it, the
#: costliest shape per step, takes a few seconds.
DISTANCE_WORK_LIMIT = 50_000_000

_DIGITS = re.compile(r"(\d+)")


def node_sort_key(node: Node) -> tuple[Any, ...]:
    """A total, natural order on node ids: ``'2' < '10' < 'a'``; works for mixed types."""
    parts = _DIGITS.split(str(node))
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p != "")


def sorted_nodes(nodes: Iterable[Node]) -> list[Node]:
    """``nodes`` in :func:`node_sort_key` order."""
    return sorted(nodes, key=node_sort_key)


class GraphFacts:
    """Lazily computed, cached properties of one graph.

    Args:
        graph: an ``nx.Graph`` or ``nx.DiGraph``; it is never modified, and must not be modified
            while this object is in use (cached values would go stale).

    Raises:
        TypeError: ``graph`` is a multigraph or not a networkx graph.

    Every property is computed at most once (``functools.cached_property``); helpers that locate
    a failure (:attr:`cycle`, :attr:`odd_cycle`, :attr:`kuratowski_edges`, …) are computed only
    when asked for, i.e. only when a check fails.
    """

    def __init__(self, graph: nx.Graph) -> None:
        if not isinstance(graph, nx.Graph):
            raise TypeError(f"GraphFacts needs a networkx graph, got {type(graph).__name__}")
        if graph.is_multigraph():
            raise TypeError("GraphFacts needs a simple graph (nx.Graph or nx.DiGraph), "
                            "not a multigraph")
        self.graph = graph

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"GraphFacts({kind}, n={self.n}, m={self.m})"

    # -- size and degrees ----------------------------------------------------------------------

    @property
    def directed(self) -> bool:
        """Whether the graph is an ``nx.DiGraph``."""
        return self.graph.is_directed()

    @cached_property
    def n(self) -> int:
        """Number of nodes."""
        return self.graph.number_of_nodes()

    @cached_property
    def m(self) -> int:
        """Number of edges (arcs for a directed graph); self-loops count."""
        return self.graph.number_of_edges()

    @cached_property
    def degrees(self) -> Mapping[Node, int]:
        """Degree of every node (directed: in + out; a self-loop adds 2)."""
        return dict(self.graph.degree())

    @cached_property
    def in_degrees(self) -> Mapping[Node, int]:
        """In-degrees (directed graphs); for an undirected graph, the degrees."""
        if not self.directed:
            return self.degrees
        return dict(self.graph.in_degree())

    @cached_property
    def out_degrees(self) -> Mapping[Node, int]:
        """Out-degrees (directed graphs); for an undirected graph, the degrees."""
        if not self.directed:
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

    @property
    def regular(self) -> bool:
        """Whether the graph is non-empty and all degrees are equal."""
        return self.regular_degree is not None

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

    # -- the undirected view -------------------------------------------------------------------

    @cached_property
    def undirected(self) -> nx.Graph:
        """The underlying undirected simple graph (the graph itself when already undirected).

        For a directed graph this is a new ``nx.Graph`` without attributes, where an arc in
        either or both directions becomes one edge; self-loops are kept.
        """
        if not self.directed:
            return self.graph
        u = nx.Graph()
        u.add_nodes_from(self.graph)
        u.add_edges_from(self.graph.edges())
        return u

    @cached_property
    def undirected_m(self) -> int:
        """Number of edges of :attr:`undirected`."""
        return self.undirected.number_of_edges()

    @property
    def has_antiparallel(self) -> bool:
        """Whether a directed graph joins some pair of nodes in both directions."""
        return self.directed and self.undirected_m != self.m

    @cached_property
    def antiparallel_pairs(self) -> list[list[Node]]:
        """Pairs ``[u, v]`` (u before v in natural order) joined by arcs in both directions."""
        if not self.has_antiparallel:
            return []
        g = self.graph
        pairs = {tuple(sorted_nodes((u, v))) for u, v in g.edges() if u != v and g.has_edge(v, u)}
        return [list(p) for p in sorted(pairs, key=lambda p: tuple(map(node_sort_key, p)))]

    @cached_property
    def self_loops(self) -> tuple[Node, ...]:
        """Nodes carrying a self-loop, in natural order."""
        return tuple(sorted_nodes({u for u, _ in nx.selfloop_edges(self.graph)}))

    # -- connectivity --------------------------------------------------------------------------

    @cached_property
    def components(self) -> tuple[tuple[Node, ...], ...]:
        """(Weak) connected components: each sorted naturally; largest first, then by first node."""
        comps = [tuple(sorted_nodes(c)) for c in nx.connected_components(self.undirected)]
        comps.sort(key=lambda c: (-len(c), node_sort_key(c[0])))
        return tuple(comps)

    @property
    def num_components(self) -> int:
        """Number of (weak) components; 0 for the empty graph."""
        return len(self.components)

    @property
    def connected(self) -> bool:
        """(Weakly) connected and non-empty.

        Deviation: networkx raises and the reference release answers ``True`` for the empty
        graph; an empty answer is not a connected graph here.
        """
        return self.num_components == 1

    @cached_property
    def edge_connectivity(self) -> int:
        """Edge connectivity; 0 when ``n < 2`` or the graph is not (weakly) connected.

        Directed graphs get the directed arc-connectivity (the fewest arcs whose removal leaves
        the graph not strongly connected; 0 when it is not strongly connected), like the
        reference release.
        """
        if self.n < 2 or not self.connected:
            return 0
        return int(nx.edge_connectivity(self.graph))

    # -- cycles --------------------------------------------------------------------------------

    @cached_property
    def acyclic(self) -> bool:
        """Undirected: a forest (no cycle, no self-loop). Directed: a DAG. Empty graph: ``True``."""
        if self.directed:
            return nx.is_directed_acyclic_graph(self.graph)
        # A graph is a forest exactly when m = n - c (self-loops count in m, so they fail it).
        return self.m == self.n - self.num_components

    @cached_property
    def cycle(self) -> list[list[Node]] | None:
        """One cycle as a list of edges ``[u, v]`` (directed: a directed cycle); ``None`` when
        acyclic."""
        if self.acyclic:
            return None
        orientation = "original" if self.directed else None
        try:
            found = nx.find_cycle(self.graph, orientation=orientation)
        except nx.NetworkXNoCycle:  # pragma: no cover - acyclic is checked first
            return None
        return [[e[0], e[1]] for e in found]

    # -- planarity -----------------------------------------------------------------------------

    @cached_property
    def planar(self) -> bool:
        """Whether the underlying undirected graph is planar (``nx.check_planarity``)."""
        ok, _ = nx.check_planarity(self.undirected)
        return bool(ok)

    @cached_property
    def kuratowski_edges(self) -> list[list[Node]] | None:
        """Edges of a Kuratowski subgraph (a subdivision of K5 or K3,3); ``None`` if planar."""
        if self.planar:
            return None
        _, witness = nx.check_planarity(self.undirected, counterexample=True)
        edges = [sorted_nodes(e) for e in witness.edges()]
        return sorted(edges, key=lambda e: tuple(map(node_sort_key, e)))

    # -- bipartiteness -------------------------------------------------------------------------

    @cached_property
    def _two_colouring(self) -> tuple[dict[Node, int] | None, list[Node] | None]:
        """BFS 2-colouring of the undirected view: ``(colour, None)`` or ``(None, odd_cycle)``."""
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
        """Whether the undirected view is bipartite (the empty graph is)."""
        return self._two_colouring[0] is not None

    @property
    def colouring(self) -> Mapping[Node, int] | None:
        """One proper 2-colouring (0/1) of the undirected view, or ``None`` if not bipartite."""
        return self._two_colouring[0]

    @property
    def odd_cycle(self) -> list[Node] | None:
        """Nodes of one odd cycle, in cycle order (a self-loop gives one node); ``None`` when
        bipartite."""
        return self._two_colouring[1]

    @cached_property
    def component_sides(self) -> tuple[tuple[int, int], ...]:
        """Per component, the sizes of its two colour classes (sorted), in :attr:`components`
        order; empty when not bipartite.  An isolated node gives ``(0, 1)``."""
        colour = self.colouring
        if colour is None:
            return ()
        out = []
        for comp in self.components:
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
        return frozenset(s for s in range(self.n + 1) if reach >> s & 1)

    def sides_achievable(self, p: int, q: int) -> bool:
        """Whether some proper 2-colouring has side sizes ``{p, q}``."""
        return p + q == self.n and p in self.achievable_side_sizes

    @property
    def side_pairs(self) -> list[tuple[int, int]]:
        """All achievable sorted side-size pairs ``(a, b)``, ``a <= b``; empty if not bipartite."""
        return sorted({(min(s, self.n - s), max(s, self.n - s))
                       for s in self.achievable_side_sizes})

    # -- distances -----------------------------------------------------------------------------

    @property
    def distance_work(self) -> int:
        """``n × (n + m)`` of the undirected view: the steps of an all-pairs per-source BFS,
        compared with :data:`DISTANCE_WORK_LIMIT`."""
        return self.n * (self.n + self.undirected_m)

    @cached_property
    def _distance_stats(self) -> tuple[float, float]:
        """``(diameter, average path length)`` of the undirected view from one all-pairs BFS;
        ``(inf, inf)`` when empty or disconnected; ``(0, 0.0)`` for one node; ``(nan, nan)``
        when they would cost more than :data:`DISTANCE_WORK_LIMIT` (never approximated).

        The sum of all distances is an exact integer, so the mean is the same float whichever
        way the BFS is run (see :func:`_all_pairs_distance_sum`)."""
        n = self.n
        if not self.connected:
            return math.inf, math.inf
        if n == 1:
            return 0, 0.0
        found = _all_pairs_distance_sum(_undirected_csr(self.undirected),
                                        bfs_allowed=self.distance_work <= DISTANCE_WORK_LIMIT)
        if found is None:
            return math.nan, math.nan
        longest, total = found
        return longest, total / (n * (n - 1))

    @property
    def distances_not_computed(self) -> str | None:
        """Why diameter and average path length are not computed — ``'not computed: answer too
        large (N nodes × (N + M edges) = W > LIMIT)'`` — or ``None`` when they are."""
        if not math.isnan(self._distance_stats[0]):
            return None
        return (f"not computed: answer too large ({self.n} nodes × ({self.n} + "
                f"{self.undirected_m} edges) = {self.distance_work} > {DISTANCE_WORK_LIMIT})")

    @property
    def diameter(self) -> float:
        """Diameter of the undirected view (an int); ``inf`` when disconnected or empty;
        ``nan`` when not computed (:attr:`distances_not_computed`)."""
        return self._distance_stats[0]

    @property
    def average_path_length(self) -> float:
        """Mean shortest-path length over ordered pairs of distinct nodes of the undirected
        view; ``inf`` when disconnected or empty, ``0.0`` for one node; ``nan`` when not
        computed (:attr:`distances_not_computed`)."""
        return self._distance_stats[1]

    # -- densities and communities -------------------------------------------------------------

    @cached_property
    def density(self) -> float:
        """``nx.density``: ``m / (n(n-1))`` directed, ``2m / (n(n-1))`` undirected; 0 when
        ``n < 2``; self-loops count in ``m``."""
        return float(nx.density(self.graph))

    @cached_property
    def modularity(self) -> float:
        """Modularity of the greedy (Clauset–Newman–Moore) partition of the undirected view.

        Both the partition and its modularity are computed unweighted (edge attributes are
        ignored; the graph is not touched).  0.0 when ``n < 2`` or there are no edges.
        """
        u = self.undirected
        if self.n < 2 or self.undirected_m == 0:
            return 0.0
        parts = nx.community.greedy_modularity_communities(u, weight=None)
        return float(nx.community.modularity(u, parts, weight=None))

    @cached_property
    def clustering(self) -> float:
        """Average local clustering of the undirected view (nodes of degree < 2 count 0);
        0.0 for the empty graph."""
        if self.n == 0:
            return 0.0
        return float(nx.average_clustering(self.undirected))


def _undirected_csr(u: nx.Graph) -> csr_array:
    """The symmetric 0/1 adjacency matrix of undirected ``u`` (rows in ``list(u)`` order),
    built from index arrays (no per-entry Python objects beyond one pass over the edges)."""
    index = {v: i for i, v in enumerate(u)}
    m = u.number_of_edges()
    pairs = np.fromiter((index[x] for e in u.edges() for x in e), dtype=np.int64, count=2 * m)
    a, b = pairs[0::2], pairs[1::2]
    n = len(index)
    data = np.ones(2 * m, dtype=np.int8)
    adj = csr_array((data, (np.concatenate([a, b]), np.concatenate([b, a]))), shape=(n, n))
    adj.sum_duplicates()
    adj.data[:] = 1
    return adj


def _all_pairs_distance_sum(adj: csr_array, *, bfs_allowed: bool) -> tuple[int, int] | None:
    """``(largest, sum)`` of the BFS distances between all ordered node pairs of the connected
    undirected graph ``adj``; ``None`` when only per-source BFS could find them and
    ``bfs_allowed`` is false.

    Dense enough graphs expand all BFS frontiers at once, one boolean matrix product per level
    (BLAS; as many products as the diameter).  The number of levels tried is capped so that
    the products never cost much more than the per-source BFS would; a graph that needs more
    levels (long and thin) is finished with per-source BFS (scipy's C ``shortest_path``).
    """
    n = adj.shape[0]
    budget = _dense_level_budget(n, adj.nnz)
    if budget:
        found = _distance_sum_by_products(adj, budget)
        if found is not None:
            return found
    return _distance_sum_by_bfs(adj) if bfs_allowed else None


#: Dense frontier expansion is used up to this many nodes (a few ``n × n`` float32 matrices).
_DENSE_MAX_NODES = 4096
#: About how much cheaper one BLAS ``n³`` multiply-add is than one per-source BFS step over
#: one adjacency entry (measured: ~0.03 ns vs ~5 ns); sets the level budget.
_BFS_TO_PRODUCT_COST = 166


def _dense_level_budget(n: int, nnz: int) -> int:
    """How many product levels cost no more than per-source BFS (``n · nnz`` steps); 0 when the
    dense route is not worth trying (or would need too much memory)."""
    if n > _DENSE_MAX_NODES:
        return 0
    return (_BFS_TO_PRODUCT_COST * nnz) // (n * n)


def _distance_sum_by_products(adj: csr_array, max_levels: int) -> tuple[int, int] | None:
    """Level-synchronous BFS from every node at once: row ``s`` of ``frontier`` holds the nodes
    first reached from ``s`` at the current level.  ``None`` when more than ``max_levels``
    levels would be needed."""
    n = adj.shape[0]
    a = adj.toarray().astype(np.float32)
    reached = np.eye(n, dtype=bool)
    frontier = np.eye(n, dtype=np.float32)
    total = 0
    level = 0
    remaining = n * n - n
    while remaining:
        if level == max_levels:
            return None
        level += 1
        new = (frontier @ a) > 0  # exact: entries are sums of at most n ones in float32
        new &= ~reached
        count = int(np.count_nonzero(new))
        if count == 0:  # pragma: no cover - adj is connected, so every level reaches someone
            raise ValueError("graph is not connected")
        total += level * count
        remaining -= count
        reached |= new
        frontier = new.astype(np.float32)
    return level, total


def _distance_sum_by_bfs(adj: csr_array) -> tuple[int, int]:
    """Per-source BFS in blocks of rows, so the distance matrix never needs more than about
    ``_DISTANCE_BLOCK_ENTRIES`` entries at once."""
    n = adj.shape[0]
    block = max(1, _DISTANCE_BLOCK_ENTRIES // n)
    longest = 0
    total = 0
    for start in range(0, n, block):
        rows = np.arange(start, min(n, start + block))
        # adj is symmetric, so the directed search finds the same distances and skips
        # scipy's symmetrising pass (about half the time, measured on 20,000-node answers)
        dist = shortest_path(adj, method="D", directed=True, unweighted=True, indices=rows)
        longest = max(longest, int(dist.max()))
        total += int(dist.sum(dtype=np.float64))
    return longest, total


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
