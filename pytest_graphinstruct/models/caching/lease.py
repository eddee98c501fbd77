"""Which kind of run asks for the answers of a cache folder now: runs without ``--gi-batch``
share a folder (their requests are claimed one by one, :mod:`.claims`), a ``--gi-batch`` run
has it alone (issue 47 §7; docs/MODELS.md "Two runs on one cache").

The lease is an ``fcntl.flock`` on ``<cache>/runs.lock``: shared for an ordinary run
(:data:`PLAIN`), exclusive for a batch run (:data:`BATCH`).  Promises:

* **A batch run is alone on its cache folder.**  A batch's requests stay unanswered for hours;
  another run asking them meanwhile (a second batch run, or an ordinary one) would submit and
  pay for them again.  So a batch run's lease is refused while any other run holds one, and
  every other run's while a batch run holds one: :class:`CacheBusy`, one line naming the other
  run(s) — their process ids and command lines where the system says them (``/proc/locks``,
  Linux) — and the ways on; nothing was sent.  Ordinary runs share the folder.
* **Released by the kernel when the process dies**, so a killed run never blocks the next
  one; and by :meth:`CacheLease.release` when the run ends.
* One process holds one lock per folder whatever the number of its schedulers (a count of
  holders per folder and kind); a process that holds one kind is refused the other.
* Without ``fcntl`` (Windows) there is no lease (nothing is refused; docs/MODELS.md).  Never
  fatal otherwise: a lease file that cannot be opened (a read-only cache folder) is no lease,
  said by :attr:`CacheLease.warning` (one line for the run's summary).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.base import one_line

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lease
    fcntl = None  # type: ignore[assignment]

LEASE_NAME: Final = "runs.lock"
"""The lease file, in the cache folder."""
LeaseKind = Literal["plain", "batch"]
PLAIN: Final[LeaseKind] = "plain"
BATCH: Final[LeaseKind] = "batch"
SHOWN_HOLDERS: Final = 3
"""Other runs a refusal names (the rest are counted)."""


class CacheBusy(ModelError):
    """Another run holds the cache folder in a way this run's kind cannot share (a batch run,
    or any run while this one is a batch run); one line naming it and the ways on."""


@dataclass
class _Held:
    kind: LeaseKind
    fd: int
    count: int


_held: dict[str, _Held] = {}  # this process's leases, by the folder's real path
_held_lock = threading.Lock()


class CacheLease:
    """One holder's share of this process's lease on a cache folder (:func:`acquire`)."""

    def __init__(self, folder: Path, kind: LeaseKind, where: str | None,
                 warning: str | None = None) -> None:
        self.folder = folder
        self.kind = kind
        self._where = where  # the registry's key; None: no lock (no fcntl)
        #: why no lease could be taken (a lease file that cannot be opened); ``None``: taken
        self.warning = warning

    def release(self) -> None:
        """Give this holder's share back; the process's lock goes with the last one.  A
        second call does nothing."""
        where, self._where = self._where, None
        if where is None:
            return
        with _held_lock:
            held = _held.get(where)
            if held is None:
                return
            held.count -= 1
            if held.count <= 0:
                del _held[where]
                os.close(held.fd)  # releases the flock


def acquire(folder: Path, kind: LeaseKind) -> CacheLease:
    """This process's lease of ``kind`` on the cache ``folder`` (created when missing).

    Raises:
        CacheBusy: another run holds a lease this one cannot share (see the module), or this
            process holds the other kind.
    """
    folder = Path(folder)
    if fcntl is None:
        return CacheLease(folder, kind, None)
    path = folder / LEASE_NAME
    try:
        folder.mkdir(parents=True, exist_ok=True)
        where = str(path.resolve())
    except OSError as exc:
        return CacheLease(folder, kind, None, _unleased(path, exc))
    with _held_lock:
        held = _held.get(where)
        if held is not None:
            if held.kind != kind:
                raise CacheBusy(busy_message(folder, kind, [f"pid {os.getpid()} (this process)"]))
            held.count += 1
            return CacheLease(folder, kind, where)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError:
            try:  # a read-only folder: a lease still works on a read-only descriptor
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError as exc:
                return CacheLease(folder, kind, None, _unleased(path, exc))
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if kind == BATCH else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise CacheBusy(busy_message(folder, kind, holders(path))) from None
        except OSError as exc:  # a file system without flock: no lease, as without fcntl
            os.close(fd)
            return CacheLease(folder, kind, None, _unleased(path, exc))
        _held[where] = _Held(kind, fd, 1)
        return CacheLease(folder, kind, where)


def check(folder: Path, kind: LeaseKind) -> None:
    """Refuse now what :func:`acquire` would refuse (a run's preflight: before anything is
    sent); nothing is held afterwards.

    Raises:
        CacheBusy: as :func:`acquire`.
    """
    if not (Path(folder) / LEASE_NAME).exists():
        return
    acquire(folder, kind).release()


def _unleased(path: Path, exc: OSError) -> str:
    """The one line of a lease not taken (:attr:`CacheLease.warning`)."""
    return one_line(f"cannot take the run lease {path} ({exc.strerror or exc}): a --gi-batch "
                    "run and another run on this cache are not kept apart")


def busy_message(folder: Path, kind: LeaseKind, others: list[str]) -> str:
    """The one line of :class:`CacheBusy`: the folder, the other run(s) (``others``: each
    already described; empty: not known), why two such runs cannot share it, and the ways
    on."""
    shown = ", ".join(others[:SHOWN_HOLDERS]) + (
        f", and {len(others) - SHOWN_HOLDERS} more" if len(others) > SHOWN_HOLDERS else "")
    who = f" ({shown})" if shown else ""
    if kind == BATCH:
        why = (f"another run is using the answer cache {folder}{who}: a --gi-batch run asks "
               "for its answers alone, since a batch's requests wait for hours and another run "
               "asking them meanwhile would submit (and pay for) them again")
    else:
        why = (f"a --gi-batch run is using the answer cache {folder}{who}: this run would "
               "send (and pay for) requests its batches hold or are about to submit")
    return one_line(why, "; nothing was sent. Wait for it to end, or give this run another "
                    "--gi-cache", limit=600)


def holders(path: Path) -> list[str]:
    """The processes that hold a lock on ``path`` (``pid N: its command line``), as far as
    the system says (``/proc/locks``); empty when it does not."""
    try:
        st = os.stat(path)
        lines = Path("/proc/locks").read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return []
    device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    return [_describe(pid) for pid in lock_holders(lines, device) if pid != os.getpid()]


def lock_holders(lines: list[str], device: str) -> list[int]:
    """The process ids that hold (not wait for) an ``flock`` on the file ``device``
    (``MAJOR:MINOR:INODE`` as ``/proc/locks`` writes it) in the ``/proc/locks`` ``lines``,
    each once, in their order; a line of another shape is passed over."""
    pids: list[int] = []
    for line in lines:
        parts = line.split()
        if len(parts) < 6 or parts[1] != "FLOCK":  # "N: -> FLOCK ..." waits for the lock
            continue
        if parts[5] == device and parts[4].isdigit():
            pids.append(int(parts[4]))
    return list(dict.fromkeys(pids))


def _describe(pid: int) -> str:
    """``pid N: command line`` (escaped, bounded), or ``pid N`` when it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return f"pid {pid}"
    command = " ".join(a.decode("utf-8", "replace") for a in raw.split(b"\0") if a)
    return f"pid {pid}: {one_line(command, limit=120)}" if command else f"pid {pid}"
