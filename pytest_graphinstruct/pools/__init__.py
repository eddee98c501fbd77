"""Reference pools: the pool file format, matching instructions to pool graphs, and the
feature cache.

Modules, each importing only the ones above it in this list:

* :mod:`~pytest_graphinstruct.pools.format` — :class:`PoolGraph`, the on-disk format (shards,
  manifest), :func:`content_hash`, :func:`write_pool`, :class:`PoolError`;
* :mod:`~pytest_graphinstruct.pools.cache` — the on-disk feature/fact/match cache
  (:func:`default_cache_dir`, atomic writes, code fingerprints);
* :mod:`~pytest_graphinstruct.pools.matching` — :func:`match_key`, :func:`instruction_domain`,
  :class:`PoolMatch` and the matcher deciding a constraint set's pool subset;
* :mod:`~pytest_graphinstruct.pools.reference` — :class:`Pool` and :class:`ReferencePools`.
"""

from __future__ import annotations

from pytest_graphinstruct.pools.cache import default_cache_dir
from pytest_graphinstruct.pools.format import PoolError, PoolGraph, content_hash, write_pool
from pytest_graphinstruct.pools.matching import PoolMatch, instruction_domain, match_key
from pytest_graphinstruct.pools.reference import Pool, ReferencePools

__all__ = [
    "Pool",
    "PoolError",
    "PoolGraph",
    "PoolMatch",
    "ReferencePools",
    "content_hash",
    "default_cache_dir",
    "instruction_domain",
    "match_key",
    "write_pool",
]
