"""Requests in flight shared across processes: the one process asking for a key holds an
exclusive ``flock`` on ``<directory>/claims/<key>.lock``; another asking for the same key waits
(bounded) until the answer is cached or the claim is released.  The kernel releases the lock of
a killed owner at once, so a dead claim never blocks anyone; a hung owner blocks others for at
most their ``wait_s``.  Without ``fcntl`` (Windows) there are no claims."""

from __future__ import annotations

import hashlib
import os
import re
import socket
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.cache_format import CacheEntry

try:  # POSIX only
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

CLAIMS_DIR = "claims"
CLAIM_POLL_S = 0.05
_SAFE_KEY = re.compile(r"^[0-9A-Za-z_-]{1,128}$")

Lookup = Callable[[str, Callable[[CacheEntry], bool] | None], CacheEntry | None]
"""How claims look a key up in the cache (:meth:`.AnswerCache.lookup`)."""


@dataclass
class Claim:
    """What :meth:`KeyClaims.claim` got: the key to ask for, or another process's answer.

    Exactly one of these holds: ``held`` (this process asks; call :meth:`release` when the
    answer is stored or given up on), ``answer`` is set (another process obtained it while this
    one waited; ``entry`` is its record), ``cancelled`` (the wait was stopped), or none of them
    (no claim could be taken — no ``fcntl``, an unwritable directory, or ``wait_s`` ran out
    while the owner still worked — so this process asks unshared).  ``waited`` says whether
    another process held the key.
    """

    path: Path | None = None
    fd: int | None = None
    waited: bool = False
    answer: Answer | None = None
    cancelled: bool = False
    entry: CacheEntry | None = None

    @property
    def held(self) -> bool:
        return self.fd is not None

    def release(self) -> None:
        """Give the key back (idempotent).  The file is removed while still locked, so a process
        that opened it meanwhile notices (:func:`_lock_claim`) and opens the new one."""
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        if self.path is not None:
            with suppress(OSError):
                os.unlink(self.path)
        with suppress(OSError):
            os.close(fd)  # releases the flock


class KeyClaims:
    """The claims of one cache directory.

    Args:
        directory: the cache directory (claims live in its ``claims/`` folder).
        lookup: the cache's lookup (a key, which entries count) → the entry, or ``None``.
    """

    def __init__(self, directory: Path, lookup: Lookup) -> None:
        self.directory = directory
        self._lookup = lookup

    def claim(self, key: str, *, wait_s: float, stop: threading.Event | None = None,
              poll_s: float = CLAIM_POLL_S,
              accept: Callable[[CacheEntry], bool] | None = None) -> Claim:
        """Take the right to ask for ``key``, or wait for the process that has it.

        Returns at once with a held claim when no other process is asking.  Otherwise polls
        every ``poll_s`` until the key's answer appears in the cache (returned in
        :attr:`Claim.answer`), the owner releases the claim (an error or a truncated answer is
        not cached: then this process holds it and asks itself), ``stop`` is set, or
        ``wait_s`` passes.  ``accept`` says which entries count as the answer (default: any;
        a scheduler refuses stale ones, which the owner is asking again).  Never raises:
        whatever goes wrong, the caller asks unshared.
        """
        if fcntl is None:  # pragma: no cover - Windows
            return Claim()
        name = key if _SAFE_KEY.match(key) else hashlib.sha256(key.encode()).hexdigest()
        path = self.directory / CLAIMS_DIR / f"{name}.lock"
        try:
            path.parent.mkdir(exist_ok=True)
        except OSError:
            return Claim()
        deadline = time.monotonic() + wait_s
        waited = False
        while True:
            try:
                fd = _lock_claim(path)
            except OSError:
                return Claim(waited=waited)
            if fd is not None:
                claim = Claim(path, fd, waited)
                if waited:  # the owner may have stored the answer just before letting go
                    entry = self._accepted(key, accept)
                    if entry is not None:
                        claim.release()
                        return Claim(waited=True, answer=entry.answer, entry=entry)
                return claim
            waited = True
            entry = self._accepted(key, accept)
            if entry is not None:
                return Claim(waited=True, answer=entry.answer, entry=entry)
            if time.monotonic() >= deadline:
                return Claim(waited=True)
            if stop is not None and stop.wait(poll_s):
                return Claim(waited=True, cancelled=True)
            if stop is None:
                time.sleep(poll_s)

    def _accepted(self, key: str, accept: Callable[[CacheEntry], bool] | None
                  ) -> CacheEntry | None:
        entry = self._lookup(key, accept)
        return entry if entry is not None and (accept is None or accept(entry)) else None


def _lock_claim(path: Path) -> int | None:
    """A descriptor holding an exclusive flock on ``path``, or ``None`` when another process
    (or thread) holds it.  Loops when the file was removed or replaced between open and lock
    (its owner released it), so the lock held is always on the file the path names."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except OSError:
            os.close(fd)
            raise
        try:
            st = os.stat(path)
            mine = os.fstat(fd)
            current = (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)
        except FileNotFoundError:
            current = False
        if current:
            with suppress(OSError):  # who holds it, for a human looking; best effort
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()} {socket.gethostname()} {time.time():.3f}\n"
                         .encode())
            return fd
        os.close(fd)
