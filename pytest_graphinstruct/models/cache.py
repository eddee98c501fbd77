"""The crash-safe, multi-process answer cache (``<directory>/answers.jsonl``).

Format: one JSON object per line, appended::

    {"v": 1, "key": "<sha256>", "endpoint": "...", "model": "...", "instruction_id": "L1-001",
     "level": 1, "cell": "gpt-x/zero-shot", "sample_index": 0, "text": "...",
     "usage": {"input_tokens": 120, "output_tokens": 80, "source": "provider"} | null,
     "calls": 1, "finish_reason": "stop", "latency_s": 1.2, "created": 1700000000.0}

``usage.source`` is :attr:`Usage.source` (a record without it was written before sources were
recorded, when every usage came from the provider, and reads as ``provider``).

The key is :meth:`Request.cache_key` of the backend's endpoint — endpoint, model, full messages,
decoding parameters, extras and the sample index.  No API key or other secret is ever written.

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
  'length'``) are never stored.  The first record of a key wins.

On platforms without ``fcntl`` (Windows) there is no inter-process locking; use one process.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_graphinstruct.answers import USAGE_PROVIDER, Answer, Usage
from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.base import Request

try:  # POSIX only
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

CACHE_FILE = "answers.jsonl"
ATTEMPTS_FILE = "attempts.jsonl"
FORMAT_VERSION = 1
_LEVEL_RE = re.compile(r"^L(\d+)-")


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


class AnswerCache:
    """Answers keyed by :meth:`Request.cache_key`, persisted in ``<directory>/answers.jsonl``.

    Thread-safe and process-safe.  Opening reads every record already in the file.

    Args:
        directory: created (with parents) when missing.

    Raises:
        ModelError: the directory cannot be created or the file cannot be read.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.path = self.directory / CACHE_FILE
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ModelError(f"cannot create the answer cache directory {self.directory}: "
                             f"{exc.strerror or exc}") from None
        self._lock = threading.RLock()
        self._entries: dict[str, CacheEntry] = {}
        self._offset = 0  # bytes of the file already parsed (always at a line start)
        self._reported: set[int] = set()  # byte offsets of bad lines already warned about
        self._warnings: list[str] = []
        self.writes = 0
        try:
            self._scan()
        except OSError as exc:
            raise ModelError(f"cannot read the answer cache {self.path}: "
                             f"{exc.strerror or exc}") from None

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

    # -- reading -----------------------------------------------------------------------------

    def get(self, key: str) -> Answer | None:
        """The cached answer for ``key`` (``cached=True``), or ``None``.

        A miss re-scans what other processes appended since the last scan.
        """
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                try:
                    self._scan()
                except OSError:
                    return None  # a transient read problem is a miss, never a crash
                entry = self._entries.get(key)
            return entry.answer if entry is not None else None

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
            self._ingest(line, start)
            start += len(line) + 1
        self._offset = start
        if tail.strip() and start not in self._reported:
            # Readers hold a shared lock and writers write whole lines under an exclusive one,
            # so an unterminated tail can only be left by a writer that died mid-write.
            self._reported.add(start)
            self._warnings.append(f"{self.path}: byte {start}: torn last record skipped "
                                  f"({len(tail)} bytes, no newline — an interrupted write)")

    def _ingest(self, line: bytes, offset: int) -> None:
        if not line.strip():
            return
        try:
            entry = _entry(json.loads(line.decode("utf-8")))
        except (UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
            if offset not in self._reported:
                self._reported.add(offset)
                self._warnings.append(f"{self.path}: byte {offset}: corrupt record skipped "
                                      f"({type(exc).__name__}: {str(exc)[:120]})")
            return
        self._entries.setdefault(entry.key, entry)

    # -- writing -----------------------------------------------------------------------------

    def put(self, key: str, request: Request, answer: Answer, *, endpoint: str = "") -> bool:
        """Append ``answer`` for ``key`` durably; returns whether anything was written.

        Errors, truncated answers, answers that came from a cache, and keys already cached are
        not written.

        Raises:
            OSError: the file cannot be written (the caller decides whether that is fatal).
        """
        if not answer.ok or answer.truncated or answer.cached or answer.text is None:
            return False
        record = {
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
            "created": round(time.time(), 3),
        }
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        with self._lock:
            if key in self._entries:
                return False
        # Each put has its own descriptor, so flock also serialises this process's threads; the
        # fsync happens after unlocking so concurrent writers' fsyncs can overlap.
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
        with self._lock:
            self._entries.setdefault(key, _entry(record))
            self.writes += 1
        return True

    # -- answers that could not be cached ----------------------------------------------------

    def note_uncached(self, key: str, reason: str) -> None:
        """Record (in ``<directory>/attempts.jsonl``) that a request was answered but its answer
        cannot be cached (``truncated``, ``error``), so an xdist worker waiting for another
        worker's answer stops waiting and asks itself.  Best effort: a write failure is
        ignored (the waiting worker then waits for its bound, as before)."""
        line = json.dumps({"key": key, "reason": reason}, separators=(",", ":")) + "\n"
        with suppress(OSError):
            fd = os.open(self.directory / ATTEMPTS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                         0o644)
            try:
                _write_all(fd, line.encode("utf-8"))
            finally:
                os.close(fd)

    def uncached(self) -> set[str]:
        """Keys some process noted with :meth:`note_uncached` (in any run)."""
        try:
            text = (self.directory / ATTEMPTS_FILE).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return set()
        keys = set()
        for line in text.splitlines():
            with suppress(ValueError, TypeError, AttributeError):
                keys.add(str(json.loads(line)["key"]))
        return keys

    # -- export ------------------------------------------------------------------------------

    def cells(self) -> list[str]:
        """The distinct cells recorded, in first-seen order."""
        return list(dict.fromkeys(e.cell for e in self.entries()))

    def export_raw(self, path: str | os.PathLike[str], *, cell: str | None = None,
                   model: str | None = None) -> int:
        """Write the cached answers in the raw-generation JSONL format; returns lines written.

        One line per instruction (``{"instruction_id", "level", "samples": [...]}``), samples
        ordered by sample index (a missing index leaves no gap in the list), instructions in
        first-cached order.  ``cell``/``model`` restrict what is exported.  The file is written
        to a temporary name and renamed, so readers never see a partial export.

        Raises:
            ModelError: the selection spans several cells (the format has no cell field, so they
                would merge); pass ``cell=``.
            OSError: the file cannot be written.
        """
        chosen = [e for e in self.entries()
                  if (cell is None or e.cell == cell) and (model is None or e.model == model)]
        cells = list(dict.fromkeys(e.cell for e in chosen))
        if len(cells) > 1:
            raise ModelError(f"the cache holds answers of several cells ({', '.join(cells)}); "
                             "export one at a time with cell=...")
        groups: dict[str, dict[int, CacheEntry]] = defaultdict(dict)
        levels: dict[str, int | None] = {}
        for e in chosen:
            groups[e.instruction_id].setdefault(e.sample_index, e)
            levels.setdefault(e.instruction_id, e.level)
        out = Path(path)
        tmp = out.with_name(out.name + f".tmp{os.getpid()}")
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
                fh.write(json.dumps({"instruction_id": iid, "level": levels[iid],
                                     "samples": samples}, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, out)
        return len(groups)


def _write_all(fd: int, data: bytes) -> None:
    # One os.write suffices for a regular file; the loop only matters on a short write
    # (e.g. a nearly full disk), where finishing the line beats leaving it torn.
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _entry(obj: Any) -> CacheEntry:
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
    return CacheEntry(
        key=key, answer=answer, endpoint=str(obj.get("endpoint", "")),
        model=str(obj.get("model", "")), instruction_id=str(obj.get("instruction_id", "")),
        level=level if isinstance(level, int) and not isinstance(level, bool) else None,
        cell=str(obj.get("cell", "")),
        sample_index=sample if isinstance(sample, int) and not isinstance(sample, bool) else 0,
    )


def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None
