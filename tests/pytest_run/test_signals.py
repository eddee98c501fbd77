"""``RunStopper``: SIGTERM (and Ctrl+C in an xdist controller) become a graceful stop that reaches
every process of the run through its stop file; a second one quits at once.  The handlers are
called directly: no signal is sent."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_graphinstruct.pytest_run.signals import RunStopper
from pytest_graphinstruct.run.stop import STOP_GRACE_S, StopSignal

WAIT_S = 30.0  # a bound on waiting for the watcher thread, never a measured limit


class Calls:
    """``on_stop``'s calls, and an event set by the first."""

    def __init__(self) -> None:
        self.reasons: list[str] = []
        self.called = threading.Event()

    def __call__(self, reason: str) -> None:
        self.reasons.append(reason)
        self.called.set()


def _stopper(*, worker: bool = False, controller: bool = False,
             calls: Calls | None = None) -> RunStopper:
    return RunStopper(worker=worker, is_controller=lambda: controller,
                      on_stop=calls if calls is not None else Calls())


@pytest.fixture
def opened() -> Iterator[list[RunStopper]]:
    """Stoppers a test opened, closed after it (their signals given back)."""
    stoppers: list[RunStopper] = []
    yield stoppers
    for s in reversed(stoppers):
        s.close()


def test_a_fresh_stopper_has_not_stopped() -> None:
    s = _stopper()
    assert (s.signal, s.reason, s.terminated, s.take_line()) == (None, None, False, None)
    s.request("nothing to tell")  # no stop file yet: nothing happens, nothing raises
    s.close()


def test_the_line_is_taken_once() -> None:
    s = _stopper()
    s.line = "stopping"
    assert s.take_line() == "stopping"
    assert s.take_line() is None


def test_sigterm_before_the_run_began_quits_at_once() -> None:
    s = _stopper()
    with pytest.raises(KeyboardInterrupt):
        s._on_sigterm(signal.SIGTERM, None)
    assert s.terminated and s.reason is None


def test_the_single_process_owns_the_stop_file(opened: list[RunStopper]) -> None:
    calls = Calls()
    s = _stopper(calls=calls)
    opened.append(s)
    s.open(None)
    assert isinstance(s.signal, StopSignal) and s.signal.folder.is_dir()
    s.request("a peer failed")
    assert calls.called.wait(WAIT_S)  # the watcher saw its own file
    assert calls.reasons == ["a peer failed"] and s.reason == "a peer failed"
    folder = s.signal.folder
    opened.remove(s)
    s.close()
    assert not folder.exists()


def test_the_first_sigterm_stops_gracefully_the_second_quits(opened: list[RunStopper]) -> None:
    s = _stopper()
    opened.append(s)
    s.open(None)
    s._on_sigterm(signal.SIGTERM, None)
    assert s.terminated and s.reason == "terminated (SIGTERM)"
    assert s.signal is not None and s.signal.reason() == "terminated (SIGTERM)"
    line = s.take_line()
    assert line is not None and line.startswith("pytest-graphinstruct: SIGTERM: no new requests")
    assert f"for {STOP_GRACE_S:g} s" in line and "SIGTERM again to quit at once" in line
    with pytest.raises(KeyboardInterrupt):
        s._on_sigterm(signal.SIGTERM, None)


def test_sigterm_is_caught_in_the_main_thread_and_given_back(opened: list[RunStopper]) -> None:
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        pytest.skip("SIGTERM is handled by someone else in this process")
    s = _stopper()
    opened.append(s)
    s.open(None)
    assert signal.getsignal(signal.SIGTERM) == s._on_sigterm
    opened.remove(s)
    s.close()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_someone_elses_sigterm_handler_is_left_alone(opened: list[RunStopper]) -> None:
    def theirs(signum: int, frame: object) -> None:
        raise AssertionError("not sent")

    previous = signal.signal(signal.SIGTERM, theirs)
    try:
        s = _stopper()
        opened.append(s)
        s.open(None)
        assert signal.getsignal(signal.SIGTERM) is theirs
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_no_handler_is_installed_outside_the_main_thread(opened: list[RunStopper]) -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    s = _stopper(controller=True)
    opened.append(s)
    thread = threading.Thread(target=s.open, args=(None,))
    thread.start()
    thread.join()
    assert s.signal is not None  # the stop file still exists
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


def test_the_controller_takes_ctrl_c_and_says_so_at_once(
        opened: list[RunStopper], capfd: pytest.CaptureFixture[str]) -> None:
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT is handled by someone else in this process")
    s = _stopper(controller=True)
    opened.append(s)
    s.open(None)
    assert signal.getsignal(signal.SIGINT) == s._on_sigint
    s._on_sigint(signal.SIGINT, None)
    assert s.reason == "interrupted (Ctrl+C)" and not s.terminated
    assert s.take_line() is None  # written to stderr now: no item captures it
    assert "pytest-graphinstruct: Ctrl+C: no new requests" in capfd.readouterr().err
    with pytest.raises(KeyboardInterrupt):
        s._on_sigint(signal.SIGINT, None)
    opened.remove(s)
    s.close()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_worker_watches_its_controllers_stop_file(tmp_path: Path,
                                                    opened: list[RunStopper]) -> None:
    controller = StopSignal(tmp_path)
    calls = Calls()
    worker = _stopper(worker=True, calls=calls)
    opened.append(worker)
    worker.open(str(tmp_path))
    assert worker.signal is not None and worker.signal.folder == tmp_path
    controller.request("interrupted (Ctrl+C)")
    assert calls.called.wait(WAIT_S)
    assert worker.reason == "interrupted (Ctrl+C)" and calls.reasons == [worker.reason]
    opened.remove(worker)
    worker.close()
    assert tmp_path.is_dir()  # a worker never removes the controller's folder


def test_a_worker_without_a_folder_has_no_stop_file(opened: list[RunStopper]) -> None:
    worker = _stopper(worker=True)
    opened.append(worker)
    worker.open(None)
    assert worker.signal is None
