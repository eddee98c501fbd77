"""bounded_calls: each HTTP call in a thread of its own, bounded by a deadline, ended at once by
cancel, and owning (and shutting down) its connections."""

from __future__ import annotations

import signal
import socket
import threading
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_graphinstruct.models.bounded_calls import (
    CALL_THREAD_NAME,
    BoundedCalls,
    CallCancelled,
    DeadlineExceeded,
    _Abandoned,
    _OwnedCall,
    http_package,
)
from tests.models.fake_openai import FakeOpenAIServer
from tests.models.helpers import SECRET

WAIT_S = 60.0  # a safety net for a broken test, never the point of one


def bounded(base_url: str | None = "http://fake.invalid/v1") -> BoundedCalls:
    return BoundedCalls(api_key=SECRET, base_url=base_url, timeout_s=30.0, default_query=None)


class Blocked:
    """A call's ``fn`` that says it began (:attr:`started`, its thread in :attr:`thread`) and
    then waits for :attr:`release`; returns ``"late"`` or raises ``raises``."""

    def __init__(self, raises: BaseException | None = None) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.raises = raises
        self.thread: threading.Thread | None = None

    def __call__(self, client: Any) -> str:
        self.thread = threading.current_thread()
        self.started.set()
        self.release.wait(WAIT_S)
        if self.raises is not None:
            raise self.raises
        return "late"


@pytest.fixture
def blocked() -> Iterator[Blocked]:
    fn = Blocked()
    yield fn
    fn.release.set()  # whatever happened, its thread ends
    if fn.thread is not None:
        fn.thread.join(WAIT_S)


def test_http_package_is_the_one_openai_is_built_on() -> None:
    import openai

    package = http_package()
    assert issubclass(openai.DefaultHttpxClient, package.Client)
    assert callable(package.create_ssl_context)


def test_a_call_returns_what_fn_returns_from_a_quiet_daemon_thread_of_its_own() -> None:
    calls = bounded()
    seen: dict[str, Any] = {}

    def fn(client: Any) -> int:
        me = threading.current_thread()
        seen.update(name=me.name, daemon=me.daemon, client=client,
                    blocked=set(signal.pthread_sigmask(signal.SIG_BLOCK, [])))
        return 42

    assert calls.run(fn, WAIT_S) == 42
    assert seen["name"] == CALL_THREAD_NAME and seen["daemon"]
    assert {signal.SIGINT, signal.SIGTERM} <= seen["blocked"]
    assert seen["client"] is not calls.client and seen["client"].api_key == SECRET


def test_what_fn_raises_is_raised_to_the_caller() -> None:
    def fn(client: Any) -> None:
        raise ValueError("from the call")

    with pytest.raises(ValueError, match="from the call"):
        bounded().run(fn, WAIT_S)


def test_a_call_past_its_deadline_is_abandoned(blocked: Blocked) -> None:
    calls = bounded()
    with pytest.raises(DeadlineExceeded):
        calls.run(blocked, 0.05)  # fn never returns before the deadline: no race
    assert blocked.started.is_set() and not calls.cancelled.is_set()
    assert calls.run(lambda client: "next", WAIT_S) == "next"  # later calls are not affected


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
    assert len(raised) == 1 and isinstance(raised[0], CallCancelled)
    assert calls.cancel_reason == "circuit open: the endpoint died"
    ran = threading.Event()
    with pytest.raises(CallCancelled):
        calls.run(lambda client: ran.set(), WAIT_S)
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


def test_scrub_replaces_the_key() -> None:
    assert bounded().scrub(f"echoed {SECRET}!") == "echoed [REDACTED]!"


def test_a_real_call_against_the_local_server(fake_openai: FakeOpenAIServer) -> None:
    calls = bounded(fake_openai.base_url)
    page = calls.run(lambda client: client.models.list(), WAIT_S)
    assert [m.id for m in page.data] == ["fake-model"]


# -- owned connections --------------------------------------------------------------------------

def trace_event(call: _OwnedCall, event: str, sock: object) -> None:
    stream = SimpleNamespace(get_extra_info=lambda name: sock if name == "socket" else None)
    call._trace(event, {"return_value": stream})


def closed_by_peer(peer: socket.socket) -> bool:
    peer.settimeout(WAIT_S)
    return peer.recv(1) == b""  # end of stream: the other end was shut down


