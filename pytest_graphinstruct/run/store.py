"""The run store: every saved report as a numbered file in one folder.

A store is a folder (by default ``.graphinstruct/runs`` under the pytest rootdir) of report
files named ``NNNN_<UTC yyyymmddThhmmss>.json``: the run's number (the highest number there + 1,
at least four digits) and the UTC time it was saved.  A saved file is never overwritten and
never changed; other files in the folder are ignored.  A run is named by a *ref*
(:meth:`RunStore.resolve`): its number (``3``, ``0003``), ``latest``, ``-1`` (the latest),
``-2`` (the one before), … or a report file's path.

Nothing here reads a report's contents: the store keeps files.  What a run holds (partial or
not, its cells) is the report's own, read by :func:`~.records.reader.read_report`.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.options import DEFAULT_STORE_DIR

DEFAULT_STORE = Path(DEFAULT_STORE_DIR)
"""The store's folder, relative to the pytest rootdir, unless configured."""

_NAME = re.compile(r"([0-9]{4,})_([0-9]{8}T[0-9]{6})\.json")
_TIME = "%Y%m%dT%H%M%S"
_LOCK = ".lock"


class StoreError(GraphInstructError, ValueError):
    """A ref that names no run, or a store that cannot be read or written (one line, naming
    the store)."""


@dataclass(frozen=True)
class StoredRun:
    """One saved run: its number, its file, and when it was saved (UTC)."""

    number: int
    path: Path
    saved: datetime

    @property
    def name(self) -> str:
        """The run's number as the store writes it (``0003``)."""
        return f"{self.number:04d}"


def default_store(rootdir: Path) -> Path:
    """The store's folder under ``rootdir`` when none is configured."""
    return rootdir / DEFAULT_STORE


class RunStore:
    """The numbered reports in ``root`` (the folder is created on the first save)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"RunStore({str(self.root)!r})"

    def runs(self) -> list[StoredRun]:
        """Every saved run, by number (none when the folder does not exist).

        Raises:
            StoreError: ``root`` exists but is not a readable folder.
        """
        if not self.root.exists():
            return []
        try:
            names = [p.name for p in self.root.iterdir()]
        except OSError as exc:
            raise StoreError(f"cannot read the run store {self.root}: "
                             f"{exc.strerror or exc}") from None
        out = []
        for name in names:
            m = _NAME.fullmatch(name)
            if m is None:
                continue
            try:
                saved = datetime.strptime(m.group(2), _TIME).replace(tzinfo=UTC)
            except ValueError:  # not a time (month 13): not a file the store wrote
                continue
            out.append(StoredRun(int(m.group(1)), self.root / name, saved))
        return sorted(out, key=lambda r: (r.number, r.path.name))

    def save(self, report_path: Path, *, now: datetime | None = None) -> StoredRun:
        """Copy the report file at ``report_path`` into the store as the next numbered run.

        The copy is written to a temporary file and linked into its final name, which fails
        rather than overwrite; saves from several processes at once are serialized by a lock
        file where the platform has one (POSIX).  ``now`` (UTC) names the file; the clock's
        time by default.

        Raises:
            StoreError: the report cannot be read, or the store cannot be written.
        """
        try:
            data = Path(report_path).read_bytes()
        except OSError as exc:
            raise StoreError(f"cannot save {report_path} in the run store {self.root}: "
                             f"{exc.strerror or exc}") from None
        return self.save_bytes(data, now=now)

    def save_bytes(self, data: bytes, *, now: datetime | None = None) -> StoredRun:
        """Save a report's bytes as the next numbered run (as :meth:`save` does).

        Raises:
            StoreError: the store cannot be written.
        """
        stamp = (now or datetime.now(UTC)).astimezone(UTC).strftime(_TIME)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with self._locked():
                tmp = self.root / f".{os.getpid()}.{stamp}.tmp"
                try:
                    tmp.write_bytes(data)
                    return self._link(tmp, stamp)
                finally:
                    tmp.unlink(missing_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot save a run in the run store {self.root}: "
                             f"{exc.strerror or exc}") from None

    def unwritable_reason(self) -> str | None:
        """Why runs cannot be saved here (``None`` when they can): a file in the folder's
        place, a folder that cannot be created, or one that is not writable.  Creates the
        folder when missing, as a save would."""
        if self.root.exists() and not self.root.is_dir():
            return f"the run store {self.root} is not a folder"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return f"cannot create the run store {self.root}: {exc.strerror or exc}"
        if not os.access(self.root, os.W_OK | os.X_OK):
            return f"cannot save runs in the run store {self.root}: the folder is not writable"
        return None

    def _link(self, tmp: Path, stamp: str) -> StoredRun:
        """Give ``tmp`` the next free number's name (retrying when another save took it)."""
        while True:
            number = max((r.number for r in self.runs()), default=0) + 1
            final = self.root / f"{number:04d}_{stamp}.json"
            try:
                os.link(tmp, final)
            except FileExistsError:
                continue
            except OSError:  # a file system without hard links: check, then rename
                if final.exists():
                    continue
                os.replace(tmp, final)
            saved = datetime.strptime(stamp, _TIME).replace(tzinfo=UTC)
            return StoredRun(number, final, saved)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: the no-overwrite link still holds
            yield
            return
        with open(self.root / _LOCK, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def resolve(self, ref: str) -> Path:
        """The report file a ref names: a run number (``3``, ``0003``), ``latest``, ``-N``
        (the N-th run counted from the latest: ``-1`` is the latest), or a report file's path
        (taken as it is when such a file exists).

        Raises:
            StoreError: one line naming the store and the runs it holds.
        """
        text = ref.strip()
        path = Path(text)
        with contextlib.suppress(RuntimeError):  # ``~nobody``: no such home, not a file
            path = path.expanduser()
        if text and path.is_file():
            return path
        runs = self.runs()
        if text == "latest":
            text = "-1"
        if re.fullmatch(r"-[0-9]+", text) and int(text) < 0:
            back = -int(text)
            if back <= len(runs):
                return runs[-back].path
        elif re.fullmatch(r"[0-9]+", text):
            for run in runs:
                if run.number == int(text):
                    return run.path
        raise StoreError(f"no run {ref!r} in the run store {self.root} ({self._holds(runs)}; "
                         "a ref is a run number, latest, -1, -2, ... or a report file)")

    def _holds(self, runs: list[StoredRun]) -> str:
        if not self.root.exists():
            return "the folder does not exist"
        if not runs:
            return "it holds no runs"
        numbers = [r.number for r in runs]
        if numbers == list(range(numbers[0], numbers[-1] + 1)):
            shown = (runs[0].name if len(runs) == 1 else f"{runs[0].name}-{runs[-1].name}")
        else:
            shown = ", ".join(r.name for r in runs[-10:])
            shown = ("..., " if len(runs) > 10 else "") + shown
        return f"it holds {len(runs)} run{'s' if len(runs) != 1 else ''}: {shown}"
