"""Build the project's reference pools (L3 synthetic, L4 domain) in the format of
:mod:`pytest_graphinstruct.pools.format`.

Promises:

* **Deterministic.**  Graph ``index`` of ``subgroup`` is a pure function of
  ``(seed, level, subgroup, index)``: its random generator is seeded from a sha256 of those values
  (plus an attempt counter when a draw is rejected), never from global random state.  The same
  seed (and scale) therefore gives byte-identical pool directories (gzip shards are written with
  ``mtime=0`` by :func:`~pytest_graphinstruct.pools.format.write_pool`).  Byte identity across
  networkx/numpy versions is not promised: several generators are networkx's.
* **Valid graphs.**  Every graph is simple (no self-loops, no multi-edges), connected (weakly for
  directed graphs), and has ``str`` node ids ``'0'..'n-1'`` (node labels are randomly permuted so
  ids carry no structural meaning; real networks are relabelled in sorted-name order).  L3 graphs
  are undirected and lie within their subgroup's size bucket (small 8–20, medium 21–50, large
  51–100 nodes); L4 graphs have 8–60 nodes (molecular 8–30) and the directedness of their domain
  (:data:`DIRECTED_DOMAINS`).
* **Format.**  Pools are written with :func:`~pytest_graphinstruct.pools.format.write_pool`
  (manifest + gzip JSONL shards + content hashes) into ``<out>/l3`` and ``<out>/l4``, loadable by
  :meth:`~pytest_graphinstruct.pools.reference.ReferencePools.load`.

The L3 family generators live here; the L4 domain generators in
:mod:`~pytest_graphinstruct.build.domains` (shared with the L4 suite), and every random stream
comes from :mod:`~pytest_graphinstruct.build.streams` (key spelling :data:`~.streams.POOLS`).
See docs/POOLS.md for the subgroups, generators, counts and how to rebuild the committed pools.
"""

from __future__ import annotations

import functools
import math
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx

from pytest_graphinstruct.build import domains as dm
from pytest_graphinstruct.build.domains import DIRECTED_DOMAINS, L4_SIZE, MOLECULAR_SIZE, Rng
from pytest_graphinstruct.build.streams import POOLS, np_rng_for, nx_seed
from pytest_graphinstruct.pools.format import LEVEL_DIRS, PoolGraph, content_hash, write_pool

DEFAULT_SEED = 0
#: Rejection sampling gives up (deterministically, with an error) after this many draws.
MAX_ATTEMPTS = 500

#: Size buckets of the L3 pool: name → inclusive node-count range.
SIZE_BUCKETS: dict[str, tuple[int, int]] = {
    "small": (8, 20),
    "medium": (21, 50),
    "large": (51, 100),
}
L3_FAMILIES: tuple[str, ...] = ("ba", "er", "ws", "sbm_assortative", "sbm_core_periphery")
#: Graphs per L3 subgroup at scale 1 (15 subgroups → 3,000 graphs).
L3_PER_SUBGROUP = 200


# -- canonical form --------------------------------------------------------------------------------

def _canonical(g: nx.Graph, rng: Rng | None) -> nx.Graph:
    """Relabel ``g`` to ``'0'..'n-1'`` (a random permutation when ``rng`` is given, else the
    sorted order of the original labels) with nodes and edges inserted in sorted order."""
    directed = g.is_directed()
    nodes = sorted(g.nodes(), key=str) if rng is None else list(g.nodes())
    order = list(range(len(nodes))) if rng is None else [int(x) for x in
                                                         rng.permutation(len(nodes))]
    label = {v: order[i] for i, v in enumerate(nodes)}
    edges = set()
    for u, v in g.edges():
        a, b = label[u], label[v]
        if a == b:
            continue
        edges.add((a, b) if directed else (min(a, b), max(a, b)))
    h: nx.Graph = nx.DiGraph() if directed else nx.Graph()
    h.add_nodes_from(str(i) for i in range(len(nodes)))
    h.add_edges_from((str(a), str(b)) for a, b in sorted(edges))
    return h


def _connected(g: nx.Graph) -> bool:
    if g.number_of_nodes() == 0:
        return False
    return nx.is_weakly_connected(g) if g.is_directed() else nx.is_connected(g)


# -- L3 generators (undirected; return None to reject a draw) --------------------------------------

