"""Seeded constructions of graphs with prescribed properties, for references and witnesses.

Each function draws one graph from a :class:`random.Random` and promises the property in its
name by construction (the builder still verifies every reference).  Node ids are ``0..n-1``
(ints; the builder serializes them as strings) in a random order, so ids carry no structure.
Functions return ``None`` when a draw cannot meet the request (the caller draws again).
"""

from __future__ import annotations

import contextlib
import random

import networkx as nx


def shuffled(g: nx.Graph, rng: random.Random) -> nx.Graph:
    """``g`` relabelled by a random permutation onto ``0..n-1`` (attributes kept)."""
    nodes = list(g.nodes())
    perm = list(range(len(nodes)))
    rng.shuffle(perm)
    h = nx.relabel_nodes(g, dict(zip(nodes, perm, strict=True)), copy=True)
    out: nx.Graph = h.__class__()
    out.add_nodes_from(sorted(h.nodes(data=True)))
    out.add_edges_from(sorted(h.edges(data=True)))
    out.graph.update(h.graph)
    return out


def random_tree(n: int, rng: random.Random, max_degree: int | None = None) -> nx.Graph:
    """A uniformly random labelled tree (Prüfer) or, with ``max_degree``, a random recursive
    tree whose nodes never exceed that degree (``max_degree >= 2``)."""
    g = nx.Graph()
    g.add_nodes_from(range(n))
    if n <= 1:
        return g
    if max_degree is None:
        if n == 2:
            g.add_edge(0, 1)
            return g
        return shuffled(nx.from_prufer_sequence([rng.randrange(n) for _ in range(n - 2)]), rng)
    for v in range(1, n):
        open_ = [u for u in range(v) if g.degree(u) < max_degree]
        g.add_edge(v, rng.choice(open_))
    return shuffled(g, rng)


def random_forest(n: int, components: int, rng: random.Random) -> nx.Graph:
    """A forest with exactly ``components`` trees on ``n`` nodes (random part sizes ≥ 1)."""
    cuts = sorted(rng.sample(range(1, n), components - 1))
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
    g = nx.Graph()
    start = 0
    for s in sizes:
        t = random_tree(s, rng)
        g.add_nodes_from(v + start for v in t)
        g.add_edges_from((u + start, v + start) for u, v in t.edges())
        start += s
    return shuffled(g, rng)


def random_connected(n: int, m: int, rng: random.Random) -> nx.Graph | None:
    """A connected simple graph with ``n`` nodes and ``m`` edges (random spanning tree plus
    uniformly chosen extra pairs); ``None`` when ``m`` is out of ``[n−1, n(n−1)/2]``."""
    if m < n - 1 or m > n * (n - 1) // 2:
        return None
    g = random_tree(n, rng)
    _add_random_edges(g, m, rng)
    return g


def random_gnm(n: int, m: int, rng: random.Random, directed: bool = False) -> nx.Graph:
    """G(n, m): ``m`` distinct pairs (arcs when ``directed``) chosen uniformly."""
    return shuffled(nx.gnm_random_graph(n, m, seed=rng.randrange(1 << 31), directed=directed),
                    rng)


def _add_random_edges(g: nx.Graph, m: int, rng: random.Random) -> None:
    n = g.number_of_nodes()
    nodes = list(g.nodes())
    if m - g.number_of_edges() > n * (n - 1) // 4:  # dense: sample from the complement
        missing = [(u, v) for i, u in enumerate(nodes) for v in nodes[i + 1:]
                   if not g.has_edge(u, v)]
        g.add_edges_from(rng.sample(missing, m - g.number_of_edges()))
        return
    while g.number_of_edges() < m:
        u, v = rng.sample(nodes, 2)
        g.add_edge(u, v)


