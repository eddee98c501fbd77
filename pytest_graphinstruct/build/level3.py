"""Level 3 — numerical attributes (density, clustering, modularity, path length, diameter)
with targets calibrated from the project's L3 reference pool.

Each instruction belongs to one pool subgroup (5 families × 3 size buckets, 10 instructions
each at the default 150) and asks for 2–3 of its family's characteristic metrics.

Calibration against the committed pool (pool seed :data:`POOL_SEED`, whatever the suite seed):

1. an *anchor* is drawn (with the suite seed) from the subgroup's pool graphs, preferring
   those whose node count ``n`` has at least :data:`YARDSTICKS` pool graphs;
2. the *yardsticks* are the :data:`YARDSTICKS` pool graphs on exactly ``n`` nodes (any family)
   nearest to the anchor in the family's metrics (each metric scaled by its spread at ``n``),
   the anchor first;
3. each bound is the envelope of the yardsticks — the largest value for ``<=``, the smallest
   for ``>=`` — rounded outwards to 4 decimals (diameter: an integer).

So every yardstick satisfies the whole instruction: at least ``min(20, graphs on n nodes)`` pool
graphs match it, which is what D1's pool-distribution formula needs.  References are fresh
draws of the subgroup's own generator on ``n`` nodes that pass every bound.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Collection, Sequence
from functools import lru_cache
from typing import Any

import networkx as nx
import numpy as np

from pytest_graphinstruct.build import pools as pb
from pytest_graphinstruct.build.common import find_references, make_record
from pytest_graphinstruct.build.streams import np_rng_from, rng_for
from pytest_graphinstruct.build.template import (
    implicit_of,
    number_text,
    phrase,
    round_outward,
)
from pytest_graphinstruct.verify.properties import GraphFacts

#: Pool graphs each L3 instruction is calibrated to admit (D1's pool-formula minimum).
YARDSTICKS = 20
#: Graphs per pool subgroup (the anchors are drawn from these indices).
POOL_SIZE = pb.L3_PER_SUBGROUP
#: Calibration always uses the committed pool, so a suite of any seed is scored against
#: graphs it was calibrated on.
POOL_SEED = pb.DEFAULT_SEED

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


_KEYS = ("density", "clustering_coefficient", "modularity", "average_path_length", "diameter")


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


class _Pool:
    """The L3 pool graphs (regenerated in memory) grouped by node count, with metric values
    computed on demand and cached."""

    def __init__(self, seed: int) -> None:
        self.graphs: dict[str, nx.Graph] = {}
        self.by_n: dict[int, list[str]] = {}
        for pg in pb.full_pool(3, seed):
            self.graphs[pg.id] = pg.graph
            self.by_n.setdefault(pg.graph.number_of_nodes(), []).append(pg.id)
        self._facts: dict[str, GraphFacts] = {}

    def value(self, gid: str, key: str) -> float:
        facts = self._facts.get(gid)
        if facts is None:
            facts = self._facts[gid] = GraphFacts(self.graphs[gid])
        return _metric(facts, key)


@lru_cache(maxsize=2)
def _pool(seed: int) -> _Pool:
    return _Pool(seed)


def _round(metric: str, v: float) -> str:
    key, op = metric[:-2], metric[-2:]
    if key == "diameter":
        return str(int(math.ceil(v) if op == "<=" else math.floor(v)))
    return number_text(round_outward(v, 4, up=op == "<="))


def yardsticks(pool: _Pool, anchor: str, metrics: Sequence[str]) -> list[str]:
    """The anchor and its nearest pool graphs on the same node count (at most
    :data:`YARDSTICKS`), nearest first; distance: metric differences scaled by each metric's
    spread over the graphs on that node count."""
    n = pool.graphs[anchor].number_of_nodes()
    peers = pool.by_n[n]
    keys = sorted({m[:-2] for m in metrics})
    table = np.array([[pool.value(g, k) for k in keys] for g in peers], dtype=float)
    spread = table.std(axis=0)
    spread[spread == 0] = 1.0
    a = table[peers.index(anchor)]
    dist = np.sqrt((((table - a) / spread) ** 2).sum(axis=1))
    order = sorted(range(len(peers)), key=lambda i: (dist[i], peers[i] != anchor, peers[i]))
    return [peers[i] for i in order[:YARDSTICKS]]
def _generator(subgroup: str, n: int) -> Callable[[random.Random], nx.Graph | None]:
    family = subgroup.rsplit("_", 1)[0]

    def generate(r: random.Random) -> nx.Graph | None:
        return pb.l3_draw(family, np_rng_from(r, bits=63), n)

    return generate


def _draft(anchor: str, family: str, rng: random.Random) -> tuple[str, list[str], int, int]:
    """Text, explicit constraints, node count and yardstick count of one instruction."""
    pool = _pool(POOL_SEED)
    n = pool.graphs[anchor].number_of_nodes()
    sticks = yardsticks(pool, anchor, _METRICS[family])
    explicit = [f"num_nodes={n}", "connected=true", "directed=false"]
    clauses = []
    for metric in _METRICS[family]:
        key, op = metric[:-2], metric[-2:]
        values = [pool.value(g, key) for g in sticks]
        v = _round(metric, max(values) if op == "<=" else min(values))
        explicit.append(f"{metric}{v}")
        clauses.append(_CLAUSES[metric].format(v=v))
    joined = ", ".join(clauses[:-1]) + " and " + clauses[-1]
    text = (phrase(rng, _DESCRIPTIONS[family], n=n) + " "
            + phrase(rng, _TAILS, clauses=joined))
    return text, explicit, n, len(sticks)


def _anchors(seed: int, subgroup: str, k: int) -> list[str]:
    """``k`` anchor ids of ``subgroup``, preferring node counts the pool holds at least
    :data:`YARDSTICKS` graphs of."""
    pool = _pool(POOL_SEED)
    ids = [f"l3-{subgroup}-{i:04d}" for i in range(POOL_SIZE)]
    rich = [g for g in ids if len(pool.by_n[pool.graphs[g].number_of_nodes()]) >= YARDSTICKS]
    rng = rng_for(seed, "L3", subgroup, "anchors")
    if len(rich) >= k:
        return rng.sample(rich, k)
    return rich + rng.sample([g for g in ids if g not in rich], k - len(rich))


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


def build_level3(seed: int, count: int = 150, indices: Collection[int] | None = None
                 ) -> list[dict[str, Any]]:
    """``count`` L3 records (ids ``L3-001`` …); each records its pool ``subgroup``, its
    ``anchor`` (the pool graph id it was calibrated from) and how many pool graphs it was
    calibrated to admit (``yardsticks``).  ``indices`` (1-based) builds only those records,
    each equal to its counterpart in the full build."""
    slots = plan(count)
    per_group: dict[str, int] = {}
    for g, _ in slots:
        per_group[g] = per_group.get(g, 0) + 1
    anchors = {g: _anchors(seed, g, k) for g, k in per_group.items()}
    out = []
    for i, (subgroup, k) in enumerate(slots):
        if indices is not None and i + 1 not in indices:
            continue
        iid = f"L3-{i + 1:03d}"
        family, bucket = subgroup.rsplit("_", 1)
        anchor = anchors[subgroup][k]
        text, explicit, n, sticks = _draft(anchor, family, rng_for(seed, "L3", i + 1))
        rec = make_record(iid, 3, text, explicit, implicit_of(explicit), size=bucket,
                          template=f"l3_{family}",
                          extra={"subgroup": subgroup, "anchor": anchor, "yardsticks": sticks})
        find_references(rec, _generator(subgroup, n), rng_for(seed, "L3", i + 1, "refs"))
        out.append(rec)
    return out
