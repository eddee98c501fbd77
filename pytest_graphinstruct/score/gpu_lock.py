"""A machine-wide lock around GPU work, so parallel workers (``-n 2``) take turns on the device.

The lock is an advisory ``fcntl.flock`` on a file shared by every process of the machine
(:func:`default_lock_path`: ``<tempdir>/pytest-graphinstruct-gpu.lock``).  The lock is released
when the ``with`` block ends or the process dies.  Where ``fcntl`` does not exist (Windows),
:func:`gpu_lock` raises :class:`GpuLockUnavailable` — callers then stay on the CPU.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:  # POSIX only
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = "pytest-graphinstruct-gpu.lock"


class GpuLockUnavailable(RuntimeError):
    """File locking is not available on this platform."""


def default_lock_path() -> Path:
    """The per-machine lock file (``$GRAPHINSTRUCT_GPU_LOCK`` overrides it)."""
    override = os.environ.get("GRAPHINSTRUCT_GPU_LOCK")
    return Path(override) if override else Path(tempfile.gettempdir()) / LOCK_NAME


@contextmanager
def gpu_lock(path: str | Path | None = None) -> Iterator[Path]:
    """Hold the machine-wide GPU lock for the duration of the block (blocking until free).

    Raises:
        GpuLockUnavailable: no ``fcntl`` on this platform.
    """
    if fcntl is None:
        raise GpuLockUnavailable("fcntl is not available; GPU work needs the file lock")
    lock_path = Path(path) if path is not None else default_lock_path()
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield lock_path
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
