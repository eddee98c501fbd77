"""The on-disk cache of a pool: D1 features, per-graph facts, matches and MMD statistics.

A pool's cache lives in ``<cache_dir>/pool-<hash>-<code>/`` (:meth:`PoolCache.for_pool`) where
``<hash>`` is the pool's content hash and ``<code>`` a fingerprint (:func:`code_fingerprint`) of
the source of every module whose semantics the cached values depend on — editing any of them
starts a fresh cache, so a stale cache can never change a result.  Files are JSON and ``.npz``
(no pickles), written atomically (temporary file + rename); writers merge with what other
processes wrote meanwhile, and concurrent processes at worst recompute.  Unreadable or
inconsistent files are ignored (the values are recomputed).

Files of a pool's cache directory:

* ``features.npz`` — the D1 feature table of every pool graph;
* ``matches.json`` — ``{"matches": {json(key): {"indices": [...], "stats"?: {...}}}}``;
* ``facts.json`` — ``{"graphs": n, "values": {property: [value or null per graph]}}`` for the
  :data:`PERSISTED_FACTS`;
* ``verified.json`` — ``{"shards": [sha256, ...]}``: the shard digests of a pool directory that
  passed :func:`~pytest_graphinstruct.pools.format.read_pool`'s full verification with this
  content hash (a later read of the same bytes skips it).
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from functools import cached_property
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any

import numpy as np

from pytest_graphinstruct.kernels import mmd
from pytest_graphinstruct.verify.properties import GraphFacts

#: New matches/facts are written to the disk cache at most this often while matching (and by
#: ``Pool.flush`` / at interpreter exit).
FLUSH_INTERVAL_S = 5.0

#: GraphFacts properties persisted per pool graph (the expensive ones; all cached_property).
PERSISTED_FACTS: tuple[str, ...] = ("modularity", "clustering", "_distance_stats", "planar",
                                    "acyclic", "edge_connectivity", "density")
for _name in PERSISTED_FACTS:  # a GraphFacts refactor must fail loudly here, not go stale
    assert isinstance(inspect.getattr_static(GraphFacts, _name), cached_property), _name

#: A match key (see :func:`pytest_graphinstruct.pools.matching.match_key`).
MatchKey = tuple[str, ...]


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/pytest-graphinstruct/pools`` (``~/.cache/...`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-graphinstruct" / "pools"


def code_fingerprint(modules: Iterable[ModuleType]) -> str:
    """sha256 over the source files of ``modules``, in order."""
    h = hashlib.sha256()
    for module in modules:
        h.update(Path(inspect.getfile(module)).read_bytes())
    return h.hexdigest()


def encode_fact(value: Any) -> Any:
    """A persisted fact as JSON (tuples become lists)."""
    return list(value) if isinstance(value, tuple) else value


def decode_fact(name: str, value: Any) -> Any:
    """The inverse of :func:`encode_fact` for the fact ``name``."""
    return tuple(value) if name == "_distance_stats" else value


class PoolCache:
    """The cache directory of one pool of ``size`` graphs (created on the first write)."""

    def __init__(self, path: Path, size: int) -> None:
        self.path = path
        self.size = size

    @classmethod
    def for_pool(cls, cache_dir: str | Path, content_hash: str, fingerprint: str,
                 size: int) -> PoolCache:
        """The cache of the pool with ``content_hash`` under ``cache_dir``, for code with
        ``fingerprint``."""
        return cls(Path(cache_dir) / f"pool-{content_hash[:24]}-{fingerprint[:12]}", size)

    # -- facts and matches ------------------------------------------------------------------------

    def read_facts(self) -> dict[str, list[Any]]:
        """The persisted facts on disk, by property (lists of encoded values, ``None`` where
        not computed); empty when absent or inconsistent with the pool."""
        out: dict[str, list[Any]] = {}
        facts = _read_json(self.path / "facts.json")
        if facts and facts.get("graphs") == self.size:
            for name, values in facts.get("values", {}).items():
                if name in PERSISTED_FACTS and len(values) == self.size:
                    out[name] = values
        return out

    def read_matches(self) -> tuple[dict[MatchKey, tuple[int, ...]],
                                    dict[MatchKey, mmd.ReferenceStats]]:
        """The persisted matches (key → indices) and reference statistics (key → stats)."""
        matches: dict[MatchKey, tuple[int, ...]] = {}
        stats: dict[MatchKey, mmd.ReferenceStats] = {}
        data = _read_json(self.path / "matches.json") or {}
        for raw, entry in data.get("matches", {}).items():
            key = tuple(json.loads(raw))
            matches[key] = tuple(entry["indices"])
            if "stats" in entry:
                stats[key] = mmd.ReferenceStats.from_json(entry["stats"])
        return matches, stats

    def save_matches(self, matches: Mapping[MatchKey, tuple[int, ...]],
                     stats: Mapping[MatchKey, mmd.ReferenceStats]) -> None:
        """Write ``matches`` (with their ``stats``), merged with what is on disk (an entry with
        statistics wins over one without)."""
        self.path.mkdir(parents=True, exist_ok=True)
        # merge with what other processes may have written meanwhile (best effort)
        on_disk = _read_json(self.path / "matches.json") or {}
        merged: dict[str, Any] = dict(on_disk.get("matches", {}))
        for key, indices in matches.items():
            entry: dict[str, Any] = {"indices": list(indices)}
            if key in stats:
                entry["stats"] = stats[key].to_json()
            raw = json.dumps(list(key))
            if "stats" in entry or raw not in merged:
                merged[raw] = entry
        _write_json(self.path / "matches.json", {"matches": merged})

    def save_facts(self, persisted: Mapping[str, list[Any]]) -> None:
        """Write the persisted facts, merged value by value with what is on disk."""
        self.path.mkdir(parents=True, exist_ok=True)
        facts_disk = _read_json(self.path / "facts.json") or {}
        values: dict[str, list[Any]] = {}
        if facts_disk.get("graphs") == self.size:
            values = {k: v for k, v in facts_disk.get("values", {}).items()
                      if k in PERSISTED_FACTS and len(v) == self.size}
        for name, mine in persisted.items():
            theirs = values.get(name, [None] * self.size)
            values[name] = [a if a is not None else b for a, b in zip(mine, theirs, strict=True)]
        _write_json(self.path / "facts.json", {"graphs": self.size, "values": values})

    # -- verification -----------------------------------------------------------------------------

    def verified_shards(self) -> tuple[str, ...]:
        """The shard digests verified before (empty when none or unreadable)."""
        data = _read_json(self.path / "verified.json") or {}
        shards = data.get("shards")
        if isinstance(shards, list) and all(isinstance(d, str) for d in shards):
            return tuple(shards)
        return ()

    def save_verified(self, shards: Iterable[str]) -> None:
        """Remember that shards with these digests passed the full verification."""
        self.path.mkdir(parents=True, exist_ok=True)
        _write_json(self.path / "verified.json", {"shards": list(shards)})

    # -- features ---------------------------------------------------------------------------------

    def read_features(self) -> mmd.FeatureTable | None:
        """The persisted feature table; ``None`` when absent, unreadable or of another size."""
        path = self.path / "features.npz"
        try:
            with np.load(path, allow_pickle=False) as data:
                blocks = {f: mmd.FeatureBlock.from_matrix(data[f"hist_{f}"], data[f"valid_{f}"])
                          for f in mmd.FEATURES}
        except (OSError, KeyError, ValueError):
            return None
        if any(len(b) != self.size for b in blocks.values()):
            return None
        return mmd.FeatureTable(MappingProxyType(blocks))

    def write_features(self, table: mmd.FeatureTable) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, np.ndarray] = {}
        for f, b in table.blocks.items():
            arrays[f"hist_{f}"] = b.hist
            arrays[f"valid_{f}"] = b.valid
        with _atomic(self.path / "features.npz") as tmp, open(tmp, "wb") as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]


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
