"""The batch ledger: which batches a batch run created, what each holds and whether its results
were read — kept in the answer cache's folder (``batches.json``) so a run killed while waiting
resumes polling the same batches and never submits a request that is in a live batch again.

Promises:

* Every change is written at once, atomically (a temporary file, ``fsync``, ``os.replace``):
  a kill leaves the old ledger or the new one, never a torn one.
* **Never loses another process's entry.**  Each change is a read-modify-write under an
  exclusive ``fcntl.flock`` of ``<cache>/batches.json.lock``: the file is read again, the one
  entry changed or added, and written back — so two processes that record batches at once
  (two runs started together, before one of them is refused by the cache's lease,
  :mod:`~.caching.lease`) both keep theirs.  Readers need no lock (each write replaces the
  file whole).
* Each entry has its own id (:attr:`LedgerBatch.entry`), by which it is changed: an endpoint
  that numbers its files and batches anew (a restarted server) may give a new batch the input
  file id or batch id of an old, gone one; the two entries stay apart.
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
  the runner asks its requests again as the run needs them (within its limits);
  :class:`GoneBatches` says so once per run, with how many of them were asked again.  An input
  file a killed run uploaded but made no batch of (none found by its input file) is marked
  :data:`NOT_CREATED_STATE` alike: a later run never creates a batch of it (that would submit
  requests no one asked within the run's cost cap); its requests are asked as needed.
* A run without ``--gi-batch`` on a cache whose ledger holds a live batch of one of its models
  is refused before any request (:func:`live_message`, checked by ``run/preflight.py``): it would
  pay a second time for requests the endpoint still runs and bills.
* Thread-safe (one lock) and process-safe (the file lock).  A ``--gi-batch`` run has its
  cache folder alone (:mod:`~.caching.lease`): one process polls and submits the batches.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: one process per cache folder
    fcntl = None  # type: ignore[assignment]

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.base import one_line

LEDGER_NAME = "batches.json"
LEDGER_LOCK = "batches.json.lock"
"""The file whose ``flock`` guards every read-modify-write of the ledger (not the ledger
itself: it is replaced on each write)."""
LEDGER_VERSION = 1
TERMINAL_STATES = frozenset({"completed", "failed", "expired", "cancelled"})
"""Batch states after which nothing more will come (OpenAI's ``status`` values)."""
GONE_STATE = "gone"
"""The ledger's own state of a batch the endpoint answered HTTP 404 for (never the endpoint's):
marked collected, so no run polls it again."""
NOT_CREATED_STATE = "not created"
"""The ledger's own state of an input file a killed run uploaded but made no batch of (none is
found by it): marked collected, its requests asked again as a run needs them."""
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
        entry: the entry's own id in the ledger (given by :meth:`BatchLedger.add`; an entry
            of a ledger written before entries had ids gets one from its place).
    """

    endpoint: str
    input_file_id: str
    custom_ids: tuple[str, ...]
    requests: dict[str, RequestMeta] = field(default_factory=dict)
    batch_id: str = ""
    state: str = "uploaded"
    collected: bool = False
    counts: tuple[int, int, int] = (0, 0, 0)
    entry: str = ""

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
    """The ledger batches the endpoint answered HTTP 404 for in this run (marked gone), or —
    with ``never_created`` — the input files a killed run left without a batch (marked not
    created); how many requests they held and how many of them this run asked again; said
    once, in the run's summary (:meth:`summary`).  Not thread-safe: the runner's thread
    changes it, the summary reads it at the end."""

    never_created: bool = False
    shown: list[str] = field(default_factory=list)  #: their escaped ids, oldest first
    entries: set[str] = field(default_factory=set)  #: their ledger entries
    keys: set[str] = field(default_factory=set)  #: the requests they held
    asked: set[str] = field(default_factory=set)  #: ... of them this run asked again

    @property
    def requests(self) -> int:
        """The request lines they held (each request once)."""
        return len(self.keys)

    def add(self, batch: LedgerBatch) -> None:
        """Count ``batch`` (just marked gone, or not created)."""
        self.shown.append(batch.shown_id)
        self.entries.add(batch.entry)
        self.keys.update(batch.custom_ids)

    def asked_again(self, keys: Sequence[str]) -> None:
        """``keys`` were just submitted again (a new batch, or ordinary requests): count those
        of them that a gone batch held."""
        self.asked.update(k for k in keys if k in self.keys)

    def summary(self, path: Path | None, *, fallback: bool = False) -> str | None:
        """One line naming the (first) batch, the ledger ``path``, why it may have happened,
        and what became of the batch's requests: how many this run asked again (in a new
        batch; as ordinary requests with ``fallback``, ``gi_batch_fallback``) — within its
        limits, as any request — and how many it did not; ``None`` when none went."""
        if not self.shown:
            return None
        where = f"the batch ledger {path}" if path is not None else "this run (no cache folder)"
        one = len(self.shown) == 1
        if self.never_created:
            which = (f"{self.shown[0]} of {where}, left by a run killed before it made its "
                     "batch, has" if one else f"{len(self.shown)} input files of {where} (first: "
                     f"{self.shown[0]}), left by a run killed before it made their batches, have")
            what = ("no batch at the endpoint (none was found by its input file): marked not "
                    "created in the ledger, never submitted")
        else:
            which = (f"batch {self.shown[0]} of {where} is" if one else
                     f"{len(self.shown)} batches of {where} (first: {self.shown[0]}) are")
            what = ("unknown to the endpoint (HTTP 404: deleted, or made with another account "
                    "or endpoint): marked gone in the ledger, its answers never to be read")
        its = "its" if one else "their"
        how = "as ordinary requests (gi_batch_fallback)" if fallback else "in a new batch"
        asked, rest = len(self.asked), self.requests - len(self.asked)
        left = (f"; the other {rest} were not asked again by this run (not needed, or not "
                "issued within its limits: a later run asks them as it needs them)"
                if rest else "")
        return (f"{which} {what}; of {its} {self.requests} request(s), {asked} were asked "
                f"again, {how}, within the run's limits like any other request{left}")


class BatchLedger:
    """The ledger file of one cache folder (see the module's promises).

    Args:
        folder: the answer cache's folder; ``None`` keeps the ledger in memory only.

    Raises:
        LedgerUnreadable: the ledger file exists but cannot be read.
    """

    def __init__(self, folder: Path | None) -> None:
        self.path = None if folder is None else Path(folder) / LEDGER_NAME
        self._lock = threading.RLock()
        self.warning: str | None = None  #: why the ledger could not be written (one line)
        self._failed: str | None = None  # the last write's failure, for add()
        with self._locked(shared=True):
            self._batches: list[LedgerBatch] = self._read()

    def batches(self, endpoint: str | None = None) -> list[LedgerBatch]:
        """Every batch recorded (of ``endpoint`` when given), oldest first, as last read or
        written by this process."""
        with self._lock:
            return [b for b in self._batches if endpoint is None or b.endpoint == endpoint]

    def entry(self, entry: str) -> LedgerBatch | None:
        """The entry ``entry`` as last read or written (``None``: none has that id)."""
        with self._lock:
            return next((b for b in self._batches if b.entry == entry), None)

    def refresh(self) -> None:
        """Read the file again (what other processes recorded since).

        Raises:
            LedgerUnreadable: the ledger file cannot be read now.
        """
        with self._locked(shared=True):
            self._batches = self._read()

    def live(self, endpoint: str) -> list[LedgerBatch]:
        """The batches of ``endpoint`` whose results were not read yet (the file read
        again).

        Raises:
            LedgerUnreadable: the ledger file cannot be read now.
        """
        self.refresh()
        return [b for b in self.batches(endpoint) if b.live]

    def add(self, batch: LedgerBatch) -> LedgerBatch:
        """Record a new input file (before its batch is created); returns the entry as
        recorded (with its own :attr:`~LedgerBatch.entry` id).

        Raises:
            LedgerUnwritable: the ledger could not be written; the entry is not kept, so no
                batch is created for it.
            LedgerUnreadable: the ledger file cannot be read now (nothing was written).
        """
        new = replace(batch, entry=batch.entry or uuid.uuid4().hex[:16])
        with self._locked(shared=False):
            self._batches = self._read()
            self._batches.append(new)
            self._write()
            if self._failed is not None:
                self._batches.pop()
                failed, self._failed = self._failed, None
                raise LedgerUnwritable(failed)
        return new

    def update(self, entry: str, *, batch_id: str | None = None,
               state: str | None = None, collected: bool | None = None,
               counts: tuple[int, int, int] | None = None) -> LedgerBatch:
        """Change the entry ``entry`` (``batch_id``, ``state``, ``collected``, ``counts``) and
        write the ledger; returns the new entry.  A write that fails is kept as
        :attr:`warning` (the entry stays changed in memory).

        Raises:
            KeyError: no entry has that id.
            LedgerUnreadable: the ledger file cannot be read now (nothing was written).
        """
        with self._locked(shared=False):
            fresh = self._read()
            mine = next((b for b in self._batches if b.entry == entry), None)
            if not any(b.entry == entry for b in fresh) and mine is not None:
                fresh.append(mine)  # recorded here but lost from the file by a failed write
            self._batches = fresh
            for n, batch in enumerate(self._batches):
                if batch.entry == entry:
                    new = replace(
                        batch, batch_id=batch.batch_id if batch_id is None else batch_id,
                        state=batch.state if state is None else state,
                        collected=batch.collected if collected is None else collected,
                        counts=batch.counts if counts is None else counts)
                    self._batches[n] = new
                    self._write()
                    self._failed = None
                    return new
        raise KeyError(entry)

    # -- the file ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self, *, shared: bool) -> Iterator[None]:
        """This process's lock; to change the ledger (not ``shared``) also the exclusive file
        lock, when the ledger has a file and the system has ``flock``.  A reader needs no file
        lock: every write replaces the file whole.  A lock file that cannot be opened (a
        read-only folder) is no lock: nothing can be written there either."""
        with self._lock:
            fd = None
            if not shared and self.path is not None and fcntl is not None:
                try:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    fd = os.open(self.path.with_name(LEDGER_LOCK),
                                 os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
                except OSError:
                    fd = None
            try:
                if fd is not None:
                    with contextlib.suppress(OSError):
                        fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                if fd is not None:
                    os.close(fd)

    def _read(self) -> list[LedgerBatch]:
        if self.path is None:
            return list(getattr(self, "_batches", []))
        if not self.path.exists():
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("v") != LEDGER_VERSION:
                raise ValueError(f"not a version {LEDGER_VERSION} ledger")
            batches = [_batch_of(obj) for obj in data["batches"]]
        except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
            raise LedgerUnreadable(unreadable_message(self.path, exc)) from None
        return [b if b.entry else replace(b, entry=f"entry-{n}-{b.input_file_id}")
                for n, b in enumerate(batches)]

    def _write(self) -> None:
        """Write the ledger atomically (under the locks).  A failed write is kept as the
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
        collected=bool(obj.get("collected")), counts=(counts[0], counts[1], counts[2]),
        entry=str(obj.get("entry") or ""))


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
