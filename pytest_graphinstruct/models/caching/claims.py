"""Claims on the answers of one cache folder that every process can see: while one run asks
for an answer, another run on the same cache waits for it and reads it from the cache instead
of asking (and paying) again (issue 47 §7; docs/MODELS.md "Two runs on one cache").

A claim is an exclusive ``fcntl.flock`` on a small file per cache key,
``<cache>/claims/<key>.lock``, held while the request is asked:

* **Seen by every process** on the machine that opens the same folder, whatever its
  working directory (the lock is on the file, not on a name in memory).
* **Released by the kernel when its process dies** (SIGKILL included), so a crashed run never
  leaves a claim another run would wait on forever; its file stays behind, unlocked, and the
  next taker locks it.
* **Removed when released**: the holder unlinks the file before it unlocks it, and a taker
  checks, once it holds the lock, that the file it locked is still the one at the path (a
  waiter that opened the file just before its removal holds an orphan and tries again), so
  one key never has two holders.
* **Never fatal.**  A claims folder that cannot be created or written (a read-only cache, a
  full disk) makes :meth:`ClaimBoard.take` grant an unlocked claim and keep the first error
  as :attr:`ClaimBoard.warning` (one line for the run's summary: answers may then be asked by
  two runs at once, as before claims existed).  Without ``fcntl`` (Windows) there are no
  claims (:attr:`ClaimBoard.enabled` is false; docs/MODELS.md).

``flock`` is not reliable on some network file systems (old NFS): keep a shared cache on a
local disk.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from pytest_graphinstruct.models.base import one_line

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no inter-process claims
    fcntl = None  # type: ignore[assignment]

CLAIMS_DIR = "claims"
"""The folder of the claim files, under the cache folder."""
FIRST_POLL_S = 0.02
"""The first pause of :meth:`ClaimBoard.wait` between two tries (doubled up to
:data:`MAX_POLL_S`)."""
MAX_POLL_S = 0.25
"""The longest pause of :meth:`ClaimBoard.wait` between two tries."""


class Claim:
    """One held claim (see the module's promises); :meth:`release` gives it back (twice is
    harmless).  ``fd`` is ``None`` for a claim granted without a lock (claims unavailable)."""

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path = path
        self._fd = fd

    @property
    def locked(self) -> bool:
        """Whether the claim holds a lock other processes see (``False``: claims unavailable,
        or released)."""
        return self._fd is not None

    def release(self) -> None:
        """Remove the claim file and unlock it (the file first, so that no newcomer locks a
        file that is about to go)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with suppress(OSError):
            os.unlink(self.path)
        os.close(fd)  # closing the last descriptor releases the flock

    def __enter__(self) -> Claim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class ClaimBoard:
    """The claims of one cache folder.

    Args:
        folder: the answer cache's folder (the claims go in its :data:`CLAIMS_DIR`).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder) / CLAIMS_DIR
        self.enabled = fcntl is not None
        self.warning: str | None = None  #: why claims could not be taken (the first error)
        self._lock = threading.Lock()

    def path(self, key: str) -> Path:
        """The claim file of ``key`` (a cache key: 64 hexadecimal digits; anything else is
        hashed into a safe name)."""
        if not (len(key) == 64 and all(c in "0123456789abcdef" for c in key)):
            import hashlib

            key = hashlib.sha256(key.encode("utf-8")).hexdigest()
        return self.folder / f"{key}.lock"

    def take(self, key: str) -> Claim | None:
        """Claim ``key`` if no other holder has it: the claim, or ``None`` when another
        process (or another thread of this one) holds it.  When claims are unavailable (no
        ``fcntl``; a folder that cannot be written: :attr:`warning`) every take succeeds with
        an unlocked claim."""
        if not self.enabled:
            return Claim(self.path(key), None)
        path = self.path(key)
        while True:
            try:
                fd = self._open(path)
            except OSError as exc:
                self._unavailable(exc)
                return Claim(path, None)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return None
            except OSError as exc:  # a file system without flock
                os.close(fd)
                self._unavailable(exc)
                return Claim(path, None)
            if _same_file(fd, path):
                return Claim(path, fd)
            os.close(fd)  # locked an orphan its holder removed meanwhile: try the path again

    def wait(self, key: str, halted: Callable[[float], bool]) -> Claim | None:
        """Claim ``key``, waiting while another holder has it: the claim, or ``None`` when
        ``halted(pause)`` — called between two tries, it waits up to ``pause`` seconds and
        says whether to give up (the run stopped) — said so."""
        pause = FIRST_POLL_S
        while True:
            claim = self.take(key)
            if claim is not None:
                return claim
            if halted(pause):
                return None
            pause = min(MAX_POLL_S, pause * 2)

    def _open(self, path: Path) -> int:
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except FileNotFoundError:
            self.folder.mkdir(parents=True, exist_ok=True)
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def _unavailable(self, exc: OSError) -> None:
        with self._lock:
            if self.warning is None:
                self.warning = one_line(
                    f"cannot claim requests in {self.folder} ({exc.strerror or exc}): another "
                    "run on this cache may ask for the same answers at the same time")


def _same_file(fd: int, path: Path) -> bool:
    """Whether the open ``fd`` is still the file at ``path`` (not removed or replaced)."""
    try:
        held, now = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)
