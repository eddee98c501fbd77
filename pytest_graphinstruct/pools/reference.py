"""Reference pools: graphs the distribution-driven metrics (D1 MMD, D3) compare against.

A :class:`Pool` is an immutable sequence of :class:`~pytest_graphinstruct.pools.format.
PoolGraph` (node ids ``str``, like parsed answers) identified by a **content hash**
(:mod:`~pytest_graphinstruct.pools.format`).  Promises:

* **Same checks as the verifier.**  An instruction's pool subset is the pool graphs that satisfy
  every checkable explicit constraint, with the verifier's own checks
  (:mod:`~pytest_graphinstruct.pools.matching`).
* **Never re-filtered.**  A subset is computed once per ``(pool content hash, canonical explicit
  constraints, domain)`` and cached in memory and on disk; instructions with equal constraint sets
  share it.  Expensive per-graph properties (modularity, distances, clustering, planarity, …) are
  computed at most once per pool graph, only for graphs that survived the cheaper constraints,
  and persisted.  D1 features (histograms) are computed once per pool and persisted; the MMD
  reference statistics (σ, reference kernel mean) once per subset and persisted.
* **Cache safety.**  The disk cache (:mod:`~pytest_graphinstruct.pools.cache`) lives in
  ``<cache_dir>/pool-<hash>-<code>/`` where ``<code>`` fingerprints the source of every module
  whose semantics the cached values depend on (checks, graph facts, graph types, constraint
  syntax, features, the pools modules) — editing any of them starts a fresh cache, so a stale
  cache can never change a result.  Features are written when computed; matches, statistics and
  facts at most every :data:`~pytest_graphinstruct.pools.cache.FLUSH_INTERVAL_S` seconds, on
  :meth:`Pool.flush` and at interpreter exit.

A root passed with ``--gi-pools=DIR`` holds ``l3/`` and/or ``l4/`` pool directories
(:class:`ReferencePools`).
"""

from __future__ import annotations

import atexit
import contextlib
import sys
import threading
import time
import weakref
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import networkx as nx

from pytest_graphinstruct.kernels import mmd
from pytest_graphinstruct.pools import cache as _cache_module
from pytest_graphinstruct.pools import format as _format_module
from pytest_graphinstruct.pools import matching as _matching_module
from pytest_graphinstruct.pools.cache import FLUSH_INTERVAL_S, PoolCache, code_fingerprint
from pytest_graphinstruct.pools.format import (
    LEVEL_DIRS,
    MANIFEST,
    LineGraphs,
    PoolError,
    PoolGraph,
    as_pool_graphs,
    content_hash,
    read_pool,
)
from pytest_graphinstruct.pools.matching import Matcher, PoolMatch, instruction_domain, match_key
from pytest_graphinstruct.suite import constraints as _constraints_module
from pytest_graphinstruct.suite.constraints import Constraint
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify import bipartition as _bipartition_module
from pytest_graphinstruct.verify import checks as _checks_module
from pytest_graphinstruct.verify import clustering as _clustering_module
from pytest_graphinstruct.verify import components as _components_module
from pytest_graphinstruct.verify import degrees as _degrees_module
from pytest_graphinstruct.verify import distances as _distances_module
from pytest_graphinstruct.verify import graph_types as _graph_types_module
from pytest_graphinstruct.verify import modularity as _modularity_module
from pytest_graphinstruct.verify import node_order as _node_order_module
from pytest_graphinstruct.verify import planarity as _planarity_module
from pytest_graphinstruct.verify import properties as _properties_module
from pytest_graphinstruct.verify import witnesses as _witnesses_module
from pytest_graphinstruct.verify.checks import is_checkable
from pytest_graphinstruct.verify.properties import GraphFacts

_FINGERPRINT = code_fingerprint((
    _checks_module, _properties_module, _degrees_module, _components_module, _bipartition_module,
    _distances_module, _modularity_module, _clustering_module, _planarity_module,
    _witnesses_module, _node_order_module,
    _graph_types_module, _constraints_module, mmd, _format_module, _cache_module, _matching_module,
    sys.modules[__name__]))


