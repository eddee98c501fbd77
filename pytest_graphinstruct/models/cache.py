"""The crash-safe, multi-process answer cache (``<directory>/answers.jsonl``).

Format: one JSON object per line, appended::

    {"v": 1, "key": "<sha256>", "endpoint": "...", "model": "...", "instruction_id": "L1-001",
     "level": 1, "cell": "gpt-x/zero-shot", "sample_index": 0, "text": "...",
     "usage": {"input_tokens": 120, "output_tokens": 80, "source": "provider"} | null,
     "calls": 1, "finish_reason": "stop", "latency_s": 1.2, "created": 1700000000.0,
     "served_model": "gpt-4o-2024-08-06" | null, "system_fingerprint": "fp_44709d6fcb" | null}

``usage.source`` is :attr:`Usage.source` (a record without it was written before sources were
recorded, when every usage came from the provider, and reads as ``provider``).  ``created`` is
when the answer was cached (Unix time).  ``served_model`` and ``system_fingerprint`` are what the
response said served it (:class:`~.snapshot.Snapshot`; ``null`` when it said nothing; a record
without them was written before they were recorded and reads as an unknown snapshot).

The key is :meth:`Request.cache_key` of the backend's endpoint — endpoint (with the backend's
options and ``--gi-model-version``), model, full messages, decoding parameters, extras and the
sample index.  No API key or other secret is ever written.

Guarantees:

* **Crash safety.** Each answer is one line written with a single ``os.write`` on an
  ``O_APPEND`` descriptor while holding an exclusive ``flock``, then ``fsync``-ed before
  :meth:`AnswerCache.put` returns.  A process
  killed at any point leaves at most one torn line at the end of the file.  On reading, a line
  that does not parse is skipped and reported in :attr:`AnswerCache.warnings` — never fatal —
  and the next writer starts a fresh line after it, so later records are never glued to a torn
  one.
* **Concurrent processes** (pytest-xdist workers) append to the same file without corrupting
  it; readers take a shared lock so they never see a half-written line from a live writer.  A
  key missing from memory triggers a re-scan of the bytes other processes appended since the
  last scan, so workers share answers.
* **Only real answers are cached:** errors and truncated answers (``finish_reason ==
  'length'``) are never stored.  The first record of a key wins, unless a later one came from
  another snapshot and was cached later (an answer asked again because the cached one was
  stale, :mod:`.snapshot`): that one replaces it, in memory, in :meth:`AnswerCache.store` and
  in :meth:`AnswerCache.merge_from` alike.
* **This run or an earlier one.**  :attr:`AnswerCache.mark` is the size of the file when the
  run began (given by the process that began it, else the size at opening), and
  :attr:`AnswerCache.run` names the run (every process of one xdist run gives the same id;
  each record written carries it as ``"run"``): :meth:`AnswerCache.earlier` says whether an
  entry was cached before the run began — a record of this run, written by any of its
  processes, never is, whatever the byte offsets say.
* **Peers are told what will not come.**  :meth:`AnswerCache.note_uncached` records that a
  process will not cache a key's answer (an error, a truncated answer, the circuit open, the
  budget spent, stopped, cancelled, a failed write) in ``<directory>/attempts.jsonl``; when the
  cache folder cannot be written (read-only) the note goes to a file in the system's temporary
  folder named after the cache folder (:func:`notes_fallback`), which every process of the run
  reads too, so a waiting peer learns of it at once either way.  :meth:`AnswerCache.uncached`
  returns the keys noted by this run (notes carry the run id; notes of other runs are ignored).
* **Failures are noticed, never fatal.**  Damaged lines (bad JSON, a torn record, a record
  without a key or text) are skipped; each scan that finds new ones emits one
  :class:`CacheWarning` naming the file and the count (:attr:`AnswerCache.damaged_lines`,
  :meth:`AnswerCache.damage_summary`).  A write that fails (disk full, read-only file) is
  counted (:attr:`AnswerCache.write_failures`, :attr:`AnswerCache.first_write_error`,
  :meth:`AnswerCache.write_failure_summary`), the first one per cache emits one
  :class:`CacheWarning` naming the file and the OS error, and :meth:`AnswerCache.put` returns
  ``False`` instead of raising: the run goes on without caching that answer.
* **In-flight requests are shared across processes.**  :meth:`AnswerCache.claim` takes an
  exclusive ``flock`` on ``<directory>/claims/<key>.lock`` for the one process asking for a
  key; another process asking for the same key waits (bounded) until the answer is cached or
  the claim is released.  The kernel releases the lock of a killed owner at once, so a dead
  claim never blocks anyone; a hung owner blocks others for at most their ``wait_s``.

On platforms without ``fcntl`` (Windows) there is no inter-process locking (and no claims); use
one process.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pytest_graphinstruct.answers import USAGE_PROVIDER, Answer, Usage
from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.base import Request, one_line
from pytest_graphinstruct.models.snapshot import Snapshot
from pytest_graphinstruct.models.tokens import check_token_count

try:  # POSIX only
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

CACHE_FILE = "answers.jsonl"
ATTEMPTS_FILE = "attempts.jsonl"
CLAIMS_DIR = "claims"
FORMAT_VERSION = 1
CLAIM_POLL_S = 0.05
_LEVEL_RE = re.compile(r"^L(\d+)-")
_SAFE_KEY = re.compile(r"^[0-9A-Za-z_-]{1,128}$")

PutOutcome = Literal["written", "skipped", "failed"]


class CacheWarning(UserWarning):
    """The answer cache skipped damaged lines or could not write an answer (never fatal)."""


def _warn(message: str, path: Path, line: int) -> None:
    """Warn at ``path:line`` (what pytest's warnings summary shows as the place), not at a line
    of this module."""
    # Under ``-W error`` a warning is raised; the cache's promise (never fatal) comes first, and
    # the failure stays visible through the counters and summaries.
    with suppress(Exception):
        warnings.warn_explicit(message, CacheWarning, str(path), line)


@dataclass(frozen=True)
class CacheEntry:
    """One cached answer and the metadata of the request that obtained it."""

    key: str
    answer: Answer
    endpoint: str
    model: str
    instruction_id: str
    level: int | None
    cell: str
    sample_index: int
    created: float | None = None  #: when it was cached (Unix time; ``None``: not recorded)
    snapshot: str | None = None  #: the response's ``model`` field (``None``: not recorded)
    fingerprint: str | None = None  #: the response's ``system_fingerprint``
    offset: int | None = None  #: byte offset of its line (``None``: written by this process)
    run: str | None = None  #: the run that cached it (``None``: not recorded)


def supersedes(new: CacheEntry, kept: CacheEntry) -> bool:
    """Whether ``new`` replaces ``kept`` (the same key): it came from another snapshot and was
    cached later (an unknown time counts as later)."""
    if new.snapshot == kept.snapshot:
        return False
    return new.created is None or kept.created is None or new.created > kept.created


def level_of(instruction_id: str) -> int | None:
    """The level encoded in an instruction id (``L3-012`` → 3), else ``None``."""
    m = _LEVEL_RE.match(instruction_id)
    return int(m.group(1)) if m else None


@contextmanager
def _flocked(fd: int, exclusive: bool) -> Iterator[None]:
    if fcntl is None:  # pragma: no cover
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


@dataclass
class Claim:
    """What :meth:`AnswerCache.claim` got: the key to ask for, or another process's answer.

    Exactly one of these holds: ``held`` (this process asks; call :meth:`release` when the
    answer is stored or given up on), ``answer`` is set (another process obtained it while this
    one waited; ``entry`` is its record), ``cancelled`` (the wait was stopped), or none of them
    (no claim could be taken — no ``fcntl``, an unwritable directory, or ``wait_s`` ran out
    while the owner still worked — so this process asks unshared).  ``waited`` says whether
    another process held the key.
    """

    path: Path | None = None
    fd: int | None = None
    waited: bool = False
    answer: Answer | None = None
    cancelled: bool = False
    entry: CacheEntry | None = None

    @property
    def held(self) -> bool:
        return self.fd is not None

    def release(self) -> None:
        """Give the key back (idempotent).  The file is removed while still locked, so a process
        that opened it meanwhile notices (:func:`_lock_claim`) and opens the new one."""
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        if self.path is not None:
            with suppress(OSError):
                os.unlink(self.path)
        with suppress(OSError):
            os.close(fd)  # releases the flock


class AnswerCache:
    """Answers keyed by :meth:`Request.cache_key`, persisted in ``<directory>/answers.jsonl``.

    Thread-safe and process-safe.  Opening reads every record already in the file.

    Args:
        directory: created (with parents) when missing.
        mark: the size of the file when the run began (:attr:`mark`); default: its size now.
        run: the run's id (:attr:`run`); processes of one run give the same one.

    Raises:
        ModelError: the directory cannot be created or the file cannot be read.
    """

    def __init__(self, directory: str | os.PathLike[str], *, mark: int | None = None,
                 run: str | None = None) -> None:
        self.directory = Path(directory)
        #: the id of the run using the cache (shared by its processes), written with each
        #: answer and note; ``None``: not known (byte offsets alone tell this run's answers)
        self.run = run or None
        self.path = self.directory / CACHE_FILE
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ModelError(f"cannot create the answer cache directory {self.directory}: "
                             f"{exc.strerror or exc}") from None
        self._lock = threading.RLock()
        self._entries: dict[str, CacheEntry] = {}
        self._offset = 0  # bytes of the file already parsed (always at a line start)
        self._lines = 0  # lines of the file already parsed
        self._reported: set[int] = set()  # byte offsets of bad lines already warned about
        self._warnings: list[str] = []
        self.writes = 0
        self.write_failures = 0
        self.first_write_error: str | None = None  #: the first failed write, one line
        try:
            self._scan()
        except OSError as exc:
            raise ModelError(f"cannot read the answer cache {self.path}: "
                             f"{exc.strerror or exc}") from None
        #: bytes of the file written before this run (see :meth:`earlier`)
        self.mark = self._offset if mark is None else max(0, int(mark))

    def __repr__(self) -> str:
        return f"AnswerCache({str(self.directory)!r}, entries={len(self)})"

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    @property
    def warnings(self) -> list[str]:
        """One message per torn or corrupt line skipped (file, byte offset, reason)."""
        with self._lock:
            return list(self._warnings)

    @property
    def damaged_lines(self) -> int:
        """How many damaged lines (torn, bad JSON, not a record) were skipped so far."""
        with self._lock:
            return len(self._warnings)

    def damage_summary(self) -> str | None:
        """One line for a run summary, or ``None`` when no line was damaged:
        ``<file>: 3 damaged line(s) skipped (the first: byte 120: corrupt record ...)``."""
        with self._lock:
            if not self._warnings:
                return None
            first = self._warnings[0].removeprefix(f"{self.path}: ")
            return one_line(f"{self.path}: {len(self._warnings)} damaged line(s) skipped "
                            f"(the first: {first})")

    def write_failure_summary(self) -> str | None:
        """One line for a run summary, or ``None`` when every write succeeded:
        ``2 answer(s) not cached: cannot write <file>: [Errno 28] No space left on device``."""
        with self._lock:
            if not self.write_failures:
                return None
            return one_line(f"{self.write_failures} answer(s) not cached: "
                            f"{self.first_write_error}")

    # -- reading -----------------------------------------------------------------------------

    def get(self, key: str) -> Answer | None:
        """The cached answer for ``key`` (``cached=True``), or ``None``.

        A miss re-scans what other processes appended since the last scan.
        """
        entry = self.lookup(key)
        return entry.answer if entry is not None else None

    def lookup(self, key: str,
               accept: Callable[[CacheEntry], bool] | None = None) -> CacheEntry | None:
        """The entry of ``key`` (its answer, snapshot, time), or ``None``; like :meth:`get`.
        An entry ``accept`` refuses (a stale one) also re-scans, since another process may
        have appended the answer that replaces it; the entry is returned either way."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or (accept is not None and not accept(entry)):
                try:
                    self._scan()
                except OSError:
                    return None  # a transient read problem is a miss, never a crash
                entry = self._entries.get(key)
            return entry

    def earlier(self, entry: CacheEntry) -> bool:
        """Whether ``entry`` was cached before this run began (its line lies before
        :attr:`mark`, and it does not carry this run's id); an answer this run or another
        process cached since is not."""
        if self.run is not None and entry.run == self.run:
            return False
        return entry.offset is not None and entry.offset < self.mark

    def entries(self) -> list[CacheEntry]:
        """Every entry, in file order (after picking up other processes' appends)."""
        with self._lock:
            with suppress(OSError):
                self._scan()
            return list(self._entries.values())

    def refresh(self) -> int:
        """Read records appended by other processes; returns how many new entries appeared."""
        with self._lock:
            before = len(self._entries)
            self._scan()
            return len(self._entries) - before

    def _scan(self) -> None:
        before = len(self._warnings)
        try:
            self._read_new()
        finally:
            found = self._warnings[before:]
            if found:
                first = found[0].removeprefix(f"{self.path}: ")
                line = int(first.split()[1]) if first.startswith("line ") else 0
                _warn(one_line(f"answer cache {self.path}: {len(found)} damaged line(s) "
                               f"skipped (the first: {first})"), self.path, line)

    def _read_new(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            with _flocked(fd, exclusive=False):
                size = os.fstat(fd).st_size
                if size < self._offset:  # the file was replaced or truncated: start over
                    self._entries.clear()
                    self._reported.clear()
                    self._offset = 0
                    self._lines = 0
                if size == self._offset:
                    return
                chunks = []
                pos = self._offset
                while pos < size:
                    chunk = os.pread(fd, min(1 << 20, size - pos), pos)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    pos += len(chunk)
                data = b"".join(chunks)
        finally:
            os.close(fd)
        end = data.rfind(b"\n")
        complete, tail = (data[: end + 1], data[end + 1:]) if end >= 0 else (b"", data)
        start = self._offset
        for line in complete.split(b"\n")[:-1]:
            self._lines += 1
            self._ingest(line, start, self._lines)
            start += len(line) + 1
        self._offset = start
        if tail.strip() and start not in self._reported:
            # Readers hold a shared lock and writers write whole lines under an exclusive one,
            # so an unterminated tail can only be left by a writer that died mid-write.
            self._reported.add(start)
            self._warnings.append(f"{self.path}: line {self._lines + 1} (byte {start}): torn "
                                  f"last record skipped ({len(tail)} bytes, no newline — an "
                                  "interrupted write)")

    def _ingest(self, line: bytes, offset: int, number: int) -> None:
        if not line.strip():
            return
        try:
            entry = _entry(json.loads(line.decode("utf-8")), offset)
        except (UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
            if offset not in self._reported:
                self._reported.add(offset)
                self._warnings.append(f"{self.path}: line {number} (byte {offset}): corrupt "
                                      f"record skipped ({type(exc).__name__}: "
                                      f"{str(exc)[:120]})")
            return
        kept = self._entries.get(entry.key)
        if kept is None or supersedes(entry, kept):
            self._entries[entry.key] = entry

    # -- writing -----------------------------------------------------------------------------

    def put(self, key: str, request: Request, answer: Answer, *, endpoint: str = "",
            served: Snapshot | None = None) -> bool:
        """Append ``answer`` for ``key`` durably; returns whether anything was written.

        Errors, truncated answers, answers that came from a cache, and keys already cached are
        not written (unless the new answer replaces a stale one: :func:`supersedes`).  Never
        raises for a failed write: see :meth:`store`.
        """
        return self.store(key, request, answer, endpoint=endpoint, served=served) == "written"

    def store(self, key: str, request: Request, answer: Answer, *, endpoint: str = "",
              served: Snapshot | None = None) -> PutOutcome:
        """Like :meth:`put`, saying what happened: ``written``, ``skipped`` (not cacheable or
        already cached) or ``failed`` (the OS refused the write: counted in
        :attr:`write_failures`, the first one warned about; the answer is simply not cached).
        ``served`` is what the response said served it (recorded with the answer)."""
        if not answer.ok or answer.truncated or answer.cached or answer.text is None:
            return "skipped"
        record = _record(key, request, answer, endpoint, served or Snapshot())
        if self.run is not None:
            record["run"] = self.run
        entry = _entry(record)
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        with self._lock:
            kept = self._entries.get(key)
            if kept is not None and not supersedes(entry, kept):
                return "skipped"
        try:
            self._append(line)
        except OSError as exc:
            self._note_write_failure(exc)
            return "failed"
        with self._lock:
            kept = self._entries.get(key)
            if kept is None or supersedes(entry, kept):
                self._entries[key] = entry
            self.writes += 1
        return "written"

    def merge_from(self, other: AnswerCache) -> int:
        """Append every record of ``other`` whose key this cache lacks (``other``'s first
        record of each key, in its file order; a key both hold keeps this cache's answer),
        and every record that replaces the one kept (:func:`supersedes`: an answer asked again
        from another snapshot, later); returns how many records were appended.  ``other``'s
        damaged lines are skipped (its :attr:`warnings` say which).  The new records go in one
        locked append and one ``fsync``.

        Raises:
            ModelError: either file cannot be read, or this cache's file cannot be written.
        """
        new: list[bytes] = []
        before: dict[str, CacheEntry | None] = {}  # what each changed key held, to undo
        try:
            with self._lock:
                self._scan()
                for record in _records(other.path):
                    key = str(record["key"])
                    entry, kept = _entry(record), self._entries.get(key)
                    if kept is not None and not supersedes(entry, kept):
                        continue
                    before.setdefault(key, kept)
                    self._entries[key] = entry
                    new.append(json.dumps(record, ensure_ascii=False,
                                          separators=(",", ":")).encode("utf-8"))
                if new:
                    self._append(b"\n".join(new))
        except OSError as exc:
            with self._lock:
                for key, kept in before.items():
                    if kept is None:
                        self._entries.pop(key, None)
                    else:
                        self._entries[key] = kept
            raise ModelError(f"cannot merge {other.path} into {self.path}: "
                             f"{exc.strerror or exc}") from None
        return len(new)

    def _append(self, line: bytes) -> None:
        # Each append has its own descriptor, so flock also serialises this process's threads;
        # the fsync happens after unlocking so concurrent writers' fsyncs can overlap.
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            with _flocked(fd, exclusive=True):
                size = os.fstat(fd).st_size
                # Start a fresh line after a torn record left by a killed writer.
                lead = b"\n" if size and os.pread(fd, 1, size - 1) != b"\n" else b""
                _write_all(fd, lead + line + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)

    def _note_write_failure(self, exc: OSError) -> None:
        with self._lock:
            self.write_failures += 1
            first = self.first_write_error is None
            if first:
                reason = exc.strerror or str(exc)
                code = f"[Errno {exc.errno}] " if exc.errno else ""
                self.first_write_error = one_line(f"cannot write {self.path}: {code}{reason}")
        if first:
            _warn(f"answer cache {self.first_write_error}; answers are not being cached "
                  "(the run goes on; a rerun will ask for them again)", self.path, 0)

    # -- sharing requests in flight across processes ------------------------------------------

    def claim(self, key: str, *, wait_s: float, stop: threading.Event | None = None,
              poll_s: float = CLAIM_POLL_S,
              accept: Callable[[CacheEntry], bool] | None = None) -> Claim:
        """Take the right to ask for ``key``, or wait for the process that has it.

        Returns at once with a held claim when no other process is asking.  Otherwise polls
        every ``poll_s`` until the key's answer appears in the cache (returned in
        :attr:`Claim.answer`), the owner releases the claim (an error or a truncated answer is
        not cached: then this process holds it and asks itself), ``stop`` is set, or
        ``wait_s`` passes.  ``accept`` says which entries count as the answer (default: any;
        a scheduler refuses stale ones, which the owner is asking again).  Never raises:
        whatever goes wrong, the caller asks unshared.
        """
        if fcntl is None:  # pragma: no cover - Windows
            return Claim()
        name = key if _SAFE_KEY.match(key) else hashlib.sha256(key.encode()).hexdigest()
        path = self.directory / CLAIMS_DIR / f"{name}.lock"
        try:
            path.parent.mkdir(exist_ok=True)
        except OSError:
            return Claim()
        deadline = time.monotonic() + wait_s
        waited = False
        while True:
            try:
                fd = _lock_claim(path)
            except OSError:
                return Claim(waited=waited)
            if fd is not None:
                claim = Claim(path, fd, waited)
                if waited:  # the owner may have stored the answer just before letting go
                    entry = self._accepted(key, accept)
                    if entry is not None:
                        claim.release()
                        return Claim(waited=True, answer=entry.answer, entry=entry)
                return claim
            waited = True
            entry = self._accepted(key, accept)
            if entry is not None:
                return Claim(waited=True, answer=entry.answer, entry=entry)
            if time.monotonic() >= deadline:
                return Claim(waited=True)
            if stop is not None and stop.wait(poll_s):
                return Claim(waited=True, cancelled=True)
            if stop is None:
                time.sleep(poll_s)

    def _accepted(self, key: str, accept: Callable[[CacheEntry], bool] | None
                  ) -> CacheEntry | None:
        entry = self.lookup(key, accept)
        return entry if entry is not None and (accept is None or accept(entry)) else None

    # -- answers that could not be cached ----------------------------------------------------

    def note_uncached(self, key: str, reason: str, calls: int = 0) -> None:
        """Record that this process will not cache ``key``'s answer (``truncated``,
        ``error``, ``circuit open``, ``budget``, ``stopped``, ``cancelled``, ``not cacheable:
        write failed``), so an xdist peer waiting for it stops waiting at once, and how many
        calls this process made for it (``calls``: the peer that runs the item counts them,
        :meth:`uncached_calls`).

        Written to ``<directory>/attempts.jsonl``; when that cannot be written (a read-only
        cache folder, a full disk) to :func:`notes_fallback` instead, which
        :meth:`uncached` reads too.  Never raises: when neither can be written the peer waits
        for its bound, as without the note."""
        record: dict[str, object] = {"key": key, "reason": reason}
        if calls > 0:
            record["calls"] = int(calls)
        if self.run is not None:
            record["run"] = self.run
        line = (json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8")
        for path in (self.directory / ATTEMPTS_FILE, notes_fallback(self.directory)):
            try:
                _append_note(path, line)
                return
            except OSError:
                continue

    def uncached(self) -> set[str]:
        """Keys noted with :meth:`note_uncached` by this run (any of its processes; with no
        :attr:`run` id, by any run), from the cache folder and :func:`notes_fallback`."""
        return set(self.uncached_calls())

    def uncached_calls(self) -> dict[str, int]:
        """:meth:`uncached`'s keys → the most calls one process noted for the key (0 when
        none was made: not issued, or a note that does not say)."""
        out: dict[str, int] = {}
        for path in (self.directory / ATTEMPTS_FILE, notes_fallback(self.directory)):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for line in text.splitlines():
                with suppress(ValueError, TypeError, AttributeError, KeyError):
                    note = json.loads(line)
                    if self.run is None or note.get("run") == self.run:
                        key, calls = str(note["key"]), note.get("calls", 0)
                        calls = calls if isinstance(calls, int) and 0 <= calls < 10**6 else 0
                        out[key] = max(out.get(key, 0), calls)
        return out

    # -- export ------------------------------------------------------------------------------

    def cells(self) -> list[str]:
        """The distinct cells recorded, in first-seen order."""
        return list(dict.fromkeys(e.cell for e in self.entries()))


def write_raw(path: str | os.PathLike[str],
              groups: Mapping[str, Mapping[int, CacheEntry]]) -> None:
    """Write cached answers in the raw-generation JSONL format: one line per instruction of
    ``groups`` (instruction id → sample index → entry, in the mapping's order), its samples by
    sample index, its level from its first entry.  Written under a temporary name, fsync-ed and
    renamed, so readers never see half a file and a failed write leaves none.

    Raises:
        OSError: the file cannot be written.
    """
    out = Path(path)
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            for iid, by_index in groups.items():
                samples = []
                for k in sorted(by_index):
                    a = by_index[k].answer
                    samples.append({
                        "raw_output": a.text,
                        "input_tokens": a.usage.input_tokens if a.usage else None,
                        "output_tokens": a.usage.output_tokens if a.usage else None,
                        "api_calls": a.calls,
                    })
                level = next(iter(by_index.values())).level
                fh.write(json.dumps({"instruction_id": iid, "level": level,
                                     "samples": samples}, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)


def notes_fallback(directory: Path) -> Path:
    """Where :meth:`AnswerCache.note_uncached` writes when the cache folder cannot be written:
    ``<temp>/graphinstruct-notes-<hash of the folder's absolute path>.jsonl`` — the same file
    for every process using that folder, writable when the folder is not."""
    try:
        where = str(directory.resolve())
    except OSError:
        where = str(directory.absolute())
    digest = hashlib.sha256(where.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"graphinstruct-notes-{digest}.jsonl"


def _append_note(path: Path, line: bytes) -> None:
    """Append one whole line to ``path`` (one ``write`` on an ``O_APPEND`` descriptor).

    Raises:
        OSError: it cannot be written.
    """
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        _write_all(fd, line)
    finally:
        os.close(fd)


def _lock_claim(path: Path) -> int | None:
    """A descriptor holding an exclusive flock on ``path``, or ``None`` when another process
    (or thread) holds it.  Loops when the file was removed or replaced between open and lock
    (its owner released it), so the lock held is always on the file the path names."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except OSError:
            os.close(fd)
            raise
        try:
            st = os.stat(path)
            mine = os.fstat(fd)
            current = (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)
        except FileNotFoundError:
            current = False
        if current:
            with suppress(OSError):  # who holds it, for a human looking; best effort
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()} {socket.gethostname()} {time.time():.3f}\n"
                         .encode())
            return fd
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    # One os.write suffices for a regular file; the loop only matters on a short write
    # (e.g. a nearly full disk), where finishing the line beats leaving it torn.
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _record(key: str, request: Request, answer: Answer, endpoint: str,
            served: Snapshot) -> dict[str, Any]:
    return {
        "v": FORMAT_VERSION,
        "key": key,
        "endpoint": endpoint,
        "model": request.model,
        "instruction_id": request.instruction_id,
        "level": level_of(request.instruction_id),
        "cell": request.cell,
        "sample_index": request.sample_index,
        "text": answer.text,
        "usage": None if answer.usage is None else {
            "input_tokens": answer.usage.input_tokens,
            "output_tokens": answer.usage.output_tokens,
            "source": answer.usage.source},
        "calls": answer.calls,
        "finish_reason": answer.finish_reason,
        "latency_s": round(answer.latency_s, 6),
        "created": round(time.time(), 6),  # to the microsecond: "later" orders two answers
        # of one key cached within the same millisecond (supersedes)
        "served_model": served.model,
        "system_fingerprint": served.fingerprint,
    }


def _records(path: Path) -> Iterator[dict[str, Any]]:
    """The valid records of a cache file in file order (damaged lines skipped)."""
    with open(path, "rb") as fh:
        for line in fh:
            if not line.endswith(b"\n"):
                return  # a torn last record
            try:
                obj = json.loads(line.decode("utf-8"))
                _entry(obj)
            except (UnicodeDecodeError, ValueError, TypeError, KeyError):
                continue
            yield obj


def _entry(obj: Any, offset: int | None = None) -> CacheEntry:
    if not isinstance(obj, dict):
        raise TypeError("record is not an object")
    key, text = obj["key"], obj["text"]
    if not isinstance(key, str) or not key or not isinstance(text, str):
        raise ValueError("record needs a string 'key' and 'text'")
    u = obj.get("usage")
    usage = None
    if isinstance(u, dict):
        source = u.get("source")
        usage = Usage(_count(u.get("input_tokens")), _count(u.get("output_tokens")),
                      source if isinstance(source, str) and source else USAGE_PROVIDER)
    calls = obj.get("calls", 1)
    finish = obj.get("finish_reason")
    latency = obj.get("latency_s", 0.0)
    answer = Answer(
        text=text, usage=usage,
        calls=calls if isinstance(calls, int) and not isinstance(calls, bool) else 1,
        finish_reason=finish if isinstance(finish, str) else None,
        cached=True,
        latency_s=float(latency) if isinstance(latency, (int, float)) else 0.0,
    )
    level = obj.get("level")
    sample = obj.get("sample_index", 0)
    created = obj.get("created")
    run = obj.get("run")
    served = Snapshot.from_json({"model": obj.get("served_model"),
                                 "fingerprint": obj.get("system_fingerprint")})
    return CacheEntry(
        key=key, answer=answer, endpoint=str(obj.get("endpoint", "")),
        model=str(obj.get("model", "")), instruction_id=str(obj.get("instruction_id", "")),
        level=level if isinstance(level, int) and not isinstance(level, bool) else None,
        cell=str(obj.get("cell", "")),
        sample_index=sample if isinstance(sample, int) and not isinstance(sample, bool) else 0,
        created=(float(created) if isinstance(created, (int, float))
                 and not isinstance(created, bool) else None),
        snapshot=served.model, fingerprint=served.fingerprint, offset=offset,
        run=run if isinstance(run, str) and run else None,
    )


def _count(v: Any) -> int | None:
    return check_token_count(v)[0]
