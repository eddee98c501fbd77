"""A gate that lets one request at a time through to a serial endpoint, across processes.

The embedded llama.cpp server generates one answer at a time and queues the rest.  A request
queued *inside the server* is still timed by the client, so with several requests in flight
(threads, or xdist workers sharing the one server) the last in line would time out although the
server is healthy.  :class:`SerialGate` keeps the queue on the client side instead: a request
waits at the gate (untimed, however long the queue) and its HTTP timeout starts only when the
gate opens, i.e. when the server is free to answer it — timeouts thus scale with the queue.

Promises:

* At most one holder at a time among the threads of this process and — where ``fcntl`` exists
  (Linux, macOS) — among all processes using the same lock file.  Without ``fcntl`` only the
  threads of one process are ordered.
* The lock is released when the holder leaves the ``with`` block, raises, or its process dies
  (the kernel drops ``flock`` locks of a dead process), so a killed worker never wedges the
  others.
* The lock file is created on first use and never deleted (it holds no data).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def lock_path_for(base_url: str) -> Path:
    """The lock file shared by every process that talks to ``base_url`` on this machine."""
    digest = hashlib.sha256(base_url.encode("utf-8")).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"pytest-graphinstruct-serial-{digest}.lock"


class SerialGate:
    """One holder at a time, across threads and processes (see the module docstring).

    Args:
        path: the lock file; every process that must be ordered names the same file.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._thread_lock = threading.Lock()
        self._fd: int | None = None
        self._pid = os.getpid()

    def __repr__(self) -> str:
        return f"SerialGate({str(self.path)!r})"

    def __reduce__(self) -> tuple[type[SerialGate], tuple[str]]:
        # A fork or a pickle gets its own descriptor (flock belongs to the open file).
        return (SerialGate, (str(self.path),))

    def _descriptor(self) -> int:
        if self._fd is None or self._pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            self._pid = os.getpid()
        return self._fd

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Wait (without a timeout) until this caller is the only holder; release on exit."""
        with self._thread_lock:
            if fcntl is None:  # pragma: no cover - Windows
                yield
                return
            fd = self._descriptor()
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the descriptor (a later :meth:`hold` reopens it)."""
        with self._thread_lock:
            if self._fd is not None and self._pid == os.getpid():
                os.close(self._fd)
            self._fd = None
