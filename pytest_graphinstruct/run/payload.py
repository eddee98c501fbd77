"""What crosses between the xdist controller and its workers: one record each way.

The controller hands each worker one :class:`WorkerInput` under ``workerinput[INPUT_KEY]``; at
session end each worker hands back one :class:`WorkerPayload` under
``workeroutput[OUTPUT_KEY]``.  Each travels as one JSON document (a string: execnet carries it
whatever it holds), written and read by the report's codec (:mod:`.records.codec`: the one
mechanism for every record that leaves a process).  The controller adds the payloads up in one
:class:`WorkerTotals`.

Promises: ``X.from_json(x.to_json()) == x`` for both records; ``from_json`` of a document
without a field gives that field's default; a malformed one raises ``ShapeError``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from pytest_graphinstruct.models.caching.snapshot import CacheSource, merge_sources
from pytest_graphinstruct.models.scheduling.request_stats import Sent
from pytest_graphinstruct.run.records.codec import decode, encode
from pytest_graphinstruct.run.records.results import ItemResult
from pytest_graphinstruct.run.served import Served
from pytest_graphinstruct.run.tally import ProgressCounts

if TYPE_CHECKING:
    from pytest_graphinstruct.run.session import BenchmarkSession

INPUT_KEY = "graphinstruct_input"
"""The one ``workerinput`` key of the run (a :class:`WorkerInput` as JSON)."""
OUTPUT_KEY = "graphinstruct_output"
"""The one ``workeroutput`` key of the run (a :class:`WorkerPayload` as JSON)."""


@dataclass(frozen=True)
class WorkerInput:
    """What the controller tells each worker: the embedded server it started (``local``:
    :meth:`~pytest_graphinstruct.run.local.LocalHost.start`'s address record), what its
    preflight learned about the models (``served``), whether it shows the live line (so the
    worker ships its answer counts with each report: ``progress``) and the folder of the
    run's stop file (``stop_folder``, :mod:`pytest_graphinstruct.run.stop`) and the address of
    its answer service (``answers``, :mod:`pytest_graphinstruct.run.answer_service`; ``None``:
    the workers answer every model themselves) with the key a connection to it gives first
    (``answers_key``: :attr:`~.answer_service.AnswerService.key`, a secret: not in the
    record's ``repr``).  xdist shares the items out between the workers (``--dist each``,
    which would run every item on every worker, is refused: ``pytest_run.state``)."""

    local: Mapping[str, str] | None = None
    served: Served | None = None
    progress: bool = False
    stop_folder: str | None = None
    answers: str | None = None
    answers_key: str | None = field(default=None, repr=False)

    def to_json(self) -> str:
        return json.dumps(encode(self))

    @classmethod
    def from_json(cls, text: str) -> WorkerInput:
        return decode(cls, json.loads(text))


@dataclass(frozen=True)
class WorkerPayload:
    """What a worker sends back at session end: its scored ``results``, its session's
    ``notes``, its final answer counts (``progress``; ``None`` when the controller shows no
    live line), the samples answered from the cache per cell (``cached``: only the process
    that obtained the answers knows it), where those came from (``sources``) and what it
    really sent to each model's endpoint (``sent``), with the cache keys behind its ``cached``
    count (``earlier``: the controller counts their union, since two workers may each read
    the same answer from the cache)."""

    results: tuple[ItemResult, ...] = ()
    notes: tuple[str, ...] = ()
    limits: tuple[str, ...] = ()  #: the spending limits that refused its requests
    progress: ProgressCounts | None = None
    cached: Mapping[str, int] = field(default_factory=dict)
    sources: Mapping[str, CacheSource] = field(default_factory=dict)
    sent: Mapping[str, Sent] = field(default_factory=dict)
    earlier: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(encode(self))

    @classmethod
    def from_json(cls, text: str) -> WorkerPayload:
        return decode(cls, json.loads(text))


@dataclass
class WorkerTotals:
    """What the xdist controller has gathered from its workers so far: their results, why a
    worker sent none (``errors``), each worker's latest answer counts (``progress``, by
    worker id; replaced, never mutated: the live line's thread reads it), samples answered
    from the cache per cell and the cache sources, merged, and what each model's endpoint was
    sent, summed over the workers (``sent``; its ``cached`` is the number of distinct cache
    keys the workers read from an earlier run's cache, :attr:`earlier`)."""

    results: list[ItemResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    progress: dict[str, ProgressCounts] = field(default_factory=dict)
    cached: dict[str, int] = field(default_factory=dict)
    sources: dict[str, CacheSource] = field(default_factory=dict)
    sent: dict[str, Sent] = field(default_factory=dict)
    earlier: dict[str, set[str]] = field(default_factory=dict)

    def add(self, worker: str, payload: WorkerPayload) -> None:
        """Add one worker's payload (its notes are the caller's to keep)."""
        self.results.extend(payload.results)
        if payload.progress is not None:
            self.counted(worker, payload.progress)
        for cell, n in payload.cached.items():
            self.cached[cell] = self.cached.get(cell, 0) + n
        self.sources = merge_sources(self.sources, payload.sources)
        for model, keys in payload.earlier.items():
            self.earlier.setdefault(model, set()).update(keys)
        for model, sent in payload.sent.items():
            total = self.sent.get(model, Sent()) + sent
            self.sent[model] = replace(total, cached=len(self.earlier.get(model, ())))

    def counted(self, worker: str, counts: ProgressCounts) -> None:
        """``worker``'s latest answer counts."""
        self.progress = {**self.progress, worker: counts}

    def counts(self) -> ProgressCounts:
        """Every worker's latest answer counts, added."""
        return sum(self.progress.values(), ProgressCounts())



def worker_payload(bench: BenchmarkSession | None, *, progress: bool) -> WorkerPayload:
    """What a worker sends at session end: ``bench``'s results (the items it still holds are
    scored now), then its notes, its final answer counts when ``progress`` (the last report
    may precede answers), its cached samples per cell, its cache sources and what it sent to
    each model's endpoint; an empty payload when it never opened a session."""
    from pytest_graphinstruct.run.provenance import cached_samples

    if bench is None:
        return WorkerPayload()
    results = tuple(bench.flush())
    return WorkerPayload(results=results, notes=tuple(bench.notes()),
                         limits=tuple(bench.limits()),
                         progress=bench.progress() if progress else None,
                         cached=cached_samples(results), sources=bench.cache_sources(),
                         sent=bench.sent(), earlier=bench.earlier_keys())
