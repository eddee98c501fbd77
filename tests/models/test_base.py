"""models.base: the waits of the main thread act on a signal another thread received."""

from __future__ import annotations

import signal
import sys
import threading
import time
from concurrent.futures import Future

import pytest

from pytest_graphinstruct.models.base import quiet_thread, wait_result

SAFETY_NET_S = 120.0  # only keeps a broken wait from hanging the test; never a measurement


class _Interrupted(Exception):
    pass


def _raise(signum: int, frame: object) -> None:
    raise _Interrupted()


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signal handlers run in the main thread only")
def test_a_signal_received_by_another_thread_ends_the_main_threads_wait() -> None:
    # The kernel may hand a Ctrl+C to any thread; a plain Future.result() in the main thread is
    # not woken then, and its handler would run only once the wait ended.  The signal goes to a
    # helper thread on purpose (pthread_kill); the future is resolved only if the main thread
    # has not acted on the signal after a safety net, so a wait that slept through the signal
    # would end with the future done (and only then raise): the proof is that it is still
    # pending when the handler's exception arrives.
    previous = signal.signal(signal.SIGUSR1, _raise)
    never: Future[int] = Future()
    main = threading.get_ident()
    interrupted = threading.Event()

    def interrupt_once_main_waits() -> None:
        # the signal must come while the main thread is blocked inside the lock wait (before
        # it, any wait acts on it at once): watch the main thread's innermost frame
        for _ in range(6000):
            frame = sys._current_frames().get(main)
            if frame is not None and frame.f_code.co_name == "wait":
                break
            time.sleep(0.01)
        # a moment more to be inside the C-level acquire: this delay can only make the test
        # stricter (a plain wait would then sleep through the signal), never fail a wait that
        # acts on it
        time.sleep(0.2)
        signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)
        if not interrupted.wait(SAFETY_NET_S):
            never.set_result(0)  # the only other way the main thread's wait can end

    helper = threading.Thread(target=interrupt_once_main_waits)
    try:
        with pytest.raises(_Interrupted):
            helper.start()
            wait_result(never)  # no timeout of its own: the signal or the result must end it
        interrupted.set()
        assert not never.done()  # ended by the signal, not by the result it waited for
    finally:
        interrupted.set()
        helper.join(SAFETY_NET_S)
        signal.signal(signal.SIGUSR1, previous)


def test_wait_result_returns_the_result_and_honours_its_timeout() -> None:
    done: Future[int] = Future()
    done.set_result(7)
    assert wait_result(done) == 7
    with pytest.raises(TimeoutError):
        wait_result(Future(), timeout=0.3)


def test_a_quiet_thread_blocks_interrupts_and_the_main_thread_does_not() -> None:
    seen: list[set[int]] = []

    def run() -> None:
        quiet_thread()
        seen.append(set(signal.pthread_sigmask(signal.SIG_BLOCK, [])))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(10)
    assert seen and {signal.SIGINT, signal.SIGTERM} <= seen[0]
    if threading.current_thread() is threading.main_thread():
        quiet_thread()  # does nothing here: the main thread must keep receiving them
        assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
