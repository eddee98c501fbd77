"""A local OpenAI-compatible HTTP server for tests and benchmarks (no network beyond 127.0.0.1).

It serves ``POST /v1/chat/completions`` and ``GET /v1/models`` on ``127.0.0.1`` (or another
loopback address, ``host``; port 0 = any free port) and can be scripted to misbehave, one
:class:`Fault` per request::

    with FakeOpenAIServer(latency_s=0.2) as server:
        server.script(Fault.rate_limited(retry_after="2"), Fault.server_error())
        backend = OpenAIBackend(server.base_url, "fake-model", api_key_env="MY_KEY")

Answers come from ``responder(request_json) -> str`` (default: echoes the last user message).
Usage is ``prompt_tokens`` = words in all messages, ``completion_tokens`` = words in the answer
(at least 1), so tests can predict token counts; with ``token_counter`` (a
:class:`~.tokens.TokenCounter`) it is that counter's :meth:`~.tokens.TokenCounter.count_messages`
of the messages received and :meth:`~.tokens.TokenCounter.count_text` of the answer, the
counting the package's own estimates use.  :attr:`FakeOpenAIServer.tokens_counted` sums the
usage of every answer sent.  Every completion request is counted and
recorded (JSON body, headers, arrival time) in :attr:`FakeOpenAIServer.requests` (only counted
with ``keep_requests=False``).  A body longer than ``max_request_bytes`` gets HTTP 413 unread,
a ``Content-Length`` that is no whole number HTTP 400.

Faults are consumed first from the FIFO :meth:`FakeOpenAIServer.script` queue (in arrival order),
then from the optional ``fault_for(request_json)`` hook; otherwise the request succeeds.

The response's ``model`` field is :attr:`FakeOpenAIServer.served_model` (default: the requested
name, as vLLM and llama.cpp echo it) and ``system_fingerprint`` is
:attr:`FakeOpenAIServer.system_fingerprint` (default: not sent), so a test can redeploy another
snapshot under the same name.  A snapshot probe (the header ``X-GI-Probe: snapshot``, sent by
:meth:`~.openai_backend.OpenAIBackend.probe_snapshot`) is answered at once ("OK", no latency,
no faults, no responder) unless :attr:`FakeOpenAIServer.probe_status` says otherwise, and is
recorded in :attr:`FakeOpenAIServer.probes`, not in :attr:`~FakeOpenAIServer.requests`: the
counts of a test stay the model's answers.  With :attr:`FakeOpenAIServer.rejects_max_tokens`
every chat request carrying ``max_tokens`` gets OpenAI's HTTP 400 for reasoning models.

Tests of interrupts, timeouts and hangs synchronise on the server's events instead of sleeping:
:meth:`FakeOpenAIServer.wait_for_requests` blocks until ``n`` completion requests have arrived,
and :meth:`FakeOpenAIServer.hold` makes every completion request wait, recorded and counted but
unanswered, until :meth:`FakeOpenAIServer.release` (or :meth:`~FakeOpenAIServer.stop`)::

    server.hold()
    start_the_run()
    assert server.wait_for_requests(4, timeout=60)  # the run is in its calls
    process.send_signal(signal.SIGINT)               # ... and no answer has come back yet
    server.release()
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import json
import os
import re
import socket
import struct
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_graphinstruct.models.backends.tokens import TokenCounter

__all__ = ["FakeOpenAIServer", "Fault", "RecordedRequest", "default_responder", "loopback_host"]


@dataclass(frozen=True)
class Fault:
    """One scripted deviation from a normal answer.

    ``kind`` is one of ``status`` (an HTTP error with an OpenAI-style error body), ``hang``
    (no answer for ``hang_s`` seconds, then the connection is closed), ``malformed`` (status
    200, invalid JSON), ``truncated`` (status 200, the connection closes mid-body),
    ``no_choices`` (valid JSON without ``choices``), ``no_usage`` (a normal answer without a
    usage block), ``partial_usage`` (a usage block with ``prompt_tokens`` only), ``length``
    (a normal answer with ``finish_reason='length'``), ``null_content`` (``content: null`` with
    ``finish_reason='stop'``), ``usage`` (a normal answer whose usage block is exactly
    ``usage``, impossible values included), ``drip`` (a normal answer sent one byte every
    ``hang_s`` seconds, status line and headers included, so no single read ever times out)
    and ``unsized`` (a normal answer without ``Content-Length``, its end the connection's:
    only reading it tells its length), ``reset`` (the connection is reset at once, a TCP RST
    before any byte of an answer, as from an overflowing accept queue or a restarting proxy)
    and ``gzip`` (a normal answer sent ``Content-Encoding: gzip`` whatever the client asked
    for, its JSON preceded by ``padding`` bytes of whitespace: a small body on the wire that
    decodes to a large one).
    """

    kind: str
    status: int = 500
    retry_after: str | None = None
    retry_after_ms: str | None = None
    code: str | None = None
    error_type: str = "server_error"
    message: str = "scripted failure"
    hang_s: float = 30.0
    usage: dict[str, Any] | None = None
    padding: int = 0

    @classmethod
    def rate_limited(cls, retry_after: str | None = None, *,
                     retry_after_ms: str | None = None) -> Fault:
        return cls("status", 429, retry_after, retry_after_ms, "rate_limit_exceeded",
                   "requests", "Rate limit reached, slow down")

    @classmethod
    def quota(cls) -> Fault:
        return cls("status", 429, None, None, "insufficient_quota", "insufficient_quota",
                   "You exceeded your current quota, please check your plan and billing details.")

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        return cls("status", status, message=f"scripted server error {status}")

    @classmethod
    def unavailable(cls, retry_after: str | None = None) -> Fault:
        return cls("status", 503, retry_after, message="The server is overloaded")

    @classmethod
    def unauthorized(cls, status: int = 401, message: str = "Incorrect API key provided") -> Fault:
        return cls("status", status, code="invalid_api_key", error_type="invalid_request_error",
                   message=message)

    @classmethod
    def bad_request(cls, message: str = "bad request") -> Fault:
        return cls("status", 400, code="invalid_request", error_type="invalid_request_error",
                   message=message)

    @classmethod
    def hang(cls, seconds: float = 30.0) -> Fault:
        return cls("hang", hang_s=seconds)

    @classmethod
    def malformed(cls) -> Fault:
        return cls("malformed")

    @classmethod
    def truncated(cls) -> Fault:
        return cls("truncated")

    @classmethod
    def no_choices(cls) -> Fault:
        return cls("no_choices")

    @classmethod
    def no_usage(cls) -> Fault:
        return cls("no_usage")

    @classmethod
    def partial_usage(cls) -> Fault:
        return cls("partial_usage")

    @classmethod
    def length(cls) -> Fault:
        return cls("length")

    @classmethod
    def null_content(cls) -> Fault:
        return cls("null_content")

    @classmethod
    def with_usage(cls, **usage: Any) -> Fault:
        """A normal answer whose usage block is exactly ``usage`` (e.g. ``prompt_tokens=-5``)."""
        return cls("usage", usage=dict(usage))

    @classmethod
    def unsized(cls) -> Fault:
        """A normal answer whose length no header declares (read until the connection ends)."""
        return cls("unsized")

    @classmethod
    def reset(cls) -> Fault:
        """The connection reset (TCP RST) as soon as the request is read: no answer."""
        return cls("reset")

    @classmethod
    def gzip(cls, padding: int = 0) -> Fault:
        """A normal answer, gzip-compressed, its JSON after ``padding`` bytes of whitespace
        (100 MB of it is about 100 KB on the wire)."""
        return cls("gzip", padding=padding)

    @classmethod
    def drip(cls, interval_s: float = 1.0) -> Fault:
        """A normal answer trickled out one byte every ``interval_s`` seconds."""
        return cls("drip", hang_s=interval_s)


@dataclass(frozen=True)
class RecordedRequest:
    """One completion request as the server received it."""

    body: dict[str, Any]
    headers: dict[str, str]
    arrived: float  # time.monotonic() at arrival
    fault: Fault | None = None
    path: str = ""  # the request target as sent (path and query)


def default_responder(body: dict[str, Any]) -> str:
    """Echo the last user message (``"echo: <text>"``)."""
    for msg in reversed(body.get("messages") or []):
        if isinstance(msg, dict) and msg.get("role") == "user":
            return f"echo: {msg.get('content', '')}"
    return "echo:"


def _words(text: Any) -> int:
    return len(str(text).split()) if text else 0


def _count(value: Any) -> int:
    """A usage block's count as billed (anything but a whole number ≥ 0: none)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


