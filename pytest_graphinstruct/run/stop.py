"""The run's stop signal, shared by every process of one run (the xdist controller and workers).

An interrupt (SIGTERM, or Ctrl+C sent to the controller alone) reaches one process; the others
keep asking for answers until they are told.  The process that is interrupted calls
:meth:`StopSignal.request`, which writes one small file into a folder all processes of the run
know (the controller creates it and hands its path to each worker through ``workerinput``);
:meth:`StopSignal.watch` runs a daemon thread in each worker that sees the file within
:data:`POLL_S` seconds and calls back once.  Files, not pipes: a worker needs no channel of its
own, and a process that starts late still sees a stop requested before it started.

A worker whose controller is gone (killed outright, so it never said anything) cannot hand its
results to anyone: its watcher, given the parent's pid, sees the parent change within
:data:`POLL_S`, requests the stop (so the run's other processes stop issuing too), lets calls in
flight finish for :data:`STOP_GRACE_S` (their answers are cached) and ends the process
:data:`ORPHAN_EXIT_S` after it saw the loss, whatever the process is doing then (waiting on a
call, or on threads at interpreter exit).

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

from pytest_graphinstruct.models.base import quiet_thread, quiet_timer

POLL_S = 0.05
"""How often a watcher looks for the stop file (a stat; cheap)."""
STOP_GRACE_S = 5.0
"""How long calls already in flight when a run is interrupted may still finish (their answers
are cached, paid work is not thrown away) before they are cancelled."""
ORPHAN_EXIT_S = STOP_GRACE_S + 10.0
"""How long a worker whose controller is gone may still run after it noticed: the grace for its
calls in flight, then time to write their answers to the cache."""
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

    def watch(self, callback: Callable[[str], None], *, parent: int | None = None,
              exit_process: Callable[[int], object] = os._exit) -> threading.Thread:
        """Call ``callback(reason)`` once, from a daemon thread, when a stop is requested.

        With ``parent`` (the pid of the process that started this one, an xdist worker's
        controller) the thread also watches for that process to go: then it requests the stop
        itself, calls back (if it had not) and calls ``exit_process(1)`` :data:`ORPHAN_EXIT_S`
        seconds later.  Watching ends at :meth:`close`, or after the call back when there is
        no ``parent``."""

        def run() -> None:
            quiet_thread()
            called = False
            while not self._closed.wait(POLL_S):
                if parent is not None and os.getppid() != parent:
                    gone = f"the run's controller (pid {parent}) is gone"
                    self.request(gone)
                    _exit_later(exit_process)
                    if not called:
                        callback(self.reason() or gone)
                    return
                if not called:
                    reason = self.reason()
                    if reason is not None:
                        callback(reason)
                        called = True
                        if parent is None:
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


def _exit_later(exit_process: Callable[[int], object]) -> None:
    """End this process :data:`ORPHAN_EXIT_S` from now, even while the interpreter waits for
    other threads at exit.  Nothing is printed: in an xdist worker pytest captures stderr
    during an item, and the reason is in the stop file."""
    quiet_timer(ORPHAN_EXIT_S, lambda: exit_process(1), "gi-orphan-exit")
