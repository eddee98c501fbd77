"""The entries of an answer cache file as read so far: each key's kept entry, how far the file
was parsed, and the damaged lines skipped on the way (torn or corrupt records)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pytest_graphinstruct.models.base import one_line
from pytest_graphinstruct.models.caching.entries import CacheEntry, Use, entry_of, supersedes

try:  # POSIX only
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


@contextmanager
def flocked(fd: int, exclusive: bool) -> Iterator[None]:
    """Hold a ``flock`` on ``fd`` (exclusive, or shared) for the ``with`` block; nothing
    without ``fcntl``."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


class CacheIndex:
    """Each key's kept entry of one cache file, and every use its records name, brought up to
    date by :meth:`read_new`.  Not locked itself: the cache calls it under its lock.

    Args:
        path: the cache file (missing: no entries).
        warn: warns (message, file, line) of the damaged lines a scan found.
    """

    def __init__(self, path: Path, warn: Callable[[str, Path, int], None]) -> None:
        self.path = path
        self._warn = warn
        self.entries: dict[str, CacheEntry] = {}  #: key -> the entry kept (:meth:`keep`)
        #: key -> every use its records name (kept or not: a use record names another sample)
        self.uses: dict[str, set[Use]] = {}
        self.offset = 0  #: bytes of the file already parsed (always at a line start)
        self._lines = 0  # lines of the file already parsed
        self._reported: set[int] = set()  # byte offsets of bad lines already warned about
        #: one message per torn or corrupt line skipped (file, line, byte offset, reason)
        self.damage: list[str] = []

    def keep(self, entry: CacheEntry) -> bool:
        """Keep ``entry`` unless the key's kept entry wins (:func:`.supersedes`); returns
        whether it was kept."""
        self.uses.setdefault(entry.key, set()).add(entry.use)
        kept = self.entries.get(entry.key)
        if kept is None or supersedes(entry, kept):
            self.entries[entry.key] = entry
            return True
        return False

    def scan(self) -> None:
        """:meth:`read_new`, and one warning naming the damaged lines it found, if any (also
        when the read failed part way).

        Raises:
            OSError: the file cannot be read.
        """
        before = len(self.damage)
        try:
            self.read_new()
        finally:
            found = self.damage[before:]
            if found:
                first = found[0].removeprefix(f"{self.path}: ")
                line = int(first.split()[1]) if first.startswith("line ") else 0
                self._warn(one_line(f"answer cache {self.path}: {len(found)} damaged line(s) "
                                    f"skipped (the first: {first})"), self.path, line)

    def damage_summary(self) -> str | None:
        """One line for a run summary, or ``None`` when no line was damaged."""
        if not self.damage:
            return None
        first = self.damage[0].removeprefix(f"{self.path}: ")
        return one_line(f"{self.path}: {len(self.damage)} damaged line(s) skipped "
                        f"(the first: {first})")

    def read_new(self) -> None:
        """Parse what was appended to the file since the last read (under a shared ``flock``,
        so no half-written line of a live writer is seen); start over when the file shrank.
        Damaged lines are skipped and added to :attr:`damage`, each once.

        Raises:
            OSError: the file cannot be read.
        """
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            with flocked(fd, exclusive=False):
                size = os.fstat(fd).st_size
                if size < self.offset:  # the file was replaced or truncated: start over
                    self.entries.clear()
                    self.uses.clear()
                    self._reported.clear()
                    self.offset = 0
                    self._lines = 0
                if size == self.offset:
                    return
                chunks = []
                pos = self.offset
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
        start = self.offset
        for line in complete.split(b"\n")[:-1]:
            self._lines += 1
            self._ingest(line, start, self._lines)
            start += len(line) + 1
        self.offset = start
        if tail.strip() and start not in self._reported:
            # Readers hold a shared lock and writers write whole lines under an exclusive one,
            # so an unterminated tail can only be left by a writer that died mid-write.
            self._reported.add(start)
            self.damage.append(f"{self.path}: line {self._lines + 1} (byte {start}): torn "
                               f"last record skipped ({len(tail)} bytes, no newline — an "
                               "interrupted write)")

    def _ingest(self, line: bytes, offset: int, number: int) -> None:
        if not line.strip():
            return
        try:
            entry = entry_of(json.loads(line.decode("utf-8")), offset)
        except (UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
            if offset not in self._reported:
                self._reported.add(offset)
                self.damage.append(f"{self.path}: line {number} (byte {offset}): corrupt "
                                   f"record skipped ({type(exc).__name__}: "
                                   f"{str(exc)[:120]})")
            return
        self.keep(entry)
