"""Reference pools: graphs the distribution-driven metrics (D1 MMD, D3) compare against.

A :class:`Pool` is an immutable sequence of :class:`PoolGraph` (node ids ``str``, like parsed
answers) identified by a **content hash**.  Promises:

* **Same checks as the verifier.**  An instruction's pool subset is the pool graphs that satisfy
  every checkable explicit constraint, decided by :func:`~pytest_graphinstruct.verify.checks.
  check_constraint` on :class:`~pytest_graphinstruct.verify.properties.GraphFacts` — exactly the
  verdict an answer with that graph would get.  When the instruction has a domain (L4), only
  pool graphs of the same domain are candidates (the reference release mixes domains).
* **Never re-filtered.**  A subset is computed once per ``(pool content hash, canonical explicit
  constraints, domain)`` and cached in memory and on disk; instructions with equal constraint sets
  share it.  Expensive per-graph properties (modularity, distances, clustering, planarity, …) are
  computed at most once per pool graph, only for graphs that survived the cheaper constraints,
  and persisted.  D1 features (histograms) are computed once per pool and persisted; the MMD
  reference statistics (σ, reference kernel mean) once per subset and persisted.
* **Cache safety.**  The disk cache lives in ``<cache_dir>/pool-<hash>-<code>/`` where ``<hash>``
  is the pool's content hash and ``<code>`` a fingerprint of the source of every module whose
  semantics the cached values depend on (checks, graph facts, graph types, constraint syntax,
  features, this module) — editing any of them starts a fresh cache, so a stale cache can never
  change a result.  Files are JSON and ``.npz`` (no pickles), written atomically
  (temporary file + rename); concurrent processes at worst recompute.  Features are written when
  computed; matches, statistics and facts at most every :data:`FLUSH_INTERVAL_S` seconds, on
  :meth:`Pool.flush` and at interpreter exit.

On-disk pool format (see docs/SCORING.md, "Reference pools"): a directory holding
``manifest.json`` and the JSONL or gzip-JSONL shards it lists; each line is one graph
``{"id", "directed", "nodes": [...], "edges": [[u, v], ...], "domain"?, "subgroup"?}``.
:func:`write_pool` writes that format; :meth:`Pool.load` verifies it (counts, per-file and
content hashes) and raises :class:`PoolError` naming the file and line of any problem.
A root passed with ``--gi-pools=DIR`` holds ``l3/`` and/or ``l4/`` pool directories
(:class:`ReferencePools`).
"""

from __future__ import annotations

import atexit
import contextlib
import gzip
import hashlib
import inspect
import json
import os
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any

import networkx as nx
import numpy as np

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.score import mmd
from pytest_graphinstruct.suite import constraints as _constraints_module
from pytest_graphinstruct.suite.constraints import Constraint
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify import checks as _checks_module
from pytest_graphinstruct.verify import graph_types as _graph_types_module
from pytest_graphinstruct.verify import properties as _properties_module
from pytest_graphinstruct.verify.checks import check_constraint, is_checkable
from pytest_graphinstruct.verify.properties import GraphFacts
from pytest_graphinstruct.verify.verdict import Source

POOL_FORMAT = "graphinstruct-pool"
POOL_FORMAT_VERSION = 1
MANIFEST = "manifest.json"
#: New matches/facts are written to the disk cache at most this often while matching (and by
#: :meth:`Pool.flush` / at interpreter exit).
FLUSH_INTERVAL_S = 5.0
#: Level → sub-directory of a pools root.
LEVEL_DIRS: Mapping[int, str] = MappingProxyType({3: "l3", 4: "l4"})

_RECORD_KEYS = frozenset({"id", "directed", "nodes", "edges", "domain", "subgroup"})

#: GraphFacts properties persisted per pool graph (the expensive ones; all cached_property).
PERSISTED_FACTS: tuple[str, ...] = ("modularity", "clustering", "_distance_stats", "planar",
                                    "acyclic", "edge_connectivity", "density")
for _name in PERSISTED_FACTS:  # a GraphFacts refactor must fail loudly here, not go stale
    assert isinstance(inspect.getattr_static(GraphFacts, _name), cached_property), _name

