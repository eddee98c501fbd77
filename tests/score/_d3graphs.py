"""Graphs shared by the D3 tests: random relabellings, a Hypothesis graph strategy, SBM graphs
and the two reference graphs."""

from __future__ import annotations

import itertools
import random
from typing import Any

import networkx as nx
from hypothesis import strategies as st


def relabelled(g: nx.Graph, rng: random.Random, *, directed: bool | None = None) -> nx.Graph:
    """A copy with fresh string ids, shuffled node and edge insertion order, shuffled endpoints."""
    nodes = list(g.nodes())
    rng.shuffle(nodes)
    names = {v: f"{rng.choice('abcxyz')}{rng.randrange(10**9)}_{i}" for i, v in enumerate(nodes)}
    is_directed = g.is_directed() if directed is None else directed
    out = nx.DiGraph() if is_directed else nx.Graph()
    out.graph.update(g.graph)
    out.add_nodes_from((names[v], dict(g.nodes[v])) for v in nodes)
    edges = list(g.edges())
    rng.shuffle(edges)
    for u, v in edges:
        if not g.is_directed() and rng.random() < 0.5:
            u, v = v, u
        out.add_edge(names[u], names[v])
    return out


@st.composite
def graphs(draw: Any, min_nodes: int = 2, max_nodes: int = 13) -> nx.Graph:
    n = draw(st.integers(min_nodes, max_nodes))
    pairs = list(itertools.combinations(range(n), 2))
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))
                  if pairs else st.just([]))
    g = nx.Graph()
    g.add_nodes_from(str(i) for i in range(n))
    g.add_edges_from((str(u), str(v)) for u, v in chosen)
    return g


def sbm(sizes: list[int], seed: int) -> nx.Graph:
    k = len(sizes)
    p = [[0.7 if i == j else 0.05 for j in range(k)] for i in range(k)]
    g = nx.stochastic_block_model(sizes, p, seed=seed)
    return nx.relabel_nodes(nx.Graph(g), {v: str(v) for v in g})


REFERENCES = [sbm([7, 7, 6], 1), nx.relabel_nodes(nx.barabasi_albert_graph(16, 2, seed=3), str)]

#: Graph families with many automorphisms (the canonical form's hard cases), by name.
FAMILIES = {
    "cycle": lambda r: nx.cycle_graph(r.randint(3, 30)),
    "complete": lambda r: nx.complete_graph(r.randint(1, 25)),
    "star": lambda r: nx.star_graph(r.randint(1, 40)),
    "grid": lambda r: nx.grid_2d_graph(r.randint(1, 6), r.randint(1, 6)),
    "petersen": lambda r: nx.petersen_graph(),
    "hypercube": lambda r: nx.hypercube_graph(r.randint(1, 4)),
    "matching": lambda r: nx.disjoint_union_all([nx.path_graph(2)] * r.randint(1, 20)),
    "c6+2c3": lambda r: nx.disjoint_union_all([nx.cycle_graph(6), nx.cycle_graph(3),
                                              nx.cycle_graph(3)]),
    "3-regular": lambda r: nx.random_regular_graph(3, 2 * r.randint(2, 15),
                                                   seed=r.randrange(10**6)),
    "k_mn": lambda r: nx.complete_bipartite_graph(r.randint(1, 8), r.randint(1, 8)),
    "tree": lambda r: nx.random_labeled_tree(r.randint(1, 40), seed=r.randrange(10**6)),
    "rook4x4": lambda r: nx.cartesian_product(nx.complete_graph(4), nx.complete_graph(4)),
    "paley13": lambda r: nx.Graph(nx.paley_graph(13)),
    "ws": lambda r: nx.watts_strogatz_graph(r.randint(8, 40), 4, 0.1, seed=r.randrange(10**6)),
}
