"""Hypothesis strategies and small graph builders shared by the verify tests."""

from __future__ import annotations

import random

import networkx as nx
from hypothesis import strategies as st

from pytest_graphinstruct.suite.constraints import Constraint, parse_constraint


def C(text: str) -> Constraint:
    """Shorthand: parse one constraint string."""
    return parse_constraint(text)


@st.composite
def gnp_graphs(draw: st.DrawFn, max_nodes: int = 16, directed: bool | None = None,
               loops: bool = True) -> nx.Graph:
    """``nx.gnp_random_graph`` with drawn size, density, seed and direction; node ids are
    strings (as the parser produces); sometimes a few self-loops are added."""
    n = draw(st.integers(0, max_nodes))
    p = draw(st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0]))
    seed = draw(st.integers(0, 2**32 - 1))
    is_directed = draw(st.booleans()) if directed is None else directed
    g = nx.gnp_random_graph(n, p, seed=seed, directed=is_directed)
    if loops and n and draw(st.integers(0, 4)) == 0:
        rng = random.Random(seed)
        g.add_edges_from((v, v) for v in rng.sample(range(n), k=min(n, 2)))
    return nx.relabel_nodes(g, {v: str(v) for v in g})


def relabel_randomly(g: nx.Graph, seed: int) -> nx.Graph:
    """``g`` with its nodes renamed to shuffled string ids (structure unchanged)."""
    nodes = list(g)
    names = [str(i) for i in range(len(nodes))]
    random.Random(seed).shuffle(names)
    return nx.relabel_nodes(g, dict(zip(nodes, names, strict=True)))


def orient(g: nx.Graph, mode: str, seed: int = 0) -> nx.DiGraph:
    """A directed version of undirected ``g``.

    ``'random'``: each edge gets a random direction; ``'both'``: both directions;
    ``'out'``/``'in'``: each edge points away from / towards the BFS root of its component
    (deeper end is the head for ``'out'``; ties broken by node order), which makes a tree an
    out-/in-arborescence and any graph a DAG.
    """
    d = nx.DiGraph()
    d.add_nodes_from(g)
    rng = random.Random(seed)
    if mode == "random":
        for u, v in g.edges():
            d.add_edge(*((u, v) if rng.random() < 0.5 else (v, u)))
        return d
    if mode == "both":
        for u, v in g.edges():
            d.add_edge(u, v)
            d.add_edge(v, u)
        return d
    depth: dict[object, int] = {}
    for comp in nx.connected_components(g):
        root = min(comp, key=str)
        depth.update(nx.single_source_shortest_path_length(g, root))
    for u, v in g.edges():
        forward = (depth[u], str(u)) < (depth[v], str(v))
        if (mode == "out") != forward:
            u, v = v, u
        d.add_edge(u, v)
    return d