class Pool:
    """An immutable pool of graphs with cached features, facts and constraint matches.

    Build with :meth:`load` (a pool directory) or :meth:`from_graphs` (in memory).  With a
    ``cache_dir``, features, per-graph facts, matches and reference statistics are persisted
    there (see the module docstring); without one they are cached for the object's lifetime.
    Thread-safe.
    """

    def __init__(self, graphs: Sequence[PoolGraph], *, name: str = "pool",
                 digest: str | None = None, cache_dir: str | Path | None = None) -> None:
        #: the graphs (read from verified bytes: parsed on first use, :class:`LineGraphs`)
        self.graphs: Sequence[PoolGraph] = graphs if isinstance(graphs, LineGraphs) \
            else tuple(graphs)
        self.name = name
        self.content_hash = digest or content_hash(self.graphs)
        self._cache: PoolCache | None = (
            PoolCache.for_pool(cache_dir, self.content_hash, _FINGERPRINT, len(self.graphs))
            if cache_dir is not None else None)
        self.cache_path: Path | None = self._cache.path if self._cache is not None else None
        self._lock = threading.RLock()
        self._dirty = False
        self._last_flush = time.monotonic()
        #: counters, for tests and benchmarks: features computed, constraint checks made
        self.computed = {"features": 0, "checks": 0, "matches": 0, "stats": 0}
        self._matcher = Matcher(self.graphs, self.computed)
        self._matches: dict[tuple[str, ...], tuple[int, ...]] = {}
        self._stats: dict[tuple[str, ...], mmd.ReferenceStats] = {}
        self._features: mmd.FeatureTable | None = None
        self._load_cache()
        if self._cache is not None:
            atexit.register(_flush_at_exit, weakref.ref(self))

    def __len__(self) -> int:
        return len(self.graphs)

    def __repr__(self) -> str:
        return f"Pool({self.name!r}, {len(self)} graphs, {self.content_hash[:12]})"

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_graphs(cls, graphs: Iterable[PoolGraph | nx.Graph], *, name: str = "memory",
                    cache_dir: str | Path | None = None) -> Pool:
        """A pool of in-memory graphs (networkx graphs get ids ``g00000``… and ``str`` nodes;
        ``graph.graph['domain'/'subgroup'/'id']`` are used when present)."""
        return cls(as_pool_graphs(graphs), name=name, cache_dir=cache_dir)

    @classmethod
    def load(cls, directory: str | Path, *, cache_dir: str | Path | None = None) -> Pool:
        """Read and verify a pool directory (:func:`~pytest_graphinstruct.pools.format.
        read_pool`).

        Raises:
            PoolError: missing/malformed manifest, a shard that is missing, unlisted, unreadable
                or malformed, or a count or hash that does not match the manifest.
        """
        def verified(claimed: str) -> Collection[str]:
            assert cache_dir is not None
            return PoolCache.for_pool(cache_dir, claimed, _FINGERPRINT, 0).verified_shards()

        contents = read_pool(directory, None if cache_dir is None else verified)
        if cache_dir is not None and not contents.trusted:
            with contextlib.suppress(OSError):  # a cache that cannot be written: verify again
                PoolCache.for_pool(cache_dir, contents.content_hash, _FINGERPRINT,
                                   len(contents.graphs)).save_verified(contents.shards)
        return cls(contents.graphs, name=contents.name, digest=contents.content_hash,
                   cache_dir=cache_dir)

    # -- features -----------------------------------------------------------------------------

    @property
    def features(self) -> mmd.FeatureTable:
        """D1 features of every pool graph (computed once per pool; persisted)."""
        with self._lock:
            if self._features is None:
                self._features = self._cache.read_features() if self._cache is not None else None
                if self._features is None:
                    feats = [mmd.graph_features(pg.graph) for pg in self.graphs]
                    self.computed["features"] += len(feats)
                    self._features = mmd.FeatureTable.of_features(feats)
                    if self._cache is not None:
                        self._cache.write_features(self._features)
            return self._features

    # -- matching -----------------------------------------------------------------------------

    def facts(self, index: int) -> GraphFacts:
        """The (shared, cached) :class:`GraphFacts` of pool graph ``index``, seeded with the
        persisted properties."""
        with self._lock:
            return self._matcher.facts(index)

    def match(self, constraints: Iterable[Constraint], domain: str | None = None) -> PoolMatch:
        """The pool graphs satisfying every checkable constraint (and of ``domain`` if given).

        Cached per :func:`~pytest_graphinstruct.pools.matching.match_key`; the result equals
        re-checking every pool graph with ``check_constraint`` (constraints are merely tried
        cheapest first).
        """
        cs = [c for c in constraints if is_checkable(c)]
        key = match_key(cs, domain)
        with self._lock:
            hit = self._matches.get(key)
            if hit is None:
                hit = self._matcher.compute(cs, domain)
                self._matches[key] = hit
                self.computed["matches"] += 1
                self._changed()
            return PoolMatch(self, key, hit)

    def match_instruction(self, instruction: Instruction) -> PoolMatch:
        """:meth:`match` on the instruction's explicit constraints and its domain."""
        return self.match(instruction.explicit, instruction_domain(instruction))

    # -- MMD reference statistics ---------------------------------------------------------------

    def reference_set(self, match: PoolMatch) -> mmd.ReferenceSet:
        """Features and σ/reference-kernel statistics of a matched subset (computed once per
        subset from the pool graphs alone; persisted)."""
        with self._lock:
            table = self.features.take(match.indices)
            stats = self._stats.get(match.key)
            if stats is None:
                stats = mmd.ReferenceStats.compute(table)
                self._stats[match.key] = stats
                self.computed["stats"] += 1
                self._changed()
            return mmd.ReferenceSet(table, stats)

    # -- the disk cache -------------------------------------------------------------------------

    def _load_cache(self) -> None:
        if self._cache is None:
            return
        self._matcher.persisted.update(self._cache.read_facts())
        matches, stats = self._cache.read_matches()
        self._matches.update(matches)
        self._stats.update(stats)

    def flush(self) -> None:
        """Write new matches, reference statistics and graph facts to the disk cache now.

        Called automatically at most every :data:`~pytest_graphinstruct.pools.cache.
        FLUSH_INTERVAL_S` seconds while matching, and at interpreter exit; call it at the end
        of a session to be sure.
        """
        with self._lock:
            if self._cache is None or not (self._dirty or self._matcher.facts_dirty):
                return
            self._cache.save_matches(self._matches, self._stats)
            if self._matcher.facts_dirty:
                self._cache.save_facts(self._matcher.persisted)
            self._dirty = self._matcher.facts_dirty = False
            self._last_flush = time.monotonic()

    def _changed(self) -> None:
        self._dirty = True
        if time.monotonic() - self._last_flush >= FLUSH_INTERVAL_S:
            self.flush()


