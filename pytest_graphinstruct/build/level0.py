"""Level 0 — format: graphs of a stated size, written in the requested syntax.

Four templates (node count; node and edge count, undirected; the same, directed; node count
with an edge budget), each with three or more phrasings.  References are random graphs of the
stated size, so two references are almost always non-isomorphic.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from typing import Any

import networkx as nx

from pytest_graphinstruct.build.generators import random_gnm
from pytest_graphinstruct.build.template import Draft, Template, build_level, phrase

_NODES = (
    "Create a graph with {n} nodes.",
    "Generate a graph that has exactly {n} nodes; any edges you like are allowed.",
    "Write down a graph containing {n} nodes in the code-style graph format.",
)
_UNDIRECTED = (
    "Create an undirected graph with {n} nodes and {m} edges.",
    "Generate an undirected graph on {n} nodes with exactly {m} edges.",
    "Build an undirected graph that has {n} nodes and {m} edges, with no self-loops or "
    "duplicate edges.",
)
_DIRECTED = (
    "Create a directed graph with {n} nodes and {m} edges.",
    "Generate a directed graph on {n} nodes with exactly {m} arcs.",
    "Build a directed graph that has {n} nodes and {m} directed edges, with no self-loops or "
    "duplicate arcs.",
)
_BUDGET = (
    "Create an undirected graph with {n} nodes and at most {m} edges.",
    "Generate an undirected graph on {n} nodes using no more than {m} edges.",
    "Build an undirected graph that has {n} nodes, where the number of edges does not exceed "
    "{m}.",
)


def _sparse_m(rng: random.Random, n: int) -> int:
    """An edge count between n/2 and 2n, capped by the simple-graph maximum."""
    return min(n * (n - 1) // 2, rng.randint(max(1, n // 2), 2 * n))


def _nodes(rng: random.Random, n: int) -> Draft:
    def gen(r: random.Random) -> nx.Graph:
        return random_gnm(n, _sparse_m(r, n), r)

    return Draft(phrase(rng, _NODES, n=n), [f"num_nodes={n}"], gen)


def _edges(directed: bool) -> Any:
    def make(rng: random.Random, n: int) -> Draft:
        m = _sparse_m(rng, n)
        text = phrase(rng, _DIRECTED if directed else _UNDIRECTED, n=n, m=m)
        explicit = [f"num_nodes={n}", f"num_edges={m}",
                    f"directed={'true' if directed else 'false'}"]
        return Draft(text, explicit, lambda r: random_gnm(n, m, r, directed=directed))

    return make


def _budget(rng: random.Random, n: int) -> Draft:
    m = _sparse_m(rng, n)

    def gen(r: random.Random) -> nx.Graph:
        return random_gnm(n, r.randint(max(0, m // 2), m), r)

    text = phrase(rng, _BUDGET, n=n, m=m)
    return Draft(text, [f"num_nodes={n}", f"num_edges<={m}", "directed=false"], gen)


TEMPLATES: tuple[Template, ...] = (
    Template("nodes", _nodes, phrasings=len(_NODES)),
    Template("nodes_edges_undirected", _edges(False), phrasings=len(_UNDIRECTED)),
    Template("nodes_edges_directed", _edges(True), phrasings=len(_DIRECTED)),
    Template("nodes_edge_budget", _budget, phrasings=len(_BUDGET)),
)


def build_level0(seed: int, count: int = 100, indices: Collection[int] | None = None
                 ) -> list[dict[str, Any]]:
    """``count`` L0 records (ids ``L0-001`` …) with two verified references each."""
    return build_level(0, TEMPLATES, seed, count, indices=indices)
