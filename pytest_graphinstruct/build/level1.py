"""Level 1 — one structural type: trees, forests, paths, cycles, stars, wheels, grids,
complete and complete bipartite graphs, bipartite graphs, DAGs, connected, regular and planar
graphs, plus directed paths and cycles.

Each template states the graph type and the size parameters that pin it down (node count;
edge count where the type leaves it open; sides, degree or number of trees).  Types with one
answer up to isomorphism (path, cycle, star, wheel, complete, complete bipartite, a grid whose
node count factors one way) are marked ``unique`` and their two references may coincide.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Sequence
from typing import Any

import networkx as nx

from pytest_graphinstruct.build import generators as gen
from pytest_graphinstruct.build.template import (
    SIZE_RANGES,
    Draft,
    Template,
    build_level,
    phrase,
)

Maker = Callable[[random.Random, int], Draft | None]


def _relabelled(build: Callable[[], nx.Graph]) -> Callable[[random.Random], nx.Graph]:
    return lambda r: gen.shuffled(build(), r)


def _fixed(phrasings: Sequence[str], gtype: str, build: Callable[[int], nx.Graph],
           *, directed: bool = False, minimum: int = 1) -> tuple[Maker, int]:
    def make(rng: random.Random, n: int) -> Draft | None:
        if n < minimum:
            return None
        explicit = [f"graph_type={gtype}", f"num_nodes={n}"]
        if directed:
            explicit.append("directed=true")
        return Draft(phrase(rng, phrasings, n=n), explicit, _relabelled(lambda: build(n)),
                     unique=True)

    return make, len(phrasings)


_TREE = ("Generate a tree with {n} nodes.", "Create a tree on {n} nodes.",
         "Construct a tree that has exactly {n} nodes.")


def _tree(rng: random.Random, n: int) -> Draft:
    return Draft(phrase(rng, _TREE, n=n), ["graph_type=tree", f"num_nodes={n}"],
                 lambda r: gen.random_tree(n, r))


_FOREST = ("Generate a forest of {c} trees with {n} nodes in total.",
           "Create a forest on {n} nodes made of {c} separate trees.",
           "Construct a forest with {n} nodes that consists of exactly {c} trees.")


def _forest(rng: random.Random, n: int) -> Draft:
    c = rng.randint(2, max(2, n // 4))
    return Draft(phrase(rng, _FOREST, n=n, c=c),
                 ["graph_type=forest", f"num_nodes={n}", f"num_components={c}"],
                 lambda r: gen.random_forest(n, c, r))


_PATH = ("Generate a path graph with {n} nodes.", "Create a path on {n} nodes.",
         "Construct a simple path that visits {n} nodes.")
_DIPATH = ("Generate a directed path with {n} nodes.",
           "Create a directed path graph on {n} nodes, every arc pointing to the next node.",
           "Construct a directed path that passes through {n} nodes.")
_CYCLE = ("Generate a cycle graph with {n} nodes.", "Create a cycle on {n} nodes.",
          "Construct a ring of {n} nodes in which every node has two neighbours.")
_DICYCLE = ("Generate a directed cycle with {n} nodes.",
            "Create a directed cycle graph on {n} nodes.",
            "Construct a directed ring of {n} nodes in which every arc leads to the next node.")
_STAR = ("Generate a star graph with {n} nodes.", "Create a star on {n} nodes.",
         "Construct a star with {n} nodes: one hub joined to every other node.")
_WHEEL = ("Generate a wheel graph with {n} nodes.", "Create a wheel on {n} nodes.",
          "Construct a wheel with {n} nodes: a hub joined to every node of a rim cycle.")
_COMPLETE = ("Generate a complete graph with {n} nodes.", "Create the complete graph on {n} nodes.",
             "Construct a complete graph with {n} nodes, every pair of nodes adjacent.")


def _dipath(n: int) -> nx.DiGraph:
    return nx.path_graph(n, create_using=nx.DiGraph)


def _dicycle(n: int) -> nx.DiGraph:
    return nx.cycle_graph(n, create_using=nx.DiGraph)


_GRID = ("Generate a grid graph with {n} nodes.", "Create a two-dimensional grid on {n} nodes.",
         "Construct a rectangular lattice with {n} nodes, at least two rows and two columns.")


def _shapes(n: int) -> list[tuple[int, int]]:
    return [(p, n // p) for p in range(2, int(n ** 0.5) + 1) if n % p == 0]


def _grid(rng: random.Random, n: int) -> Draft | None:
    shapes = _shapes(n)
    if not shapes:
        return None

    def g(r: random.Random) -> nx.Graph:
        p, q = r.choice(shapes)
        return gen.shuffled(nx.convert_node_labels_to_integers(nx.grid_2d_graph(p, q)), r)

    return Draft(phrase(rng, _GRID, n=n), ["graph_type=grid", f"num_nodes={n}"], g,
                 unique=len(shapes) == 1)


_KBIP = ("Generate a complete bipartite graph with {n} nodes whose two sides have {p} and {q} "
         "nodes.",
         "Create a complete bipartite graph on {n} nodes, with sides of {p} and {q} nodes.",
         "Construct a complete bipartite graph of {n} nodes: one side of {p} nodes, the other "
         "of {q}, every cross pair adjacent.")


def _complete_bipartite(rng: random.Random, n: int) -> Draft | None:
    if n < 4:
        return None
    p = rng.randint(2, n // 2)
    q = n - p
    if p * q > 900:
        return None
    return Draft(phrase(rng, _KBIP, n=n, p=p, q=q),
                 ["graph_type=complete_bipartite", f"num_nodes={n}", f"bipartite_sides={p},{q}"],
                 _relabelled(lambda: nx.complete_bipartite_graph(p, q)), unique=True)


def _with_edges(phrasings: Sequence[str], gtype: str,
                draw: Callable[[int, int, random.Random], nx.Graph | None],
                m_range: Callable[[random.Random, int], int | None]) -> tuple[Maker, int]:
    def make(rng: random.Random, n: int) -> Draft | None:
        m = m_range(rng, n)
        if m is None:
            return None
        return Draft(phrase(rng, phrasings, n=n, m=m),
                     [f"graph_type={gtype}", f"num_nodes={n}", f"num_edges={m}"],
                     lambda r: draw(n, m, r))

    return make, len(phrasings)


def _sparse(rng: random.Random, n: int) -> int:
    return rng.randint(n, min(2 * n, n * (n - 1) // 2))


def _bipartite_m(rng: random.Random, n: int) -> int | None:
    return rng.randint(n - 1, max(n - 1, min(2 * n, (n // 4) * (n - n // 4))))


def _planar_m(rng: random.Random, n: int) -> int:
    # stay clear of 3n - 6 (maximal planar), where random greedy filling rarely succeeds
    return rng.randint(n, min(2 * n, 3 * n - 6 - max(1, n // 5)))


_BIP = ("Generate a bipartite graph with {n} nodes and {m} edges.",
        "Create a bipartite graph on {n} nodes having {m} edges.",
        "Construct a bipartite graph that has {n} nodes and exactly {m} edges.")
_DAG = ("Generate a directed acyclic graph (DAG) with {n} nodes and {m} edges.",
        "Create a DAG on {n} nodes with {m} arcs.",
        "Construct a directed acyclic graph that has {n} nodes and exactly {m} edges.")
_CONN = ("Generate a connected graph with {n} nodes and {m} edges.",
         "Create a connected graph on {n} nodes having {m} edges.",
         "Construct a graph with {n} nodes and {m} edges in which every node is reachable from "
         "every other, i.e. a connected graph.")
_PLANAR = ("Generate a planar graph with {n} nodes and {m} edges.",
           "Create a planar graph on {n} nodes having {m} edges.",
           "Construct a graph with {n} nodes and {m} edges that can be drawn in the plane "
           "without crossings (a planar graph).")
_REGULAR = ("Generate a {k}-regular graph with {n} nodes.",
            "Create a regular graph on {n} nodes in which every node has degree {k}.",
            "Construct a {k}-regular graph that has exactly {n} nodes.")


def _regular(rng: random.Random, n: int) -> Draft | None:
    if n < 8:  # smaller n: some degrees admit one graph only
        return None
    k = rng.randint(2, min(6, n - 4))
    if (n * k) % 2:
        return None
    return Draft(phrase(rng, _REGULAR, n=n, k=k),
                 ["graph_type=regular", f"num_nodes={n}", f"degree={k}"],
                 lambda r: gen.random_regular(n, k, r, connected=False))


_SMALL_MEDIUM = ("small", "medium")
_COMPLETE_SIZES = {**SIZE_RANGES, "medium": (21, 30)}


def _t(name: str, made: tuple[Maker, int], **kw: Any) -> Template:
    return Template(name, made[0], phrasings=made[1], **kw)


TEMPLATES: tuple[Template, ...] = (
    Template("tree", _tree, phrasings=len(_TREE)),
    Template("forest", _forest, phrasings=len(_FOREST)),
    _t("path", _fixed(_PATH, "path", nx.path_graph)),
    _t("directed_path", _fixed(_DIPATH, "path", _dipath, directed=True)),
    _t("cycle", _fixed(_CYCLE, "cycle", nx.cycle_graph, minimum=3)),
    _t("directed_cycle", _fixed(_DICYCLE, "cycle", _dicycle, directed=True, minimum=3)),
    _t("star", _fixed(_STAR, "star", lambda n: nx.star_graph(n - 1))),
    _t("wheel", _fixed(_WHEEL, "wheel", nx.wheel_graph, minimum=4)),
    Template("grid", _grid, phrasings=len(_GRID)),
    _t("complete", _fixed(_COMPLETE, "complete", nx.complete_graph), buckets=_SMALL_MEDIUM,
       sizes=_COMPLETE_SIZES),
    Template("complete_bipartite", _complete_bipartite, phrasings=len(_KBIP)),
    _t("bipartite", _with_edges(_BIP, "bipartite",
                                lambda n, m, r: gen.random_bipartite(n, m, r), _bipartite_m)),
    _t("dag", _with_edges(_DAG, "dag", lambda n, m, r: gen.random_dag(n, m, r), _sparse)),
    _t("connected", _with_edges(_CONN, "connected", gen.random_connected, _sparse)),
    Template("regular", _regular, phrasings=len(_REGULAR)),
    _t("planar", _with_edges(_PLANAR, "planar",
                             lambda n, m, r: gen.random_planar(n, m, r, connected=False),
                             _planar_m)),
)


def build_level1(seed: int, count: int = 200, indices: Collection[int] | None = None
                 ) -> list[dict[str, Any]]:
    """``count`` L1 records (ids ``L1-001`` …) with two verified references each."""
    return build_level(1, TEMPLATES, seed, count, indices=indices)
