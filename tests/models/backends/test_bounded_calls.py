"""bounded_calls: each HTTP call a coroutine on the process's one call loop, bounded by a
deadline, ended at once by cancel; a backend's calls share one client (keep-alive)."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from pytest_graphinstruct.models.backends.bounded_calls import (
    LOOP_THREAD_NAME,
    BoundedCalls,
    CallCancelled,
    DeadlineExceeded,
    ResponseTooLarge,
    call_loop,
    http_package,
)
from tests.models.fake_openai import FakeOpenAIServer
from tests.models.helpers import SECRET

WAIT_S = 60.0  # a safety net for a broken test, never the point of one


def bounded(base_url: str | None = "http://fake.invalid/v1") -> BoundedCalls:
    return BoundedCalls(api_key=SECRET, base_url=base_url, timeout_s=30.0, default_query=None)


class Blocked:
    """A call's ``fn`` that says it began (:attr:`started`) and then waits, on the call loop,
    for :attr:`release`; says whether it was cancelled (:attr:`cancelled`)."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.cancelled = threading.Event()

    async def __call__(self, client: Any) -> str:
        self.started.set()
        try:
            while not self.release.is_set():
                await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return "late"


@pytest.fixture
def blocked() -> Iterator[Blocked]:
    fn = Blocked()
    yield fn
    fn.release.set()


def returns(value: Any) -> Any:
    async def fn(client: Any) -> Any:
        return value

    return fn


def test_http_package_is_the_one_openai_is_built_on() -> None:
    import openai

    package = http_package()
    assert issubclass(openai.DefaultHttpxClient, package.Client)
    assert issubclass(openai.DefaultAsyncHttpxClient, package.AsyncClient)
    assert callable(package.create_ssl_context)


def test_a_call_runs_on_the_one_quiet_loop_thread_with_the_async_client() -> None:
    calls = bounded()
    seen: dict[str, Any] = {}

    async def fn(client: Any) -> int:
        me = threading.current_thread()
        seen.update(name=me.name, daemon=me.daemon, client=client,
                    blocked=set(signal.pthread_sigmask(signal.SIG_BLOCK, [])))
        return 42

    assert calls.run(fn, WAIT_S) == 42
    assert seen["name"] == LOOP_THREAD_NAME and seen["daemon"]
    assert {signal.SIGINT, signal.SIGTERM} <= seen["blocked"]
    assert seen["client"] is not calls.client and seen["client"].api_key == SECRET
    assert call_loop() is call_loop()  # one loop for the process


def test_many_calls_at_once_add_no_thread() -> None:
    calls = bounded()
    call_loop()
    release = threading.Event()
    started = threading.Semaphore(0)

    async def fn(client: Any) -> str:
        started.release()
        while not release.is_set():
            await asyncio.sleep(0.01)
        return "done"

    with ThreadPoolExecutor(16) as pool:
        before = threading.active_count()  # the pool's threads start as work is submitted
        futures = [pool.submit(calls.run, fn, WAIT_S) for _ in range(16)]
        for _ in range(16):
            assert started.acquire(timeout=WAIT_S)
        during = threading.active_count()
        release.set()
        assert [f.result() for f in futures] == ["done"] * 16
    assert during - before <= 16  # the callers only: no thread per call


def test_what_fn_raises_is_raised_to_the_caller() -> None:
    async def fn(client: Any) -> None:
        raise ValueError("from the call")

    with pytest.raises(ValueError, match="from the call"):
        bounded().run(fn, WAIT_S)


def test_a_call_past_its_deadline_is_cancelled(blocked: Blocked) -> None:
    calls = bounded()
    with pytest.raises(DeadlineExceeded):
        calls.run(blocked, 0.05)  # fn never returns before the deadline: no race
    assert blocked.started.is_set() and blocked.cancelled.is_set()
    assert not calls.cancelled.is_set()
    assert calls.run(returns("next"), WAIT_S) == "next"  # later calls are not affected


def test_a_timeout_that_is_not_the_deadline_is_raised_as_it_is() -> None:
    async def fn(client: Any) -> None:
        raise TimeoutError("the library's own")

    with pytest.raises(TimeoutError, match="the library's own"):
        bounded().run(fn, WAIT_S)


def test_cancel_ends_a_call_in_flight_at_once_and_refuses_later_ones(blocked: Blocked) -> None:
    calls = bounded()
    raised: list[BaseException] = []

    def caller() -> None:
        try:
            calls.run(blocked, WAIT_S)
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=caller)
    thread.start()
    assert blocked.started.wait(WAIT_S)
    calls.cancel("circuit open:\n  the endpoint died")
    thread.join(WAIT_S)  # ends without the call's fn returning
    assert not thread.is_alive() and not blocked.release.is_set()
    assert blocked.cancelled.wait(WAIT_S)  # the call's task was cancelled too
    assert len(raised) == 1 and isinstance(raised[0], CallCancelled)
    assert calls.cancel_reason == "circuit open: the endpoint died"
    ran = threading.Event()

    async def fn(client: Any) -> None:
        ran.set()

    with pytest.raises(CallCancelled):
        calls.run(fn, WAIT_S)
    assert not ran.is_set()  # refused before it started


def test_the_first_reason_given_stays() -> None:
    calls = bounded()
    calls.cancel()
    assert calls.cancelled.is_set() and calls.cancel_reason is None
    calls.cancel("first")
    calls.cancel("second")
    assert calls.cancel_reason == "first"
    blank = bounded()
    blank.cancel(" \n ")
    assert blank.cancel_reason == "cancelled"


def test_scrub_replaces_the_key_also_glued_to_other_text() -> None:
    assert bounded().scrub(f"echoed {SECRET}!") == "echoed [REDACTED]!"
    assert bounded().scrub(f"?key%3D{SECRET}") == "?key%3D[REDACTED]"  # URL-encoded echo


def test_a_real_call_against_the_local_server(fake_openai: FakeOpenAIServer) -> None:
    calls = bounded(fake_openai.base_url)
    page = calls.run(lambda client: client.models.list(), WAIT_S)
    assert [m.id for m in page.data] == ["fake-model"]


def test_a_body_longer_than_the_bound_is_not_read_further(
        fake_openai: FakeOpenAIServer) -> None:
    calls = BoundedCalls(api_key=SECRET, base_url=fake_openai.base_url, timeout_s=30.0,
                         default_query=None, max_response_bytes=16)
    with pytest.raises(Exception) as caught:
        calls.run(lambda client: client.models.list(), WAIT_S)
    seen: BaseException | None = caught.value
    while seen is not None and not isinstance(seen, ResponseTooLarge):
        seen = seen.__cause__ or seen.__context__
    assert isinstance(seen, ResponseTooLarge) and seen.limit == 16
