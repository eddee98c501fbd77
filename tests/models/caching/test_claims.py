"""Claims on a cache folder's answers (issue 47 §7): seen by another process, released by the
kernel when the holder dies, removed when released, one holder per key, never fatal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.models.caching.claims import CLAIMS_DIR, ClaimBoard

KEY = "a" * 64

HOLDER = """
import sys, time
from pathlib import Path
from pytest_graphinstruct.models.caching.claims import ClaimBoard
claim = ClaimBoard(Path(sys.argv[1])).take(sys.argv[2])
print("held" if claim is not None and claim.locked else "refused", flush=True)
time.sleep(600)
"""


def hold_in_another_process(folder: Path, key: str) -> subprocess.Popen[str]:
    """A process that claims ``key`` and keeps it until it is killed."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder), key],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_claim_another_process_holds_is_refused_until_it_dies(tmp_path: Path) -> None:
    board = ClaimBoard(tmp_path)
    proc = hold_in_another_process(tmp_path, KEY)
    try:
        assert board.take(KEY) is None  # seen across processes
        assert board.take("b" * 64) is not None  # another key is free
        proc.send_signal(signal.SIGKILL)  # a crash: the kernel releases the lock
        proc.wait(30)
        claim = board.take(KEY)
        assert claim is not None and claim.locked  # the file it left is taken over
        claim.release()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def test_a_released_claim_removes_its_file_and_one_key_has_one_holder(tmp_path: Path) -> None:
    board = ClaimBoard(tmp_path)
    claim = board.take(KEY)
    assert claim is not None and board.path(KEY).exists()
    assert board.take(KEY) is None  # a second holder in this process too (another thread)
    claim.release()
    claim.release()  # twice is harmless
    assert not list((tmp_path / CLAIMS_DIR).iterdir())
    with board.take(KEY) or pytest.fail("free again") as again:
        assert again.locked


def test_a_waiter_gets_the_claim_once_its_holder_releases_it(tmp_path: Path) -> None:
    board = ClaimBoard(tmp_path)
    held = board.take(KEY)
    assert held is not None
    tried = threading.Event()

    def halted(pause: float) -> bool:
        tried.set()
        return False

    got: list[object] = []
    waiter = threading.Thread(target=lambda: got.append(board.wait(KEY, halted)))
    waiter.start()
    assert tried.wait(30)  # it found the claim held and waits
    held.release()
    waiter.join(30)
    (claim,) = got
    assert claim is not None and getattr(claim, "locked", False)


def test_a_waiter_gives_up_when_the_run_halts(tmp_path: Path) -> None:
    board = ClaimBoard(tmp_path)
    held = board.take(KEY)
    assert held is not None and board.wait(KEY, lambda pause: True) is None
    held.release()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_folder_that_cannot_be_written_grants_unlocked_claims_and_says_so(
        tmp_path: Path) -> None:
    tmp_path.chmod(0o500)
    try:
        board = ClaimBoard(tmp_path)
        claim = board.take(KEY)
        assert claim is not None and not claim.locked
        assert board.warning is not None and "cannot claim requests in" in board.warning
    finally:
        tmp_path.chmod(0o700)


def test_a_claims_path_that_is_not_a_folder_grants_unlocked_claims_and_says_so(
        tmp_path: Path) -> None:
    (tmp_path / CLAIMS_DIR).write_text("not a folder", encoding="utf-8")
    board = ClaimBoard(tmp_path)
    claim = board.take(KEY)
    assert claim is not None and not claim.locked
    assert board.warning is not None and str(tmp_path / CLAIMS_DIR) in board.warning
    assert "\n" not in board.warning


@given(st.text(max_size=80))
def test_any_key_names_one_file_inside_the_claims_folder(key: str) -> None:
    board = ClaimBoard(Path("/cache"))
    path = board.path(key)
    assert path.parent == Path("/cache") / CLAIMS_DIR
    assert path.name.endswith(".lock") and len(path.name) == 64 + len(".lock")
    assert board.path(key) == path
