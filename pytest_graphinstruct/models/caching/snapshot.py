"""Which model served an answer: the snapshot an endpoint names, and what the cache held.

A provider serves a model name (``gpt-4o``) from a dated snapshot that changes under it (a
redeploy); OpenAI's response names it in its ``model`` field (``gpt-4o-2024-08-06``) and in
``system_fingerprint`` (the backend configuration, ``fp_…``).  :class:`Snapshot` is that pair,
as one response said it.

* The **snapshot** is the response's ``model`` field; it decides whether a cached answer is
  *stale* (:func:`is_stale`): cached from a known snapshot other than the one served now.
  An endpoint that echoes the requested name (vLLM, llama.cpp, the test server) serves the
  name itself as its snapshot.
* The **fingerprint** is recorded and shown, never compared: OpenAI changes it with
  infrastructure changes, and several may be served at once for one snapshot, so comparing it
  would throw the cache away for nothing.
* A snapshot that is not known (an endpoint that says nothing, answers cached before snapshots
  were recorded) is never stale: nothing is known against it, so it is reused as before.

:class:`CacheSource` is what a run took from the cache: the snapshots of the reused answers and
when the oldest of them was cached.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_graphinstruct.escaping import escape

MAX_SNAPSHOT_CHARS = 200
"""The longest snapshot or fingerprint kept (a longer one is cut: it is a name, not data)."""


def _name(value: Any) -> str | None:
    """A response's name field as one short line, escaped like every text from outside
    (:func:`~pytest_graphinstruct.escaping.escape`: ``ESC`` becomes ``\\x1b``; it is shown on
    terminals), or ``None`` when absent, empty or not a string."""
    if not isinstance(value, str):
        return None
    return escape(" ".join(value.split()))[:MAX_SNAPSHOT_CHARS] or None


@dataclass(frozen=True)
class Snapshot:
    """What a response said served it: ``model`` (the snapshot) and ``fingerprint``."""

    model: str | None = None
    fingerprint: str | None = None

    @property
    def known(self) -> bool:
        return self.model is not None

    def describe(self) -> str:
        """``gpt-4o-2024-08-06 (fp_44709d6fcb)``, ``unknown snapshot`` when none was named."""
        if self.model is None:
            return "unknown snapshot"
        return self.model + (f" ({self.fingerprint})" if self.fingerprint else "")

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Snapshot:
        data = data or {}
        return cls(_name(data.get("model")), _name(data.get("fingerprint")))


def snapshot_of(completion: Any) -> Snapshot:
    """The snapshot a chat completion (the ``openai`` client's object) names; fields that are
    absent or not strings are ``None``."""
    return Snapshot(_name(getattr(completion, "model", None)),
                    _name(getattr(completion, "system_fingerprint", None)))


def is_stale(cached: str | None, served: str | None) -> bool:
    """Whether an answer cached from snapshot ``cached`` is of another model than the one
    served now (``served``): both are known and differ."""
    return cached is not None and served is not None and cached != served


@dataclass(frozen=True)
class CacheSource:
    """The answers one cell took from the cache: the snapshots they were cached from
    (``None``: not recorded) and when the oldest was cached (Unix time; ``None``: not
    recorded).  Sets, not counts, so it merges across processes and calls."""

    snapshots: frozenset[str | None] = frozenset()
    oldest: float | None = None

    def add(self, snapshot: str | None, created: float | None) -> CacheSource:
        oldest = self.oldest if created is None else (
            created if self.oldest is None else min(self.oldest, created))
        return CacheSource(self.snapshots | {snapshot}, oldest)

    def merge(self, other: CacheSource) -> CacheSource:
        oldest = [t for t in (self.oldest, other.oldest) if t is not None]
        return CacheSource(self.snapshots | other.snapshots, min(oldest) if oldest else None)


def sorted_snapshots(snapshots: Iterable[str | None]) -> list[str | None]:
    """Known snapshots in name order, then ``None`` (not recorded) when present."""
    found = set(snapshots)
    return [*sorted(s for s in found if s is not None), *([None] if None in found else [])]


def merge_sources(*groups: Mapping[str, CacheSource]) -> dict[str, CacheSource]:
    """Per cell label, the union of every group's sources."""
    out: dict[str, CacheSource] = {}
    for group in groups:
        for cell, source in group.items():
            out[cell] = out[cell].merge(source) if cell in out else source
    return out
