"""Seeded graph constructions and small exact algorithms for the L5 (graph editing) templates.

Everything here is deterministic given the :class:`random.Random` passed in: no global random
state is read, and no Python ``set``/``frozenset`` of strings is ever iterated without sorting
first (string hashing is salted per process, so such an iteration order would change between
runs).  Node ids of finished graphs are the strings ``'0'``..``'n-1'``; constructions work on
``int`` ids and :func:`relabel` turns them into a random permutation of those strings, so the
planted structure (layers, cycles, cores) is not visible in the ids.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Iterable, Sequence
from itertools import pairwise
from typing import Any

import networkx as nx

from pytest_graphinstruct.vocab import natural_key

nkey = natural_key


def sorted_nodes(xs: Iterable[Hashable]) -> list[Any]:
    """``xs`` sorted by :func:`nkey`."""
    return sorted(xs, key=nkey)


def pair_key(directed: bool, u: Hashable, v: Hashable) -> tuple[Any, Any]:
    """``(u, v)`` for arcs; for undirected edges the endpoint pair in :func:`nkey` order."""
    if directed or nkey(u) <= nkey(v):
        return (u, v)
    return (v, u)


def edge_pairs(g: nx.Graph) -> list[tuple[Any, Any]]:
    """The edges of ``g`` as :func:`pair_key` pairs, sorted by :func:`nkey`."""
    d = g.is_directed()
    return sorted((pair_key(d, u, v) for u, v in g.edges()),
                  key=lambda e: (nkey(e[0]), nkey(e[1])))


def relabel(g: nx.Graph, rng: random.Random) -> tuple[nx.Graph, dict[int, str]]:
    """``g`` (int nodes ``0..n-1``) with nodes renamed by a random permutation to ``'0'..'n-1'``.

    Returns the new graph (nodes inserted in id order, edges in sorted order, edge attributes
    kept) and the mapping old → new id.
    """
    n = g.number_of_nodes()
    perm = list(range(n))
    rng.shuffle(perm)
    mapping = {old: str(perm[i]) for i, old in enumerate(sorted(g.nodes()))}
    return rename(g, mapping), mapping


def rename(g: nx.Graph, mapping: dict[Any, str]) -> nx.Graph:
    """A copy of ``g`` with node ``x`` renamed ``mapping.get(x, x)``; nodes inserted in
    :func:`nkey` order and edges in sorted order (so equal inputs give equal insertion orders)."""
    out: nx.Graph = nx.DiGraph() if g.is_directed() else nx.Graph()
    out.add_nodes_from(sorted_nodes(mapping.get(x, x) for x in g.nodes()))
    edges = []
    for u, v, d in g.edges(data=True):
        a, b = pair_key(g.is_directed(), mapping.get(u, u), mapping.get(v, v))
        edges.append((a, b, dict(d)))
    edges.sort(key=lambda e: (nkey(e[0]), nkey(e[1])))
    out.add_edges_from(edges)
    return out


def random_tree(rng: random.Random, n: int, *, window: int | None = None) -> nx.Graph:
    """A random tree on ``0..n-1``: node ``i`` hangs from a random earlier node (from the last
    ``window`` nodes when given, which makes deeper, path-like trees)."""
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for i in range(1, n):
        lo = 0 if window is None else max(0, i - window)
        g.add_edge(i, rng.randrange(lo, i))
    return g


def add_random_edges(g: nx.Graph, rng: random.Random, k: int,
                     nodes: Sequence[int] | None = None, tries: int = 5000) -> int:
    """Add up to ``k`` new edges between random non-adjacent distinct nodes (of ``nodes`` when
    given); returns how many were added (fewer only when the graph is nearly complete)."""
    pool = sorted(g.nodes()) if nodes is None else list(nodes)
    added = 0
    for _ in range(tries):
        if added >= k or len(pool) < 2:
            break
        u, v = rng.sample(pool, 2)
        if not g.has_edge(u, v):
            g.add_edge(u, v)
            added += 1
    return added


def connected_graph(rng: random.Random, n: int, extra: int) -> nx.Graph:
    """A connected graph on ``0..n-1``: a random tree plus ``extra`` random edges."""
    g = random_tree(rng, n, window=rng.choice([None, 3, 6]))
    add_random_edges(g, rng, extra)
    return g


def split_sizes(rng: random.Random, total: int, parts: int, minimum: int) -> list[int]:
    """``parts`` random positive sizes ≥ ``minimum`` summing to ``total``."""
    if parts * minimum > total:
        raise ValueError(f"cannot split {total} into {parts} parts of at least {minimum}")
    sizes = [minimum] * parts
    for _ in range(total - parts * minimum):
        sizes[rng.randrange(parts)] += 1
    return sizes


def components_sorted(g: nx.Graph) -> list[list[Any]]:
    """Connected (weakly, for digraphs) components, each sorted, in order of their first node."""
    comps = (nx.weakly_connected_components(g) if g.is_directed()
             else nx.connected_components(g))
    out = [sorted_nodes(c) for c in comps]
    out.sort(key=lambda c: nkey(c[0]))
    return out


def kruskal(g: nx.Graph, rng: random.Random, weight: str | None = "weight") -> nx.Graph:
    """A minimum spanning forest of ``g`` (by ``weight``; all 1 when ``None``), ties broken at
    random; nodes and edge attributes kept."""
    edges = []
    for u, v, d in g.edges(data=True):
        w = d.get(weight, 1) if weight is not None else 1
        edges.append((w, rng.random(), u, v, dict(d)))
    edges.sort(key=lambda e: (e[0], e[1]))
    parent = {x: x for x in g.nodes()}

    def find(x: Any) -> Any:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    t = nx.Graph()
    t.add_nodes_from(g.nodes())
    for _, _, u, v, d in edges:
        ru, rv = find(u), find(v)
        if ru != rv:
            parent[ru] = rv
            t.add_edge(u, v, **d)
    return t


def search_tree(g: nx.Graph, rng: random.Random, *, depth_first: bool) -> nx.Graph:
    """A spanning forest of ``g`` grown by randomised BFS or DFS from random roots."""
    t = nx.Graph()
    t.add_nodes_from(g.nodes())
    seen: set[Any] = set()
    order = list(g.nodes())
    rng.shuffle(order)
    for root in order:
        if root in seen:
            continue
        seen.add(root)
        frontier = [root]
        while frontier:
            u = frontier.pop() if depth_first else frontier.pop(0)
            nbrs = list(g.neighbors(u))
            rng.shuffle(nbrs)
            for w in nbrs:
                if w not in seen:
                    seen.add(w)
                    t.add_edge(u, w, **g.edges[u, w])
                    frontier.append(w)
    return t


def random_spanning_forest(g: nx.Graph, rng: random.Random) -> nx.Graph:
    """A spanning forest of ``g`` by one of three randomised methods (random-weight Kruskal,
    BFS, DFS), so that repeated draws give differently shaped trees."""
    how = rng.randrange(3)
    if how == 0:
        return kruskal(g, rng, weight=None)
    return search_tree(g, rng, depth_first=how == 2)


def mst_is_unique(g: nx.Graph, tree: nx.Graph, weight: str = "weight") -> bool:
    """Whether ``tree`` is the only minimum spanning tree of the connected graph ``g``: no
    non-tree edge weighs as much as the heaviest tree edge on the path it closes."""
    for u, v, d in g.edges(data=True):
        if tree.has_edge(u, v):
            continue
        path = nx.shortest_path(tree, u, v)
        heaviest = max(tree.edges[a, b][weight] for a, b in pairwise(path))
        if d[weight] == heaviest:
            return False
    return True


def tight_predecessors(g: nx.Graph, root: Any, weight: str = "weight"
                       ) -> tuple[dict[Any, float], dict[Any, list[Any]]]:
    """Dijkstra distances from ``root`` and, per other node, the neighbours through which a
    shortest path can arrive (sorted).  Weights must be positive."""
    dist = nx.single_source_dijkstra_path_length(g, root, weight=weight)
    preds: dict[Any, list[Any]] = {}
    for v in sorted_nodes(dist):
        if v == root:
            continue
        preds[v] = sorted_nodes(p for p in g.neighbors(v)
                                if p in dist and dist[p] + g.edges[p, v][weight] == dist[v])
    return dist, preds


def path_union(g: nx.Graph, s: Any, t: Any) -> nx.Graph:
    """The union of all shortest (fewest-edge) ``s``–``t`` paths of the undirected ``g``."""
    ds = nx.single_source_shortest_path_length(g, s)
    dt = nx.single_source_shortest_path_length(g, t)
    d = ds[t]
    out = nx.Graph()
    out.add_nodes_from(sorted_nodes(v for v in g if v in ds and v in dt and ds[v] + dt[v] == d))
    for u, v in g.edges():
        if u in out and v in out and abs(ds[u] - ds[v]) == 1:
            out.add_edge(u, v)
    return out


def edge_disjoint_cycles(g: nx.Graph, closers: Sequence[tuple[Any, Any]]) -> list[list[Any]] | None:
    """For each closing edge ``(u, w)`` of ``closers`` (in order), a path from ``w`` back to ``u``
    in ``g`` minus every closer and every edge used by earlier paths (shortest, BFS); ``None``
    when some closer has no such path.  Used as a lower-bound certificate: cycles that share
    no edge need one removal each."""
    h = nx.Graph(g)
    h.remove_edges_from(closers)
    out = []
    for u, w in closers:
        try:
            path = nx.shortest_path(h, w, u)
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            return None
        h.remove_edges_from(pairwise(path))
        out.append(path)
    return out


def bipartite_connected(rng: random.Random, a: int, b: int, extra: int) -> nx.Graph:
    """A connected bipartite graph with sides ``0..a-1`` and ``a..a+b-1`` (``a, b ≥ 1``): a
    random tree whose every edge crosses the sides, plus ``extra`` random cross edges."""
    g = nx.Graph()
    side_a, side_b = list(range(a)), list(range(a, a + b))
    g.add_nodes_from(side_a + side_b)
    placed_a, placed_b = [side_a[0]], [side_b[0]]
    g.add_edge(side_a[0], side_b[0])
    rest = [(x, "a") for x in side_a[1:]] + [(x, "b") for x in side_b[1:]]
    rng.shuffle(rest)
    for x, side in rest:
        if side == "a":
            g.add_edge(x, rng.choice(placed_b))
            placed_a.append(x)
        else:
            g.add_edge(x, rng.choice(placed_a))
            placed_b.append(x)
    added = 0
    for _ in range(extra * 20):
        if added >= extra:
            break
        u, v = rng.choice(side_a), rng.choice(side_b)
        if not g.has_edge(u, v):
            g.add_edge(u, v)
            added += 1
    return g
