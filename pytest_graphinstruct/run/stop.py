"""The run's stop signal, shared by every process of one run (the xdist controller and workers).

An interrupt (SIGTERM, or Ctrl+C sent to the controller alone) reaches one process; the others
keep asking for answers until they are told.  The process that is interrupted calls
:meth:`StopSignal.request`, which writes one small file into a folder all processes of the run
know (the controller creates it and hands its path to each worker through ``workerinput``);
:meth:`StopSignal.watch` runs a daemon thread in each worker that sees the file within
:data:`POLL_S` seconds and calls back once.  Files, not pipes: a worker needs no channel of its
own, and a process that starts late still sees a stop requested before it started.

Promises: :meth:`StopSignal.request` is atomic (a reader sees no file or the whole reason) and
idempotent (the first reason stays); :meth:`StopSignal.reason` never raises; the watcher calls
its callback at most once and ends with it (or when :meth:`StopSignal.close` is called).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from pytest_graphinstruct.models.base import quiet_thread

POLL_S = 0.05
"""How often a watcher looks for the stop file (a stat; cheap)."""
STOP_GRACE_S = 5.0
"""How long calls already in flight when a run is interrupted may still finish (their answers
are cached, paid work is not thrown away) before they are cancelled."""
_FILE = "stop"
_MAX_REASON = 300


class StopSignal:
    """The stop file of one run, in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._closed = threading.Event()

    @classmethod
    def create(cls) -> StopSignal:
        """A new, private folder for one run's stop file (removed by :meth:`remove`)."""
        return cls(Path(tempfile.mkdtemp(prefix="gi-run-")))

    @property
    def path(self) -> Path:
        return self.folder / _FILE

    def request(self, reason: str) -> None:
        """Tell every process of the run to stop issuing requests, because of ``reason`` (one
        line).  Never raises: a folder that is gone means the run is over anyway."""
        if self.path.exists():
            return
        text = " ".join(reason.split())[:_MAX_REASON] or "stopped"
        with contextlib.suppress(OSError):
            tmp = self.folder / f".{_FILE}.{os.getpid()}.{threading.get_ident()}"
            tmp.write_text(text, encoding="utf-8")
            if not self.path.exists():
                os.replace(tmp, self.path)
            else:
                tmp.unlink()

    def reason(self) -> str | None:
        """Why the run was asked to stop, or ``None`` when it was not."""
        try:
            return self.path.read_text(encoding="utf-8") or "stopped"
        except OSError:
            return None

    def watch(self, callback: Callable[[str], None]) -> threading.Thread:
        """Call ``callback(reason)`` once, from a daemon thread, when a stop is requested."""

        def run() -> None:
            quiet_thread()
            while not self._closed.wait(POLL_S):
                reason = self.reason()
                if reason is not None:
                    callback(reason)
                    return

        thread = threading.Thread(target=run, name="gi-stop-watch", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        """Stop watching (the file stays)."""
        self._closed.set()

    def remove(self) -> None:
        """Stop watching and delete the folder (the process that created it, at the end)."""
        self.close()
        shutil.rmtree(self.folder, ignore_errors=True)
