"""Which instructions a shard runs (``--gi-shard=K/N``): deterministic, level-stratified, stable.

An instruction's shard is ``sha256(id) mod N`` — it depends on the id alone, so it is the same on
every machine, in every process and whatever else the suite holds: when the suite grows, the
instructions already there keep their shards (only the new ones are placed).  All cells of one
instruction run in the same shard (their answers share a cache entry's neighbourhood, and
comparisons pair them).

Stratified: every level with at least N selected instructions has some in every shard.  Hashing
alone leaves a shard without a level now and then when a level is small (8 instructions over 4
shards: about one run in three); then, deterministically, the instruction with the smallest hash
of the level's largest shard moves to the empty shard, until no shard is empty.  Only small
levels are ever repaired, so stability holds for the rest.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass

from pytest_graphinstruct.errors import GraphInstructError

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*\Z")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise GraphInstructError(f"--gi-shard={self}: K must be between 1 and N")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``"2/4"`` → ``Shard(2, 4)``.

    Raises:
        GraphInstructError: not ``K/N`` with ``1 <= K <= N``.
    """
    m = _SPEC.match(text)
    if m is None:
        raise GraphInstructError(f"--gi-shard must be K/N (e.g. 1/4), got {text!r}")
    return Shard(int(m.group(1)), int(m.group(2)))


def _hash(instruction_id: str) -> int:
    return int.from_bytes(hashlib.sha256(instruction_id.encode("utf-8")).digest()[:8], "big")


def assign(levels: Mapping[str, int], count: int) -> dict[str, int]:
    """The shard (1-based) of every instruction id in ``levels`` (id → level) for ``count``
    shards; see the module docstring for the rule."""
    out: dict[str, int] = {}
    by_level: dict[int, list[str]] = {}
    for iid, level in levels.items():
        by_level.setdefault(level, []).append(iid)
    for ids in by_level.values():
        shards: dict[int, list[str]] = {k: [] for k in range(1, count + 1)}
        for iid in ids:
            shards[_hash(iid) % count + 1].append(iid)
        if len(ids) >= count:
            for empty in range(1, count + 1):
                if shards[empty]:
                    continue
                donor = max(shards, key=lambda k: (len(shards[k]), -k))
                moved = min(shards[donor], key=lambda i: (_hash(i), i))
                shards[donor].remove(moved)
                shards[empty].append(moved)
        for k, members in shards.items():
            for iid in members:
                out[iid] = k
    return out


def select(levels: Mapping[str, int], shard: Shard) -> set[str]:
    """The instruction ids of ``levels`` (id → level) that ``shard`` runs."""
    return {iid for iid, k in assign(levels, shard.count).items() if k == shard.index}