#: Constraint keys in the order they are tried (cheap first; a failure skips the rest).
_KEY_COST: Mapping[str, int] = MappingProxyType({
    k: i for i, k in enumerate((
        "num_nodes", "directed", "num_edges", "min_degree", "max_degree", "degree", "density",
        "num_components", "connected", "bipartite", "acyclic", "bipartite_sides", "graph_type",
        "clustering_coefficient", "planar", "diameter", "average_path_length",
        "edge_connectivity", "modularity"))
})


#: Keys whose verdict is a function of one cheap graph number (see Pool._prefilter).
_PREFILTER: Mapping[str, Callable[[nx.Graph], object]] = MappingProxyType({
    "num_nodes": lambda g: g.number_of_nodes(),
    "num_edges": lambda g: g.number_of_edges(),
    "directed": lambda g: g.is_directed(),
})


class PoolError(GraphInstructError, ValueError):
    """A pool directory is malformed: the message names the file (and line) and the problem."""


@dataclass(frozen=True)
class PoolGraph:
    """One pool graph.  ``graph`` has ``str`` node ids and no attributes; treat it as read-only."""

    id: str
    graph: nx.Graph
    domain: str | None = None
    subgroup: str | None = None

    def record(self) -> dict[str, Any]:
        """The JSONL record of this graph (node and edge order as stored)."""
        rec: dict[str, Any] = {"id": self.id, "directed": self.graph.is_directed(),
                               "nodes": list(self.graph.nodes()),
                               "edges": [[u, v] for u, v in self.graph.edges()]}
        if self.domain is not None:
            rec["domain"] = self.domain
        if self.subgroup is not None:
            rec["subgroup"] = self.subgroup
        return rec


