"""Put shard runs back together: ``merge REPORT... --out FILE`` and ``cache merge``.

A merged report is rebuilt from the shards' items through the same aggregation as any run
(:func:`~pytest_graphinstruct.run.aggregate.build_run_report`), so it equals the unsharded run's
report — same items, same scores, same summary — up to the run record (times, machine).

Inputs merge only when they are parts of one run.  Each broken rule is a one-line
:class:`GraphInstructError` (the command line's exit status 2) naming the field that differs,
both values and both files, e.g. ``cell m-zero-shot: decoding.temperature is 0.7 in
shard-1.json but 1.7 in shard-2.json: not parts of one run``:

* the inputs are our reports; sharded ones (``--gi-shard``) must all be shards, agree on the
  shard count, the unsharded selection and ``-k`` / ``-m``, hold the same cells (a shard of
  another cell is refused, not merged as an extra cell), and no shard may come twice;
* run-wide: the suite (``run.suite_hash``) and the replay file (``run.replay_sha256``; a run
  without ``--gi-replay`` counts as its own value, so a replayed shard never merges with a
  model's) must agree;
* per cell (inputs that hold the same cell label): model, strategy, method, constraint,
  samples, pass rule, decoding settings (``decoding``), method settings (``method_settings``),
  the prompt set (``prompts``: ``--gi-prompts``; a report without one used the packaged
  templates),
  the model's endpoint (``run.endpoints``; not for the embedded model, whose loopback port
  changes every run: what served it is ``model_info``), ``model_info`` and ``model_version``;
* an item (cell, instruction) may come from one input only.

A value a report does not record (``None``: written before the field existed, no run record,
or not known to the run, like a model version the endpoint never stated) cannot be told apart
from any other, so it is accepted, not refused — but for the suite hash, which every report of
the current schema with results records: only a report read from an older shape (its cells'
``source``) may lack it, and a current one without it (edited by hand) is refused.  Two
recorded values must be equal, and a field recorded by some inputs but not others adds a note
naming the inputs that lack it (printed as a warning).  The merged report keeps the recorded
value (its cells' ``model_version``, its run record's ``replay_sha256`` and ``suite_hash``).
``decoding`` and ``method_settings`` are compared as written: a report without them reads them
as empty, which is a value.

A shard that is missing, or an input that is partial, makes the merged report partial: its
coverage names the missing shards and the items without a result (``ID[cell]``), and a partial
report fails every gate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.run.aggregate import build_run_report
from pytest_graphinstruct.run.records.results import (
    SCHEMA,
    CacheUse,
    CellMetadata,
    Coverage,
    ItemResult,
    RunInfo,
    RunReport,
    ShardSelection,
    Spend,
    describe_prompts,
)
from pytest_graphinstruct.run.shard import assign
from pytest_graphinstruct.vocab import EMBEDDED_MODEL, natural_key

# metadata that must be equal for two inputs' cells to be one cell
_SAME: Final = ("model", "strategy", "method", "constraint", "samples_per_instruction",
                "pass_rule", "decoding", "method_settings")
# metadata that must be equal where both inputs record it (None: not recorded)
_SAME_WHERE_KNOWN: Final = ("model_info", "model_version")


class _Unrecorded:
    """A value an input does not record (see the module docstring)."""

    def __repr__(self) -> str:
        return "not recorded"


class _Unset:
    """A key one mapping has and the other lacks."""

    def __repr__(self) -> str:
        return "unset"


UNRECORDED: Final = _Unrecorded()
_UNSET: Final = _Unset()


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
        GraphInstructError: the inputs are not parts of one run (see the module docstring).
    """
    if not inputs:
        raise GraphInstructError("merge needs at least one report")
    for name, report in inputs:
        _suite_hash_kept(name, report)
    shards = [(name, r.run.filter.shard if r.run else None) for name, r in inputs]
    sharded = [(name, s) for name, s in shards if s is not None]
    count, universe = _shard_plan(sharded, len(inputs))
    notes: list[str] = []
    suite_hash = _agree("suite_hash", [(n, _run_value(r, "suite_hash")) for n, r in inputs],
                        notes)
    replay_hash = _agree("replay_sha256", [(n, _replay_hash(r)) for n, r in inputs], notes)
    if count is not None:
        for attr in ("keyword", "markers"):
            _agree(f"filter.{attr} (-{attr[0]})",
                   [(n, UNRECORDED if r.run is None else getattr(r.run.filter, attr))
                    for n, r in inputs], notes)
        _same_cells(inputs)
    metas = _cell_metadata(inputs, notes)
    items: dict[str, dict[str, tuple[str, ItemResult]]] = {label: {} for label in metas}
    for name, report in inputs:
        for cell in report.cells:
            bucket = items[cell.label]
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
             for label, meta in metas.items()]
    report = build_run_report(cells, suite_order=order, coverage=coverage)
    info = _run_info(inputs, sum(len(b) for b in items.values()))
    if info is not None:
        info = replace(info, suite_hash=_text(suite_hash),
                       replay_sha256=_text(replay_hash))
    report = replace(report, run=info)
    if missing and count is not None:
        notes.insert(0, f"shard(s) {_shard_list(missing, count)} missing: "
                        f"{coverage.missing_count} item(s) have no result; the report is partial")
    return Merged(report, count, present, missing, tuple(notes))


