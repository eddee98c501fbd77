"""How one process of a run stops: SIGTERM (and Ctrl+C in an xdist controller) become a graceful
stop that reaches every process of the run through its stop file (:mod:`..run.stop`).

A stop ends the issuing of requests at once; items still to run end without a result; calls in
flight may finish for :data:`~pytest_graphinstruct.run.stop.STOP_GRACE_S` seconds; the run then
writes its partial report.  A second SIGTERM or Ctrl+C quits at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_graphinstruct.run.stop import StopSignal


class RunStopper:
    """The stop state of one process: the run's stop file (``signal``), why the run stopped
    issuing requests (``reason``), whether SIGTERM arrived (``terminated``) and the line that
    says so, not yet shown (``line``).

    ``is_controller`` says whether this process is the xdist controller (asked when needed:
    xdist may register its session after this object exists); ``on_stop(reason)`` is called
    from the stop file's watcher thread when some process of the run asks it to stop."""

    def __init__(self, *, worker: bool, is_controller: Callable[[], bool],
                 on_stop: Callable[[str], None]) -> None:
        self.worker = worker
        self._is_controller = is_controller
        self._on_stop = on_stop
        self.signal: StopSignal | None = None
        self.reason: str | None = None
        self.terminated = False
        self.line: str | None = None
        self._previous_sigterm: Any = None
        self._previous_sigint: Any = None

    def open(self, folder: str | None) -> None:
        """Take SIGTERM as an interruption and open the run's stop file: the controller (or
        the single process) creates its folder; a worker watches ``folder`` (the controller's)
        and stops issuing requests as soon as the file appears."""
        from pytest_graphinstruct.run.stop import StopSignal

        self._catch_sigterm()
        if not self.worker:
            self.signal = StopSignal.create()
            if (self._is_controller() and threading.current_thread() is threading.main_thread()
                    and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
                self._previous_sigint = signal.signal(signal.SIGINT, self._on_sigint)
        elif folder is not None:
            self.signal = StopSignal(Path(folder))
        if self.signal is not None:  # a worker also watches for its controller to go
            self.signal.watch(self._stop_requested,
                              parent=os.getppid() if self.worker else None)

    def request(self, reason: str) -> None:
        """Ask every other process of the run to stop, because of ``reason``."""
        if self.signal is not None:
            self.signal.request(reason)

    def take_line(self) -> str | None:
        """The stop's line, not yet shown (then forgotten: it is shown once)."""
        line, self.line = self.line, None
        return line

    def close(self) -> None:
        """Give the signals back and remove the stop file (the controller's) or stop
        watching it (a worker's)."""
        if self._previous_sigterm is not None:
            signal.signal(signal.SIGTERM, self._previous_sigterm)
        if self._previous_sigint is not None:
            signal.signal(signal.SIGINT, self._previous_sigint)
        if self.signal is not None:
            if not self.worker:
                self.signal.remove()
            else:
                self.signal.close()

    def _catch_sigterm(self) -> None:
        """SIGTERM ends the run like Ctrl+C (requests not started are dropped, the report says
        the run was terminated) instead of killing the process with nothing written."""
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None):
            return  # someone else handles it
        self._previous_sigterm = signal.signal(signal.SIGTERM, self._on_sigterm)

    def _on_sigterm(self, signum: int, frame: Any) -> None:
        if self.terminated or self.signal is None:
            self.terminated = True
            raise KeyboardInterrupt("SIGTERM")  # the second one, or before the run began
        self.terminated = True
        self._stop("terminated (SIGTERM)", "SIGTERM")

    def _on_sigint(self, signum: int, frame: Any) -> None:
        """xdist controller: the first Ctrl+C stops the run (every worker stops issuing and
        sends what it has), the second one quits at once."""
        if self.reason is not None:
            raise KeyboardInterrupt()
        self._stop("interrupted (Ctrl+C)", "Ctrl+C")

    def _stop(self, reason: str, what: str) -> None:
        """Stop issuing requests in every process of the run, now.  Runs inside a signal
        handler, so it only sets a flag and writes the stop file: the schedulers are stopped
        by the watcher's thread (:meth:`_stop_requested`), never here, where a lock the
        interrupted code holds could deadlock."""
        from pytest_graphinstruct.run.stop import STOP_GRACE_S

        self.reason = reason
        self.request(reason)
        self.line = (f"pytest-graphinstruct: {what}: no new requests; calls in flight "
                     f"may finish for {STOP_GRACE_S:g} s, then the partial report is "
                     f"written ({what} again to quit at once)")
        if self._is_controller():  # no item runs here, so nothing captures stderr: say it now
            with contextlib.suppress(OSError, ValueError):
                os.write(sys.stderr.fileno(), f"\n{self.line}\n".encode())
            self.line = None

    def _stop_requested(self, reason: str) -> None:
        """Some process of the run asked it to stop (called from the watcher's thread)."""
        self.reason = reason
        self._on_stop(reason)
