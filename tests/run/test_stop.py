"""The run's stop signal: one file every process of a run watches."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

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
