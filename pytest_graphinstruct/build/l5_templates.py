"""The L5 (multi-step graph editing) task templates of the suite builder.

Each template is a function ``(rng, bucket) -> Draft | None`` that constructs a base graph with a
*planted, provable* answer structure, words the instruction, and returns a :class:`Draft`: the
text, the explicit constraints, the base graph and a ``draw`` function producing correct result
graphs at random.  ``None`` means "this construction was unlucky, draw again" (the driver in
:mod:`.level5` retries with the same random stream, so the outcome stays deterministic).

Promises every template keeps (checked again by the driver and the tests):

* **Verifiable.**  The task type is one the L5 verifier checks; every parameter it needs is in
  the explicit constraints or spelled the way its text readers
  (:mod:`pytest_graphinstruct.verify.tasks.text`) read it.  A text that asks for "the minimum
  number" of edits states a task whose minimum the template knows *exactly*: by a certificate
  (``k`` edge- or arc-disjoint cycles each needing one change, ``c`` components needing ``c-1``
  links) matched by the drawn answers, or because every valid answer has the same size
  (spanning trees, k-regular supergraphs, cores, prunings).  Where the verifier's own minimum
  search is capped (large bipartization), the count is stated as "exactly N" so it is checked.
* **Text ↔ constraints.**  The base graph appears only as a bracketed edge list; node ids
  elsewhere are written ``node 7`` / ``nodes 3 and 9`` / ``(3,9)``; every other number is an
  explicit-constraint value or a task parameter the verifier reads (``exactly N``, ``k-core``,
  ``G^k``, depth bound, ``k-regular``); the base's edge count is never stated.  No phrase can be
  read as an edit count by accident ("add an edge" would read as "exactly 1").
* **Bucketed by the result.**  ``bucket`` names the size bucket of the *result* graph's node
  count (``small`` ≤ 20, ``medium`` 21–50, ``large`` > 50); results stay ≤ 80 nodes.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

import networkx as nx

from pytest_graphinstruct.build.common import edge_list_text
from pytest_graphinstruct.build.l5_graphs import (
    add_random_edges,
    bipartite_connected,
    components_sorted,
    connected_graph,
    edge_disjoint_cycles,
    edge_pairs,
    kruskal,
    mst_is_unique,
    path_union,
    random_spanning_forest,
    random_tree,
    relabel,
    rename,
    sorted_nodes,
    split_sizes,
    tight_predecessors,
)
from pytest_graphinstruct.build.streams import nx_seed

#: Node-count range of the result graph per size bucket.
RANGES: dict[str, tuple[int, int]] = {"small": (8, 20), "medium": (21, 48), "large": (51, 80)}

Draw = Callable[[random.Random], "nx.Graph | None"]


@dataclass
class Draft:
    """One drafted L5 instruction before references are attached.

    ``draw(rng)`` returns a correct result graph (str node ids) or ``None`` for a rejected
    draw; ``unique`` says every correct result is the same graph (then references may
    coincide).  ``steps`` are ``(type, description)`` reasoning steps; ``method``/``notes`` go
    to ``solution_verification``; ``operation`` and ``edit_reason`` word the GraphEdits.
    """

    task: str
    text: str
    explicit: list[str]
    base: nx.Graph
    draw: Draw
    unique: bool
    steps: list[tuple[str, str]]
    method: str
    notes: str
    operation: str
    edit_reason: str


def _n(rng: random.Random, bucket: str, lo: int | None = None, hi: int | None = None) -> int:
    a, b = RANGES[bucket]
    return rng.randint(max(a, lo or a), min(b, hi or b))


def _listing(g: nx.Graph) -> str:
    return f"[{edge_list_text(g)}]"


def _weighted_listing(g: nx.Graph) -> str:
    items = [f"({u},{v},w={g.edges[u, v]['weight']})" for u, v in edge_pairs(g)]
    return "[" + ", ".join(items) + "]"


def _plural(k: int, word: str) -> str:
    return f"{k} {word}" if k == 1 else f"{k} {word}s"


# ----------------------------------------------------------------------------- spanning trees


def spanning_tree(rng: random.Random, bucket: str) -> Draft | None:
    """Remove edges to leave a spanning tree (every spanning tree removes m − n + 1 edges)."""
    n = _n(rng, bucket)
    base, _ = relabel(connected_graph(rng, n, rng.randint(2, max(3, n // 3))), rng)
    m = base.number_of_edges()
    lst = _listing(base)
    text = rng.choice([
        f"Given the undirected graph with {n} nodes and edges {lst}, remove the minimum number "
        "of edges so that what remains is a spanning tree of the graph (every node is kept).",
        f"Delete edges from the undirected graph with {n} nodes and edges {lst} until it "
        "becomes a tree that still contains every node; do not introduce new edges.",
        f"Extract a spanning tree from the undirected graph on {n} nodes whose edges are {lst}: "
        "keep all nodes and only delete edges.",
    ])
    return Draft(
        task="spanning_tree", text=text,
        explicit=[f"num_nodes={n}", "graph_type=tree", "directed=false",
                  "task_type=spanning_tree"],
        base=base, draw=lambda r: random_spanning_forest(base, r), unique=False,
        steps=[("construct", f"Grow a spanning tree over all {n} nodes (BFS, DFS or Kruskal)"),
               ("remove_edge", f"Remove the {m - n + 1} edges outside the tree"),
               ("verify", f"Check {n} nodes, {n - 1} edges, connected")],
        method="check_spanning_tree",
        notes=f"Every spanning tree removes exactly m - n + 1 = {m - n + 1} edges; the graph "
              "has many spanning trees (references are two non-isomorphic ones).",
        operation="remove_edges", edit_reason="Removed the edges outside a spanning tree",
    )


def _weighted_base(rng: random.Random, n: int) -> tuple[nx.Graph, bool]:
    g0 = connected_graph(rng, n, rng.randint(3, max(4, n // 2)))
    m = g0.number_of_edges()
    distinct = rng.random() < 0.5
    if distinct:
        weights = rng.sample(range(1, 2 * m + 1), m)
    else:
        top = rng.choice([4, 6, 9])
        weights = [rng.randint(1, top) for _ in range(m)]
    for (u, v), w in zip(sorted(g0.edges()), weights, strict=True):
        g0.edges[u, v]["weight"] = w
    base, _ = relabel(g0, rng)
    return base, distinct


def mst(rng: random.Random, bucket: str) -> Draft | None:
    """Keep a minimum spanning tree, or a shortest-path tree rooted at a named node, of a
    weighted graph (weights listed as ``(u,v,w=4)`` and stored on the base edges)."""
    n = _n(rng, bucket)
    base, _ = _weighted_base(rng, n)
    m = base.number_of_edges()
    wl = _weighted_listing(base)
    explicit = [f"num_nodes={n}", "graph_type=tree", "directed=false", "task_type=mst"]
    if rng.random() < 0.5:
        unique = mst_is_unique(base, kruskal(base, rng))
        text = rng.choice([
            f"Given the weighted undirected graph with {n} nodes and weighted edges {wl}, "
            "remove edges so that a minimum spanning tree remains: a tree on all nodes whose "
            "total edge weight is as small as possible.",
            f"Find a minimum spanning tree (MST) of the weighted undirected graph with {n} nodes "
            f"and edges {wl} by deleting edges; keep every node.",
            f"The weighted undirected graph with {n} nodes has edges {wl}, where w is the "
            "weight. Keep only the edges of a minimum-weight spanning tree.",
        ])
        return Draft(
            task="mst", text=text, explicit=explicit, base=base,
            draw=lambda r: kruskal(base, r), unique=unique,
            steps=[("construct", "Sort the edges by weight (Kruskal's algorithm)"),
                   ("construct", "Add each edge that joins two different trees"),
                   ("remove_edge", f"Remove the {m - n + 1} edges not in the MST"),
                   ("verify", "Check the tree spans all nodes with minimum total weight")],
            method="check_mst_weight",
            notes=("Unique: no edge outside the MST ties with the heaviest edge on its tree "
                   "cycle." if unique else
                   "Several minimum spanning trees (equal weights); any of them is correct."),
            operation="remove_edges", edit_reason="Removed the edges outside a minimum "
                                                  "spanning tree")
    root = sorted_nodes(base.nodes())[rng.randrange(n)]
    _, preds = tight_predecessors(base, root)
    unique = all(len(p) == 1 for p in preds.values())
    text = rng.choice([
        f"Given the weighted undirected graph with {n} nodes and weighted edges {wl}, compute "
        f"the shortest-path tree rooted at node {root} (as Dijkstra's algorithm would): remove "
        "edges so that a spanning tree remains in which the tree path of every node is a "
        "least-weight path of the graph.",
        f"Keep only the edges of a shortest-path tree rooted at node {root} of the weighted "
        f"undirected graph with {n} nodes and edges {wl}: a spanning tree that reaches every "
        "node along a path of minimum total weight.",
    ])

    def draw(r: random.Random) -> nx.Graph:
        t = nx.Graph()
        t.add_nodes_from(base.nodes())
        for v, ps in preds.items():
            p = r.choice(ps)
            t.add_edge(p, v, **base.edges[p, v])
        return t

    return Draft(
        task="mst", text=text, explicit=explicit, base=base, draw=draw, unique=unique,
        steps=[("compute", f"Run Dijkstra from node {root}"),
               ("construct", "Keep one tight predecessor edge for every other node"),
               ("remove_edge", f"Remove the {m - n + 1} other edges"),
               ("verify", "Check every tree distance equals the graph distance")],
        method="check_shortest_path_tree",
        notes=("Unique: every node has exactly one shortest-path predecessor." if unique else
               "Some node has several shortest-path predecessors; any choice is correct."),
        operation="remove_edges", edit_reason="Removed the edges outside a shortest-path tree")


# ----------------------------------------------------------------------------- connectivity


def make_connected(rng: random.Random, bucket: str) -> Draft | None:
    """Add the fewest edges joining ``c`` components (exactly ``c − 1``); optionally the base
    is a forest and the result must be a single tree."""
    n = _n(rng, bucket, lo=9)
    c = rng.randint(2, min(n // 3, 4 if bucket == "small" else 6))
    forest = rng.random() < 0.35
    g0 = nx.Graph()
    start = 0
    for size in split_sizes(rng, n, c, 3):
        comp = connected_graph(rng, size, 0 if forest else rng.randint(0, size // 3))
        g0.add_nodes_from(x + start for x in comp.nodes())
        g0.add_edges_from((u + start, v + start) for u, v in comp.edges())
        start += size
    base, _ = relabel(g0, rng)
    comps = components_sorted(base)
    lst = _listing(base)
    tail = " and forms a single tree" if forest else ""
    text = rng.choice([
        f"Given the undirected graph with {n} nodes and edges {lst}, add the minimum number of "
        f"edges so that the graph becomes connected{tail}.",
        f"The undirected graph with {n} nodes and edges {lst} falls apart into several "
        f"components. Add the fewest edges that make it connected{tail}, keeping every "
        "existing edge.",
        f"Add exactly {_plural(c - 1, 'edge')} to the undirected graph with {n} nodes and edges "
        f"{lst} so that it becomes connected{tail}.",
    ])
    explicit = [f"num_nodes={n}", "connected=true"]
    if forest:
        explicit.append("graph_type=tree")
    explicit += ["directed=false", "task_type=make_connected"]

    def draw(r: random.Random) -> nx.Graph:
        order = list(range(len(comps)))
        r.shuffle(order)
        style = r.randrange(3)
        g = base.copy()
        for i in range(1, len(order)):
            j = i - 1 if style == 0 else 0 if style == 1 else r.randrange(i)
            g.add_edge(r.choice(comps[order[i]]), r.choice(comps[order[j]]))
        return g

    return Draft(
        task="make_connected", text=text, explicit=explicit, base=base, draw=draw, unique=False,
        steps=[("construct", f"Identify the {c} connected components"),
               ("add_edge", f"Add {c - 1} edges linking the components in a tree pattern"),
               ("verify", "Check the graph is connected" + (" and acyclic" if forest else ""))],
        method="check_connectivity",
        notes=f"Minimum {c - 1}: each new edge merges at most two of the {c} components.",
        operation="add_edges", edit_reason="Added edges linking the components")


# ----------------------------------------------------------------------------- cycles


def make_acyclic(rng: random.Random, bucket: str) -> Draft | None:
    """Reverse (or remove) the fewest arcs of a digraph with ``k`` planted node-disjoint
    directed cycles to make it a DAG: the minimum is ``k`` (disjoint cycles need one change
    each; every cycle uses exactly one backward arc of the planted order)."""
    n = _n(rng, bucket)
    k = rng.randint(1, min(3, n // 5)) if bucket == "small" else rng.randint(2, 4)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for i in range(1, n):
        g.add_edge(rng.randrange(max(0, i - 5), i), i)
    for _ in range(rng.randint(n // 4, n // 2)):
        u = rng.randrange(n - 1)
        v = rng.randint(u + 1, min(n - 1, u + 8))
        g.add_edge(u, v)
    chunk = n // k
    windows = []
    for j in range(k):
        length = rng.randint(3, min(5, chunk))
        s = rng.randint(j * chunk, (j + 1) * chunk - length)
        nodes = list(range(s, s + length))
        for a, b in pairwise(nodes):
            g.add_edge(a, b)
        if g.has_edge(nodes[0], nodes[-1]):
            g.remove_edge(nodes[0], nodes[-1])
        g.add_edge(nodes[-1], nodes[0])
        windows.append(nodes)
    base, mapping = relabel(g, rng)
    cycles = [[mapping[x] for x in w] for w in windows]
    mode = rng.choice(["reverse", "remove"])
    arcs = "arc" if k == 1 else "arcs"
    lst = _listing(base)
    if mode == "reverse":
        text = rng.choice([
            f"Given the directed graph with {n} nodes and arcs {lst}, reverse the minimum "
            "number of arcs so that the graph becomes acyclic.",
            f"Make the directed graph with {n} nodes and arcs {lst} acyclic: reverse the fewest "
            "arcs possible and keep all other arcs as they are.",
            f"Reverse exactly {k} {arcs} of the directed graph with {n} nodes and arcs {lst} so "
            "that it becomes acyclic (a DAG).",
        ])
    else:
        text = rng.choice([
            f"Given the directed graph with {n} nodes and arcs {lst}, remove the minimum number "
            "of arcs so that the graph becomes acyclic.",
            f"Remove exactly {k} {arcs} from the directed graph with {n} nodes and arcs {lst} so "
            "that it becomes acyclic.",
        ])

    def draw(r: random.Random) -> nx.Graph | None:
        h = base.copy()
        for cyc in cycles:
            ring = list(zip(cyc, cyc[1:] + cyc[:1], strict=True))
            a, b = r.choice(ring)
            h.remove_edge(a, b)
            if mode == "reverse":
                if h.has_edge(b, a):
                    return None
                h.add_edge(b, a)
        return h if nx.is_directed_acyclic_graph(h) else None

    verb = "Reverse" if mode == "reverse" else "Remove"
    return Draft(
        task="make_acyclic", text=text,
        explicit=[f"num_nodes={n}", "directed=true", "acyclic=true", "task_type=make_acyclic"],
        base=base, draw=draw, unique=False,
        steps=[("construct", f"Find {k} arc-disjoint directed cycles"),
               ("reverse_edge" if mode == "reverse" else "remove_edge",
                f"{verb} one arc on each cycle ({k} in all)"),
               ("verify", "Check no directed cycle remains")],
        method="check_dag",
        notes=f"Minimum {k}: the graph has {k} arc-disjoint directed cycles (one change each), "
              "and one change per cycle leaves a DAG.",
        operation="modify" if mode == "reverse" else "remove_edges",
        edit_reason=f"{verb}d one arc on each directed cycle")


def break_cycles(rng: random.Random, bucket: str) -> Draft | None:
    """Remove the fewest edges to leave a forest: ``m − n + c`` for ``c`` components."""
    n = _n(rng, bucket, lo=9)
    c = rng.randint(2, min(n // 3, 3 if bucket == "small" else 4))
    g0 = nx.Graph()
    start = 0
    for size in split_sizes(rng, n, c, 3):
        comp = connected_graph(rng, size, rng.randint(1, max(1, size // 3)))
        g0.add_nodes_from(x + start for x in comp.nodes())
        g0.add_edges_from((u + start, v + start) for u, v in comp.edges())
        start += size
    base, _ = relabel(g0, rng)
    r_min = base.number_of_edges() - n + c
    lst = _listing(base)
    text = rng.choice([
        f"Given the undirected graph with {n} nodes and edges {lst}, remove the minimum number "
        "of edges so that no cycles remain (the result is acyclic).",
        f"Break every cycle of the undirected graph with {n} nodes and edges {lst}: remove the "
        "fewest edges so that the graph is acyclic.",
        f"Remove exactly {_plural(r_min, 'edge')} from the undirected graph with {n} nodes and "
        f"edges {lst} so that it becomes acyclic.",
    ])
    return Draft(
        task="break_cycles", text=text,
        explicit=[f"num_nodes={n}", "acyclic=true", "directed=false", "task_type=break_cycles"],
        base=base, draw=lambda r: random_spanning_forest(base, r), unique=False,
        steps=[("construct", f"Find a spanning tree of each of the {c} components"),
               ("remove_edge", f"Remove the {r_min} edges outside the spanning forest"),
               ("verify", "Check the result is a forest with the same components")],
        method="check_forest",
        notes=f"Minimum m - n + c = {r_min} (the cycle rank); any spanning forest attains it.",
        operation="remove_edges", edit_reason="Removed the edges outside a spanning forest")


def break_triangles(rng: random.Random, bucket: str) -> Draft | None:
    """Remove the fewest edges to make a graph triangle-free: a bipartite graph plus ``t``
    edges inside one side forming a matching, each closing exactly one triangle.  Every
    triangle holds exactly one planted edge, and the ``t`` triangles are edge-disjoint (their
    apexes lie on the other side), so the minimum is ``t`` and any one edge per triangle
    works."""
    n = _n(rng, bucket, hi=40)
    t = rng.randint(1, 3) if bucket == "small" else rng.randint(1, 2)
    a = rng.randint(n // 2 - 1, n // 2 + 1)
    g = bipartite_connected(rng, a, n - a, rng.randint(n // 4, n // 2))
    side = range(a) if rng.random() < 0.5 else range(a, n)
    # all planted edges on one side: their triangles' apexes are all on the other side, so no
    # two triangles share an edge (an apex could otherwise be another triangle's endpoint)
    pairs = [(u, w) for u in side for w in side
             if u < w and len(list(nx.common_neighbors(g, u, w))) == 1]
    rng.shuffle(pairs)
    used: set[int] = set()
    chosen: list[tuple[int, int, int]] = []
    for u, w in pairs:
        if len(chosen) == t:
            break
        if u in used or w in used:
            continue
        x = next(iter(nx.common_neighbors(g, u, w)))
        chosen.append((u, w, x))
        used.update((u, w))
    if len(chosen) < t:
        return None
    g.add_edges_from((u, w) for u, w, _ in chosen)
    base, mapping = relabel(g, rng)
    tris = [(mapping[u], mapping[w], mapping[x]) for u, w, x in chosen]
    keep_connected = rng.random() < 0.4
    tail = ", keeping it connected" if keep_connected else ""
    lst = _listing(base)
    text = rng.choice([
        f"Given the undirected graph with {n} nodes and edges {lst}, remove the minimum number "
        f"of edges so that the graph contains no triangles{tail}.",
        f"Make the undirected graph with {n} nodes and edges {lst} triangle-free: remove the "
        f"fewest edges possible{tail}.",
        f"Remove exactly {_plural(t, 'edge')} from the undirected graph with {n} nodes and "
        f"edges {lst} so that no triangle is left{tail}.",
    ])
    explicit = [f"num_nodes={n}"] + (["connected=true"] if keep_connected else [])
    explicit += ["directed=false", "task_type=break_cycles"]

    def draw(r: random.Random) -> nx.Graph | None:
        h = base.copy()
        for u, w, x in tris:
            h.remove_edge(*r.choice([(u, w), (u, x), (w, x)]))
        if any(nx.triangles(h).values()):
            return None
        if keep_connected and not nx.is_connected(h):
            return None
        return h

    return Draft(
        task="break_cycles", text=text, explicit=explicit, base=base, draw=draw, unique=False,
        steps=[("construct", f"List the triangles: {t} of them, sharing no edge"),
               ("remove_edge", f"Remove one edge of each triangle ({t} in all)"),
               ("verify", "Check no triangle remains" + (" and the graph is connected"
                                                         if keep_connected else ""))],
        method="check_triangle_free",
        notes=f"Minimum {t}: the graph has exactly {t} triangles and they are edge-disjoint.",
        operation="remove_edges", edit_reason="Removed one edge of each triangle")


def make_bipartite(rng: random.Random, bucket: str) -> Draft | None:
    """Remove the fewest edges to make a graph bipartite: a connected bipartite graph plus ``k``
    pendant nodes each joined to both sides, closing ``k`` edge-disjoint odd cycles (minimum
    ``k``; removing either edge of each pendant works)."""
    n = _n(rng, bucket)
    k = rng.randint(1, 2) if bucket == "small" else rng.randint(2, 4)
    core = n - k
    a = rng.randint(core // 2 - 1, core // 2 + 1)
    g = bipartite_connected(rng, a, core - a, rng.randint(core // 4, core // 2))
    closers = []
    anchors = []
    for i in range(k):
        u = core + i
        x = rng.randrange(a, core)
        w = rng.randrange(a)
        g.add_edge(u, x)
        anchors.append((u, x, w))
        closers.append((u, w))
    g.add_edges_from(closers)
    if edge_disjoint_cycles(g, closers) is None:
        return None
    base, mapping = relabel(g, rng)
    pend = [(mapping[u], mapping[x], mapping[w]) for u, x, w in anchors]
    keep_connected = rng.random() < 0.4
    tail = ", keeping it connected" if keep_connected else ""
    lst = _listing(base)
    edges = _plural(k, "edge")
    choices = [
        f"Remove the minimum number of edges (exactly {k}) from the undirected graph with {n} "
        f"nodes and edges {lst} so that it becomes bipartite{tail}.",
        f"Make the undirected graph with {n} nodes and edges {lst} bipartite by deleting edges: "
        f"remove exactly {edges}{tail}.",
    ]
    if n <= 18:  # the verifier computes the minimum itself (max cut) only up to 18 nodes
        choices.append(f"Given the undirected graph with {n} nodes and edges {lst}, remove the "
                       f"minimum number of edges so that the graph becomes bipartite{tail}.")
    text = rng.choice(choices)
    explicit = [f"num_nodes={n}", "bipartite=true"]
    explicit += (["connected=true"] if keep_connected else [])
    explicit += ["directed=false", "task_type=make_bipartite"]

    def draw(r: random.Random) -> nx.Graph | None:
        h = base.copy()
        for u, x, w in pend:
            h.remove_edge(u, r.choice([x, w]))
        return h if nx.is_bipartite(h) else None

    return Draft(
        task="make_bipartite", text=text, explicit=explicit, base=base, draw=draw, unique=False,
        steps=[("construct", f"Find {k} edge-disjoint odd cycles"),
               ("remove_edge", f"Remove one edge of each odd cycle ({k} in all)"),
               ("verify", "Check a 2-colouring exists" + (" and the graph is connected"
                                                          if keep_connected else ""))],
        method="check_bipartite",
        notes=f"Minimum {k}: the graph has {k} edge-disjoint odd cycles, and removing one "
              "edge at each of the nodes closing them leaves a bipartite graph.",
        operation="remove_edges", edit_reason="Removed one edge of each odd cycle")


# ----------------------------------------------------------------------------- node removal


def k_core(rng: random.Random, bucket: str) -> Draft | None:
    """Extract the k-core: a core of min degree ≥ k plus peripheral nodes that each join at
    most k − 1 earlier nodes (so peeling removes exactly them)."""
    k = rng.choice([2, 3, 3, 4])
    c = _n(rng, bucket, lo=max(8, k + 4), hi=70)
    deg = k if (k * c) % 2 == 0 else k + 1
    g = nx.Graph()
    g.add_nodes_from(range(c))
    g.add_edges_from(sorted(nx.random_regular_graph(deg, c, seed=nx_seed(rng)).edges()))
    add_random_edges(g, rng, rng.randint(0, c // 4))
    p = rng.randint(3, 8) if bucket == "small" else rng.randint(5, 15)
    for j in range(p):
        v = c + j
        g.add_node(v)
        for u in rng.sample(range(v), rng.randint(1, k - 1)):
            g.add_edge(v, u)
    if sorted(nx.k_core(g, k).nodes()) != list(range(c)):
        return None
    base, mapping = relabel(g, rng)
    core_nodes = [mapping[x] for x in range(c)]
    lst = _listing(base)
    text = rng.choice([
        f"Given the undirected graph with edges {lst}, extract its {k}-core: repeatedly delete "
        f"every node with fewer than {k} neighbours, together with its edges, until no such "
        f"node is left. The answer has {c} nodes.",
        f"Compute the {k}-core of the undirected graph with edges {lst}, i.e. the largest "
        f"subgraph in which every node has degree at least {k}; it has {c} nodes.",
        f"Peel the undirected graph with edges {lst} down to its {k}-core by deleting low-degree "
        f"nodes and their edges; the core has {c} nodes.",
    ])
    result = rename(base.subgraph(core_nodes), {})
    return Draft(
        task="k_core", text=text,
        explicit=[f"num_nodes={c}", f"min_degree={k}", "directed=false", "task_type=k_core"],
        base=base, draw=lambda r: result.copy(), unique=True,
        steps=[("remove_node", f"Repeatedly remove nodes of degree below {k}"),
               ("construct", "Recompute degrees after each removal"),
               ("verify", f"Stop when every remaining node has degree at least {k} "
                          f"({c} nodes remain)")],
        method="check_k_core",
        notes=f"Unique: the {k}-core is determined by the graph ({p} nodes are peeled).",
        operation="remove_edges", edit_reason=f"Removed the edges of the {p} nodes peeled off "
                                              f"below degree {k}")


def extract_subgraph(rng: random.Random, bucket: str) -> Draft | None:
    """Keep the union of all shortest s–t paths: a layered s–t graph (every layered node lies on
    a shortest path) plus decoy nodes and same-layer edges that lie on none."""
    c = _n(rng, bucket, lo=6, hi=70)
    d = rng.randint(3, min(8, c - 1))
    widths = split_sizes(rng, c - 2, d - 1, 1)
    layers: list[list[int]] = [[0]]
    nxt = 1
    for w in widths:
        layers.append(list(range(nxt, nxt + w)))
        nxt += w
    layers.append([nxt])
    g = nx.Graph()
    g.add_nodes_from(range(c))
    for i in range(1, d + 1):
        for v in layers[i]:
            g.add_edge(v, rng.choice(layers[i - 1]))
        for u in layers[i - 1]:
            if not any(g.has_edge(u, v) for v in layers[i]):
                g.add_edge(u, rng.choice(layers[i]))
    for _ in range(rng.randint(c // 5, c // 2)):
        i = rng.randint(1, d)
        g.add_edge(rng.choice(layers[i - 1]), rng.choice(layers[i]))
    for _ in range(rng.randint(0, c // 6)):
        lay = layers[rng.randint(1, d - 1)]
        if len(lay) > 1:
            u, v = rng.sample(lay, 2)
            g.add_edge(u, v)
    q = rng.randint(2, 5) if bucket == "small" else rng.randint(4, 12)
    for j in range(q):
        x = c + j
        i = rng.randint(0, d)
        g.add_edge(x, rng.choice(layers[i]))
        if rng.random() < 0.5:
            i2 = min(d, max(0, i + rng.choice([-1, 0, 1])))
            g.add_edge(x, rng.choice(layers[i2]))
        elif j > 0 and rng.random() < 0.5:
            g.add_edge(x, c + rng.randrange(j))
    if sorted(path_union(g, 0, nxt).nodes()) != list(range(c)):
        return None
    base, mapping = relabel(g, rng)
    s, t = mapping[0], mapping[nxt]
    result = path_union(base, s, t)
    result = rename(result, {})
    lst = _listing(base)
    text = rng.choice([
        f"Given the undirected graph with edges {lst}, extract the subgraph formed by all "
        f"shortest paths from node {s} to node {t}: keep exactly the nodes and edges that lie "
        f"on at least one shortest path. The result has {c} nodes.",
        f"From the undirected graph with edges {lst}, keep only the union of all shortest paths "
        f"between nodes {s} and {t}, dropping every other node and edge; the union has {c} "
        "nodes.",
        f"Consider the undirected graph with edges {lst}. Delete every node and edge that is "
        f"not on some shortest path from node {s} to node {t}, so that what remains is the "
        f"union of all shortest paths ({c} nodes).",
    ])
    return Draft(
        task="extract_subgraph", text=text,
        explicit=[f"num_nodes={c}", "directed=false", "task_type=extract_subgraph"],
        base=base, draw=lambda r: result.copy(), unique=True,
        steps=[("compute", f"BFS distances from node {s} and from node {t}"),
               ("construct", f"Keep the nodes with dist(s,v) + dist(v,t) = {d} and the edges "
                             "joining consecutive distance levels among them"),
               ("remove_node", "Remove every other node and edge"),
               ("verify", f"Check {c} nodes remain")],
        method="check_shortest_path_union",
        notes=f"Unique: the union of all shortest paths (length {d}) is determined by the graph.",
        operation="remove_edges", edit_reason="Removed every edge on no shortest path")


def prune_tree(rng: random.Random, bucket: str) -> Draft | None:
    """Prune a rooted tree to depth ≤ d removing the fewest nodes: exactly the nodes deeper
    than d go (the answer is unique)."""
    c = _n(rng, bucket, lo=6, hi=70)
    d = rng.randint(2, 3) if bucket == "small" else rng.randint(2, 4) if bucket == "medium" \
        else rng.randint(3, 5)
    g = nx.Graph()
    depth = {0: 0}
    g.add_node(0)
    for v in range(1, c):
        u = v - 1 if v <= d else rng.choice([x for x in range(v) if depth[x] < d])
        g.add_edge(v, u)
        depth[v] = depth[u] + 1
    p = rng.randint(2, 6) if bucket == "small" else rng.randint(4, 15)
    for j in range(p):
        v = c + j
        u = rng.choice([x for x in range(v) if depth[x] >= d])
        g.add_edge(v, u)
        depth[v] = depth[u] + 1
    base, mapping = relabel(g, rng)
    r = mapping[0]
    kept = [mapping[x] for x in range(c)]
    result = rename(base.subgraph(kept), {})
    lst = _listing(base)
    text = rng.choice([
        f"Given the undirected tree with edges {lst}, rooted at node {r}, remove the minimum "
        f"number of nodes so that the depth of the tree is at most {d}. The pruned tree has "
        f"{c} nodes.",
        f"The undirected tree with edges {lst} is rooted at node {r}. Prune it so that its depth "
        f"is at most {d}: remove the fewest nodes (each with its edges); {c} nodes remain.",
        f"Cut the undirected tree with edges {lst}, rooted at node {r}, down to depth at most "
        f"{d}: remove the minimum number of nodes, keeping a tree with {c} nodes.",
    ])
    return Draft(
        task="prune_tree", text=text,
        explicit=[f"num_nodes={c}", "graph_type=tree", "directed=false", "task_type=prune_tree"],
        base=base, draw=lambda rr: result.copy(), unique=True,
        steps=[("compute", f"BFS depths from the root, node {r}"),
               ("remove_node", f"Remove the {p} nodes deeper than {d}"),
               ("verify", f"Check the remaining tree has depth at most {d} and {c} nodes")],
        method="check_tree_depth",
        notes=f"Unique: exactly the {p} nodes deeper than {d} must go (each is one removal).",
        operation="remove_edges", edit_reason=f"Removed the nodes deeper than {d} with their "
                                              "edges")


def edge_contraction(rng: random.Random, bucket: str) -> Draft | None:
    """Contract a named edge into a named new node (the result is unique)."""
    res = _n(rng, bucket, lo=7, hi=79)
    n = res + 1
    base, _ = relabel(connected_graph(rng, n, rng.randint(1, max(2, n // 3))), rng)
    u, v = edge_pairs(base)[rng.randrange(base.number_of_edges())]
    name = rng.choice(["m", "x", "uv", "merged"])
    nbrs = sorted_nodes((set(base.neighbors(u)) | set(base.neighbors(v))) - {u, v})
    h = base.copy()
    h.remove_nodes_from([u, v])
    h.add_node(name)
    h.add_edges_from((name, w) for w in nbrs)
    result = rename(h, {})
    lst = _listing(base)
    text = rng.choice([
        f"Given the undirected graph with edges {lst}, contract edge ({u},{v}) into a single "
        f"node '{name}': nodes {u} and {v} disappear and '{name}' becomes adjacent to every "
        f"other neighbour of either of them, with no self-loop and no parallel edges. The "
        f"result has {res} nodes.",
        f"Contract the edge ({u},{v}) of the undirected graph with edges {lst}, merging its "
        f"endpoints into a new node '{name}'; the contracted graph has {res} nodes and keeps "
        "every other node.",
    ])
    return Draft(
        task="edge_contraction", text=text,
        explicit=[f"num_nodes={res}", "directed=false", "task_type=edge_contraction"],
        base=base, draw=lambda r: result.copy(), unique=True,
        steps=[("remove_node", f"Remove nodes {u} and {v} with their edges"),
               ("add_node", f"Add node '{name}'"),
               ("add_edge", f"Join '{name}' to the {len(nbrs)} former neighbours of either"),
               ("verify", f"Check {res} nodes and no self-loop")],
        method="check_contraction",
        notes="Unique: the contraction of a named edge into a named node is determined.",
        operation="modify", edit_reason=f"Contracted edge ({u},{v}) into node '{name}'")


# ----------------------------------------------------------------------------- whole-graph ops


def complement(rng: random.Random, bucket: str) -> Draft | None:
    """The complement (kept to ≤ 32 nodes so the answer stays readable)."""
    n = _n(rng, bucket, hi=32)
    g0 = nx.gnp_random_graph(n, rng.uniform(0.3, 0.6), seed=nx_seed(rng))
    if any(d in (0, n - 1) for _, d in g0.degree()):
        return None
    base, _ = relabel(nx.Graph(sorted(g0.edges())), rng)
    result = rename(nx.complement(base), {})
    lst = _listing(base)
    text = rng.choice([
        f"Given the undirected graph with {n} nodes and edges {lst}, construct its complement: "
        "the graph on the same nodes in which two distinct nodes are adjacent exactly when "
        "they are not adjacent in the given graph.",
        f"Build the complement of the undirected graph with {n} nodes and edges {lst}: delete "
        "every existing edge and join every pair of distinct nodes that was not joined before.",
        f"Return the complement graph of the undirected graph with {n} nodes and edges {lst} "
        "(same nodes; edges exactly where the given graph has none).",
    ])
    return Draft(
        task="complement", text=text,
        explicit=[f"num_nodes={n}", "directed=false", "task_type=complement"],
        base=base, draw=lambda r: result.copy(), unique=True,
        steps=[("remove_edge", "Remove every edge of the graph"),
               ("add_edge", f"Add every missing pair among the {n} nodes "
                            f"({result.number_of_edges()} edges)"),
               ("verify", f"Check the two edge sets partition all {n * (n - 1) // 2} pairs")],
        method="check_complement", notes="Unique: the complement is determined by the graph.",
        operation="modify", edit_reason="Replaced the edge set by its complement")


def transpose(rng: random.Random, bucket: str) -> Draft | None:
    """Reverse every arc (arcs with a reverse twin stay, so the minimal edit skips them)."""
    n = _n(rng, bucket)
    t = random_tree(rng, n)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for u, v in sorted(t.edges()):
        g.add_edge(*((u, v) if rng.random() < 0.5 else (v, u)))
    for _ in range(rng.randint(n // 3, n)):
        u, v = rng.sample(range(n), 2)
        g.add_edge(u, v)
    base, _ = relabel(g, rng)
    result = rename(base.reverse(copy=True), {})
    lst = _listing(base)
    text = rng.choice([
        f"Given the directed graph with {n} nodes and arcs {lst}, compute its transpose: "
        "reverse the direction of every arc.",
        f"Reverse every arc of the directed graph with {n} nodes and arcs {lst}, producing its "
        "transpose (the converse graph).",
        f"Produce the transpose of the directed graph with {n} nodes and arcs {lst}: an arc from "
        "v to u for every arc from u to v, and no other arcs.",
    ])
    one_way = sum(1 for a, b in base.edges() if not base.has_edge(b, a))
    return Draft(
        task="transpose", text=text,
        explicit=[f"num_nodes={n}", "directed=true", "task_type=transpose"],
        base=base, draw=lambda r: result.copy(), unique=True,
        steps=[("reverse_edge", f"Reverse the {one_way} arcs without a reverse twin"),
               ("construct", "Keep the arcs whose reverse is also present"),
               ("verify", "Check every arc u->v of the graph appears as v->u")],
        method="check_transpose", notes="Unique: the transpose is determined by the graph.",
        operation="modify", edit_reason="Reversed every arc without a reverse twin")


def graph_power(rng: random.Random, bucket: str) -> Draft | None:
    """The square (or, for small graphs, the cube) of a sparse connected graph."""
    n = _n(rng, bucket)
    k = 3 if bucket == "small" and rng.random() < 0.4 else 2
    g0 = random_tree(rng, n, window=rng.choice([2, 4, None]))
    if max(d for _, d in g0.degree()) > 5:
        return None
    add_random_edges(g0, rng, rng.randint(0, 2))
    base, _ = relabel(g0, rng)
    result = rename(nx.power(base, k), {})
    sym, kw = ("square", "two") if k == 2 else ("cube", "three")
    lst = _listing(base)
    text = rng.choice([
        f"Given the connected undirected graph with {n} nodes and edges {lst}, construct its "
        f"{sym} G^{k}: keep all nodes and join every pair of distinct nodes whose distance in "
        f"the given graph is at most {kw}.",
        f"Compute the graph power G^{k} of the connected undirected graph with {n} nodes and "
        f"edges {lst}, i.e. connect every two nodes that are at most {kw} steps apart (keeping "
        "the existing edges).",
        f"Add edges to the connected undirected graph with {n} nodes and edges {lst} so that it "
        f"becomes its own {sym} (G^{k}): two nodes must be adjacent exactly when their distance "
        f"in the original graph is at most {kw}.",
    ])
    added = result.number_of_edges() - base.number_of_edges()
    return Draft(
        task="graph_power", text=text,
        explicit=[f"num_nodes={n}", "connected=true", "directed=false",
                  "task_type=graph_power"],
        base=base, draw=lambda r: result.copy(), unique=True,
        steps=[("compute", f"BFS from every node up to distance {kw}"),
               ("add_edge", f"Add the {added} pairs at distance between two and {kw}"),
               ("verify", f"Check adjacency equals distance at most {kw}")],
        method="check_graph_power", notes=f"Unique: G^{k} is determined by the graph.",
        operation="add_edges", edit_reason=f"Added every pair at distance at most {kw}")


def make_regular(rng: random.Random, bucket: str) -> Draft | None:
    """Add the fewest edges to reach a k-regular graph: a k-regular graph minus a matching of
    ``r`` edges (every k-regular supergraph adds exactly ``r``; completions are perfect
    matchings of the deficient nodes avoiding existing edges)."""
    k = rng.choice([3, 4])
    lo, hi = RANGES[bucket]
    n = _n(rng, bucket)
    if (n * k) % 2:
        n = n + 1 if n + 1 <= hi else n - 1
    if not lo <= n <= hi:
        return None
    g0 = nx.random_regular_graph(k, n, seed=nx_seed(rng))
    edges = sorted(g0.edges())
    rng.shuffle(edges)
    r_target = rng.randint(2, 4) if bucket == "small" else rng.randint(3, 8)
    matching: list[tuple[int, int]] = []
    used: set[int] = set()
    for u, v in edges:
        if len(matching) == r_target:
            break
        if u not in used and v not in used:
            matching.append((u, v))
            used.update((u, v))
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(e for e in sorted(g0.edges()) if e not in matching)
    base, _ = relabel(g, rng)
    r = len(matching)
    deficient = sorted_nodes(x for x, d in base.degree() if d < k)
    lst = _listing(base)
    text = rng.choice([
        f"Given the undirected graph with {n} nodes and edges {lst}, add the minimum number of "
        f"edges so that the graph becomes {k}-regular.",
        f"Add the fewest edges to the undirected graph with {n} nodes and edges {lst} so that "
        f"every node has degree exactly {k} (a {k}-regular graph); keep all existing edges.",
        f"Add exactly {_plural(r, 'edge')} to the undirected graph with {n} nodes and edges "
        f"{lst} so that it becomes {k}-regular.",
    ])

    def draw(rr: random.Random) -> nx.Graph | None:
        pool = list(deficient)
        rr.shuffle(pool)
        h = base.copy()
        while pool:
            u = pool.pop()
            options = [w for w in pool if not h.has_edge(u, w)]
            if not options:
                return None
            w = rr.choice(options)
            pool.remove(w)
            h.add_edge(u, w)
        return h

    return Draft(
        task="make_regular", text=text,
        explicit=[f"num_nodes={n}", f"degree={k}", "directed=false", "task_type=make_regular"],
        base=base, draw=draw, unique=False,
        steps=[("compute", f"Find the {len(deficient)} nodes of degree below {k}"),
               ("add_edge", f"Pair them up with {r} new edges between non-adjacent nodes"),
               ("verify", f"Check every node has degree {k}")],
        method="check_regular",
        notes=f"Minimum {r}: every {k}-regular supergraph has k*n/2 edges, {r} more than the "
              "graph; any perfect matching of the deficient nodes avoiding existing edges works.",
        operation="add_edges", edit_reason="Paired up the nodes of too small degree")


#: Template name → (maker, size buckets it serves).  Order is the schedule's base order.
TEMPLATES: dict[str, tuple[Callable[[random.Random, str], Draft | None], tuple[str, ...]]] = {
    "spanning_tree": (spanning_tree, ("small", "medium", "large")),
    "mst": (mst, ("small", "medium", "large")),
    "make_connected": (make_connected, ("small", "medium", "large")),
    "make_acyclic": (make_acyclic, ("small", "medium", "large")),
    "break_cycles": (break_cycles, ("small", "medium", "large")),
    "break_triangles": (break_triangles, ("small", "medium")),
    "make_bipartite": (make_bipartite, ("small", "medium", "large")),
    "k_core": (k_core, ("small", "medium", "large")),
    "extract_subgraph": (extract_subgraph, ("small", "medium", "large")),
    "prune_tree": (prune_tree, ("small", "medium", "large")),
    "edge_contraction": (edge_contraction, ("small", "medium", "large")),
    "complement": (complement, ("small", "medium")),
    "transpose": (transpose, ("small", "medium", "large")),
    "graph_power": (graph_power, ("small", "medium", "large")),
    "make_regular": (make_regular, ("small", "medium", "large")),
}

