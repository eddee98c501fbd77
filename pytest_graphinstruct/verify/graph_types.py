"""Graph-type validators: is this graph a tree, a wheel, a 3×4 grid, …?

:func:`check_graph_type` decides one ``graph_type`` name on a :class:`GraphFacts` and returns a
:class:`TypeCheck` (``ok``, a short ``observed`` description, and on failure a
:class:`~pytest_graphinstruct.verify.locus.Locus` ``where`` locating the problem).  It never
raises for a graph: every type accepts directed and undirected input (the reference release
crashes on directed wheels and grids).

Directed semantics (documented in docs/CONSTRAINTS.md):

* ``tree`` — the underlying graph is a tree and the arcs are rooted: all point away from one
  root (an arborescence) or all towards it.  ``forest`` — every weak component is such a tree.
* ``path`` — a directed path (every node in-degree ≤ 1 and out-degree ≤ 1).
* ``cycle`` — a directed cycle (every node in-degree = out-degree = 1).
* ``star`` — all arcs leave the hub or all enter it.
* ``wheel``, ``grid``, ``complete_bipartite`` — an orientation of the shape: the underlying graph
  is the shape and no two nodes are joined in both directions (arc count = edge count).
* ``complete`` — the complete digraph: every ordered pair of distinct nodes is an arc.
* ``bipartite``, ``planar`` — of the underlying graph; ``connected`` — weakly; ``acyclic`` and
  ``dag`` — no directed cycle (``dag`` fails every undirected graph); ``regular`` — equal
  in+out degree.

Shape types (tree, path, cycle, star, wheel, grid, complete, complete_bipartite) reject the
empty graph and any self-loop; ``forest``, ``bipartite``, ``planar`` and ``acyclic`` accept the
empty graph (vacuously), ``connected`` and ``regular`` reject it, ``dag`` accepts an empty
directed graph.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from pytest_graphinstruct.verify.locus import Locus
from pytest_graphinstruct.verify.node_order import Node, node_sort_key, sorted_nodes
from pytest_graphinstruct.verify.properties import GraphFacts

#: At most this many nodes/components are listed in a ``where``; edge lists get EDGE_LIMIT.
WHERE_LIMIT = 10
EDGE_LIMIT = 30


@dataclass(frozen=True)
class TypeCheck:
    """The outcome of one graph-type validator.

    Attributes:
        ok: whether the graph is of the type.
        observed: a short description (``'tree'``, ``'3x4 grid'``, ``'disconnected: 2
            components'``).
        where: the locus of the failure (empty when ``ok``).
    """

    ok: bool
    observed: str
    where: Locus = field(default_factory=Locus, hash=False)


# -- locus builders (shared with checks.py) --------------------------------------------------------

def capped(items: Sequence[Any], limit: int = WHERE_LIMIT) -> list[Any]:
    """The first ``limit`` items as a list."""
    return list(items[:limit])


def where_nodes(nodes: Sequence[Node], facts: GraphFacts | None = None,
                limit: int = WHERE_LIMIT) -> Locus:
    """``nodes`` (capped) and ``count``, plus each listed node's ``degrees`` when ``facts`` is
    given."""
    shown = capped(nodes, limit)
    where = Locus().with_nodes("nodes", shown).with_count("count", len(nodes))
    if facts is not None:
        where = where.with_numbers("degrees", [facts.degrees[v] for v in shown])
    return where


def where_components(facts: GraphFacts, limit: int = WHERE_LIMIT) -> Locus:
    """``components`` and ``component_sizes`` (lists capped), and ``count``: how many."""
    comps = facts.components
    return (Locus().with_groups("components", [capped(c, limit) for c in comps[:limit]])
            .with_numbers("component_sizes", [len(c) for c in comps[:limit]])
            .with_count("count", len(comps)))


def where_cycle(facts: GraphFacts) -> Locus:
    """``cycle`` (its edges ``[u, v]``, capped) and ``count``: its length."""
    cycle = facts.cycle or []
    return Locus().with_edges("cycle", capped(cycle, EDGE_LIMIT)).with_count("count", len(cycle))


def where_odd_cycle(facts: GraphFacts) -> Locus:
    """``odd_cycle`` (its nodes, capped) and ``count``: its length."""
    cycle = facts.odd_cycle or []
    return (Locus().with_nodes("odd_cycle", capped(cycle, EDGE_LIMIT))
            .with_count("count", len(cycle)))


def where_kuratowski(facts: GraphFacts) -> Locus:
    """``kuratowski_edges`` (capped) and ``count``: how many."""
    edges = facts.kuratowski_edges or []
    return (Locus().with_edges("kuratowski_edges", capped(edges, EDGE_LIMIT))
            .with_count("count", len(edges)))


def where_self_loops(facts: GraphFacts) -> Locus:
    """``self_loops`` (their nodes, capped) and ``count``: how many."""
    return (Locus().with_nodes("self_loops", capped(facts.self_loops))
            .with_count("count", len(facts.self_loops)))


def where_antiparallel(facts: GraphFacts) -> Locus:
    """``antiparallel`` (pairs ``[u, v]`` joined both ways, capped) and ``count``: how many."""
    pairs = facts.antiparallel_pairs
    return (Locus().with_edges("antiparallel", capped(pairs, EDGE_LIMIT))
            .with_count("count", len(pairs)))


def components_text(facts: GraphFacts) -> str:
    """``'empty graph'`` or ``'disconnected: k components'``."""
    if facts.n == 0:
        return "empty graph"
    return f"disconnected: {facts.num_components} components"


# -- common preconditions -------------------------------------------------------------------------

def _shape_precheck(facts: GraphFacts, name: str) -> TypeCheck | None:
    """Failure of the conditions every shape type shares (non-empty, no self-loops)."""
    if facts.n == 0:
        return TypeCheck(False, "empty graph")
    if facts.self_loops:
        return TypeCheck(False, f"not a {name}: {len(facts.self_loops)} self-loop(s)",
                         where_self_loops(facts))
    return None


def _connected_precheck(facts: GraphFacts, name: str) -> TypeCheck | None:
    if not facts.connected:
        return TypeCheck(False, f"not a {name}: {components_text(facts)}",
                         where_components(facts))
    return None


def _orientation_precheck(facts: GraphFacts, name: str) -> TypeCheck | None:
    """Directed graphs offered for wheel/grid/complete_bipartite must be orientations."""
    if facts.has_antiparallel:
        n_pairs = len(facts.antiparallel_pairs)
        return TypeCheck(False, f"not an orientation of a {name}: {n_pairs} pair(s) joined "
                                "in both directions", where_antiparallel(facts))
    return None


def _first_failure(*checks: TypeCheck | None) -> TypeCheck | None:
    for c in checks:
        if c is not None:
            return c
    return None


def _degree_failure(facts: GraphFacts, name: str, bad: list[Node], what: str) -> TypeCheck:
    return TypeCheck(False, f"not a {name}: {len(bad)} node(s) {what}", where_nodes(bad, facts))


# -- rooted orientation (directed trees, forests, stars) ------------------------------------------

def _rooted_problem(facts: GraphFacts, nodes: Sequence[Node]) -> list[Node] | None:
    """For a directed graph whose underlying graph on ``nodes`` is a tree: ``None`` when all arcs
    point away from one root or all towards it; else the nodes with in-degree > 1 (read as an
    out-tree) or out-degree > 1 (read as an in-tree), whichever list is shorter."""
    many_in = [v for v in nodes if facts.in_degrees[v] > 1]
    if not many_in:
        return None
    many_out = [v for v in nodes if facts.out_degrees[v] > 1]
    if not many_out:
        return None
    return sorted_nodes(many_in if len(many_in) <= len(many_out) else many_out)


def _rooted_kind(facts: GraphFacts, nodes: Sequence[Node]) -> str:
    if all(facts.in_degrees[v] <= 1 for v in nodes):
        return "out-tree"
    return "in-tree"


# -- validators -----------------------------------------------------------------------------------

def _tree(facts: GraphFacts) -> TypeCheck:
    fail = _first_failure(_shape_precheck(facts, "tree"), _connected_precheck(facts, "tree"))
    if fail:
        return fail
    if facts.m != facts.n - 1:
        # connected with more than n-1 edges (or arcs) → a cycle in the undirected view or an
        # antiparallel pair
        if facts.has_antiparallel:
            return TypeCheck(False, "not a tree: nodes joined in both directions",
                             where_antiparallel(facts))
        return TypeCheck(False, f"not a tree: {facts.m} edges, a tree on {facts.n} nodes has "
                                f"{facts.n - 1} (has a cycle)", where_cycle_undirected(facts))
    if facts.directed:
        bad = _rooted_problem(facts, list(facts.graph))
        if bad is not None:
            return TypeCheck(False, "oriented tree but not rooted: arcs do not all point away "
                                    "from (or all towards) one root", where_nodes(bad, facts))
        return TypeCheck(True, f"directed tree ({_rooted_kind(facts, list(facts.graph))})")
    return TypeCheck(True, "tree")


def where_cycle_undirected(facts: GraphFacts) -> Locus:
    """A cycle of the underlying undirected graph (for shape failures of directed graphs,
    which may have undirected cycles but no directed one)."""
    if not facts.directed:
        return where_cycle(facts)
    try:
        found = nx.find_cycle(facts.undirected)
    except nx.NetworkXNoCycle:
        return Locus()
    cycle = [[u, v] for u, v in found]
    return Locus().with_edges("cycle", capped(cycle, EDGE_LIMIT)).with_count("count", len(cycle))


def _forest(facts: GraphFacts) -> TypeCheck:
    if facts.self_loops:
        return TypeCheck(False, f"not a forest: {len(facts.self_loops)} self-loop(s)",
                         where_self_loops(facts))
    if facts.m != facts.n - facts.num_components:
        if facts.has_antiparallel:
            return TypeCheck(False, "not a forest: nodes joined in both directions",
                             where_antiparallel(facts))
        return TypeCheck(False, "not a forest: has a cycle", where_cycle_undirected(facts))
    if facts.directed:
        bad: list[Node] = []
        for comp in facts.components:
            problem = _rooted_problem(facts, comp)
            if problem:
                bad.extend(problem)
        if bad:
            return TypeCheck(False, "oriented forest but some tree is not rooted",
                             where_nodes(sorted_nodes(bad), facts))
        return TypeCheck(True, f"directed forest of {facts.num_components} rooted tree(s)")
    return TypeCheck(True, f"forest of {facts.num_components} tree(s)")


def _path(facts: GraphFacts) -> TypeCheck:
    fail = _first_failure(_shape_precheck(facts, "path"), _connected_precheck(facts, "path"))
    if fail:
        return fail
    if facts.m != facts.n - 1:
        if facts.has_antiparallel:
            return TypeCheck(False, "not a path: nodes joined in both directions",
                             where_antiparallel(facts))
        return TypeCheck(False, f"not a path: {facts.m} edges for {facts.n} nodes (has a cycle)",
                         where_cycle_undirected(facts))
    bad = facts.nodes_where(lambda d: d > 2)
    if bad:
        return _degree_failure(facts, "path", bad, "of degree > 2")
    if facts.directed:
        bad = sorted_nodes(v for v in facts.graph
                           if facts.in_degrees[v] > 1 or facts.out_degrees[v] > 1)
        if bad:
            return TypeCheck(False, "not a directed path: arcs change direction",
                             where_nodes(bad, facts))
        return TypeCheck(True, f"directed path on {facts.n} nodes")
    return TypeCheck(True, f"path on {facts.n} nodes")


def _cycle(facts: GraphFacts) -> TypeCheck:
    fail = _shape_precheck(facts, "cycle")
    if fail:
        return fail
    if facts.n < 3:
        return TypeCheck(False, f"not a cycle: {facts.n} node(s), a cycle needs at least 3")
    fail = _connected_precheck(facts, "cycle")
    if fail:
        return fail
    if facts.directed:
        bad = sorted_nodes(v for v in facts.graph
                           if facts.in_degrees[v] != 1 or facts.out_degrees[v] != 1)
        if bad:
            return TypeCheck(False, f"not a directed cycle: {len(bad)} node(s) without exactly "
                                    "one incoming and one outgoing arc", where_nodes(bad, facts))
        return TypeCheck(True, f"directed cycle on {facts.n} nodes")
    bad = facts.nodes_where(lambda d: d != 2)
    if bad:
        return _degree_failure(facts, "cycle", bad, "of degree != 2")
    return TypeCheck(True, f"cycle on {facts.n} nodes")


def _star(facts: GraphFacts) -> TypeCheck:
    fail = _shape_precheck(facts, "star")
    if fail:
        return fail
    n = facts.n
    if n == 1:
        return TypeCheck(True, "star on 1 node")
    fail = _connected_precheck(facts, "star")
    if fail:
        return fail
    hubs = facts.nodes_where(lambda d: d == n - 1)
    if facts.m != n - 1 or not hubs:
        # name the would-be hubs: nodes of the highest degree
        top = facts.nodes_where(lambda d: d == facts.max_degree)
        return TypeCheck(False, f"not a star: {facts.m} edges, max degree {facts.max_degree} "
                                f"(a star on {n} nodes has {n - 1} edges and a hub of degree "
                                f"{n - 1})", where_nodes(top, facts))
    hub = hubs[0]
    # connected with n-1 edges and a node of degree n-1: every other node is a leaf.
    if facts.directed and facts.out_degrees[hub] != n - 1 and facts.in_degrees[hub] != n - 1:
        return TypeCheck(False, "oriented star but arcs neither all leave nor all enter the hub",
                         where_nodes([hub], facts))
    return TypeCheck(True, f"star with hub {hub} and {n - 1} leaves")


def _wheel(facts: GraphFacts) -> TypeCheck:
    fail = _shape_precheck(facts, "wheel")
    if fail:
        return fail
    n = facts.n
    if n < 4:
        return TypeCheck(False, f"not a wheel: {n} node(s), a wheel needs at least 4")
    fail = _first_failure(_connected_precheck(facts, "wheel"),
                          _orientation_precheck(facts, "wheel"))
    if fail:
        return fail
    if facts.m != 2 * (n - 1):
        return TypeCheck(False, f"not a wheel: {facts.m} edges, a wheel on {n} nodes has "
                                f"{2 * (n - 1)}")
    hubs = facts.nodes_where(lambda d: d == n - 1)
    if not hubs:
        return TypeCheck(False, f"not a wheel: no hub of degree {n - 1}",
                         where_nodes(facts.nodes_where(lambda d: d == facts.max_degree), facts))
    hub = hubs[0]
    bad = [v for v in facts.nodes_where(lambda d: d != 3) if v != hub]
    if bad:
        return _degree_failure(facts, "wheel", bad, "on the rim of degree != 3")
    rim = facts.undirected.subgraph(v for v in facts.graph if v != hub)
    if not nx.is_connected(rim):
        parts = sorted((sorted_nodes(c) for c in nx.connected_components(rim)),
                       key=lambda c: (-len(c), node_sort_key(c[0])))
        return TypeCheck(False, f"not a wheel: the rim is {len(parts)} separate cycles",
                         Locus().with_groups("components",
                                             [capped(c) for c in parts[:WHERE_LIMIT]])
                         .with_count("count", len(parts)))
    return TypeCheck(True, f"wheel with hub {hub} and a rim of {n - 1} nodes")


def _grid_coordinates(facts: GraphFacts, p: int, q: int) -> dict[Node, tuple[int, int]] | None:
    """Coordinates embedding the (connected, simple) undirected view as the ``p×q`` grid, or
    ``None`` when it is not isomorphic to ``nx.grid_2d_graph(p, q)`` (``2 <= p <= q``).

    Take a corner ``c`` (degree 2) as (0, 0) and a corner ``c2`` at distance ``q-1`` as
    (0, q-1); in a grid the node at (i, j) lies at distance ``i+j`` from ``c`` and
    ``i + q-1-j`` from ``c2``, which fixes (i, j).  The graph is the grid exactly when these
    coordinates are a bijection onto ``[0,p) × [0,q)`` and every edge joins neighbouring
    cells: an injective edge map between graphs with equal edge counts is an isomorphism.
    (If ``p == q`` the two corners at distance ``q-1`` are symmetric, so either will do.)
    """
    u = facts.undirected
    corners = facts.nodes_where(lambda d: d == 2)
    if len(corners) != 4:
        return None
    c = corners[0]
    dist_c = _bfs(u, c)
    far = [v for v in corners if dist_c.get(v) == q - 1]
    if not far:
        return None
    dist_far = _bfs(u, far[0])
    coords: dict[Node, tuple[int, int]] = {}
    seen: set[tuple[int, int]] = set()
    for v in u:
        a, b = dist_c[v], dist_far[v]
        if (a + b - (q - 1)) % 2:
            return None
        i, j = (a + b - (q - 1)) // 2, (a - b + q - 1) // 2
        if not (0 <= i < p and 0 <= j < q) or (i, j) in seen:
            return None
        seen.add((i, j))
        coords[v] = (i, j)
    for x, y in u.edges():
        (i1, j1), (i2, j2) = coords[x], coords[y]
        if abs(i1 - i2) + abs(j1 - j2) != 1:
            return None
    return coords


def _bfs(graph: Any, source: Node) -> dict[Node, int]:
    dist = {source: 0}
    queue = deque([source])
    while queue:
        x = queue.popleft()
        for y in graph[x]:
            if y not in dist:
                dist[y] = dist[x] + 1
                queue.append(y)
    return dist


def grid_shapes(n: int) -> list[tuple[int, int]]:
    """Every ``(p, q)`` with ``2 <= p <= q`` and ``p*q == n``."""
    return [(p, n // p) for p in range(2, math.isqrt(n) + 1) if n % p == 0]


def _grid(facts: GraphFacts) -> TypeCheck:
    fail = _shape_precheck(facts, "grid")
    if fail:
        return fail
    n = facts.n
    shapes = grid_shapes(n)
    if not shapes:
        return TypeCheck(False, f"not a grid: {n} nodes is not p×q with 2 <= p <= q")
    fail = _first_failure(_connected_precheck(facts, "grid"),
                          _orientation_precheck(facts, "grid"))
    if fail:
        return fail
    counts = facts.degree_counts
    for p, q in shapes:
        if facts.m != (p - 1) * q + p * (q - 1):
            continue
        want = {2: 4, 3: 2 * (p - 2) + 2 * (q - 2), 4: (p - 2) * (q - 2)}
        if {d: c for d, c in counts.items() if c} != {d: c for d, c in want.items() if c}:
            bad = facts.nodes_where(lambda d: d not in (2, 3, 4))
            seen = dict(sorted(counts.items()))
            return TypeCheck(False, f"not a {p}x{q} grid: degree counts {seen}, expected {want}",
                             where_nodes(bad, facts) if bad else Locus())
        if _grid_coordinates(facts, p, q) is not None:
            return TypeCheck(True, f"{p}x{q} grid")
        return TypeCheck(False, f"not a grid: right edge and degree counts for {p}x{q} but not "
                                "isomorphic to it")
    expect = ", ".join(f"{p}x{q}: {(p - 1) * q + p * (q - 1)}" for p, q in shapes)
    return TypeCheck(False, f"not a grid: {facts.m} edges (grid edge counts for {n} nodes: "
                            f"{expect})")


def _complete(facts: GraphFacts) -> TypeCheck:
    fail = _shape_precheck(facts, "complete graph")
    if fail:
        return fail
    n = facts.n
    want = n * (n - 1) if facts.directed else n * (n - 1) // 2
    if facts.m == want:
        kind = "complete digraph" if facts.directed else "complete graph"
        return TypeCheck(True, f"{kind} K{n}")
    full = 2 * (n - 1) if facts.directed else n - 1
    bad = facts.nodes_where(lambda d: d != full)
    what = "arcs" if facts.directed else "edges"
    return TypeCheck(False, f"not complete: {facts.m} {what}, K{n} has {want}",
                     where_nodes(bad, facts))


def _complete_bipartite(facts: GraphFacts) -> TypeCheck:
    fail = _shape_precheck(facts, "complete bipartite graph")
    if fail:
        return fail
    if facts.n < 2:
        return TypeCheck(False, "not complete bipartite: needs two non-empty sides")
    fail = _first_failure(_connected_precheck(facts, "complete bipartite graph"),
                          _orientation_precheck(facts, "complete bipartite graph"))
    if fail:
        return fail
    if not facts.bipartite:
        return TypeCheck(False, "not bipartite", where_odd_cycle(facts))
    (a, b), = facts.component_sides  # connected: one component, one colouring up to swap
    if facts.m != a * b:
        colour = facts.colouring or {}
        # nodes missing some neighbour on the other side
        other = {0: 0, 1: 0}
        for v in facts.graph:
            other[colour[v]] += 1
        bad = sorted_nodes(v for v in facts.graph
                           if facts.degrees[v] != other[1 - colour[v]])
        return TypeCheck(False, f"bipartite with sides {a},{b} but {facts.m} edges, "
                                f"K{{{a},{b}}} has {a * b}", where_nodes(bad, facts))
    return TypeCheck(True, f"K{{{a},{b}}}")


def _bipartite(facts: GraphFacts) -> TypeCheck:
    if facts.bipartite:
        return TypeCheck(True, "bipartite")
    return TypeCheck(False, "not bipartite: odd cycle", where_odd_cycle(facts))


def _dag(facts: GraphFacts) -> TypeCheck:
    if not facts.directed:
        return TypeCheck(False, "undirected graph (a DAG must be directed)")
    if facts.acyclic:
        return TypeCheck(True, "DAG")
    return TypeCheck(False, "has a directed cycle", where_cycle(facts))


def _connected(facts: GraphFacts) -> TypeCheck:
    if facts.connected:
        return TypeCheck(True, "weakly connected" if facts.directed else "connected")
    if facts.n == 0:
        return TypeCheck(False, "empty graph")
    return TypeCheck(False, components_text(facts), where_components(facts))


def _regular(facts: GraphFacts) -> TypeCheck:
    if facts.n == 0:
        return TypeCheck(False, "empty graph")
    if facts.regular:
        return TypeCheck(True, f"{facts.regular_degree}-regular")
    major = facts.majority_degree
    bad = facts.nodes_where(lambda d: d != major)
    return TypeCheck(False, f"not regular: degrees {facts.min_degree}..{facts.max_degree} "
                            f"(most common {major})", where_nodes(bad, facts))


def _planar(facts: GraphFacts) -> TypeCheck:
    if facts.planar:
        return TypeCheck(True, "planar")
    return TypeCheck(False, "not planar", where_kuratowski(facts))


def _acyclic(facts: GraphFacts) -> TypeCheck:
    if facts.acyclic:
        return TypeCheck(True, "acyclic (DAG)" if facts.directed else "acyclic (forest)")
    return TypeCheck(False, "has a directed cycle" if facts.directed else "has a cycle",
                     where_cycle(facts))


VALIDATORS: Mapping[str, Callable[[GraphFacts], TypeCheck]] = {
    "tree": _tree,
    "forest": _forest,
    "path": _path,
    "cycle": _cycle,
    "star": _star,
    "wheel": _wheel,
    "grid": _grid,
    "complete": _complete,
    "complete_bipartite": _complete_bipartite,
    "bipartite": _bipartite,
    "dag": _dag,
    "connected": _connected,
    "regular": _regular,
    "planar": _planar,
    "acyclic": _acyclic,
}


def check_graph_type(name: str, facts: GraphFacts) -> TypeCheck:
    """Decide whether the graph behind ``facts`` is of graph type ``name``.

    Args:
        name: one of :data:`VALIDATORS` (the ``graph_type`` vocabulary), lower-case.
        facts: the graph's facts (directed or undirected, possibly empty).

    Returns:
        A :class:`TypeCheck`; never raises for any graph.

    Raises:
        ValueError: ``name`` is not a known graph type.
    """
    validator = VALIDATORS.get(name)
    if validator is None:
        known = ", ".join(sorted(VALIDATORS))
        raise ValueError(f"unknown graph type {name!r} (known: {known})")
    return validator(facts)
