"""Level 3 — numerical attributes (density, clustering, modularity, path length, diameter)
with targets calibrated from the project's L3 reference pool.

Each instruction belongs to one pool subgroup (5 families × 3 size buckets, 10 instructions
each at the default 150).  Calibration: an *anchor* graph is drawn from the subgroup's pool
graphs (the very graphs of ``references/pools/l3``); the instruction asks for the anchor's node
count, and each bound is the looser of the anchor's own value and the 75th (``<=``) or 25th
(``>=``) percentile over the subgroup's pool graphs with a node count within
:data:`PEER_WINDOW` of it, rounded outwards to 4 decimals.  The anchor therefore always
satisfies the instruction — so at least one pool graph matches it for D1 — and most of its
peers satisfy each bound separately.  References are fresh draws of the subgroup's own
generator on the same node count that pass every bound.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import networkx as nx
import numpy as np

from pytest_graphinstruct.suite import pools_builder as pb
from pytest_graphinstruct.suite.builder.common import find_references, make_record, rng_for
from pytest_graphinstruct.suite.builder.template import fmt, implicit_of, phrase
from pytest_graphinstruct.verify.properties import GraphFacts

#: Pool graphs whose node count differs from the anchor's by at most this are its peers.
PEER_WINDOW = 3
#: Graphs per pool subgroup (the anchors are drawn from these indices).
POOL_SIZE = pb.L3_PER_SUBGROUP

_METRICS: dict[str, tuple[str, ...]] = {
    "ba": ("density<=", "average_path_length<=", "diameter<="),
    "er": ("density>=", "density<=", "clustering_coefficient<="),
    "ws": ("clustering_coefficient>=", "average_path_length<=", "density<="),
    "sbm_assortative": ("modularity>=", "density<=", "clustering_coefficient>="),
    "sbm_core_periphery": ("density<=", "diameter<=", "clustering_coefficient>="),
}
_DESCRIPTIONS: dict[str, tuple[str, ...]] = {
    "ba": (
        "Generate a scale-free network with {n} nodes, grown by preferential attachment so "
        "that a few hubs collect many links.",
        "Create a graph with {n} nodes whose degree distribution is heavy-tailed, as produced "
        "by the Barabási–Albert preferential-attachment model.",
        "Build a hub-dominated network on {n} nodes in which new nodes prefer to link to "
        "well-linked ones.",
    ),
    "er": (
        "Generate a random graph with {n} nodes in which edges are placed independently at "
        "random, with no particular structure.",
        "Create an Erdős–Rényi style random network on {n} nodes.",
        "Build a graph with {n} nodes whose edges look uniformly random: no hubs, no "
        "communities.",
    ),
    "ws": (
        "Generate a small-world network with {n} nodes: high local clustering yet short paths "
        "between any two nodes.",
        "Create a Watts–Strogatz style small-world graph on {n} nodes.",
        "Build a network of {n} nodes where neighbours of a node tend to know each other, but a "
        "few shortcuts keep every node close to every other.",
    ),
    "sbm_assortative": (
        "Generate a community-structured graph with {n} nodes, dense inside each community and "
        "sparse between communities.",
        "Create a network on {n} nodes drawn from an assortative stochastic block model: nodes "
        "link mostly within their own group.",
        "Build a graph of {n} nodes that splits into clear communities with few edges between "
        "them.",
    ),
    "sbm_core_periphery": (
        "Generate a core–periphery network with {n} nodes: a densely interlinked core and "
        "peripheral nodes that attach mainly to the core.",
        "Create a graph on {n} nodes with a tight core of well-linked nodes surrounded by a "
        "sparse periphery.",
        "Build a network of {n} nodes in which a small core is densely linked and the remaining "
        "nodes hang off it with few links among themselves.",
    ),
}
_CLAUSES: dict[str, str] = {
    "density<=": "density at most {v}",
    "density>=": "density at least {v}",
    "clustering_coefficient>=": "average clustering coefficient at least {v}",
    "clustering_coefficient<=": "average clustering coefficient at most {v}",
    "modularity>=": "modularity at least {v}",
    "average_path_length<=": "average shortest-path length at most {v}",
    "diameter<=": "diameter at most {v}",
}
_TAILS = (
    "The graph should be connected and undirected, with {clauses}.",
    "It must be undirected and connected, and have {clauses}.",
    "Make it a connected, undirected graph with {clauses}.",
)


@dataclass(frozen=True)
class PoolStats:
    """Node count and metric values of one pool graph."""

    n: int
    values: dict[str, float]


def _metric(facts: GraphFacts, key: str) -> float:
    if key == "density":
        return facts.density
    if key == "clustering_coefficient":
        return facts.clustering
    if key == "modularity":
        return facts.modularity
    if key == "average_path_length":
        return facts.average_path_length
    return facts.diameter


def _stats(g: nx.Graph, metrics: Sequence[str]) -> PoolStats:
    facts = GraphFacts(g)
    return PoolStats(g.number_of_nodes(), {m[:-2]: _metric(facts, m[:-2]) for m in metrics})


@lru_cache(maxsize=32)
def _subgroup(seed: int, subgroup: str) -> tuple[tuple[nx.Graph, PoolStats], ...]:
    family = subgroup.rsplit("_", 1)[0]
    out = []
    for i in range(POOL_SIZE):
        g = pb.l3_graph(subgroup, i, seed).graph
        out.append((g, _stats(g, _METRICS[family])))
    return tuple(out)


def _bound(metric: str, anchor: float, peers: Sequence[float]) -> str:
    """The bound's value as text, looser than both the anchor and the peer percentile."""
    key, op = metric[:-2], metric[-2:]
    if op == "<=":
        v = max(anchor, float(np.percentile(peers, 75)))
        v = math.ceil(v) if key == "diameter" else math.ceil(v * 10_000) / 10_000
    else:
        v = min(anchor, float(np.percentile(peers, 25)))
        v = math.floor(v * 10_000) / 10_000
    return str(int(v)) if key == "diameter" else fmt(v)