def random_planar(n: int, m: int, rng: random.Random, connected: bool = True) -> nx.Graph | None:
    """A planar graph with ``n`` nodes and ``m ≤ 3n−6`` edges: a random (spanning tree, when
    ``connected``) start, then random pairs kept only while the graph stays planar."""
    if m > max(n - 1, 3 * n - 6) or (connected and m < n - 1):
        return None
    g = random_tree(n, rng) if connected else nx.empty_graph(n)
    nodes = list(g.nodes())
    pairs = [(u, v) for i, u in enumerate(nodes) for v in nodes[i + 1:] if not g.has_edge(u, v)]
    rng.shuffle(pairs)
    for u, v in pairs:
        if g.number_of_edges() >= m:
            break
        g.add_edge(u, v)
        if not nx.check_planarity(g)[0]:
            g.remove_edge(u, v)
    return g if g.number_of_edges() == m else None


def random_bipartite(n: int, m: int, rng: random.Random, connected: bool = False
                     ) -> nx.Graph | None:
    """A bipartite graph with ``n`` nodes and ``m`` edges across a random split (connected on
    request: a random spanning tree across the split first)."""
    p = rng.randint(max(1, n // 4), n - max(1, n // 4))
    q = n - p
    if m > p * q or (connected and m < n - 1):
        return None
    left, right = list(range(p)), list(range(p, n))
    g = nx.Graph()
    g.add_nodes_from(range(n))
    if connected:
        # grow a spanning tree that alternates sides
        todo_l, todo_r = left[1:], right[:]
        rng.shuffle(todo_l)
        rng.shuffle(todo_r)
        placed_l: list[int] = [left[0]]
        placed_r: list[int] = []
        while todo_l or todo_r:
            if todo_r and (not todo_l or rng.random() < 0.5 or not placed_r):
                v = todo_r.pop()
                g.add_edge(v, rng.choice(placed_l))
                placed_r.append(v)
            else:
                v = todo_l.pop()
                g.add_edge(v, rng.choice(placed_r))
                placed_l.append(v)
    pairs = [(u, v) for u in left for v in right if not g.has_edge(u, v)]
    need = m - g.number_of_edges()
    if need < 0:
        return None
    g.add_edges_from(rng.sample(pairs, need))
    return shuffled(g, rng)


def random_dag(n: int, m: int, rng: random.Random, connected: bool = False) -> nx.DiGraph | None:
    """A DAG with ``n`` nodes and ``m`` arcs, all pointing forward in a random order (weakly
    connected on request)."""
    if m > n * (n - 1) // 2 or (connected and m < n - 1):
        return None
    base = random_tree(n, rng) if connected else nx.empty_graph(n)
    und = nx.Graph(base)
    _add_random_edges(und, m, rng)
    order = list(range(n))
    rng.shuffle(order)
    rank = {v: i for i, v in enumerate(order)}
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from((u, v) if rank[u] < rank[v] else (v, u) for u, v in und.edges())
    return g


def random_regular(n: int, k: int, rng: random.Random, connected: bool = True
                   ) -> nx.Graph | None:
    """A random ``k``-regular graph on ``n`` nodes (``n·k`` even, ``k < n``); ``None`` when the
    draw is disconnected and ``connected`` is asked."""
    if (n * k) % 2 or k >= n:
        return None
    g = nx.random_regular_graph(k, n, seed=rng.randrange(1 << 31))
    if connected and not nx.is_connected(g):
        return None
    return shuffled(g, rng)


def random_degree_bounded(n: int, m: int, lo: int, hi: int, rng: random.Random
                          ) -> nx.Graph | None:
    """A simple graph with ``n`` nodes, ``m`` edges and every degree in ``[lo, hi]``: a random
    degree sequence in that range summing to ``2m``, realised by Havel–Hakimi and randomised
    by degree-preserving double-edge swaps.  ``None`` when the drawn sequence is not
    graphical."""
    if m * 2 < n * lo or m * 2 > n * hi or hi >= n:
        return None
    degrees = [lo] * n
    for _ in range(2 * m - n * lo):
        v = rng.choice([i for i in range(n) if degrees[i] < hi])
        degrees[v] += 1
    if not nx.is_graphical(degrees):
        return None
    g = nx.havel_hakimi_graph(degrees)
    if m >= 2:
        # fewer swaps than asked still leave a valid graph with the same degrees
        with contextlib.suppress(nx.NetworkXAlgorithmError):
            nx.double_edge_swap(g, nswap=2 * m, max_tries=200 * m, seed=rng.randrange(1 << 31))
    return shuffled(g, rng)
