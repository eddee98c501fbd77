"""The cache folder's lease (issue 47 §7): ordinary runs share a folder, a --gi-batch run has
it alone; the refusal is one line naming the other run; a dead holder blocks nobody."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.models.caching.lease import (
    BATCH,
    PLAIN,
    CacheBusy,
    acquire,
    busy_message,
    check,
    lock_holders,
)

HOLDER = """
import sys, time
from pathlib import Path
from pytest_graphinstruct.models.caching.lease import acquire
acquire(Path(sys.argv[1]), sys.argv[2])
print("held", flush=True)
time.sleep(600)
"""


def holder(folder: Path, kind: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder), kind],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)


def test_plain_runs_share_a_folder_and_a_batch_run_is_refused_naming_them(
        tmp_path: Path) -> None:
    other = holder(tmp_path, PLAIN)
    try:
        acquire(tmp_path, PLAIN).release()  # two ordinary runs share it
        with pytest.raises(CacheBusy) as caught:
            check(tmp_path, BATCH)
        message = str(caught.value)
        assert "\n" not in message
        assert message.startswith(f"another run is using the answer cache {tmp_path} (pid "
                                  f"{other.pid}: ")
        assert message.endswith("nothing was sent. Wait for it to end, or give this run "
                                "another --gi-cache")
    finally:
        stop(other)
    acquire(tmp_path, BATCH).release()  # the dead holder blocks nobody


def test_a_batch_run_has_its_folder_alone(tmp_path: Path) -> None:
    other = holder(tmp_path, BATCH)
    try:
        for kind in (PLAIN, BATCH):
            with pytest.raises(CacheBusy, match=f"pid {other.pid}"):
                acquire(tmp_path, kind)
        with pytest.raises(CacheBusy) as caught:
            check(tmp_path, PLAIN)
        assert str(caught.value).startswith(
            f"a --gi-batch run is using the answer cache {tmp_path} (pid {other.pid}: ")
    finally:
        stop(other)
    check(tmp_path, PLAIN)


def test_one_process_holds_one_lock_per_folder_and_gives_it_back_with_the_last(
        tmp_path: Path) -> None:
    first, second = acquire(tmp_path, BATCH), acquire(tmp_path, BATCH)  # two models' runners
    with pytest.raises(CacheBusy, match="this process"):
        acquire(tmp_path, PLAIN)
    first.release()
    first.release()  # twice is harmless
    with pytest.raises(CacheBusy):
        acquire(tmp_path, PLAIN)
    second.release()
    acquire(tmp_path, PLAIN).release()


def test_a_check_of_a_folder_no_run_used_creates_nothing(tmp_path: Path) -> None:
    check(tmp_path / "fresh", BATCH)
    assert not (tmp_path / "fresh").exists()


def test_the_refusal_counts_what_it_does_not_name() -> None:
    line = busy_message(Path("/c"), BATCH, [f"pid {n}" for n in range(5)])
    assert "(pid 0, pid 1, pid 2, and 2 more)" in line
    assert busy_message(Path("/c"), PLAIN, []).startswith(
        "a --gi-batch run is using the answer cache /c: ")


LINE = st.sampled_from(["FLOCK", "POSIX", "->", "OFDLCK"])


@given(st.lists(st.tuples(LINE, st.sampled_from(["READ", "WRITE"]),
                          st.integers(0, 99), st.sampled_from(["fe:00:7", "fe:00:8"]))))
def test_lock_holders_are_the_flock_holders_of_that_file_each_once(
        rows: list[tuple[str, str, int, str]]) -> None:
    lines = [(f"{n}: -> FLOCK ADVISORY {mode} {pid} {dev} 0 EOF" if kind == "->" else
              f"{n}: {kind}  ADVISORY  {mode} {pid} {dev} 0 EOF")
             for n, (kind, mode, pid, dev) in enumerate(rows, 1)]
    expected = list(dict.fromkeys(pid for kind, _, pid, dev in rows
                                  if kind == "FLOCK" and dev == "fe:00:7"))
    assert lock_holders([*lines, "garbage", ""], "fe:00:7") == expected


def test_a_folder_where_no_lease_file_can_be_opened_gives_an_unlocked_lease_and_says_so(
        tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    lease = acquire(blocker / "cache", BATCH)  # its folder cannot be made: never fatal
    assert lease.warning is not None and "\n" not in lease.warning
    path = blocker / "cache" / "runs.lock"
    assert lease.warning.startswith(f"cannot take the run lease {path}")
    lease.release()
    acquire(tmp_path, BATCH).release()