def _generator(subgroup: str, n: int):  # type: ignore[no-untyped-def]
    family = subgroup.rsplit("_", 1)[0]
    make = pb._L3_GENERATORS[family]

    def generate(r: random.Random) -> nx.Graph | None:
        nrng = np.random.default_rng(r.randrange(1 << 63))
        g = make(nrng, n)
        if g.number_of_nodes() != n or not nx.is_connected(g):
            return None
        return pb._canonical(g, nrng)

    return generate


def _draft(seed: int, subgroup: str, anchor_index: int, rng: random.Random
           ) -> tuple[str, list[str], int]:
    family = subgroup.rsplit("_", 1)[0]
    pool = _subgroup(seed, subgroup)
    anchor = pool[anchor_index][1]
    n = anchor.n
    peers = [s for _, s in pool if abs(s.n - n) <= PEER_WINDOW]
    explicit = [f"num_nodes={n}", "connected=true", "directed=false"]
    clauses = []
    for metric in _METRICS[family]:
        key = metric[:-2]
        v = _bound(metric, anchor.values[key], [p.values[key] for p in peers])
        explicit.append(f"{metric}{v}")
        clauses.append(_CLAUSES[metric].format(v=v))
    joined = ", ".join(clauses[:-1]) + " and " + clauses[-1]
    text = (phrase(rng, _DESCRIPTIONS[family], n=n) + " "
            + phrase(rng, _TAILS, clauses=joined))
    return text, explicit, n


def plan(count: int) -> list[tuple[str, int]]:
    """``(subgroup, k)`` for each slot: subgroups round-robin, ``k`` counting the subgroup's
    instructions so far."""
    groups = pb.l3_subgroups()
    seen: dict[str, int] = {}
    out = []
    for i in range(count):
        g = groups[i % len(groups)]
        out.append((g, seen.get(g, 0)))
        seen[g] = seen.get(g, 0) + 1
    return out


def build_level3(seed: int, count: int = 150) -> list[dict[str, Any]]:
    """``count`` L3 records (ids ``L3-001`` …); each records its pool ``subgroup`` and
    ``anchor`` (the pool graph id its targets were calibrated from)."""
    slots = plan(count)
    per_group: dict[str, int] = {}
    for g, _ in slots:
        per_group[g] = per_group.get(g, 0) + 1
    anchors = {g: rng_for(seed, "L3", g, "anchors").sample(range(POOL_SIZE), k)
               for g, k in per_group.items()}
    out = []
    for i, (subgroup, k) in enumerate(slots):
        iid = f"L3-{i + 1:03d}"
        rng = rng_for(seed, "L3", i + 1)
        anchor_index = anchors[subgroup][k]
        text, explicit, n = _draft(seed, subgroup, anchor_index, rng)
        family, bucket = subgroup.rsplit("_", 1)
        rec = make_record(iid, 3, text, explicit, implicit_of(explicit),
                          size=bucket, template=f"l3_{family}",
                          extra={"subgroup": subgroup,
                                 "anchor": f"l3-{subgroup}-{anchor_index:04d}"})
        find_references(rec, _generator(subgroup, n), rng_for(seed, "L3", i + 1, "refs"))
        out.append(rec)
    return out
