"""The answer cache's write path: which answers are written (:meth:`CacheWriter.store`,
:meth:`CacheWriter.merge`), crash-safe appends (each line written whole with one ``os.write`` on
an ``O_APPEND`` descriptor, under an exclusive ``flock`` for the answers, then ``fsync``-ed), and
the count of writes that failed."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.base import Request, one_line
from pytest_graphinstruct.models.caching.entries import (
    CacheEntry,
    Use,
    entry_of,
    record,
    records,
    supersedes,
    use_of,
    use_record,
)
from pytest_graphinstruct.models.caching.index import CacheIndex, flocked
from pytest_graphinstruct.models.caching.snapshot import Snapshot

PutOutcome = Literal["written", "skipped", "failed"]


class CacheWriter:
    """Writes answers to one cache file, keeps them in its index, and counts what was written
    and what failed.

    Args:
        path: the cache file (created on the first append).
        index: the cache's entries (kept up to date with what is written).
        lock: the cache's lock.
        warn: warns (message, file, line) of the first failed write.
    """

    def __init__(self, path: Path, *, index: CacheIndex,
                 lock: threading.RLock, warn: Callable[[str, Path, int], None]) -> None:
        self.path = path
        self._index = index
        self._lock = lock
        self._warn = warn
        self.writes = 0  #: answers written by this process
        self.write_failures = 0  #: answers the OS refused to write
        self.first_write_error: str | None = None  #: the first failed write, one line

    def store(self, key: str, request: Request, answer: Answer, *, endpoint: str = "",
              served: Snapshot | None = None) -> PutOutcome:
        """Append ``answer`` for ``key`` unless it is not cacheable or the key's kept entry
        wins: ``written``, ``skipped`` or ``failed`` (counted, the first warned about; never
        raises)."""
        if not answer.ok or answer.truncated or answer.cached or answer.text is None:
            return "skipped"
        written = record(key, request, answer, endpoint, served or Snapshot())
        entry = entry_of(written)
        line = json.dumps(written, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        with self._lock:
            kept = self._index.entries.get(key)
            if kept is not None and not supersedes(entry, kept):
                return "skipped"
        if not self._append_or_warn(line):
            return "failed"
        with self._lock:
            self._index.keep(entry)
            self.writes += 1
        return "written"

    def record_use(self, key: str, request: Request) -> PutOutcome:
        """Append a record saying ``request`` used ``key``'s kept answer (:func:`.use_record`)
        unless no answer of ``key`` is kept or a record already names this use: ``written``,
        ``skipped`` or ``failed`` (counted like a failed store; never raises)."""
        with self._lock:
            kept = self._index.entries.get(key)
            if kept is None or use_of(request) in self._index.uses.get(key, ()):
                return "skipped"
            written = use_record(key, request, kept)
        line = json.dumps(written, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        if not self._append_or_warn(line):
            return "failed"
        with self._lock:
            self._index.keep(entry_of(written))
        return "written"

    def _append_or_warn(self, line: bytes) -> bool:
        """Append ``line``; on an I/O error count the failure and warn once (the first):
        ``False``.  Never raises."""
        try:
            self._append(line)
        except OSError as exc:
            with self._lock:
                first = self._failed(exc)
            if first:
                self._warn(f"answer cache {self.first_write_error}; answers are not being "
                           "cached (the run goes on; a rerun will ask for them again)",
                           self.path, 0)
            return False
        return True

    def merge(self, other: Path) -> int:
        """Append every record of the cache file ``other`` that the index lacks, that
        replaces the one kept (see :meth:`.AnswerCache.merge_from`) or that names a use of a
        key's answer this file does not, in one locked append; returns how many.

        Raises:
            ModelError: either file cannot be read, or this one cannot be written (the index
                is left as it was).
        """
        new: list[bytes] = []
        before: dict[str, CacheEntry | None] = {}  # what each changed key held, to undo
        added: list[tuple[str, Use]] = []  # the uses the merge added, to undo
        try:
            with self._lock:
                self._index.scan()
                for found in records(other):
                    key = str(found["key"])
                    entry, kept = entry_of(found), self._index.entries.get(key)
                    uses = self._index.uses.setdefault(key, set())
                    if kept is not None and not supersedes(entry, kept):
                        if entry.use in uses:
                            continue  # nothing new: neither its answer nor its use
                    else:
                        before.setdefault(key, kept)
                        self._index.entries[key] = entry
                    if entry.use not in uses:
                        uses.add(entry.use)
                        added.append((key, entry.use))
                    new.append(json.dumps(found, ensure_ascii=False,
                                          separators=(",", ":")).encode("utf-8"))
                if new:
                    self._append(b"\n".join(new))
        except OSError as exc:
            with self._lock:
                for key, kept in before.items():
                    if kept is None:
                        self._index.entries.pop(key, None)
                    else:
                        self._index.entries[key] = kept
                for key, use in added:
                    self._index.uses.get(key, set()).discard(use)
            raise ModelError(f"cannot merge {other} into {self.path}: "
                             f"{exc.strerror or exc}") from None
        return len(new)

    def _append(self, line: bytes) -> None:
        """Append ``line`` (one or more records, no trailing newline) durably: whole, after a
        torn record left by a killed writer, ``fsync``-ed.

        Raises:
            OSError: it cannot be written.
        """
        # Each append has its own descriptor, so flock also serialises this process's threads;
        # the fsync happens after unlocking so concurrent writers' fsyncs can overlap.
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            with flocked(fd, exclusive=True):
                size = os.fstat(fd).st_size
                # Start a fresh line after a torn record left by a killed writer.
                lead = b"\n" if size and os.pread(fd, 1, size - 1) != b"\n" else b""
                _write_all(fd, lead + line + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)

    def _failed(self, exc: OSError) -> bool:
        """Count one answer not written because of ``exc``; returns whether it is the first
        (:attr:`first_write_error` then names it)."""
        self.write_failures += 1
        first = self.first_write_error is None
        if first:
            reason = exc.strerror or str(exc)
            code = f"[Errno {exc.errno}] " if exc.errno else ""
            self.first_write_error = one_line(f"cannot write {self.path}: {code}{reason}")
        return first

    def failure_summary(self) -> str | None:
        """One line for a run summary, or ``None`` when every write succeeded."""
        if not self.write_failures:
            return None
        return one_line(f"{self.write_failures} answer(s) not cached: {self.first_write_error}")


def append_whole(path: Path, line: bytes) -> None:
    """Append one whole line to ``path`` (one ``write`` on an ``O_APPEND`` descriptor).

    Raises:
        OSError: it cannot be written.
    """
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        _write_all(fd, line)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    # One os.write suffices for a regular file; the loop only matters on a short write
    # (e.g. a nearly full disk), where finishing the line beats leaving it torn.
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]