def test_abort_shuts_down_every_connection_the_call_opened() -> None:
    call = _OwnedCall()
    pairs = [socket.socketpair() for _ in range(2)]
    try:
        trace_event(call, "connection.connect_tcp.complete", pairs[0][0])
        trace_event(call, "connection.start_tls.complete", pairs[1][0])
        call.abort()
        assert call.aborted
        assert all(closed_by_peer(peer) for _, peer in pairs)
    finally:
        for a, b in pairs:
            a.close()
            b.close()


def test_a_connection_opened_after_the_abort_is_shut_down_at_once() -> None:
    call = _OwnedCall()
    call.abort()
    mine, peer = socket.socketpair()
    try:
        trace_event(call, "connection.connect_tcp.complete", mine)
        assert closed_by_peer(peer)
    finally:
        mine.close()
        peer.close()


def test_other_events_and_non_sockets_are_ignored() -> None:
    call = _OwnedCall()
    mine, peer = socket.socketpair()
    try:
        trace_event(call, "connection.connect_tcp.started", mine)
        trace_event(call, "http11.send_request_headers.complete", mine)
        trace_event(call, "connection.connect_tcp.complete", "not a socket")
        call._trace("connection.connect_tcp.complete", {})  # no stream
        call.abort()
        mine.sendall(b"x")  # still open both ways
        peer.settimeout(WAIT_S)
        assert peer.recv(1) == b"x"
    finally:
        mine.close()
        peer.close()


def test_attach_installs_the_trace_on_the_request() -> None:
    call = _OwnedCall()
    request = SimpleNamespace(extensions={})
    call.attach(request)
    assert request.extensions["trace"] == call._trace


def test_a_started_connect_after_the_abort_is_refused() -> None:
    call = _OwnedCall()
    call.abort()
    with pytest.raises(_Abandoned):
        call._trace("connection.connect_tcp.started", {})
    with pytest.raises(_Abandoned):
        call._trace("connection.start_tls.started", {})
    assert call.settle(0)  # nothing under way: a refused connect was never counted


def test_settle_waits_for_a_connect_under_way_at_the_abort_and_it_is_shut() -> None:
    call = _OwnedCall()
    call._trace("connection.connect_tcp.started", {})
    call.abort()
    assert not call.settle(0)  # the connect is still under way
    settled: list[bool] = []
    waiter = threading.Thread(target=lambda: settled.append(call.settle(WAIT_S)))
    waiter.start()
    mine, peer = socket.socketpair()
    try:
        trace_event(call, "connection.connect_tcp.complete", mine)
        waiter.join(WAIT_S)
        assert settled == [True]
        assert closed_by_peer(peer)
    finally:
        mine.close()
        peer.close()


def test_a_failed_connect_is_no_longer_under_way() -> None:
    call = _OwnedCall()
    call._trace("connection.connect_tcp.started", {})
    assert not call.settle(0)
    call._trace("connection.connect_tcp.failed", {"exception": OSError("refused")})
    assert call.settle(0)


def test_a_thread_late_past_its_deadline_never_connects() -> None:
    # fn reaches its request only after the caller gave up (it waits for release, set after
    # DeadlineExceeded): the connection must not be made at all, so the listener has nothing
    # to accept once the thread has ended.
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    calls = bounded(f"http://127.0.0.1:{port}/v1")
    started, release = threading.Event(), threading.Event()
    raised: list[BaseException] = []
    threads: list[threading.Thread] = []

    def fn(client: Any) -> object:
        threads.append(threading.current_thread())
        started.set()
        release.wait(WAIT_S)
        try:
            return client.models.list()
        except BaseException as exc:
            raised.append(exc)
            raise

    try:
        with pytest.raises(DeadlineExceeded):
            calls.run(fn, 0.05)  # fn cannot return before the deadline: no race
        assert started.is_set()
        release.set()
        threads[0].join(WAIT_S)
        assert not threads[0].is_alive()
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()
        assert len(raised) == 1
        cause: BaseException | None = raised[0]
        while cause is not None and not isinstance(cause, _Abandoned):
            cause = cause.__cause__ or cause.__context__
        assert isinstance(cause, _Abandoned), repr(raised[0])
    finally:
        release.set()
        listener.close()
