"""Graph facts: every property the constraint checks need, computed lazily, at most once per graph.

A :class:`GraphFacts` wraps one ``nx.Graph`` or ``nx.DiGraph`` (never a multigraph) and exposes
its properties as cached attributes: a property is computed on first access and then reused, so
verifying many constraints against one answer costs each property once.  The wrapped graph is
never modified.  Its parts hold the larger families: :class:`~.degrees.DegreeFacts`,
:class:`~.components.Components`, :class:`~.bipartition.Bipartition`, the distances of
:mod:`~pytest_graphinstruct.verify.distances`, the greedy communities of
:mod:`~pytest_graphinstruct.verify.modularity` and the failure locators of
:mod:`~pytest_graphinstruct.verify.witnesses`; node ids are ordered by
:func:`~.node_order.node_sort_key`.

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
import operator
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Generic, TypeVar, overload

import networkx as nx

from pytest_graphinstruct.verify.bipartition import Bipartition
from pytest_graphinstruct.verify.clustering import average_clustering
from pytest_graphinstruct.verify.components import Components, without_self_loops
from pytest_graphinstruct.verify.degrees import DegreeFacts
from pytest_graphinstruct.verify.distances import distance_stats, distance_work, not_computed_reason
from pytest_graphinstruct.verify.modularity import greedy_modularity
from pytest_graphinstruct.verify.node_order import Node, sorted_nodes
from pytest_graphinstruct.verify.planarity import is_planar
from pytest_graphinstruct.verify.witnesses import antiparallel_pairs, kuratowski_edges, one_cycle

T = TypeVar("T")


class _FromPart(Generic[T]):
    """A :class:`GraphFacts` attribute that one of its parts holds: the first read takes it
    from the part with ``read`` (computed and cached there) and keeps it in the instance, as
    ``functools.cached_property`` does, so every later read is a plain attribute read."""

    def __init__(self, read: Callable[[GraphFacts], T]) -> None:
        self.read = read
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, facts: None, owner: type | None = None) -> _FromPart[T]: ...
    @overload
    def __get__(self, facts: GraphFacts, owner: type | None = None) -> T: ...

    def __get__(self, facts: GraphFacts | None, owner: type | None = None) -> T | _FromPart[T]:
        if facts is None:
            return self
        value = facts.__dict__[self.name] = self.read(facts)
        return value


class GraphFacts:
    """Lazily computed, cached properties of one graph.

    Args:
        graph: an ``nx.Graph`` or ``nx.DiGraph``; it is never modified, and must not be modified
            while this object is in use (cached values would go stale).

    Raises:
        TypeError: ``graph`` is a multigraph or not a networkx graph.

    Every property is computed at most once (``functools.cached_property``, here or in the part
    that holds it); helpers that locate a failure (:attr:`cycle`, :attr:`odd_cycle`,
    :attr:`kuratowski_edges`, …) are computed only when asked for, i.e. only when a check fails.
    The costly ones a pool persists (``pools.cache.PERSISTED_FACTS``) are cached here.
    """

    def __init__(self, graph: nx.Graph) -> None:
        if not isinstance(graph, nx.Graph):
            raise TypeError(f"GraphFacts needs a networkx graph, got {type(graph).__name__}")
        if graph.is_multigraph():
            raise TypeError("GraphFacts needs a simple graph (nx.Graph or nx.DiGraph), "
                            "not a multigraph")
        self.graph = graph
        self.directed: bool = graph.is_directed()  #: whether the graph is an ``nx.DiGraph``
        self.degree_facts = DegreeFacts(graph)

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"GraphFacts({kind}, n={self.n}, m={self.m})"

    # -- size ----------------------------------------------------------------------------------

    @cached_property
    def n(self) -> int:
        """Number of nodes."""
        return self.graph.number_of_nodes()

    @cached_property
    def m(self) -> int:
        """Number of edges (arcs for a directed graph); self-loops count.  Undirected: the
        adjacency entries (two per edge, one per self-loop) plus the self-loops, halved."""
        adj = self.graph._adj  # a DiGraph's successors; no Python step per node
        loops = 0 if self.directed else sum(map(operator.contains, adj.values(), adj))
        return (sum(map(len, adj.values())) + loops) // (1 if self.directed else 2)

    # -- degrees (:class:`~.degrees.DegreeFacts`) -------------------------------------------------

    #: Degree of every node (directed: in + out; a self-loop adds 2).
    degrees = _FromPart(lambda f: f.degree_facts.degrees)
    #: In-degrees (directed graphs); for an undirected graph, the degrees.
    in_degrees = _FromPart(lambda f: f.degree_facts.in_degrees)
    #: Out-degrees (directed graphs); for an undirected graph, the degrees.
    out_degrees = _FromPart(lambda f: f.degree_facts.out_degrees)
    #: How many nodes have each degree.
    degree_counts = _FromPart(lambda f: f.degree_facts.degree_counts)
    #: Smallest degree; 0 for the empty graph.
    min_degree = _FromPart(lambda f: f.degree_facts.min_degree)
    #: Largest degree; 0 for the empty graph.
    max_degree = _FromPart(lambda f: f.degree_facts.max_degree)
    #: The common degree of a regular graph; ``None`` otherwise (the empty graph too).
    regular_degree = _FromPart(lambda f: f.degree_facts.regular_degree)
    #: Whether the graph is non-empty and all degrees are equal.
    regular = _FromPart(lambda f: f.degree_facts.regular_degree is not None)
    #: The most common degree (smallest on ties); ``None`` for the empty graph.
    majority_degree = _FromPart(lambda f: f.degree_facts.majority_degree)

    def nodes_where(self, predicate: Callable[[int], bool],
                    degrees: Mapping[Node, int] | None = None) -> list[Node]:
        """Nodes ``v`` (natural order) with ``predicate(degree(v))`` true (``degrees``: which
        degree map, default :attr:`degrees`)."""
        return self.degree_facts.nodes_where(predicate, degrees)

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
        return self.undirected.number_of_edges() if self.directed else self.m

    @property
    def has_antiparallel(self) -> bool:
        """Whether a directed graph joins some pair of nodes in both directions."""
        return self.directed and self.undirected_m != self.m

    @cached_property
    def antiparallel_pairs(self) -> list[list[Node]]:
        """Pairs ``[u, v]`` (u before v in natural order) joined by arcs in both directions."""
        return antiparallel_pairs(self.graph) if self.has_antiparallel else []

    @cached_property
    def self_loops(self) -> tuple[Node, ...]:
        """Nodes carrying a self-loop, in natural order."""
        return tuple(sorted_nodes({u for u, _ in nx.selfloop_edges(self.graph)}))

    # -- connectivity (:class:`Components` of the undirected view) -------------------------------

    @cached_property
    def component_facts(self) -> Components:
        """The (weak) components, computed on first use."""
        return Components(self.undirected)

    #: (Weak) connected components: each sorted naturally; largest first, then by first node.
    components = _FromPart(lambda f: f.component_facts.components)
    #: Number of (weak) components; 0 for the empty graph.
    num_components = _FromPart(lambda f: f.component_facts.count)
    #: (Weakly) connected and non-empty.  Deviation: networkx raises and the reference release
    #: answers ``True`` for the empty graph; an empty answer is not a connected graph here.
    connected = _FromPart(lambda f: f.component_facts.connected)

    @cached_property
    def edge_connectivity(self) -> int:
        """Edge connectivity; 0 when ``n < 2`` or the graph is not (weakly) connected.

        Directed graphs get the directed arc-connectivity (the fewest arcs whose removal leaves
        the graph not strongly connected; 0 when it is not strongly connected), like the
        reference release.
        """
        if self.n < 2 or not self.connected:
            return 0
        return int(nx.edge_connectivity(without_self_loops(self.graph)))

    # -- cycles and planarity ------------------------------------------------------------------

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
        return None if self.acyclic else one_cycle(self.graph)

    @cached_property
    def planar(self) -> bool:
        """Whether the underlying undirected graph is planar (:func:`.planarity.is_planar`)."""
        return is_planar(self.undirected)

    @cached_property
    def kuratowski_edges(self) -> list[list[Node]] | None:
        """Edges of a Kuratowski subgraph (a subdivision of K5 or K3,3); ``None`` if planar."""
        return None if self.planar else kuratowski_edges(self.undirected)

    # -- bipartiteness (:class:`Bipartition` of the undirected view) -----------------------------

    @cached_property
    def bipartition(self) -> Bipartition:
        """The 2-colouring of the undirected view, computed on first use."""
        return Bipartition(self.undirected, self.component_facts)

    #: Whether the undirected view is bipartite (the empty graph is).
    bipartite = _FromPart(lambda f: f.bipartition.bipartite)
    #: One proper 2-colouring (0/1) of the undirected view, or ``None`` if not bipartite.
    colouring = _FromPart(lambda f: f.bipartition.colouring)
    #: Nodes of one odd cycle, in cycle order (a self-loop gives one node); ``None`` when
    #: bipartite.
    odd_cycle = _FromPart(lambda f: f.bipartition.odd_cycle)
    #: Per component, the sizes of its two colour classes (sorted), in :attr:`components`
    #: order; empty when not bipartite.  An isolated node gives ``(0, 1)``.
    component_sides = _FromPart(lambda f: f.bipartition.component_sides)
    #: All achievable sorted side-size pairs ``(a, b)``, ``a <= b``; empty if not bipartite.
    side_pairs = _FromPart(lambda f: f.bipartition.side_pairs)

    def sides_achievable(self, p: int, q: int) -> bool:
        """Whether some proper 2-colouring has side sizes ``{p, q}``."""
        return self.bipartition.sides_achievable(p, q)

    # -- distances (:mod:`~pytest_graphinstruct.verify.distances`) -------------------------------

    @property
    def distance_work(self) -> int:
        """``n × (n + m)`` of the undirected view (:func:`.distances.distance_work`)."""
        return distance_work(self.n, self.undirected_m)

    @cached_property
    def _distance_stats(self) -> tuple[float, float]:
        """``(diameter, average path length)`` of the undirected view
        (:func:`.distances.distance_stats`)."""
        return distance_stats(self.undirected, connected=self.connected,
                              work=self.distance_work)

    @property
    def distances_not_computed(self) -> str | None:
        """Why diameter and average path length are not computed — ``'not computed: answer too
        large (N nodes × (N + M edges) = W > LIMIT)'`` — or ``None`` when they are."""
        if not math.isnan(self._distance_stats[0]):
            return None
        return not_computed_reason(self.n, self.undirected_m)

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
        n, m = self.n, self.m  # networkx's arithmetic on the cached counts
        d = m / (n * (n - 1)) if m and n > 1 else 0.0
        return d if self.directed else d * 2

    @cached_property
    def modularity(self) -> float:
        """Modularity of the greedy (Clauset–Newman–Moore) partition of the undirected view.

        Both the partition and its modularity are computed unweighted (edge attributes are
        ignored; the graph is not touched), bit for bit as networkx's
        ``greedy_modularity_communities`` and ``modularity`` compute them
        (:func:`.modularity.greedy_modularity`).  0.0 when ``n < 2`` or there are no edges.
        """
        if self.n < 2 or self.undirected_m == 0:
            return 0.0
        return greedy_modularity(self.undirected).modularity

    @cached_property
    def clustering(self) -> float:
        """Average local clustering of the undirected view (nodes of degree < 2 count 0);
        0.0 for the empty graph (:func:`.clustering.average_clustering`)."""
        if self.n == 0:
            return 0.0
        return average_clustering(self.undirected)
