"""A scheduler's view of the answer cache: which cached answers it reuses (the stale rule of
:mod:`.snapshot`), and which earlier-run answers it reused and for which cells
(:meth:`.Scheduler.cache_sources`)."""

from __future__ import annotations

import threading
from dataclasses import replace

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.caching.cache import AnswerCache
from pytest_graphinstruct.models.caching.entries import CacheEntry
from pytest_graphinstruct.models.caching.snapshot import CacheSource, is_stale
from pytest_graphinstruct.models.scheduling.request_stats import RequestStats


class CacheView:
    """The answer cache as one scheduler uses it (``cache=None``: no cache; nothing is
    reused).

    Args:
        cache: the answer cache (``None`` when the backend is not cacheable).
        snapshot: the snapshot the endpoint serves now (``None``: not known); cached answers
            of another snapshot are stale.
        reuse_stale: reuse stale answers anyway.
        lock: the scheduler's lock, shared by its parts.
        stats: the scheduler's counters.
    """

    def __init__(self, cache: AnswerCache | None, *, snapshot: str | None, reuse_stale: bool,
                 lock: threading.RLock, stats: RequestStats) -> None:
        self.cache = cache
        self.snapshot = snapshot
        self.reuse_stale = reuse_stale
        self._lock = lock
        self._stats = stats
        self._from_cache: dict[str, CacheEntry] = {}  # keys answered by an earlier run's answer
        self._cells: dict[str, set[str]] = {}  # key -> the cells that asked for it
        self._stale: set[str] = set()  # keys whose cached answer was stale

    def asked_by(self, key: str, cell: str) -> None:
        """Remember that ``cell`` asked for ``key`` (for :meth:`sources`)."""
        if self.cache is not None:
            with self._lock:
                self._cells.setdefault(key, set()).add(cell)

    def usable(self, entry: CacheEntry) -> bool:
        """Whether a cached entry may answer: not stale, or stale ones are reused."""
        return self.reuse_stale or not is_stale(entry.snapshot, self.snapshot)

    def cached(self, key: str) -> bool:
        """Whether the cache holds an answer for ``key`` that this scheduler would reuse."""
        entry = self.cache.lookup(key, self.usable) if self.cache is not None else None
        return entry is not None and self.usable(entry)

    def hit(self, key: str, entry: CacheEntry | None = None) -> Answer | None:
        """The cached answer for ``key`` (or of ``entry``, looked up already) when one may be
        reused (counted), else ``None`` (a stale one is counted as skipped)."""
        if self.cache is None:
            return None
        entry = entry if entry is not None else self.cache.lookup(key, self.usable)
        if entry is None:
            return None
        stale = is_stale(entry.snapshot, self.snapshot)
        earlier = self.cache.earlier(entry)
        with self._lock:
            if stale and not self.reuse_stale:
                if key not in self._stale:  # looked up again right before issuing
                    self._stale.add(key)
                    self._stats.add("stale_skipped")
                return None
            self._stats.add("cache_hits")
            if stale:
                self._stats.add("stale_reused")
            if earlier:
                self._from_cache.setdefault(key, entry)
        return replace(entry.answer, cached=earlier)

    def earlier_keys(self) -> frozenset[str]:
        """The keys whose answer an earlier run's answer cache served in this process (each
        once, however often it was asked)."""
        with self._lock:
            return frozenset(self._from_cache)

    def sources(self) -> dict[str, CacheSource]:
        """Per cell label: the snapshots of the answers reused from an earlier run's cache
        and when the oldest was cached (cells that reused none are absent)."""
        out: dict[str, CacheSource] = {}
        with self._lock:
            for key, entry in self._from_cache.items():
                for cell in self._cells.get(key, ()):
                    out[cell] = out.get(cell, CacheSource()).add(entry.snapshot, entry.created)
        return out