def _suite_hash_kept(name: str, report: RunReport) -> None:
    """A report of the current schema with results records its suite hash (every run that
    got its suite writes it); only a report read from an older shape (``graphinstruct-
    report/1``, a release ``quality.json``: its cells name that ``source``) may lack it.

    Raises:
        GraphInstructError: a current report with results and no suite hash (its run record
            was edited).
    """
    older = any(c.metadata.source is not None for c in report.cells)
    results = any(c.per_instruction for c in report.cells)
    if older or not results or (report.run is not None and report.run.suite_hash):
        return
    raise GraphInstructError(f"{name} records no suite hash, but it is a {SCHEMA} report, "
                             "which always records one: its run record was edited; merge only "
                             "shards as their runs wrote them")


def _run_value(report: RunReport, attr: str) -> object:
    value = None if report.run is None else getattr(report.run, attr)
    return UNRECORDED if value is None else value


def _replay_hash(report: RunReport) -> object:
    """The replay file's hash; ``None`` (a value) for a run without ``--gi-replay``."""
    if report.run is None:
        return UNRECORDED
    if report.run.replay is None:
        return None
    return report.run.replay_sha256 or UNRECORDED


def _text(value: object) -> str | None:
    """``value`` when it is a recorded text, else ``None``."""
    return value if isinstance(value, str) else None


def _agree(what: str, values: Sequence[tuple[str, object]], notes: list[str]) -> object:
    """The value every input that records it has (:data:`UNRECORDED` when none does).

    Raises:
        GraphInstructError: two inputs record different values.
    """
    known = [(name, v) for name, v in values if v is not UNRECORDED]
    if not known:
        return UNRECORDED
    first_name, first = known[0]
    for name, value in known[1:]:
        if value != first:
            field, a, b = _difference(what, first, value)
            raise GraphInstructError(f"{field} is {a!r} in {first_name} but {b!r} in {name}: "
                                     "not parts of one run")
    lacking = [name for name, v in values if v is UNRECORDED]
    if lacking:
        notes.append(f"{what} is not recorded in {', '.join(lacking)} ({first!r} in "
                     f"{first_name}): merged without checking it")
    return first


def _difference(what: str, a: object, b: object) -> tuple[str, object, object]:
    """The first differing key of two mappings (``decoding.temperature``), else ``what``."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in sorted({*a, *b}, key=str):
            x, y = a.get(key, _UNSET), b.get(key, _UNSET)
            if x != y:
                return _difference(f"{what}.{key}", x, y)
    return what, a, b


def _same_cells(inputs: Sequence[tuple[str, RunReport]]) -> None:
    """Every shard of a sharded run holds the same cells."""
    first_name, first = inputs[0]
    for name, report in inputs[1:]:
        if set(report.labels) != set(first.labels):
            raise GraphInstructError(
                f"cells are {', '.join(first.labels) or 'none'} in {first_name} but "
                f"{', '.join(report.labels) or 'none'} in {name}: every shard of a run holds "
                "the same cells")


def _cell_metadata(inputs: Sequence[tuple[str, RunReport]],
                   notes: list[str]) -> dict[str, CellMetadata]:
    """Cell label → the merged cell's metadata, in the order cells first appear."""
    holders: dict[str, list[tuple[str, CellMetadata, RunInfo | None]]] = {}
    for name, report in inputs:
        for cell in report.cells:
            holders.setdefault(cell.label, []).append((name, cell.metadata, report.run))
    out: dict[str, CellMetadata] = {}
    for label, held in holders.items():
        first = held[0][1]
        for attr in _SAME:
            _agree(f"cell {label}: {attr}", [(n, getattr(m, attr)) for n, m, _ in held], notes)
        _agree(f"cell {label}: prompts (--gi-prompts)",
               [(n, describe_prompts(m.prompts)) for n, m, _ in held], notes)
        found = {attr: _agree(f"cell {label}: {attr}",
                              [(n, UNRECORDED if getattr(m, attr) is None else getattr(m, attr))
                               for n, m, _ in held], notes)
                 for attr in _SAME_WHERE_KNOWN}
        if first.model != EMBEDDED_MODEL:
            _agree(f"cell {label}: endpoint", [(n, _endpoint(run, m.model))
                                                for n, m, run in held], notes)
        out[label] = replace(first, model_info=_text(found["model_info"]),
                             model_version=_text(found["model_version"]))
    return out


