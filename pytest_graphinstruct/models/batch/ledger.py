"""The batch ledger: which batches a batch run created, what each holds and whether its results
were read — kept in the answer cache's folder (``batches.json``) so a run killed while waiting
resumes polling the same batches and never submits a request that is in a live batch again.

Promises:

* Every change is written at once, atomically (a temporary file, ``fsync``, ``os.replace``):
  a kill leaves the old ledger or the new one, never a torn one.
* An input file is recorded (``input_file_id``, its custom ids and their requests' metadata)
  *before* its batch is created, and the batch id right after: a run killed between the two
  finds the entry without a batch id, and :class:`~.runner.BatchRunner` looks the batch
  up by its input file before creating one.
* A ledger that exists but cannot be read (damaged, another version, unreadable) is never
  taken as empty: :class:`BatchLedger` raises :class:`LedgerUnreadable`, one line naming the
  file and how to proceed — its batches may still be live at the endpoint, and a run that
  forgot them would submit (and pay for) their requests a second time.  Only the user, by
  moving the file aside, decides to resubmit everything.
* A batch the endpoint answers HTTP 404 for (deleted, or the ledger came from another account
  or endpoint) is marked gone (:data:`GONE_STATE`, no longer live): no run polls it again, and
  the runner asks its requests again; :class:`GoneBatches` says so once per run.
* A run without ``--gi-batch`` on a cache whose ledger holds a live batch of one of its models
  is refused before any request (:func:`live_message`, checked by ``run/preflight.py``): it would
  pay a second time for requests the endpoint still runs and bills.
* Thread-safe (one lock); one process per cache folder (batch mode refuses xdist).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.base import one_line

LEDGER_NAME = "batches.json"
LEDGER_VERSION = 1
TERMINAL_STATES = frozenset({"completed", "failed", "expired", "cancelled"})
"""Batch states after which nothing more will come (OpenAI's ``status`` values)."""
GONE_STATE = "gone"
"""The ledger's own state of a batch the endpoint answered HTTP 404 for (never the endpoint's):
marked collected, so no run polls it again."""
SHOWN_BATCHES = 3
"""Batches a refusal names (the rest are counted)."""


class LedgerUnreadable(ModelError):
    """The cache folder's batch ledger exists but cannot be read: a batch run refuses to start
    (its message names the file and says to move it aside to resubmit everything)."""


class LedgerUnwritable(ModelError):
    """A new input file could not be recorded in the ledger: its batch is not created (a
    batch the ledger does not name could be submitted again after a kill)."""


@dataclass(frozen=True)
class RequestMeta:
    """What the cache records about a request besides its answer (for a result that arrives
    before, or without, the request being asked by this process)."""

    model: str
    instruction_id: str = ""
    cell: str = ""
    sample_index: int = 0


@dataclass(frozen=True)
class LedgerBatch:
    """One input file and the batch made of it.

    Attributes:
        endpoint: the backend's endpoint (cache keys are under it).
        input_file_id: the uploaded input file.
        custom_ids: its request lines' ids (the requests' cache keys), in order.
        requests: the metadata of each custom id.
        batch_id: the batch (``""`` until created).
        state: the batch's last known status.
        collected: its results were read (and its answers cached).
        counts: the last known request counts (completed, failed, total).
    """

    endpoint: str
    input_file_id: str
    custom_ids: tuple[str, ...]
    requests: dict[str, RequestMeta] = field(default_factory=dict)
    batch_id: str = ""
    state: str = "uploaded"
    collected: bool = False
    counts: tuple[int, int, int] = (0, 0, 0)

    @property
    def live(self) -> bool:
        """Its results may still come (not collected; a gone batch is marked collected)."""
        return not self.collected

    @property
    def shown_id(self) -> str:
        """Its batch id as a line may show it (escaped, at most 64 characters); the input file
        when no batch id was recorded (a run killed between upload and create)."""
        return one_line(self.batch_id or f"input file {self.input_file_id}", limit=64)


@dataclass
class GoneBatches:
    """The ledger batches the endpoint answered HTTP 404 for in this run (marked gone), and how
    many requests they held; said once, in the run's summary (:meth:`summary`)."""

    shown: list[str] = field(default_factory=list)  #: their escaped ids, oldest first
    requests: int = 0  #: request lines they held

    def add(self, batch: LedgerBatch) -> None:
        """Count ``batch`` (just marked gone)."""
        self.shown.append(batch.shown_id)
        self.requests += len(batch.custom_ids)

    def summary(self, path: Path | None, *, fallback: bool = False) -> str | None:
        """One line naming the (first) gone batch, the ledger ``path``, what happened to the
        batch's requests (a new batch; ordinary requests with ``fallback``,
        ``gi_batch_fallback``) and why it may have happened; ``None`` when none went."""
        if not self.shown:
            return None
        where = f"the batch ledger {path}" if path is not None else "this run (no cache folder)"
        which = (f"batch {self.shown[0]} of {where} is" if len(self.shown) == 1 else
                 f"{len(self.shown)} batches of {where} (first: {self.shown[0]}) are")
        its = "its" if len(self.shown) == 1 else "their"
        how = "as ordinary requests (gi_batch_fallback)" if fallback else "in a new batch"
        return (f"{which} unknown to the endpoint (HTTP 404: deleted, or made with another "
                f"account or endpoint): marked gone in the ledger; {its} {self.requests} "
                f"request(s) are asked again, {how}, as this run needs them")


class BatchLedger:
    """The ledger file of one cache folder (see the module's promises).

    Args:
        folder: the answer cache's folder; ``None`` keeps the ledger in memory only.

    Raises:
        LedgerUnreadable: the ledger file exists but cannot be read.
    """

    def __init__(self, folder: Path | None) -> None:
        self.path = None if folder is None else Path(folder) / LEDGER_NAME
        self._lock = threading.Lock()
        self.warning: str | None = None  #: why the ledger could not be written (one line)
        self._failed: str | None = None  # the last write's failure, for add()
        self._batches: list[LedgerBatch] = self._read()

    def batches(self, endpoint: str | None = None) -> list[LedgerBatch]:
        """Every batch recorded (of ``endpoint`` when given), oldest first."""
        with self._lock:
            return [b for b in self._batches if endpoint is None or b.endpoint == endpoint]

    def live(self, endpoint: str) -> list[LedgerBatch]:
        """The batches of ``endpoint`` whose results were not read yet."""
        return [b for b in self.batches(endpoint) if b.live]

    def add(self, batch: LedgerBatch) -> None:
        """Record a new input file (before its batch is created).

        Raises:
            LedgerUnwritable: the ledger could not be written; the entry is not kept, so no
                batch is created for it.
        """
        with self._lock:
            self._batches.append(batch)
            self._write()
            if self._failed is not None:
                self._batches.pop()
                failed, self._failed = self._failed, None
                raise LedgerUnwritable(failed)

    def update(self, input_file_id: str, *, batch_id: str | None = None,
               state: str | None = None, collected: bool | None = None,
               counts: tuple[int, int, int] | None = None) -> LedgerBatch:
        """Change the entry of ``input_file_id`` (``batch_id``, ``state``, ``collected``,
        ``counts``) and write the ledger; returns the new entry.

        Raises:
            KeyError: no entry has that input file.
        """
        with self._lock:
            for n, batch in enumerate(self._batches):
                if batch.input_file_id == input_file_id:
                    new = replace(
                        batch, batch_id=batch.batch_id if batch_id is None else batch_id,
                        state=batch.state if state is None else state,
                        collected=batch.collected if collected is None else collected,
                        counts=batch.counts if counts is None else counts)
                    self._batches[n] = new
                    self._write()
                    return new
        raise KeyError(input_file_id)

    # -- the file ------------------------------------------------------------------------------

    def _read(self) -> list[LedgerBatch]:
        if self.path is None or not self.path.exists():
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("v") != LEDGER_VERSION:
                raise ValueError(f"not a version {LEDGER_VERSION} ledger")
            return [_batch_of(obj) for obj in data["batches"]]
        except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
            raise LedgerUnreadable(unreadable_message(self.path, exc)) from None


    def _write(self) -> None:
        """Write the ledger atomically (under the lock).  A failed write is kept as the
        warning; the ledger stays right in memory."""
        self._failed = None
        if self.path is None:
            return
        blob = json.dumps({"v": LEDGER_VERSION, "batches": [_json_of(b) for b in self._batches]},
                          ensure_ascii=False, separators=(",", ":"))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".batches-", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(blob)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as exc:
            self.warning = self._failed = one_line(
                f"cannot write the batch ledger {self.path}: {exc}")


def _json_of(batch: LedgerBatch) -> dict[str, Any]:
    obj = asdict(batch)
    obj["custom_ids"] = list(batch.custom_ids)
    obj["counts"] = list(batch.counts)
    obj["requests"] = {k: [m.model, m.instruction_id, m.cell, m.sample_index]
                       for k, m in batch.requests.items()}
    return obj


def _batch_of(obj: Any) -> LedgerBatch:
    """One entry read back; raises TypeError/ValueError/KeyError on a malformed one."""
    if not isinstance(obj, dict):
        raise TypeError("a ledger entry is not an object")
    requests: dict[str, RequestMeta] = {}
    for key, meta in dict(obj.get("requests") or {}).items():
        model, inst, cell, sample = meta
        requests[str(key)] = RequestMeta(str(model), str(inst), str(cell), int(sample))
    counts = tuple(int(c) for c in obj.get("counts") or (0, 0, 0))
    if len(counts) != 3:
        raise ValueError("counts must hold 3 numbers")
    return LedgerBatch(
        endpoint=str(obj["endpoint"]), input_file_id=str(obj["input_file_id"]),
        custom_ids=tuple(str(c) for c in obj["custom_ids"]), requests=requests,
        batch_id=str(obj.get("batch_id") or ""), state=str(obj.get("state") or "uploaded"),
        collected=bool(obj.get("collected")), counts=(counts[0], counts[1], counts[2]))


def describe_batches(batches: Sequence[LedgerBatch]) -> str:
    """``batches`` for a line: each of the first :data:`SHOWN_BATCHES` by its escaped, bounded
    id and its request count, the rest counted (``batch_1: 4 request(s), and 2 more``)."""
    shown = ", ".join(f"{b.shown_id}: {len(b.custom_ids)} request(s)"
                      for b in batches[:SHOWN_BATCHES])
    more = len(batches) - SHOWN_BATCHES
    return shown + (f", and {more} more" if more > 0 else "")


def live_message(path: Path, model: str, batches: Sequence[LedgerBatch]) -> str:
    """The one line refusing a run without ``--gi-batch`` whose model ``model`` has
    ``batches`` live in the ledger ``path``: which batches (:func:`describe_batches`), why
    (their requests would be paid twice) and the two ways on."""
    noun, it = ("batch", "it") if len(batches) == 1 else ("batches", "them")
    return (f"the batch ledger {path} names {len(batches)} {noun} still live for "
            f"{one_line(model, limit=80)} ({describe_batches(batches)}): a run without "
            "--gi-batch would send (and pay for) their requests again while the endpoint runs "
            f"and bills the {noun}; nothing was sent. Rerun with --gi-batch to resume {it}; to "
            "send the requests as ordinary ones anyway (paying twice), move the ledger aside "
            f"(mv {path} {path}.set-aside) and run again")


def unreadable_message(path: Path, exc: BaseException) -> str:
    """The one line of :class:`LedgerUnreadable`: the file, why, and how to proceed (the
    cause is cut first, so the file and the advice always survive)."""
    cause = one_line(f"{type(exc).__name__}: {exc}", limit=120)
    return (f"--gi-batch: the batch ledger {path} cannot be read ({cause}); it may name "
            "batches still running at the endpoint, whose requests a run without it would "
            f"submit (and pay for) again: nothing was submitted. To resubmit everything not "
            f"cached, move it aside (mv {path} {path}.damaged) and run again")
