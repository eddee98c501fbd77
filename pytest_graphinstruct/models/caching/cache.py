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
* **Every use of an answer is recorded.**  Two requests with identical messages (two
  instructions with the same text, two cells) share one key and one answer;
  :meth:`AnswerCache.record_use` appends one record of the key under the other request's
  metadata, which never replaces the kept answer, so :meth:`AnswerCache.all_entries` (and
  ``cache export``) sees every instruction; :meth:`AnswerCache.merge_from` copies such records.
* **This run or an earlier one.**  :attr:`AnswerCache.mark` is the size of the file when the
  run began (given by the process that began it, else the size at opening):
  :meth:`AnswerCache.earlier` says whether an entry was cached before the run began (its line
  lies before the mark; one run's answers are appended by its one asking process).
* **Failures are noticed, never fatal.**  Damaged lines (bad JSON, a torn record, a record
  without a key or text) are skipped; each scan that finds new ones emits one
  :class:`CacheWarning` naming the file and the count (:attr:`AnswerCache.damaged_lines`,
  :meth:`AnswerCache.damage_summary`).  A write that fails (disk full, read-only file) is
  counted (:attr:`AnswerCache.write_failures`, :attr:`AnswerCache.first_write_error`,
  :meth:`AnswerCache.write_failure_summary`), the first one per cache emits one
  :class:`CacheWarning` naming the file and the OS error, and :meth:`AnswerCache.put` returns
  ``False`` instead of raising: the run goes on without caching that answer.

Only one process of a run asks endpoints (the xdist controller's answer service), so a run
never asks for one answer twice; two runs sharing a cache folder at once do not either: a
request is asked under its claim (:mod:`.claims`), which the other run awaits, and a
``--gi-batch`` run has its folder alone (:mod:`.lease`).

The cache's parts: :mod:`.entries` (the record, :class:`~.entries.CacheEntry`, which
record of a key wins), :class:`~.index.CacheIndex` (the entries read so far, damaged
lines), :class:`~.writer.CacheWriter` (the write path: what is written, crash-safe appends,
failed writes).
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections.abc import Callable, Mapping
from contextlib import suppress
from pathlib import Path

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.models.caching.entries import CacheEntry, entry_of, records
from pytest_graphinstruct.models.caching.index import CacheIndex
from pytest_graphinstruct.models.caching.snapshot import Snapshot
from pytest_graphinstruct.models.caching.writer import CacheWriter, PutOutcome

CACHE_FILE = "answers.jsonl"

class CacheWarning(UserWarning):
    """The answer cache skipped damaged lines or could not write an answer (never fatal)."""


def _warn(message: str, path: Path, line: int) -> None:
    """Warn at ``path:line`` (what pytest's warnings summary shows as the place), not at a line
    of this module."""
    # Under ``-W error`` a warning is raised; the cache's promise (never fatal) comes first, and
    # the failure stays visible through the counters and summaries.
    with suppress(Exception):
        warnings.warn_explicit(message, CacheWarning, str(path), line)


class AnswerCache:
    """Answers keyed by :meth:`Request.cache_key`, persisted in ``<directory>/answers.jsonl``.

    Thread-safe and process-safe.  Opening reads every record already in the file.

    Args:
        directory: created (with parents) when missing.
        mark: the size of the file when the run began (:attr:`mark`); default: its size now.

    Raises:
        ModelError: the directory cannot be created or the file cannot be read.
    """

    def __init__(self, directory: str | os.PathLike[str], *, mark: int | None = None) -> None:
        self.directory = Path(directory)
        self.path = self.directory / CACHE_FILE
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ModelError(f"cannot create the answer cache directory {self.directory}: "
                             f"{exc.strerror or exc}") from None
        self._lock = threading.RLock()
        self._index = CacheIndex(self.path, _warn)
        self._writer = CacheWriter(self.path, index=self._index, lock=self._lock,
                                   warn=_warn)
        try:
            self._index.scan()
        except OSError as exc:
            raise ModelError(f"cannot read the answer cache {self.path}: "
                             f"{exc.strerror or exc}") from None
        #: bytes of the file written before this run (see :meth:`earlier`)
        self.mark = self._index.offset if mark is None else max(0, int(mark))

    def __repr__(self) -> str:
        return f"AnswerCache({str(self.directory)!r}, entries={len(self)})"

    def __len__(self) -> int:
        with self._lock:
            return len(self._index.entries)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    # -- what went wrong ---------------------------------------------------------------------

    @property
    def warnings(self) -> list[str]:
        """One message per torn or corrupt line skipped (file, byte offset, reason)."""
        with self._lock:
            return list(self._index.damage)

    @property
    def damaged_lines(self) -> int:
        """How many damaged lines (torn, bad JSON, not a record) were skipped so far."""
        with self._lock:
            return len(self._index.damage)

    def damage_summary(self) -> str | None:
        """One line for a run summary, or ``None`` when no line was damaged:
        ``<file>: 3 damaged line(s) skipped (the first: byte 120: corrupt record ...)``."""
        with self._lock:
            return self._index.damage_summary()

    @property
    def writes(self) -> int:
        """Answers this process wrote."""
        return self._writer.writes

    @property
    def write_failures(self) -> int:
        """Answers this process could not write (disk full, read-only file)."""
        return self._writer.write_failures

    @property
    def first_write_error(self) -> str | None:
        """The first failed write, one line (``None``: none failed)."""
        return self._writer.first_write_error

    def write_failure_summary(self) -> str | None:
        """One line for a run summary, or ``None`` when every write succeeded:
        ``2 answer(s) not cached: cannot write <file>: [Errno 28] No space left on device``."""
        with self._lock:
            return self._writer.failure_summary()

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
            entry = self._index.entries.get(key)
            if entry is None or (accept is not None and not accept(entry)):
                try:
                    self._index.scan()
                except OSError:
                    return None  # a transient read problem is a miss, never a crash
                entry = self._index.entries.get(key)
            return entry

    def earlier(self, entry: CacheEntry) -> bool:
        """Whether ``entry`` was cached before this run began (its line lies before
        :attr:`mark`); an answer this run or another process cached since is not."""
        return entry.offset is not None and entry.offset < self.mark

    def entries(self) -> list[CacheEntry]:
        """Every entry, in file order (after picking up other processes' appends)."""
        with self._lock:
            with suppress(OSError):
                self._index.scan()
            return list(self._index.entries.values())

    def refresh(self) -> int:
        """Read records appended by other processes; returns how many new entries appeared."""
        with self._lock:
            before = len(self._index.entries)
            self._index.scan()
            return len(self._index.entries) - before

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
        return self._writer.store(key, request, answer, endpoint=endpoint, served=served)

    def record_use(self, key: str, request: Request) -> PutOutcome:
        """Record that ``request`` used the answer kept for ``key`` (a request whose messages
        are another instruction's or cell's, word for word: one key, one answer), unless a
        record already names that use or nothing is kept: one more record of ``key`` under
        ``request``'s metadata, which never replaces the kept answer
        (:func:`~.entries.use_record`).  So :meth:`all_entries` and ``cache export`` see
        every instruction that used an answer.  ``written``, ``skipped`` or ``failed``."""
        return self._writer.record_use(key, request)

    def all_entries(self) -> list[CacheEntry]:
        """Every readable record in file order — also those a key's kept entry outranks and
        those recording a use (:meth:`record_use`) — damaged lines skipped.

        Raises:
            OSError: the file cannot be read.
        """
        if not self.path.is_file():
            return []
        return [entry_of(obj) for obj in records(self.path)]

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
        return self._writer.merge(other.path)

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