_DIGITS = re.compile(r"[0-9]{1,15}")
"""A ``Content-Length`` the server reads (ASCII digits; more than 15 is more than any limit)."""

Routes = Callable[[str, str, dict[str, str], bytes], "tuple[int, bytes, str] | None"]
"""Extra routes of a fake server (:attr:`FakeOpenAIServer.routes`)."""


@dataclass
class _State:
    latency_s: float
    responder: Callable[[dict[str, Any]], str]
    fault_for: Callable[[dict[str, Any]], Fault | None] | None
    model: str
    serial: bool
    script: deque[Fault] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    serial_lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    in_flight: int = 0
    max_in_flight: int = 0
    models_status: int = 200  # what GET /v1/models answers (401/404 for preflight tests)
    models_hang_s: float = 0.0  # how long GET /v1/models stalls before answering
    served_model: str | None = None  # the responses' "model" (None: the requested name)
    system_fingerprint: str | None = None  # the responses' "system_fingerprint" (None: absent)
    probe_status: int = 200  # what a snapshot probe gets (an HTTP error status otherwise)
    rejects_max_tokens: bool = False  # answer max_tokens with HTTP 400 (reasoning models)
    probes: list[RecordedRequest] = field(default_factory=list)
    gate: threading.Event = field(default_factory=threading.Event)  # clear: answers are held
    hold_after: int = 0  # while held, the requests beyond this many (since reset) wait
    #: notified on every recorded request and every answer billed
    arrived: threading.Condition = field(init=False)
    token_counter: TokenCounter | None = None  # counts usage (None: words)
    keep_requests: bool = True  # record each completion request in `requests` (else count it)
    received: int = 0  # completion requests since the start or reset (recorded or not)
    max_request_bytes: int | None = None  # larger request bodies get HTTP 413 (None: any)
    billed: int = 0  # answers whose usage was counted, and the sums of their usage blocks
    billed_prompt: int = 0
    billed_completion: int = 0
    #: more routes (the fake Batch API): (method, path, headers, body) -> (status, body,
    #: content type), or None when the route is not theirs
    routes: Routes | None = None
    track_clients: bool = False  # find the process behind each connection (client_pids)
    client_pids: set[int | None] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.gate.set()
        self.arrived = threading.Condition(self.lock)

    def wait(self, ready: Callable[[], bool], timeout: float) -> bool:
        """Block until ``ready()`` (checked at each request recorded or answer billed) or
        ``timeout`` seconds passed; whether it is ready."""
        with self.arrived:
            return self.arrived.wait_for(ready, timeout)

    def bill(self, prompt: int, completion: int) -> None:
        """Count one answer's usage block (what a provider would bill)."""
        with self.lock:
            self.billed += 1
            self.billed_prompt += prompt
            self.billed_completion += completion
            self.arrived.notify_all()


