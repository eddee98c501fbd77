"""Graph builders shared by the D1 / MMD / pool / isomorphism tests."""

from __future__ import annotations

import random

import networkx as nx

from pytest_graphinstruct.graphs.model import Outcome, ParsedGraph, ParseResult
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import instruction_from_record
from pytest_graphinstruct.verify.verdict import Verification
from pytest_graphinstruct.verify.verifier import Verifier

V = Verifier()


def shuffled(g: nx.Graph, seed: int) -> nx.Graph:
    """``g`` with new ``str`` node names and a shuffled node *and* edge insertion order (and,
    undirected, shuffled edge endpoint order): the same graph up to isomorphism."""
    rng = random.Random(seed)
    nodes = list(g)
    names = [f"v{i}" for i in range(len(nodes))]
    rng.shuffle(names)
    rename = dict(zip(nodes, names, strict=True))
    h: nx.Graph = g.__class__()
    order = nodes[:]
    rng.shuffle(order)
    h.add_nodes_from(rename[v] for v in order)
    edges = [(rename[u], rename[v]) for u, v in g.edges()]
    rng.shuffle(edges)
    if not g.is_directed():
        edges = [(v, u) if rng.random() < 0.5 else (u, v) for u, v in edges]
    h.add_edges_from(edges)
    return h


def strs(g: nx.Graph) -> nx.Graph:
    """``g`` with ``str`` node ids (as the parser produces)."""
    return nx.relabel_nodes(g, {v: str(v) for v in g})


def instruction(**over: object) -> Instruction:
    rec: dict[str, object] = {"id": "L0-001", "level": 0, "instruction": "A graph.",
                              "explicit_constraints": ["num_nodes=6"],
                              "implicit_constraints": []}
    rec.update(over)
    inst = instruction_from_record(rec)
    assert inst is not None
    return inst


def sample(inst: Instruction, g: nx.Graph) -> Verification:
    """A verified sample whose answer parsed to ``g``."""
    pg = ParsedGraph(strs(g))
    return Verification(inst.id, ParseResult(Outcome.GRAPH, pg), V.check_graph(inst, pg))


def refusal(inst: Instruction) -> Verification:
    return Verification(inst.id, ParseResult(Outcome.REFUSAL, reason="impossible"))


def failure(inst: Instruction) -> Verification:
    return Verification(inst.id, ParseResult(Outcome.FAILURE, reason="garbage"))


def prism() -> nx.Graph:
    """The triangular prism: 3-regular on 6 nodes, two triangles (not bipartite)."""
    return nx.circular_ladder_graph(3)


def k33() -> nx.Graph:
    """K3,3: 3-regular on 6 nodes, bipartite (no triangle)."""
    return nx.complete_bipartite_graph(3, 3)


def synthetic_pool_graphs(count: int = 40, seed: int = 0) -> list[nx.Graph]:
    """Half Barabási–Albert, half Erdős–Rényi graphs of 12–20 nodes (deterministic)."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        n = rng.randint(12, 20)
        if i % 2 == 0:
            g = nx.barabasi_albert_graph(n, rng.choice([1, 2, 3]), seed=rng.randrange(10**6))
        else:
            g = nx.gnp_random_graph(n, rng.choice([0.15, 0.3, 0.5]), seed=rng.randrange(10**6))
        g.graph["subgroup"] = "BA" if i % 2 == 0 else "ER"
        out.append(g)
    return out
