"""Put shard runs back together: ``merge REPORT... --out FILE`` and ``merge-cache``.

A merged report is rebuilt from the shards' items through the same aggregation as any run
(:func:`~pytest_graphinstruct.run.aggregate.build_run_report`), so it equals the unsharded run's
report — same items, same scores, same summary — up to the run record (times, machine).

Rules (each broken rule is a one-line :class:`GraphInstructError`):

* the inputs are our reports; sharded ones (``--gi-shard``) must agree on the shard count and on
  the unsharded selection, and no shard may come twice;
* a cell's metadata (model, strategy, method, samples, pass rule) must agree across inputs; an
  item (cell, instruction) may come from one input only;
* every input must have run on the same suite (``run.suite_hash``, where known).

A shard that is missing, or an input that is partial, makes the merged report partial: its
coverage names the missing shards and the items without a result (``ID[cell]``), and a partial
report fails every gate.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.models.cache import CACHE_FILE, AnswerCache
from pytest_graphinstruct.run.aggregate import build_run_report
from pytest_graphinstruct.run.results import (
    CacheUse,
    CellMetadata,
    Coverage,
    ItemResult,
    RunInfo,
    RunReport,
    ShardSelection,
)
from pytest_graphinstruct.run.shard import assign
from pytest_graphinstruct.vocab import natural_key

# metadata that must agree for two inputs' cells to be one cell
_SAME = ("model", "strategy", "method", "samples_per_instruction", "pass_rule")


@dataclass(frozen=True)
class Merged:
    """The merged report, which shards were present and missing, and notes for the user."""

    report: RunReport
    shard_count: int | None
    present: tuple[int, ...]
    missing: tuple[int, ...]
    notes: tuple[str, ...] = ()


def merge_reports(inputs: Sequence[tuple[str, RunReport]]) -> Merged:
    """Merge ``(name, report)`` pairs (names are for messages) into one report.

    Raises:
        GraphInstructError: the inputs cannot be one run (see the module docstring).
    """
    if not inputs:
        raise GraphInstructError("merge needs at least one report")
    shards = [(name, r.run.filter.shard if r.run else None) for name, r in inputs]
    sharded = [(name, s) for name, s in shards if s is not None]
    count, universe = _shard_plan(sharded, len(inputs))
    _same_suite(inputs)
    metas: dict[str, tuple[str, CellMetadata]] = {}
    items: dict[str, dict[str, tuple[str, ItemResult]]] = {}
    for name, report in inputs:
        for cell in report.cells:
            seen = metas.setdefault(cell.label, (name, cell.metadata))
            for attr in _SAME:
                a, b = getattr(seen[1], attr), getattr(cell.metadata, attr)
                if a != b:
                    raise GraphInstructError(
                        f"cell {cell.label}: {attr} is {a!r} in {seen[0]} but {b!r} in {name}")
            bucket = items.setdefault(cell.label, {})
            for item in cell.per_instruction:
                other = bucket.get(item.instruction_id)
                if other is not None:
                    raise GraphInstructError(
                        f"{item.instruction_id}[{cell.label}] is in both {other[0]} and {name} "
                        "(shards must not overlap)")
                bucket[item.instruction_id] = (name, item)
    order = _suite_order(universe, items)
    present = tuple(sorted(s.index for _, s in sharded))
    missing = (tuple(k for k in range(1, count + 1) if k not in present)
               if count is not None else ())
    coverage = _coverage(inputs, items, universe, count, missing)
    cells = [(meta, [item for _, item in items[label].values()])
             for label, (_, meta) in metas.items()]
    report = build_run_report(cells, suite_order=order, coverage=coverage)
    report = replace(report, run=_run_info(inputs, sum(len(b) for b in items.values())))
    notes = []
    if missing:
        notes.append(f"shard(s) {', '.join(f'{k}/{count}' for k in missing)} missing: "
                     f"{coverage.missing_count} item(s) have no result; the report is partial")
    return Merged(report, count, present, missing, tuple(notes))


def _shard_plan(sharded: Sequence[tuple[str, ShardSelection]],
                inputs: int) -> tuple[int | None, tuple[tuple[str, int], ...]]:
    """The shard count and the unsharded selection all sharded inputs agree on."""
    if not sharded:
        return None, ()
    if len(sharded) != inputs:
        plain = inputs - len(sharded)
        raise GraphInstructError(f"{plain} of the reports are not shards (--gi-shard) and "
                                 f"{len(sharded)} are: merge shards of one run only")
    first_name, first = sharded[0]
    seen: dict[int, str] = {}
    for name, s in sharded:
        if s.count != first.count:
            raise GraphInstructError(f"{name} is shard {s.index}/{s.count} but {first_name} is "
                                     f"{first.index}/{first.count}: not the same sharding")
        if s.universe != first.universe:
            raise GraphInstructError(f"{name} and {first_name} were sharded from different "
                                     "selections (suite, levels or per-level differ)")
        if s.index in seen:
            raise GraphInstructError(f"shard {s.index}/{s.count} comes twice ({seen[s.index]} "
                                     f"and {name})")
        seen[s.index] = name
    return first.count, first.universe


def _same_suite(inputs: Sequence[tuple[str, RunReport]]) -> None:
    hashes = {(r.run.suite_hash if r.run else None) for _, r in inputs} - {None}
    if len(hashes) > 1:
        raise GraphInstructError("the reports ran on different suites (suite hashes "
                                 f"{', '.join(sorted(h for h in hashes if h))})")


def _suite_order(universe: Sequence[tuple[str, int]],
                 items: dict[str, dict[str, tuple[str, ItemResult]]]) -> dict[str, int]:
    """Instruction id → position: the unsharded selection's order, else level then id."""
    if universe:
        return {iid: n for n, (iid, _) in enumerate(universe)}
    known = {iid: item.level for bucket in items.values() for iid, (_, item) in bucket.items()}
    ranked = sorted(known, key=lambda i: (known[i], natural_key(i)))
    return {iid: n for n, iid in enumerate(ranked)}