def _flush_at_exit(ref: weakref.ref[Pool]) -> None:
    pool = ref()
    if pool is not None:
        with contextlib.suppress(OSError):
            pool.flush()


# -- pools per level ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ReferencePools:
    """The reference pools of a run, by level (L3: attribute-controlled synthetic graphs; L4:
    real-world graphs with domains).  Levels without a pool are absent."""

    pools: Mapping[int, Pool]

    @classmethod
    def load(cls, root: str | Path, *, cache_dir: str | Path | None = None) -> ReferencePools:
        """Read ``root/l3`` and/or ``root/l4`` (each a pool directory).

        Raises:
            PoolError: ``root`` is not a directory, holds neither, or a pool is malformed.
        """
        root = Path(root)
        if not root.is_dir():
            raise PoolError(f"{root}: pools root is not a directory")
        pools: dict[int, Pool] = {}
        for level, sub in LEVEL_DIRS.items():
            if (root / sub).is_dir():
                pools[level] = Pool.load(root / sub, cache_dir=cache_dir)
        if not pools:
            wanted = " and/or ".join(f"{d}/" for d in LEVEL_DIRS.values())
            raise PoolError(f"{root}: no pool found (expected {wanted} with a {MANIFEST})")
        return cls(MappingProxyType(pools))

    def for_level(self, level: int) -> Pool | None:
        return self.pools.get(level)

    def match(self, instruction: Instruction) -> PoolMatch | None:
        """The instruction's subset of its level's pool; ``None`` when the level has no pool."""
        pool = self.for_level(instruction.level)
        return None if pool is None else pool.match_instruction(instruction)
