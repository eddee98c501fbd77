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

Bounded: ``N`` is at most :data:`MAX_SHARDS`, checked when the option is read (before anything is
allocated), and at most the number of instructions the run selects (:func:`check_selection`,
once the suite is read); the table of :func:`assign` holds the instructions' shards only, so its
size never depends on ``N``.
"""

from __future__ import annotations

import hashlib
import heapq
import re
from collections.abc import Mapping
from dataclasses import dataclass

from pytest_graphinstruct.errors import GraphInstructError

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*\Z")

#: The most shards a run may be split into (far more than any job runner starts; a larger N
#: could only leave shards empty, see :func:`check_selection`).
MAX_SHARDS = 100_000


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
        GraphInstructError: not ``K/N`` with ``1 <= K <= N <= MAX_SHARDS`` (decided from the
            digits' length first, so an absurd ``N`` costs nothing).
    """
    m = _SPEC.match(text)
    if m is None:
        raise GraphInstructError(f"--gi-shard must be K/N (e.g. 1/4), got {text!r}")
    digits = m.group(2).lstrip("0") or "0"
    if len(digits) > len(str(MAX_SHARDS)) or int(digits) > MAX_SHARDS:
        shown = digits if len(digits) <= 30 else f"a {len(digits)}-digit number"
        raise GraphInstructError(f"--gi-shard: N may be at most {MAX_SHARDS:,} (and at most the "
                                 f"number of instructions the run selects), got {shown}")
    index = m.group(1).lstrip("0") or "0"
    if len(index) > len(digits):  # K > N, without converting a huge K
        raise GraphInstructError(f"--gi-shard={index[:30]}/{digits}: K must be between 1 "
                                 "and N")
    return Shard(int(index), int(digits))


def _hash(instruction_id: str) -> int:
    return int.from_bytes(hashlib.sha256(instruction_id.encode("utf-8")).digest()[:8], "big")


def assign(levels: Mapping[str, int], count: int) -> dict[str, int]:
    """The shard (1-based) of every instruction id in ``levels`` (id → level) for ``count``
    shards; see the module docstring for the rule.  Time is O(instructions × log), memory
    O(instructions), whatever ``count`` is."""
    out: dict[str, int] = {}
    by_level: dict[int, list[str]] = {}
    for iid, level in levels.items():
        by_level.setdefault(level, []).append(iid)
    for ids in by_level.values():
        shards: dict[int, list[str]] = {}  # only the shards that hold one of the level's ids
        for iid in ids:
            shards.setdefault(_hash(iid) % count + 1, []).append(iid)
        if len(ids) >= count:  # count <= len(ids): O(instructions x log) in all
            # each shard's ids sorted so that the one a donor gives (smallest hash) is last;
            # the largest shard (smallest index among equals) is the top of a lazy heap
            for members in shards.values():
                members.sort(key=lambda i: (_hash(i), i), reverse=True)
            heap = [(-len(members), k) for k, members in shards.items()]
            heapq.heapify(heap)
            for empty in range(1, count + 1):
                if shards.get(empty):
                    continue
                # an empty shard never donates: the level has ids and a shard with two or more
                while True:
                    size, donor = heapq.heappop(heap)
                    if -size == len(shards[donor]):  # else a stale entry
                        break
                shards[empty] = [shards[donor].pop()]
                heapq.heappush(heap, (-len(shards[donor]), donor))
                heapq.heappush(heap, (-1, empty))
        for k, members in shards.items():
            for iid in members:
                out[iid] = k
    return out


def select(levels: Mapping[str, int], shard: Shard) -> set[str]:
    """The instruction ids of ``levels`` (id → level) that ``shard`` runs."""
    return {iid for iid, k in assign(levels, shard.count).items() if k == shard.index}



def check_selection(levels: Mapping[str, int], shard: Shard) -> None:
    """Refuse a shard count the run's instructions cannot fill, before any work.

    ``levels`` (id → level) are the instructions the run selects before sharding (the suite
    cut by ``--gi-levels`` and ``--gi-per-level``, and to the recorded answers).

    Raises:
        GraphInstructError: ``N`` is larger than the number of those instructions (some shards
            would be empty), or shard ``K`` holds none of them (a level smaller than ``N`` is
            placed by hashing alone); the one line names the counts.
    """
    total = len(levels)
    what = f"{total} instruction{'s' if total != 1 else ''}"
    if shard.count > total:
        raise GraphInstructError(
            f"--gi-shard={shard}: {shard.count} shards of the {what} this run selects would "
            f"leave shards empty; N may be at most {total}")
    if not select(levels, shard):
        raise GraphInstructError(
            f"--gi-shard={shard}: shard {shard.index} of {shard.count} shards holds none of the "
            f"{what} this run selects (small levels are placed by hashing); use fewer shards")