def _canonical_line(pg: PoolGraph) -> str:
    return json.dumps(pg.record(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(graphs: Iterable[PoolGraph]) -> str:
    """sha256 over the canonical JSON line of every graph, in order (format-independent: a
    directory and the same graphs built in memory hash alike)."""
    h = hashlib.sha256()
    for pg in graphs:
        h.update(_canonical_line(pg).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def _code_fingerprint() -> str:
    h = hashlib.sha256()
    for module in (_checks_module, _properties_module, _graph_types_module, _constraints_module,
                   mmd):
        h.update(Path(inspect.getfile(module)).read_bytes())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()


_FINGERPRINT = _code_fingerprint()


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/pytest-graphinstruct/pools`` (``~/.cache/...`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-graphinstruct" / "pools"


# -- reading and writing the directory format ----------------------------------------------------

def _open_text(path: Path) -> Any:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def _graph_from_record(rec: Any, where: str) -> PoolGraph:
    if not isinstance(rec, dict):
        raise PoolError(f"{where}: a graph record must be a JSON object")
    unknown = set(rec) - _RECORD_KEYS
    if unknown:
        raise PoolError(f"{where}: unknown keys {sorted(unknown)} (allowed: "
                        f"{sorted(_RECORD_KEYS)})")
    for key in ("id", "directed", "nodes", "edges"):
        if key not in rec:
            raise PoolError(f"{where}: missing {key!r}")
    gid, directed, nodes, edges = rec["id"], rec["directed"], rec["nodes"], rec["edges"]
    if not isinstance(gid, str) or not gid:
        raise PoolError(f"{where}: 'id' must be a non-empty string")
    if not isinstance(directed, bool):
        raise PoolError(f"{where}: 'directed' must be true or false")
    for key in ("domain", "subgroup"):
        if rec.get(key) is not None and not isinstance(rec[key], str):
            raise PoolError(f"{where}: {key!r} must be a string")
    if not isinstance(nodes, list) or not all(_is_id(v) for v in nodes):
        raise PoolError(f"{where}: 'nodes' must be a list of strings or integers")
    names = [str(v) for v in nodes]
    if len(set(names)) != len(names):
        raise PoolError(f"{where}: duplicate node ids")
    g: nx.Graph = nx.DiGraph() if directed else nx.Graph()
    g.add_nodes_from(names)
    if not isinstance(edges, list):
        raise PoolError(f"{where}: 'edges' must be a list of [u, v] pairs")
    for e in edges:
        if not (isinstance(e, list) and len(e) == 2 and all(_is_id(v) for v in e)):
            raise PoolError(f"{where}: bad edge {e!r} (want [u, v])")
        u, v = str(e[0]), str(e[1])
        if u not in g or v not in g:
            raise PoolError(f"{where}: edge {e!r} names a node not in 'nodes'")
        if g.has_edge(u, v):
            raise PoolError(f"{where}: edge {e!r} listed twice")
        g.add_edge(u, v)
    return PoolGraph(gid, g, rec.get("domain"), rec.get("subgroup"))


def _is_id(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))


def _read_shard(path: Path, rel: str) -> tuple[list[PoolGraph], str]:
    """The graphs of one shard and the sha256 of its (decompressed) bytes."""
    h = hashlib.sha256()
    out: list[PoolGraph] = []
    try:
        with _open_text(path) as fh:
            for lineno, line in enumerate(fh, 1):
                h.update(line.encode("utf-8"))
                if not line.strip():
                    continue
                where = f"{rel}:{lineno}"
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise PoolError(f"{where}: not JSON ({exc.msg})") from None
                out.append(_graph_from_record(rec, where))
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise PoolError(f"{rel}: cannot read ({exc})") from None
    return out, h.hexdigest()


def _read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PoolError(f"{path}: missing (a pool directory needs a {MANIFEST})") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise PoolError(f"{path}: unreadable ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != POOL_FORMAT:
        raise PoolError(f"{path}: 'format' must be {POOL_FORMAT!r}")
    if data.get("version") != POOL_FORMAT_VERSION:
        raise PoolError(f"{path}: unsupported version {data.get('version')!r} "
                        f"(this reader knows {POOL_FORMAT_VERSION})")
    files = data.get("files")
    if not isinstance(files, list) or not all(
            isinstance(f, dict) and isinstance(f.get("path"), str)
            and isinstance(f.get("graphs"), int) and isinstance(f.get("sha256"), str)
            for f in files):
        raise PoolError(f"{path}: 'files' must be a list of {{path, graphs, sha256}}")
    for key in ("graphs", "content_hash"):
        if key not in data:
            raise PoolError(f"{path}: missing {key!r}")
    return data


def write_pool(directory: str | Path, graphs: Iterable[PoolGraph | nx.Graph], *,
               name: str | None = None, level: int | None = None, shard_size: int = 1000,
               compress: bool = True) -> Path:
    """Write ``graphs`` as a pool directory (shards of ``shard_size`` graphs + manifest).

    Plain networkx graphs get ids ``g00000``, … and no domain.  Returns the manifest path.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    items = _as_pool_graphs(graphs)
    suffix = ".jsonl.gz" if compress else ".jsonl"
    files = []
    for start in range(0, max(1, len(items)), shard_size):
        part = items[start:start + shard_size]
        rel = f"part-{start // shard_size:04d}{suffix}"
        text = "".join(_canonical_line(pg) + "\n" for pg in part)
        data = text.encode("utf-8")
        if compress:
            (directory / rel).write_bytes(gzip.compress(data, compresslevel=6, mtime=0))
        else:
            (directory / rel).write_bytes(data)
        files.append({"path": rel, "graphs": len(part), "sha256": hashlib.sha256(data).hexdigest()})
    manifest: dict[str, Any] = {"format": POOL_FORMAT, "version": POOL_FORMAT_VERSION,
                                "name": name or directory.name, "graphs": len(items),
                                "content_hash": content_hash(items), "files": files}
    if level is not None:
        manifest["level"] = level
    path = directory / MANIFEST
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return path


def _as_pool_graphs(graphs: Iterable[PoolGraph | nx.Graph]) -> list[PoolGraph]:
    out: list[PoolGraph] = []
    for i, g in enumerate(graphs):
        if isinstance(g, PoolGraph):
            out.append(g)
            continue
        if not isinstance(g, nx.Graph) or g.is_multigraph():
            raise TypeError(f"pool graph {i}: need nx.Graph/nx.DiGraph or PoolGraph, got "
                            f"{type(g).__name__}")
        h: nx.Graph = nx.DiGraph() if g.is_directed() else nx.Graph()
        h.add_nodes_from(str(v) for v in g)
        h.add_edges_from((str(u), str(v)) for u, v in g.edges())
        gid = g.graph.get("id")
        out.append(PoolGraph(str(gid) if gid is not None else f"g{i:05d}", h,
                             g.graph.get("domain"), g.graph.get("subgroup")))
    ids = [pg.id for pg in out]
    if len(set(ids)) != len(ids):
        raise PoolError("pool graph ids must be unique")
    return out


# -- the pool -------------------------------------------------------------------------------------

def match_key(constraints: Iterable[Constraint], domain: str | None = None) -> tuple[str, ...]:
    """The canonical key of a constraint set: sorted canonical forms of its checkable
    constraints (metadata keys skipped), plus ``domain=<d>`` when a domain filter applies."""
    key = sorted({c.canonical for c in constraints if is_checkable(c)})
    if domain is not None:
        key.append(f"domain={domain}")
    return tuple(key)


def instruction_domain(instruction: Instruction) -> str | None:
    """The instruction's domain (``domain`` field, else an explicit ``domain=`` constraint)."""
    if instruction.domain is not None:
        return instruction.domain
    c = instruction.first("domain")
    return str(c.value) if c is not None else None


@dataclass(frozen=True)
class PoolMatch:
    """The pool graphs matching one constraint set (indices ascending, into ``pool.graphs``)."""

    pool: Pool = field(repr=False, compare=False)
    key: tuple[str, ...]
    indices: tuple[int, ...]

    @property
    def count(self) -> int:
        return len(self.indices)

    @property
    def graphs(self) -> tuple[PoolGraph, ...]:
        return tuple(self.pool.graphs[i] for i in self.indices)

    def reference_set(self) -> mmd.ReferenceSet:
        """The MMD reference set of this subset (statistics computed once, then cached)."""
        return self.pool.reference_set(self)


class Pool:
    """An immutable pool of graphs with cached features, facts and constraint matches.

    Build with :meth:`load` (a pool directory) or :meth:`from_graphs` (in memory).  With a
    ``cache_dir``, features, per-graph facts, matches and reference statistics are persisted
    there (see the module docstring); without one they are cached for the object's lifetime.
    Thread-safe.
    """

    def __init__(self, graphs: Sequence[PoolGraph], *, name: str = "pool",
                 digest: str | None = None, cache_dir: str | Path | None = None) -> None:
        self.graphs: tuple[PoolGraph, ...] = tuple(graphs)
        self.name = name
        self.content_hash = digest or content_hash(self.graphs)
        self.cache_path: Path | None = (
            Path(cache_dir) / f"pool-{self.content_hash[:24]}-{_FINGERPRINT[:12]}"
            if cache_dir is not None else None)
        self._lock = threading.RLock()
        self._dirty = False
        self._facts_dirty = False
        self._last_flush = time.monotonic()
        self._facts: dict[int, GraphFacts] = {}
        self._persisted: dict[str, list[Any]] = {}
        self._matches: dict[tuple[str, ...], tuple[int, ...]] = {}
        self._stats: dict[tuple[str, ...], mmd.ReferenceStats] = {}
        self._features: mmd.FeatureTable | None = None
        self._group_cache: dict[str, dict[object, np.ndarray]] = {}
        #: counters, for tests and benchmarks: features computed, constraint checks made
        self.computed = {"features": 0, "checks": 0, "matches": 0, "stats": 0}
        self._load_cache()
        if self.cache_path is not None:
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
        return cls(_as_pool_graphs(graphs), name=name, cache_dir=cache_dir)

    @classmethod
    def load(cls, directory: str | Path, *, cache_dir: str | Path | None = None) -> Pool:
        """Read and verify a pool directory (see the module docstring).

        Raises:
            PoolError: missing/malformed manifest, a shard that is missing, unlisted, unreadable
                or malformed, or a count or hash that does not match the manifest.
        """
        directory = Path(directory)
        manifest = _read_manifest(directory)
        listed = {f["path"] for f in manifest["files"]}
        for p in sorted(directory.iterdir()):
            if p.name.endswith((".jsonl", ".jsonl.gz")) and p.name not in listed:
                raise PoolError(f"{p}: a shard not listed in {MANIFEST}")
        graphs: list[PoolGraph] = []
        for entry in manifest["files"]:
            rel = entry["path"]
            path = directory / rel
            if not path.is_file():
                raise PoolError(f"{path}: listed in {MANIFEST} but missing")
            part, digest = _read_shard(path, str(path))
            if len(part) != entry["graphs"]:
                raise PoolError(f"{path}: {len(part)} graphs, manifest says {entry['graphs']}")
            if digest != entry["sha256"]:
                raise PoolError(f"{path}: sha256 {digest} does not match the manifest")
            graphs.extend(part)
        if len(graphs) != manifest["graphs"]:
            raise PoolError(f"{directory}: {len(graphs)} graphs, manifest says "
                            f"{manifest['graphs']}")
        ids = [g.id for g in graphs]
        if len(set(ids)) != len(ids):
            raise PoolError(f"{directory}: graph ids must be unique across the pool")
        digest = content_hash(graphs)
        if digest != manifest["content_hash"]:
            raise PoolError(f"{directory}: content hash {digest} does not match the manifest")
        return cls(graphs, name=str(manifest.get("name") or directory.name), digest=digest,
                   cache_dir=cache_dir)

    # -- features -----------------------------------------------------------------------------

    @property
    def features(self) -> mmd.FeatureTable:
        """D1 features of every pool graph (computed once per pool; persisted)."""
        with self._lock:
            if self._features is None:
                self._features = self._read_features()
                if self._features is None:
                    feats = [mmd.graph_features(pg.graph) for pg in self.graphs]
                    self.computed["features"] += len(feats)
                    self._features = mmd.FeatureTable.of_features(feats)
                    self._write_features(self._features)
            return self._features

    # -- matching -----------------------------------------------------------------------------

    def facts(self, index: int) -> GraphFacts:
        """The (shared, cached) :class:`GraphFacts` of pool graph ``index``, seeded with the
        persisted properties."""
        with self._lock:
            f = self._facts.get(index)
            if f is None:
                f = GraphFacts(self.graphs[index].graph)
                for name, values in self._persisted.items():
                    if values[index] is not None:
                        f.__dict__[name] = _decode_fact(name, values[index])
                self._facts[index] = f
            return f

    def match(self, constraints: Iterable[Constraint], domain: str | None = None) -> PoolMatch:
        """The pool graphs satisfying every checkable constraint (and of ``domain`` if given).

        Cached per :func:`match_key`; the result equals re-checking every pool graph with
        ``check_constraint`` (constraints are merely tried cheapest first).
        """
        cs = [c for c in constraints if is_checkable(c)]
        key = match_key(cs, domain)
        with self._lock:
            hit = self._matches.get(key)
            if hit is None:
                hit = self._compute_match(cs, domain)
                self._matches[key] = hit
                self.computed["matches"] += 1
                self._changed()
            return PoolMatch(self, key, hit)

    def match_instruction(self, instruction: Instruction) -> PoolMatch:
        """:meth:`match` on the instruction's explicit constraints and its domain."""
        return self.match(instruction.explicit, instruction_domain(instruction))

    def _compute_match(self, cs: Sequence[Constraint], domain: str | None) -> tuple[int, ...]:
        mask = np.ones(len(self.graphs), dtype=bool)
        if domain is not None:
            mask &= np.array([pg.domain == domain for pg in self.graphs], dtype=bool)
        for c in cs:
            if c.key in _PREFILTER:
                mask &= self._prefilter_mask(c)
        ordered = sorted(cs, key=lambda c: (_KEY_COST.get(c.key, len(_KEY_COST) // 2),
                                            c.canonical))
        out = []
        for i in np.flatnonzero(mask).tolist():
            facts = self.facts(i)
            ok = True
            for c in ordered:
                self.computed["checks"] += 1
                if not check_constraint(c, facts, Source.EXPLICIT).satisfied:
                    ok = False
                    break
            if ok:
                out.append(i)
            self._remember_facts(i, facts)
        return tuple(out)

    def _prefilter_mask(self, c: Constraint) -> np.ndarray:
        """Pool graphs that can pass ``c``, whose verdict depends on one cheap number only
        (node count, edge count, directedness): ``check_constraint`` is evaluated once per
        distinct value, on the first pool graph having it — the same check, shared."""
        groups = self._groups(c.key)
        mask = np.zeros(len(self.graphs), dtype=bool)
        for members in groups.values():
            self.computed["checks"] += 1
            if check_constraint(c, self.facts(int(members[0])), Source.EXPLICIT).satisfied:
                mask[members] = True
        return mask

    def _groups(self, key: str) -> Mapping[object, np.ndarray]:
        groups = self._group_cache.get(key)
        if groups is None:
            prop = _PREFILTER[key]
            acc: dict[object, list[int]] = {}
            for i, pg in enumerate(self.graphs):
                acc.setdefault(prop(pg.graph), []).append(i)
            groups = {v: np.array(ix, dtype=np.intp) for v, ix in acc.items()}
            self._group_cache[key] = groups
        return groups

    def _remember_facts(self, index: int, facts: GraphFacts) -> None:
        for name in PERSISTED_FACTS:
            if name in facts.__dict__:
                values = self._persisted.setdefault(name, [None] * len(self.graphs))
                if values[index] is None:
                    values[index] = _encode_fact(facts.__dict__[name])
                    self._facts_dirty = True

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
        if self.cache_path is None:
            return
        facts = _read_json(self.cache_path / "facts.json")
        if facts and facts.get("graphs") == len(self.graphs):
            for name, values in facts.get("values", {}).items():
                if name in PERSISTED_FACTS and len(values) == len(self.graphs):
                    self._persisted[name] = values
        matches = _read_json(self.cache_path / "matches.json") or {}
        for raw, entry in matches.get("matches", {}).items():
            key = tuple(json.loads(raw))
            self._matches[key] = tuple(entry["indices"])
            if "stats" in entry:
                self._stats[key] = mmd.ReferenceStats.from_json(entry["stats"])

    def flush(self) -> None:
        """Write new matches, reference statistics and graph facts to the disk cache now.

        Called automatically at most every :data:`FLUSH_INTERVAL_S` seconds while matching,
        and at interpreter exit; call it at the end of a session to be sure.
        """
        with self._lock:
            if self.cache_path is None or not (self._dirty or self._facts_dirty):
                return
            self._save_cache()
            self._dirty = self._facts_dirty = False
            self._last_flush = time.monotonic()

    def _changed(self) -> None:
        self._dirty = True
        if time.monotonic() - self._last_flush >= FLUSH_INTERVAL_S:
            self.flush()

    def _save_cache(self) -> None:
        assert self.cache_path is not None
        self.cache_path.mkdir(parents=True, exist_ok=True)
        # merge with what other processes may have written meanwhile (best effort)
        on_disk = _read_json(self.cache_path / "matches.json") or {}
        merged: dict[str, Any] = dict(on_disk.get("matches", {}))
        for key, indices in self._matches.items():
            entry: dict[str, Any] = {"indices": list(indices)}
            if key in self._stats:
                entry["stats"] = self._stats[key].to_json()
            raw = json.dumps(list(key))
            if "stats" in entry or raw not in merged:
                merged[raw] = entry
        _write_json(self.cache_path / "matches.json", {"matches": merged})
        if not self._facts_dirty:
            return
        facts_disk = _read_json(self.cache_path / "facts.json") or {}
        values: dict[str, list[Any]] = {}
        if facts_disk.get("graphs") == len(self.graphs):
            values = {k: v for k, v in facts_disk.get("values", {}).items()
                      if k in PERSISTED_FACTS and len(v) == len(self.graphs)}
        for name, mine in self._persisted.items():
            theirs = values.get(name, [None] * len(self.graphs))
            values[name] = [a if a is not None else b for a, b in zip(mine, theirs, strict=True)]
        _write_json(self.cache_path / "facts.json", {"graphs": len(self.graphs), "values": values})

    def _read_features(self) -> mmd.FeatureTable | None:
        if self.cache_path is None:
            return None
        path = self.cache_path / "features.npz"
        try:
            with np.load(path, allow_pickle=False) as data:
                blocks = {f: mmd.FeatureBlock.from_matrix(data[f"hist_{f}"], data[f"valid_{f}"])
                          for f in mmd.FEATURES}
        except (OSError, KeyError, ValueError):
            return None
        if any(len(b) != len(self.graphs) for b in blocks.values()):
            return None
        return mmd.FeatureTable(MappingProxyType(blocks))

    def _write_features(self, table: mmd.FeatureTable) -> None:
        if self.cache_path is None:
            return
        self.cache_path.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, np.ndarray] = {}
        for f, b in table.blocks.items():
            arrays[f"hist_{f}"] = b.hist
            arrays[f"valid_{f}"] = b.valid
        with _atomic(self.cache_path / "features.npz") as tmp, open(tmp, "wb") as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]


def _flush_at_exit(ref: weakref.ref[Pool]) -> None:
    pool = ref()
    if pool is not None:
        with contextlib.suppress(OSError):
            pool.flush()


def _encode_fact(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _decode_fact(name: str, value: Any) -> Any:
    return tuple(value) if name == "_distance_stats" else value


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@contextlib.contextmanager
def _atomic(path: Path) -> Iterator[Path]:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; the cache may be shared between users
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    with _atomic(path) as tmp:
        tmp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")


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
