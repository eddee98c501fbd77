"""The run's stop signal: one file every process of a run watches."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import pytest_graphinstruct.run.stop as stop_module
from pytest_graphinstruct.run.stop import StopSignal


@pytest.fixture
def signal_() -> Iterator[StopSignal]:
    stop = StopSignal.create()
    yield stop
    stop.remove()


def test_no_reason_until_a_stop_is_requested(signal_: StopSignal) -> None:
    assert signal_.reason() is None
    signal_.request("terminated (SIGTERM)")
    assert signal_.reason() == "terminated (SIGTERM)"


def test_the_first_reason_stays(signal_: StopSignal) -> None:
    signal_.request("terminated (SIGTERM)")
    signal_.request("interrupted (Ctrl+C)")
    assert signal_.reason() == "terminated (SIGTERM)"


def test_a_reason_is_one_bounded_line(signal_: StopSignal) -> None:
    signal_.request("a\nb\r\n" + "x" * 1000)
    reason = signal_.reason()
    assert reason is not None and "\n" not in reason and len(reason) <= 300


def test_another_process_view_of_the_same_folder_sees_the_stop(signal_: StopSignal) -> None:
    other = StopSignal(Path(signal_.folder))  # what a worker builds from workerinput
    signal_.request("stop")
    assert other.reason() == "stop"


def test_the_watcher_calls_back_once_when_the_stop_appears(signal_: StopSignal) -> None:
    seen: list[str] = []
    called = threading.Event()

    def callback(reason: str) -> None:
        seen.append(reason)
        called.set()

    watcher = StopSignal(Path(signal_.folder)).watch(callback)
    assert not called.is_set()
    signal_.request("terminated (SIGTERM)")
    assert called.wait(10), "the watcher never saw the stop file"  # generous: it polls at 50 ms
    watcher.join(10)
    assert not watcher.is_alive() and seen == ["terminated (SIGTERM)"]


def test_closing_ends_the_watcher_without_a_call(signal_: StopSignal) -> None:
    watcher = signal_.watch(lambda reason: pytest.fail("called without a stop"))
    signal_.close()
    watcher.join(10)
    assert not watcher.is_alive()


def test_a_removed_folder_is_no_stop_and_no_error(tmp_path: Path) -> None:
    stop = StopSignal(tmp_path / "gone")
    assert stop.reason() is None
    stop.request("late")  # the run is over: nothing to tell, nothing raised
    assert stop.reason() is None


def _not_my_parent() -> int:
    """A pid that is not this process's parent: to the watcher, a parent that is gone."""
    return os.getppid() + 1


def test_a_worker_whose_controller_is_gone_stops_the_run_and_exits(
        signal_: StopSignal, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stop_module, "ORPHAN_EXIT_S", 0.1)
    seen: list[str] = []
    exited: list[int] = []
    done = threading.Event()

    def exit_process(code: int) -> None:
        exited.append(code)
        done.set()

    parent = _not_my_parent()
    watcher = StopSignal(Path(signal_.folder)).watch(seen.append, parent=parent,
                                                     exit_process=exit_process)
    assert done.wait(10), "the watcher never ended the orphaned process"
    watcher.join(10)
    gone = f"the run's controller (pid {parent}) is gone"
    assert seen == [gone] and exited == [1]
    assert signal_.reason() == gone  # the run's other processes stop too


def test_a_stop_before_the_controller_goes_is_called_back_once(
        signal_: StopSignal, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stop_module, "ORPHAN_EXIT_S", 0.1)
    parent = [os.getppid()]  # alive for now
    monkeypatch.setattr(stop_module.os, "getppid", lambda: parent[0])
    seen: list[str] = []
    exited = threading.Event()
    called = threading.Event()

    def callback(reason: str) -> None:
        seen.append(reason)
        called.set()

    watcher = signal_.watch(callback, parent=parent[0], exit_process=lambda code: exited.set())
    signal_.request("interrupted (Ctrl+C)")
    assert called.wait(10)
    assert watcher.is_alive() and not exited.is_set()  # still watching the controller
    parent[0] = 1  # the controller dies during the grace: the worker is reparented
    assert exited.wait(10), "the watcher stopped watching the controller after the stop"
    watcher.join(10)
    assert seen == ["interrupted (Ctrl+C)"]


def test_a_worker_with_its_controller_never_exits_on_its_own(signal_: StopSignal) -> None:
    watcher = signal_.watch(lambda reason: None, parent=os.getppid(),
                            exit_process=lambda code: pytest.fail("exited with a live parent"))
    signal_.request("stop")
    signal_.close()
    watcher.join(10)
    assert not watcher.is_alive()
