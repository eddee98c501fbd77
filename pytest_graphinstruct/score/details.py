"""The record of how an item's dimensions were computed (an item result's ``details``).

Its own module, with nothing heavy imported: the run's result records
(``run/records/results.py``) hold it, and every process of a run loads those records before it
scores anything (an xdist controller never scores at all); the scoring machinery
(``score/instruction_score.py``) imports scipy, networkx and the pools.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ScoreDetails:
    """How an item's dimensions were computed, as its report keeps them (``details``).

    ``pool_references`` names the pool graphs that were D3 and L4 domain-fit yardsticks
    (``None``: no pool graph matched, or the run had no pools); ``d1``, ``d2``, ``d3`` and
    ``caap`` (a CAAP cell's decision for the item) are diagnostics for people, shown and
    compared whole (``None``: not computed).  Only the keys that are set are written."""

    pool_references: tuple[str, ...] | None = field(default=None, metadata={"omit_none": True})
    d1: Mapping[str, Any] | None = field(default=None, metadata={"omit_none": True})
    d2: Mapping[str, Any] | None = field(default=None, metadata={"omit_none": True})
    d3: Mapping[str, Any] | None = field(default=None, metadata={"omit_none": True})
    caap: Mapping[str, Any] | None = field(default=None, metadata={"omit_none": True})
