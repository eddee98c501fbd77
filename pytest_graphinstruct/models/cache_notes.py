"""Notes to peers sharing an answer cache: that this process will not cache a key's answer (an
error, a truncated answer, the circuit open, the budget spent, stopped, cancelled, a failed
write), so an xdist peer waiting for it stops waiting at once, in ``<directory>/attempts.jsonl``
or, when the cache folder cannot be written, in a file of the system's temporary folder named
after the cache folder (:func:`notes_fallback`), which every process of the run reads too."""

from __future__ import annotations

import hashlib
import json
import tempfile
from contextlib import suppress
from pathlib import Path

from pytest_graphinstruct.models.cache_writer import append_whole

ATTEMPTS_FILE = "attempts.jsonl"


class UncachedNotes:
    """The notes of one cache directory, as one run writes and reads them.

    Args:
        directory: the cache directory.
        run: the run's id, written with each note (``None``: not known; every note is read).
    """

    def __init__(self, directory: Path, run: str | None) -> None:
        self.directory = directory
        self.run = run

    def note(self, key: str, reason: str, calls: int = 0) -> None:
        """Record that this process will not cache ``key``'s answer (``truncated``,
        ``error``, ``circuit open``, ``budget``, ``stopped``, ``cancelled``, ``not cacheable:
        write failed``), so an xdist peer waiting for it stops waiting at once, and how many
        calls this process made for it (``calls``: the peer that runs the item counts them,
        :meth:`calls_by_key`).

        Written to ``<directory>/attempts.jsonl``; when that cannot be written (a read-only
        cache folder, a full disk) to :func:`notes_fallback` instead, which
        :meth:`keys` reads too.  Never raises: when neither can be written the peer waits
        for its bound, as without the note."""
        record: dict[str, object] = {"key": key, "reason": reason}
        if calls > 0:
            record["calls"] = int(calls)
        if self.run is not None:
            record["run"] = self.run
        line = (json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8")
        for path in (self.directory / ATTEMPTS_FILE, notes_fallback(self.directory)):
            try:
                append_whole(path, line)
                return
            except OSError:
                continue

    def keys(self) -> set[str]:
        """Keys noted with :meth:`note` by this run (any of its processes; with no
        :attr:`run` id, by any run), from the cache folder and :func:`notes_fallback`."""
        return set(self.calls_by_key())

    def calls_by_key(self) -> dict[str, int]:
        """:meth:`keys` → the most calls one process noted for the key (0 when
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


def notes_fallback(directory: Path) -> Path:
    """Where :meth:`UncachedNotes.note` writes when the cache folder cannot be written:
    ``<temp>/graphinstruct-notes-<hash of the folder's absolute path>.jsonl`` — the same file
    for every process using that folder, writable when the folder is not."""
    try:
        where = str(directory.resolve())
    except OSError:
        where = str(directory.absolute())
    digest = hashlib.sha256(where.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"graphinstruct-notes-{digest}.jsonl"