def _completion_of(st: _State, body: dict[str, Any], text: str, finish: str) -> dict[str, Any]:
    """The chat completion object answering ``body`` with ``text`` (the usage the server
    counts: words, or its token counter's count)."""
    counter = st.token_counter
    sent = body.get("messages")
    messages = [m for m in sent if isinstance(m, dict)] if isinstance(sent, list) else []
    if counter is None:
        prompt = sum(_words(m.get("content")) for m in messages)
        output = max(1, _words(text))
    else:
        prompt = counter.count_messages((str(m.get("role", "")), str(m.get("content") or ""))
                                        for m in messages)
        output = counter.count_text(text)
    completion: dict[str, Any] = {
        "id": f"chatcmpl-{st.received}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": st.served_model or body.get("model", st.model),
        "choices": [{"index": 0, "finish_reason": finish,
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": output},
    }
    if st.system_fingerprint is not None:
        completion["system_fingerprint"] = st.system_fingerprint
    completion["usage"]["total_tokens"] = (completion["usage"]["prompt_tokens"]
                                           + completion["usage"]["completion_tokens"])
    return completion


def _counted_completion(st: _State, body: dict[str, Any]) -> dict[str, Any]:
    """The responder's answer to ``body`` as a completion, its usage added to the counts."""
    done = _completion_of(st, body, st.responder(body), "stop")
    st.bill(done["usage"]["prompt_tokens"], done["usage"]["completion_tokens"])
    return done


_PADDING_CHUNK = b" " * (1 << 20)


@functools.lru_cache(maxsize=4)
def _gzip_padding(padding: int) -> tuple[bytes, Any]:
    """The gzip stream of ``padding`` spaces so far, and its compressor (copied, then fed the
    JSON and flushed, per answer): the padding is compressed once per size."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = []
    for start in range(0, padding, len(_PADDING_CHUNK)):
        parts.append(compressor.compress(_PADDING_CHUNK[: padding - start]))
    return b"".join(parts), compressor


def _gzipped(body: bytes, padding: int) -> bytes:
    """``padding`` spaces then ``body``, as one gzip stream (JSON allows the leading blanks)."""
    head, compressor = _gzip_padding(padding)
    tail = compressor.copy()
    return head + tail.compress(body) + tail.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # never wait for a hanging handler on shutdown
    request_queue_size = 256  # concurrency 32+ must not hit the default listen backlog of 5
    # Without SO_REUSEADDR, binding port 0 never picks a port on which connections of an
    # earlier server still live (they are idle keep-alive pairs in a long test process): a
    # test counting the connections to this port counts its own only.
    allow_reuse_address = False
    state: _State

    def server_activate(self) -> None:
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().server_activate()

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = super().get_request()
        with self._open_lock:
            self._open.add(conn)
        if self.state.track_clients:  # while the client still holds its end
            pid = client_pid(addr[1], self.server_address[1])
            with self.state.lock:
                self.state.client_pids.add(pid)
        return conn, addr

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Shut down every accepted connection still open (an idle keep-alive connection's
        handler would otherwise wait for its client's next request for ever, and both ends
        would outlive the server)."""
        with self._open_lock:
            open_now = list(self._open)
        for conn in open_now:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


def loopback_host(host: str) -> str:
    """``host`` when it is a loopback address (``127.x.y.z``, ``::1``; ``localhost`` is
    ``127.0.0.1``).

    Raises:
        ValueError: any other host (one sentence naming it).
    """
    if host.strip().lower() == "localhost":
        return "127.0.0.1"
    try:
        loopback = ipaddress.ip_address(host.strip()).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"host {host!r} is not a loopback address: a fake endpoint listens on "
                         "this machine only (127.0.0.1, another 127.x.y.z, ::1 or localhost)")
    return str(ipaddress.ip_address(host.strip()))


def client_pid(client_port: int, server_port: int) -> int | None:
    """The process holding the client end (local port ``client_port``) of a loopback TCP
    connection to ``server_port``, from Linux's ``/proc`` (``None`` when not found: another
    system, or a process this user cannot see)."""
    inode = None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text(encoding="ascii").splitlines()[1:]:
                fields = line.split()
                local, remote = fields[1].rsplit(":", 1)[1], fields[2].rsplit(":", 1)[1]
                if int(local, 16) == client_port and int(remote, 16) == server_port:
                    inode = fields[9]
    if inode is None:
        return None
    target = f"socket:[{inode}]"
    with contextlib.suppress(OSError):
        for pid in (p for p in os.listdir("/proc") if p.isdigit()):
            with contextlib.suppress(OSError):
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    with contextlib.suppress(OSError):
                        if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                            return int(pid)
    return None


class _ReusableServer(_Server):
    """A server on a port given by the caller: rebinding it soon after a stop must work."""

    allow_reuse_address = True


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like a real provider
    disable_nagle_algorithm = True  # headers and body are separate writes: avoid 40 ms stalls
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- helpers -----------------------------------------------------------------------------

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_raw(self, status: int, data: bytes, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data) if length is None else length))
        self.end_headers()
        self.wfile.write(data)

    # -- routes ------------------------------------------------------------------------------

    def _routed(self, method: str, raw: bytes) -> bool:
        """Whether the extra routes answered this request (and answer it)."""
        routes = self.server.state.routes
        done = None if routes is None else routes(method, self.path, dict(self.headers.items()),
                                                  raw)
        if done is None:
            return False
        status, data, content_type = done
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        return True

    def do_GET(self) -> None:
        st = self.server.state
        if self._routed("GET", b""):
            return
        if self.path.split("?", 1)[0].rstrip("/").endswith("/models"):
            if st.models_hang_s and st.stop.wait(st.models_hang_s):
                return
            if st.models_status != 200:
                self._send_json(st.models_status, {"error": {
                    "message": "scripted", "type": "invalid_request_error", "code": None}})
                return
            self._send_json(200, {"object": "list", "data": [
                {"id": st.model, "object": "model", "created": 0, "owned_by": "fake"}]})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}",
                                            "type": "invalid_request_error", "code": None}})

    def _body(self) -> bytes | None:
        """The request's body; ``None`` once an error was sent instead: HTTP 400 for a
        ``Content-Length`` that is not a whole number, 413 for one above
        :attr:`FakeOpenAIServer.max_request_bytes` (the body is not read, and the connection
        closes)."""
        declared = (self.headers.get("Content-Length") or "0").strip()
        limit = self.server.state.max_request_bytes
        status, why = 0, ""
        if not _DIGITS.fullmatch(declared):
            status, why = 400, "the Content-Length header is not a whole number"
        elif limit is not None and int(declared) > limit:
            status, why = 413, (f"request body of {int(declared)} bytes is larger than this "
                                f"server takes ({limit} bytes)")
        if status:
            self.close_connection = True
            self._send_json(status, {"error": {"message": why, "type": "invalid_request_error",
                                               "code": None}}, {"Connection": "close"})
            return None
        length = int(declared)
        return self.rfile.read(length) if length else b""

    def do_POST(self) -> None:
        st = self.server.state
        raw = self._body()
        if raw is None:
            return
        if self._routed("POST", raw):
            return
        if not self.path.split("?", 1)[0].rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}",
                                            "type": "invalid_request_error", "code": None}})
            return
        try:
            body = json.loads(raw.decode("utf-8"))
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except ValueError:
            self._send_json(400, {"error": {"message": "request body is not a JSON object",
                                            "type": "invalid_request_error", "code": None}})
            return
        if st.rejects_max_tokens and "max_tokens" in body:
            self._send_json(400, {"error": {
                "message": "Unsupported parameter: 'max_tokens' is not supported with this "
                           "model. Use 'max_completion_tokens' instead.",
                "type": "invalid_request_error", "param": "max_tokens",
                "code": "unsupported_parameter"}})
            return
        if self.headers.get("X-GI-Probe"):
            self._probe(body)
            return
        with st.lock:
            fault = st.script.popleft() if st.script else None
        if fault is None and st.fault_for is not None:
            fault = st.fault_for(body)
        with st.lock:
            st.received += 1
            if st.keep_requests:
                st.requests.append(RecordedRequest(body, dict(self.headers.items()),
                                                   time.monotonic(), fault, self.path))
            st.in_flight += 1
            st.max_in_flight = max(st.max_in_flight, st.in_flight)
            st.arrived.notify_all()
            held = st.received > st.hold_after
        try:
            if fault is not None and fault.kind == "reset":
                self._reset()
                return
            if held:
                st.gate.wait()  # held (FakeOpenAIServer.hold) until released or stopped
            if st.stop.is_set():
                self.close_connection = True
                return
            if st.serial:
                with st.serial_lock:
                    self._answer(body, fault)
            else:
                self._answer(body, fault)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (e.g. its timeout); that's fine
        finally:
            with st.lock:
                st.in_flight -= 1

    def _reset(self) -> None:
        """Reset the connection: close it with a zero linger time, so the kernel sends a TCP
        RST instead of a FIN (the client reads ``Connection reset by peer``)."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.connection.close()

    def _probe(self, body: dict[str, Any]) -> None:
        st = self.server.state
        with st.lock:
            st.probes.append(RecordedRequest(body, dict(self.headers.items()), time.monotonic()))
        if st.probe_status != 200:
            self._send_json(st.probe_status, {"error": {
                "message": "scripted probe failure", "type": "server_error", "code": None}})
            return
        self._send_json(200, self._completion(body, "OK", "length"))

    def _completion(self, body: dict[str, Any], text: str, finish: str) -> dict[str, Any]:
        return _completion_of(self.server.state, body, text, finish)

    def _answer(self, body: dict[str, Any], fault: Fault | None) -> None:
        st = self.server.state
        if st.latency_s > 0:
            st.stop.wait(st.latency_s)
        kind = fault.kind if fault is not None else "ok"
        if fault is not None and kind == "status":
            headers = {}
            if fault.retry_after is not None:
                headers["Retry-After"] = fault.retry_after
            if fault.retry_after_ms is not None:
                headers["retry-after-ms"] = fault.retry_after_ms
            self._send_json(fault.status, {"error": {
                "message": fault.message, "type": fault.error_type, "param": None,
                "code": fault.code}}, headers)
            return
        if fault is not None and kind == "hang":
            st.stop.wait(fault.hang_s)
            self.close_connection = True
            return
        if kind == "malformed":
            self._send_raw(200, b'{"id": "chatcmpl-x", "object": "chat.completion", "choices": [')
            return
        self._answer_text(body, fault, kind)

    def _answer_text(self, body: dict[str, Any], fault: Fault | None, kind: str) -> None:
        st = self.server.state
        text = st.responder(body)
        completion = self._completion(body, text, "length" if kind == "length" else "stop")
        if kind == "no_usage":
            del completion["usage"]
        if kind == "partial_usage":
            del completion["usage"]["completion_tokens"]
            del completion["usage"]["total_tokens"]
        if kind == "no_choices":
            del completion["choices"]
        if kind == "null_content":
            completion["choices"][0]["message"]["content"] = None
        if kind == "usage" and fault is not None:
            completion["usage"] = dict(fault.usage or {})
        usage = completion.get("usage") or {}
        st.bill(_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")))
        if kind == "unsized":
            self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(json.dumps(completion).encode("utf-8"))
            return
        if kind == "gzip" and fault is not None:
            data = _gzipped(json.dumps(completion).encode("utf-8"), fault.padding)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if kind == "drip" and fault is not None:
            self._drip(json.dumps(completion).encode("utf-8"), fault.hang_s)
            return
        if kind == "truncated":
            data = json.dumps(completion).encode("utf-8")
            self._send_raw(200, data[: len(data) // 2], length=len(data))
            self.wfile.flush()
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        self._send_json(200, completion)

    def _drip(self, body: bytes, interval_s: float) -> None:
        """Send a whole 200 response one byte at a time (until done, the client leaves, or the
        server stops)."""
        st = self.server.state
        head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode("ascii")
        self.close_connection = True
        for i, byte in enumerate(head + body):
            if i and st.stop.wait(interval_s):
                return
            self.wfile.write(bytes([byte]))
            self.wfile.flush()


class FakeOpenAIServer:
    """An OpenAI-compatible server on ``127.0.0.1`` running in a background thread.

    Args:
        latency_s: fixed delay before every completion answer (and before scripted errors).
        responder: request JSON → answer text.
        fault_for: request JSON → a :class:`Fault` (or ``None``), consulted after the script.
        model: the id listed by ``GET /v1/models``.
        serial: handle one completion request at a time (a single-worker provider queue).
        port: the port to bind (0 = any free port).
        token_counter: counts the usage sent (``None``: words; see the module docstring).
        track_clients: find the process behind each connection accepted
            (:attr:`client_pids`; Linux only, a ``/proc`` scan per connection).
        host: the loopback address to listen on (``127.0.0.1``; any ``127.x.y.z``, ``::1``
            or ``localhost``): this machine only, never a network.
        keep_requests: record every completion request in :attr:`requests` (``False``:
            count them only, for a server that runs for long).
        max_request_bytes: the largest request body read; a larger one gets HTTP 413 unread
            (``None``: no limit).

    Raises:
        ValueError: ``host`` is not a loopback address.
    """

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        responder: Callable[[dict[str, Any]], str] = default_responder,
        fault_for: Callable[[dict[str, Any]], Fault | None] | None = None,
        model: str = "fake-model",
        serial: bool = False,
        port: int = 0,
        token_counter: TokenCounter | None = None,
        track_clients: bool = False,
        host: str = "127.0.0.1",
        keep_requests: bool = True,
        max_request_bytes: int | None = None,
    ) -> None:
        self._state = _State(latency_s, responder, fault_for, model, serial)
        self._state.token_counter = token_counter
        self._state.track_clients = track_clients
        self._state.keep_requests = keep_requests
        self._state.max_request_bytes = max_request_bytes
        self._host = loopback_host(host)
        self._port = port
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        """Bind and serve in a daemon thread; returns ``self``."""
        if self._httpd is not None:
            return self
        server_class: type[_Server] = _Server if self._port == 0 else _ReusableServer
        if ":" in self._host:
            server_class = type("_Server6", (server_class,), {"address_family": socket.AF_INET6})
        httpd = server_class((self._host, self._port), _Handler)
        httpd.state = self._state
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; releases hanging, held and sleeping handlers at once (a held request
        is then closed unanswered) and shuts down every connection still open, idle
        keep-alive ones included, so no connection to this port outlives the server."""
        self._state.stop.set()
        self._state.gate.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd.close_connections()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- configuration -----------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def host(self) -> str:
        """The loopback address the server listens on."""
        return self._host

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` (the host it listens on) — what an OpenAI client's
        ``base_url`` expects."""
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"http://{host}:{self.port}/v1"

    @property
    def latency_s(self) -> float:
        return self._state.latency_s

    @latency_s.setter
    def latency_s(self, value: float) -> None:
        self._state.latency_s = value

    @property
    def responder(self) -> Callable[[dict[str, Any]], str]:
        return self._state.responder

    @responder.setter
    def responder(self, fn: Callable[[dict[str, Any]], str]) -> None:
        self._state.responder = fn

    @property
    def fault_for(self) -> Callable[[dict[str, Any]], Fault | None] | None:
        return self._state.fault_for

    @fault_for.setter
    def fault_for(self, fn: Callable[[dict[str, Any]], Fault | None] | None) -> None:
        self._state.fault_for = fn

    @property
    def serial(self) -> bool:
        return self._state.serial

    @serial.setter
    def serial(self, value: bool) -> None:
        self._state.serial = value

    @property
    def models_status(self) -> int:
        """The HTTP status ``GET /v1/models`` answers with (200 = the model list)."""
        return self._state.models_status

    @models_status.setter
    def models_status(self, value: int) -> None:
        self._state.models_status = value

    @property
    def models_hang_s(self) -> float:
        """Seconds ``GET /v1/models`` stalls before answering (0 = none)."""
        return self._state.models_hang_s

    @models_hang_s.setter
    def models_hang_s(self, value: float) -> None:
        self._state.models_hang_s = value

    @property
    def served_model(self) -> str | None:
        """The ``model`` field of every response (``None``: the requested name, echoed)."""
        return self._state.served_model

    @served_model.setter
    def served_model(self, value: str | None) -> None:
        self._state.served_model = value

    @property
    def system_fingerprint(self) -> str | None:
        """The ``system_fingerprint`` of every response (``None``: not sent)."""
        return self._state.system_fingerprint

    @system_fingerprint.setter
    def system_fingerprint(self, value: str | None) -> None:
        self._state.system_fingerprint = value

    @property
    def probe_status(self) -> int:
        """The HTTP status a snapshot probe gets (200: an answer naming the snapshot)."""
        return self._state.probe_status

    @probe_status.setter
    def probe_status(self, value: int) -> None:
        self._state.probe_status = value

    @property
    def rejects_max_tokens(self) -> bool:
        """Whether a request with ``max_tokens`` gets HTTP 400 (like OpenAI's reasoning
        models, which take ``max_completion_tokens`` only)."""
        return self._state.rejects_max_tokens

    @rejects_max_tokens.setter
    def rejects_max_tokens(self, value: bool) -> None:
        self._state.rejects_max_tokens = value

    @property
    def probes(self) -> list[RecordedRequest]:
        """A snapshot of every snapshot probe received (not in :attr:`requests`)."""
        with self._state.lock:
            return list(self._state.probes)

    def route(self, routes: Routes | None) -> None:
        """Ask ``routes`` first for every request (the fake Batch API, .batch_server)."""
        self._state.routes = routes

    def completion(self, body: dict[str, object]) -> dict[str, object]:
        """The chat route's answer to ``body`` (no fault), its usage added to the counts."""
        return _counted_completion(self._state, body)

    def script(self, *faults: Fault) -> None:
        """Queue faults for the next requests, one per request, in arrival order."""
        with self._state.lock:
            self._state.script.extend(faults)

    def hold(self, after: int = 0) -> None:
        """Hold the answers: from now on every completion request beyond the first ``after``
        (counted since the start or :meth:`reset`) is recorded and counted (so
        :meth:`wait_for_requests` sees it), then waits unanswered until :meth:`release`.  Lets
        a test act (send a signal, kill a run) while calls are certainly in flight, and after
        exactly ``after`` answers."""
        with self._state.lock:
            self._state.hold_after = after
            self._state.gate.clear()

    def release(self) -> None:
        """Answer the held requests (each then gets its latency, fault or answer as usual) and
        stop holding new ones."""
        self._state.gate.set()

    @property
    def holding(self) -> bool:
        """Whether answers are held (:meth:`hold` without :meth:`release` since)."""
        return not self._state.gate.is_set()

    def wait_for_requests(self, n: int, timeout: float = 60.0) -> bool:
        """Block until ``n`` completion requests arrived since the start or the last
        :meth:`reset` (``True``), or ``timeout`` passed (``False``; a safety net, be generous)."""
        return self._state.wait(lambda: self._state.received >= n, timeout)

    def wait_for_answers(self, n: int, timeout: float = 60.0) -> bool:
        """:meth:`wait_for_requests` for ``n`` answers billed (:attr:`tokens_counted`; billed
        before sent, so also one whose client had left)."""
        return self._state.wait(lambda: self._state.billed >= n, timeout)

    def reset(self) -> None:
        """Forget recorded requests, the script and the in-flight high-water mark."""
        with self._state.lock:
            self._state.script.clear()
            self._state.requests.clear()
            self._state.probes.clear()
            self._state.received = 0
            self._state.billed = self._state.billed_prompt = self._state.billed_completion = 0
            self._state.max_in_flight = 0

    # -- observations ------------------------------------------------------------------------

    @property
    def client_pids(self) -> set[int | None]:
        """The processes that opened connections to this server (``track_clients``; ``None``
        stands for one that could not be found)."""
        with self._state.lock:
            return set(self._state.client_pids)

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every completion request received, in arrival order."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def request_count(self) -> int:
        """Completion requests received since the start or :meth:`reset` (recorded or not)."""
        with self._state.lock:
            return self._state.received

    @property
    def tokens_counted(self) -> tuple[int, int]:
        """The input and output tokens of the usage blocks of every answer sent (since the
        start or :meth:`reset`): what a provider would bill."""
        with self._state.lock:
            return self._state.billed_prompt, self._state.billed_completion

    @property
    def max_in_flight(self) -> int:
        """The most completion requests the server was handling at the same time."""
        with self._state.lock:
            return self._state.max_in_flight