def _l3_ba(rng: Rng, n: int) -> nx.Graph:
    m = dm.uniform_int(rng, 1, max(1, min(6, n // 4)))
    return nx.barabasi_albert_graph(n, m, seed=nx_seed(rng))


def _l3_er(rng: Rng, n: int) -> nx.Graph:
    lo = min(n - 1.0, 1.1 * math.log(n))
    k = float(rng.uniform(lo, max(lo, min(n - 1.0, 0.5 * (n - 1), 12.0))))
    return nx.gnp_random_graph(n, min(1.0, k / (n - 1)), seed=nx_seed(rng))


def _l3_ws(rng: Rng, n: int) -> nx.Graph:
    ks = [k for k in (4, 6, 8) if k <= n - 2]
    k = ks[int(rng.integers(len(ks)))]
    p = float(rng.uniform(0.0, 0.6))
    return nx.watts_strogatz_graph(n, k, p, seed=nx_seed(rng))


def _l3_sbm_assortative(rng: Rng, n: int) -> nx.Graph:
    blocks = dm.uniform_int(rng, 2, max(2, min(6, n // 5)))
    sizes = dm.block_sizes(rng, n, blocks, 3)
    d_in = float(rng.uniform(2.5, 8.0))
    d_out = float(rng.uniform(0.3, 1.5))
    return dm.degree_sbm(rng, sizes, d_in, d_out, cap_in=0.95, cap_out=0.5)


def _l3_sbm_core_periphery(rng: Rng, n: int) -> nx.Graph:
    core = max(3, round(n * float(rng.uniform(0.15, 0.35))))
    periphery = n - core
    p_cc = float(rng.uniform(0.5, 0.95))
    p_cp = min(0.9, float(rng.uniform(1.2, 3.0)) / core)
    p_pp = min(0.2, float(rng.uniform(0.0, 1.0)) / max(1, periphery))
    return nx.stochastic_block_model([core, periphery], [[p_cc, p_cp], [p_cp, p_pp]],
                                     seed=nx_seed(rng))


_L3_GENERATORS: dict[str, Callable[[Rng, int], nx.Graph]] = {
    "ba": _l3_ba, "er": _l3_er, "ws": _l3_ws, "sbm_assortative": _l3_sbm_assortative,
    "sbm_core_periphery": _l3_sbm_core_periphery,
}


def l3_subgroups() -> list[str]:
    """The 15 L3 subgroup names, ``<family>_<bucket>``, in pool order."""
    return [f"{family}_{bucket}" for family in L3_FAMILIES for bucket in SIZE_BUCKETS]


def l3_draw(family: str, rng: Rng, n: int) -> nx.Graph | None:
    """One draw of L3 ``family``'s generator on ``n`` nodes, in canonical form (``'0'..'n-1'``,
    randomly permuted), or ``None`` when the draw is rejected (disconnected or wrong size)."""
    g = _L3_GENERATORS[family](rng, n)
    if g.number_of_nodes() != n or not _connected(g):
        return None
    return _canonical(g, rng)


def l3_graph(subgroup: str, index: int, seed: int = DEFAULT_SEED) -> PoolGraph:
    """Graph ``index`` of L3 ``subgroup`` (connected, undirected, within the bucket)."""
    family, bucket = subgroup.rsplit("_", 1)
    lo, hi = SIZE_BUCKETS[bucket]
    for attempt in range(MAX_ATTEMPTS):
        rng = np_rng_for(seed, 3, subgroup, index, attempt, scheme=POOLS)
        g = l3_draw(family, rng, dm.uniform_int(rng, lo, hi))
        if g is not None:
            return PoolGraph(f"l3-{subgroup}-{index:04d}", g, None, subgroup)
    raise RuntimeError(f"L3 {subgroup} #{index}: no connected draw in {MAX_ATTEMPTS} attempts")


# -- L4 subgroups ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class DomainSubgroup:
    """One L4 generator: ``count`` graphs of ``domain`` at scale 1."""

    domain: str
    name: str
    count: int
    make: Callable[[Rng, int], nx.Graph | None]
    size: tuple[int, int] = L4_SIZE


L4_SUBGROUPS: tuple[DomainSubgroup, ...] = (
    DomainSubgroup("social", "holme_kim", 121, dm.social_holme_kim),
    DomainSubgroup("citation", "price_dag", 125, dm.citation_dag),
    DomainSubgroup("biological", "duplication_divergence", 63, dm.biological_duplication),
    DomainSubgroup("biological", "sparse_modular", 62, dm.biological_modules),
    DomainSubgroup("ecological", "niche_model", 125, dm.ecological_niche),
    DomainSubgroup("communication", "hub_ba", 125, dm.communication_hubs),
    DomainSubgroup("infrastructure", "geometric", 63, dm.infrastructure_geometric),
    DomainSubgroup("infrastructure", "perturbed_grid", 62, dm.infrastructure_grid),
    DomainSubgroup("knowledge_graph", "typed_relations", 125, dm.knowledge_graph),
    DomainSubgroup("molecular", "valence_skeleton", 125, dm.molecular_skeleton, MOLECULAR_SIZE),
)


def _lesmis_core() -> nx.Graph:
    return nx.k_core(nx.les_miserables_graph(), 2)


#: Real networks shipped with networkx: subgroup name → (domain, loader).
REAL_NETWORKS: dict[str, tuple[str, Callable[[], nx.Graph]]] = {
    "real_karate_club": ("social", nx.karate_club_graph),
    "real_les_miserables_2core": ("social", _lesmis_core),
    "real_davis_southern_women": ("social", nx.davis_southern_women_graph),
    "real_florentine_families": ("social", nx.florentine_families_graph),
}


def l4_graph(subgroup: DomainSubgroup, index: int, seed: int = DEFAULT_SEED) -> PoolGraph:
    """Graph ``index`` of the synthetic L4 ``subgroup`` (weakly connected, within its size
    range, directed iff its domain is in :data:`DIRECTED_DOMAINS`)."""
    lo, hi = subgroup.size
    directed = subgroup.domain in DIRECTED_DOMAINS
    for attempt in range(MAX_ATTEMPTS):
        rng = np_rng_for(seed, 4, f"{subgroup.domain}/{subgroup.name}", index, attempt,
                         scheme=POOLS)
        g = subgroup.make(rng, dm.uniform_int(rng, lo, hi))
        if g is None or g.is_directed() != directed or not lo <= g.number_of_nodes() <= hi:
            continue
        g = _canonical(g, rng)
        if _connected(g):
            return PoolGraph(f"l4-{subgroup.domain}-{subgroup.name}-{index:04d}", g,
                             subgroup.domain, subgroup.name)
    raise RuntimeError(f"L4 {subgroup.name} #{index}: no valid draw in {MAX_ATTEMPTS} attempts")


def real_graphs() -> list[PoolGraph]:
    """The networkx real networks (relabelled ``'0'..'n-1'`` in sorted-name order)."""
    return [PoolGraph(f"l4-{domain}-{name}", _canonical(load(), None), domain, name)
            for name, (domain, load) in REAL_NETWORKS.items()]


# -- the builder -----------------------------------------------------------------------------------

def _count(full: int, scale: float) -> int:
    return max(1, round(full * scale))


def l3_graphs(seed: int = DEFAULT_SEED, scale: float = 1.0) -> Iterable[PoolGraph]:
    """All L3 pool graphs in pool order (subgroup by subgroup)."""
    for sub in l3_subgroups():
        for i in range(_count(L3_PER_SUBGROUP, scale)):
            yield l3_graph(sub, i, seed)


def l4_graphs(seed: int = DEFAULT_SEED, scale: float = 1.0) -> Iterable[PoolGraph]:
    """All L4 pool graphs in pool order: the real networks, then each synthetic subgroup."""
    yield from real_graphs()
    for sub in L4_SUBGROUPS:
        for i in range(_count(sub.count, scale)):
            yield l4_graph(sub, i, seed)


@functools.cache
def full_pool(level: int, seed: int = DEFAULT_SEED) -> tuple[PoolGraph, ...]:
    """Every graph of the L3 (``level=3``) or L4 pool at scale 1, in pool order, generated once
    per process: the suite builder calibrates against exactly these graphs and then writes them
    with :func:`build_pools`.  Shared objects — callers must not mutate them."""
    if level not in (3, 4):
        raise ValueError(f"pools exist for levels 3 and 4, not {level!r}")
    return tuple(l3_graphs(seed) if level == 3 else l4_graphs(seed))


def build_pools(out_dir: str | Path, seed: int = DEFAULT_SEED, scale: float = 1.0
                ) -> dict[str, Any]:
    """Write the L3 and L4 pools under ``out_dir`` (``l3/`` and ``l4/``, replaced if present).

    ``scale`` multiplies every synthetic subgroup's count (at least one graph each; the real
    networks are always included) — small scales are for tests.  Returns a summary:
    ``{"seed", "scale", "seconds", "l3": {...}, "l4": {...}}`` where each level holds
    ``graphs``, ``content_hash``, ``bytes`` (on disk) and per-subgroup / per-domain counts.
    """
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    out = Path(out_dir)
    start = time.perf_counter()
    summary: dict[str, Any] = {"seed": seed, "scale": scale}
    for level, make in ((3, l3_graphs), (4, l4_graphs)):
        items = list(full_pool(level, seed) if scale == 1.0 else make(seed, scale))
        directory = out / LEVEL_DIRS[level]
        if directory.exists():
            shutil.rmtree(directory)
        write_pool(directory, items, name=f"graphinstruct-{LEVEL_DIRS[level]}", level=level,
                   shard_size=1000)
        info: dict[str, Any] = {
            "graphs": len(items), "content_hash": content_hash(items),
            "bytes": sum(p.stat().st_size for p in directory.iterdir()),
            "subgroups": _tally(pg.subgroup for pg in items),
        }
        if level == 4:
            info["domains"] = _tally(pg.domain for pg in items)
        summary[LEVEL_DIRS[level]] = info
    summary["seconds"] = round(time.perf_counter() - start, 2)
    return summary


def _tally(values: Iterable[str | None]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[str(v)] = out.get(str(v), 0) + 1
    return out