def _endpoint(run: RunInfo | None, model: str) -> object:
    """The model's endpoint in ``run``; ``None`` (a value) for answers from no endpoint."""
    if run is None or model not in run.endpoints:
        return UNRECORDED
    return run.endpoints[model]


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


def _suite_order(universe: Sequence[tuple[str, int]],
                 items: dict[str, dict[str, tuple[str, ItemResult]]]) -> dict[str, int]:
    """Instruction id → position: the unsharded selection's order, else level then id."""
    if universe:
        return {iid: n for n, (iid, _) in enumerate(universe)}
    known = {iid: item.level for bucket in items.values() for iid, (_, item) in bucket.items()}
    ranked = sorted(known, key=lambda i: (known[i], natural_key(i)))
    return {iid: n for n, iid in enumerate(ranked)}


def _shard_list(shards: Sequence[int], count: int, shown: int = 10) -> str:
    """``2/4, 3/4``: the first ``shown`` shards, then how many more (a report's shard count
    may be up to :data:`~pytest_graphinstruct.run.shard.MAX_SHARDS`; a line stays short)."""
    text = ", ".join(f"{k}/{count}" for k in shards[:shown])
    return text if len(shards) <= shown else f"{text} and {len(shards) - shown:,} more"


def _coverage(inputs: Sequence[tuple[str, RunReport]],
              items: dict[str, dict[str, tuple[str, ItemResult]]],
              universe: Sequence[tuple[str, int]], count: int | None,
              missing: Sequence[int]) -> Coverage:
    reasons = [f"{name}: {r.coverage.describe().removeprefix('partial: ')}"
               for name, r in inputs if not r.coverage.complete]
    absent: list[str] = []
    if missing and count is not None:
        plan = assign(dict(universe), count)
        gone = set(missing)
        lost = [iid for iid, _ in universe if plan[iid] in gone]
        absent = [f"{iid}[{label}]" for label in items for iid in lost]
        reasons.insert(0, f"shard(s) {_shard_list(missing, count)} missing")
    selected = sum(len(b) for b in items.values()) + len(absent)
    for _, r in inputs:
        absent += list(r.coverage.missing)
    if not reasons:
        return Coverage(selected=selected)
    return Coverage.partial("; ".join(reasons), selected=selected, missing=absent)


def _run_info(inputs: Sequence[tuple[str, RunReport]], selected: int) -> RunInfo | None:
    """The merged run's record: the first shard's, spanning every shard's time, with the
    cache use combined (:meth:`CacheUse.combined`: counts summed, snapshots joined, the oldest
    kept), what each model was sent summed over the shards that recorded it
    (:meth:`Spend.combined`; ``None`` when none did) and no shard in its filter."""
    runs = [r.run for _, r in inputs if r.run is not None]
    if not runs:
        return None
    first = runs[0]
    started = [x.started for x in runs if x.started]
    finished = [x.finished for x in runs if x.finished]
    cache: dict[str, CacheUse] = {}
    for x in runs:
        for label, use in x.cache.items():
            cache[label] = cache[label].combined(use) if label in cache else use
    spend: dict[str, Spend] = {}
    for x in runs:
        for model, one in (x.spend or {}).items():
            spend[model] = spend[model].combined(one) if model in spend else one
    endpoints = {k: v for x in runs for k, v in x.endpoints.items()}
    flt = replace(first.filter, shard=None, selected=selected)
    return replace(first, started=min(started) if started else None,
                   finished=max(finished) if finished else None, endpoints=endpoints,
                   filter=flt, cache=cache, spend=spend or None)
