"""score.gpu_lock: the machine-wide lock serializes threads and processes, and frees itself."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pytest_graphinstruct.score import gpu_lock as gpu_lock_module
from pytest_graphinstruct.score.gpu_lock import (
    LOCK_NAME,
    GpuLockUnavailable,
    default_lock_path,
    gpu_lock,
)

PROC_LOCKS = Path("/proc/locks")


def _is_free(path: Path) -> bool:
    """Whether a fresh descriptor can take the lock at once (then it lets go again)."""
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def _someone_waits(path: Path) -> bool:
    """Whether the kernel lists a blocked request (``->``) on ``path``'s inode."""
    inode = f":{path.stat().st_ino} "
    return any("->" in line and inode in line
               for line in PROC_LOCKS.read_text().splitlines())


def test_gpu_lock_excludes_other_processes(tmp_path: Path) -> None:
    path = tmp_path / "gpu.lock"
    probe = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR)\n"
             "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB); print('free')\n"
             "except BlockingIOError:\n    print('held')\n")
    with gpu_lock(path):
        held = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True,
                              text=True, check=True).stdout.strip()
    free = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert (held, free) == ("held", "free")


@pytest.mark.skipif(not PROC_LOCKS.exists(), reason="needs Linux /proc/locks to see a waiter")
def test_a_second_thread_waits_until_the_first_lets_go(tmp_path: Path) -> None:
    path = tmp_path / "gpu.lock"
    order: list[str] = []
    first_in, release, second_in = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        with gpu_lock(path):
            order.append("first in")
            first_in.set()
            release.wait()
            order.append("first out")

    def second() -> None:
        with gpu_lock(path):
            order.append("second in")
            second_in.set()

    a = threading.Thread(target=first)
    a.start()
    first_in.wait()
    b = threading.Thread(target=second)
    b.start()
    # until the second thread is either inside (a broken lock) or blocked in the kernel
    while not second_in.is_set() and not _someone_waits(path):
        second_in.wait(0.005)
    assert not second_in.is_set()
    release.set()
    a.join()
    b.join()
    assert order == ["first in", "first out", "second in"]


def test_the_lock_is_released_when_the_block_raises(tmp_path: Path) -> None:
    path = tmp_path / "gpu.lock"
    with pytest.raises(RuntimeError), gpu_lock(path):
        assert not _is_free(path)
        raise RuntimeError("boom")
    assert _is_free(path)


def test_the_lock_is_released_when_its_process_dies(tmp_path: Path) -> None:
    path = tmp_path / "gpu.lock"
    holder = ("import sys\nfrom pytest_graphinstruct.score.gpu_lock import gpu_lock\n"
              "with gpu_lock(sys.argv[1]):\n    print('held', flush=True)\n    sys.stdin.read()\n")
    proc = subprocess.Popen([sys.executable, "-c", holder, str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        assert not _is_free(path)
    finally:
        proc.kill()
        proc.wait()
    assert _is_free(path)


def test_the_block_gets_the_lock_path_and_the_file_is_created(tmp_path: Path) -> None:
    path = tmp_path / "new.lock"
    with gpu_lock(str(path)) as held:
        assert held == path and path.exists()


def test_default_lock_path_and_its_override(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.delenv("GRAPHINSTRUCT_GPU_LOCK", raising=False)
    assert default_lock_path().name == LOCK_NAME
    monkeypatch.setenv("GRAPHINSTRUCT_GPU_LOCK", str(tmp_path / "mine.lock"))
    assert default_lock_path() == tmp_path / "mine.lock"
    with gpu_lock() as held:
        assert held == tmp_path / "mine.lock"


def test_without_fcntl_the_lock_is_unavailable(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    monkeypatch.setattr(gpu_lock_module, "fcntl", None)
    with pytest.raises(GpuLockUnavailable), gpu_lock(tmp_path / "gpu.lock"):
        pass
    assert not (tmp_path / "gpu.lock").exists()
