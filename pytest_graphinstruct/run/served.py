"""What every process of a run agrees on about its models before it begins (:class:`Served`):
learned once by the preflight (:mod:`.preflight`), handed to each xdist worker.  Its own module,
with nothing heavy imported: a worker reads it before it loads anything else."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pytest_graphinstruct.models.caching.snapshot import Snapshot


@dataclass(frozen=True)
class Served:
    """What every process of a run must agree on about its models before it begins: the
    snapshot each probed model's endpoint serves now (model name → :class:`Snapshot`; a
    model not probed is absent) and the size of the answer cache when the run began
    (``cache_mark``: answers before it are an earlier run's; ``None``: no cache)."""

    snapshots: Mapping[str, Snapshot] = field(default_factory=dict)
    cache_mark: int | None = None

    def snapshot(self, model: str) -> str | None:
        """The snapshot ``model``'s endpoint serves now (``None``: not known)."""
        served = self.snapshots.get(model)
        return None if served is None else served.model

    def models(self) -> dict[str, str | None]:
        """Model → the snapshot its endpoint serves now (known ones only)."""
        return {m: s.model for m, s in self.snapshots.items() if s.model is not None}