def _coverage(inputs: Sequence[tuple[str, RunReport]],
              items: dict[str, dict[str, tuple[str, ItemResult]]],
              universe: Sequence[tuple[str, int]], count: int | None,
              missing: Sequence[int]) -> Coverage:
    reasons = [f"{name}: {r.coverage.describe().removeprefix('partial: ')}"
               for name, r in inputs if not r.coverage.complete]
    absent: list[str] = []
    if missing and count is not None:
        plan = assign(dict(universe), count)
        lost = [iid for iid, _ in universe if plan[iid] in set(missing)]
        absent = [f"{iid}[{label}]" for label in items for iid in lost]
        reasons.insert(0, f"shard(s) {', '.join(f'{k}/{count}' for k in missing)} missing")
    selected = sum(len(b) for b in items.values()) + len(absent)
    for _, r in inputs:
        absent += list(r.coverage.missing)
    if not reasons:
        return Coverage(selected=selected)
    return Coverage.partial("; ".join(reasons), selected=selected, missing=absent)


def _run_info(inputs: Sequence[tuple[str, RunReport]], selected: int) -> RunInfo | None:
    """The merged run's record: the first shard's, spanning every shard's time, with the
    cache counts summed and no shard in its filter."""
    runs = [r.run for _, r in inputs if r.run is not None]
    if not runs:
        return None
    first = runs[0]
    started = [x.started for x in runs if x.started]
    finished = [x.finished for x in runs if x.finished]
    cache: dict[str, CacheUse] = {}
    for x in runs:
        for label, use in x.cache.items():
            have = cache.get(label, CacheUse(0, 0))
            cache[label] = CacheUse(have.cached + use.cached, have.samples + use.samples)
    endpoints = {k: v for x in runs for k, v in x.endpoints.items()}
    flt = replace(first.filter, shard=None, selected=selected)
    return replace(first, started=min(started) if started else None,
                   finished=max(finished) if finished else None, endpoints=endpoints,
                   filter=flt, cache=cache)


@dataclass(frozen=True)
class CacheMerge:
    """``merge-cache``: answers added from each source, and the sources' damaged lines."""

    added: tuple[tuple[str, int], ...]
    damaged: tuple[str, ...]
    total: int


def merge_caches(sources: Sequence[str | os.PathLike[str]],
                 out: str | os.PathLike[str]) -> CacheMerge:
    """Merge the answer caches in ``sources`` (directories holding ``answers.jsonl``) into
    the cache at ``out`` (created when missing; answers it already holds are kept).

    Raises:
        GraphInstructError: a source is not a cache, or the target cannot be written.
    """
    import warnings

    from pytest_graphinstruct.errors import ModelError
    from pytest_graphinstruct.models.cache import CacheWarning

    if not sources:
        raise GraphInstructError("merge-cache needs at least one cache directory")
    added, damaged = [], []
    try:
        with warnings.catch_warnings():  # damaged lines are counted in the result instead
            warnings.simplefilter("ignore", CacheWarning)
            target = AnswerCache(out)
            for src in sources:
                if not (Path(src) / CACHE_FILE).is_file():
                    raise GraphInstructError(f"no answer cache at {src} (no {CACHE_FILE})")
                if Path(src).resolve() == Path(out).resolve():
                    continue
                source = AnswerCache(src)
                added.append((str(src), target.merge_from(source)))
                summary = source.damage_summary()
                if summary:
                    damaged.append(summary)
            return CacheMerge(tuple(added), tuple(damaged), len(target))
    except ModelError as exc:
        raise GraphInstructError(str(exc)) from None
