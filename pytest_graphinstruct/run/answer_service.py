"""One answer service per xdist run: the controller asks the endpoints, the workers replay.

Under pytest-xdist only the controller talks to a model's endpoint.  Before the workers start
it opens :class:`AnswerService` — a local socket (a Unix socket in the run's private folder;
loopback TCP where there is none) — over its own session, whose schedulers hold the whole
run's concurrency, rate limit, token budget, cost cap, circuit breaker, batch mode and the
answer cache.  Once the workers have collected, it asks for every selected item's answers in
the order the items were collected (:meth:`BenchmarkSession.prefetch`; each is cached as it
arrives).  A worker's item asks the service for its answers (:class:`AnswerClient`) and blocks
on the socket until they are there: no poll, no claim on the cache, no connection of its own to
an endpoint.  The oracle and recorded answers have no endpoint: a worker answers those itself
(:func:`served_models` says which models the service answers), except under
``--gi-samples=auto``, where the service answers the oracle too.

``--gi-samples=auto``: the looks (:meth:`AnswerService.run_looks`,
:func:`~.adaptive.ask_adaptively`) run in the controller over the same session, after the
first samples were asked and before the workers run any item; until they have decided, a
question waits (a service opened with ``looks``), then it is answered with exactly the samples
the looks asked for its item, which the looks already fetched: a worker's items ask nothing new.

Protocol: a connection opens with one JSON line ``{"key": "<the run's key>"}``
(:attr:`AnswerService.key`: a random secret the controller hands its workers in their
:class:`~pytest_graphinstruct.run.payload.WorkerInput`, never written anywhere); then one JSON
line per question, ``{"id", "model", "strategy", "method", "samples"}`` (``samples``: the sample
indexes wanted, ``null`` for every sample of the item), and one JSON line per reply:
``{"answers": [...]}`` (each :class:`~pytest_graphinstruct.answers.Answer` in the codec's form)
or ``{"error": "<one line>"}``.  A question longer than :data:`MAX_QUESTION_BYTES` or malformed
is answered with an error; the connection stays usable.

Promises: a connection that does not give the run's key first (within
:data:`KEY_TIMEOUT_S`; compared in constant time) gets one error line and is closed, its
questions unread; a question is served only for one of the run's selected items
(:meth:`AnswerService.expect`) and only for the samples the run plans for it
(:meth:`~.session_inputs.SessionInputs.samples`) — anything else is refused and never reaches
the session, so nothing but the run's own plan is ever asked of an endpoint, whoever reaches
the socket (loopback TCP is open to every local user).  A worker's question is answered
exactly as the controller's session would answer it in one process (the same futures: an
answer asked twice is fetched once); a service that is gone makes every answer asked of it an
error that says so (:class:`ServiceGone`), never a hang: the client's socket read ends when
the controller's process ends.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import socket
import socketserver
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.models.base import one_line, quiet_thread, wait_result
from pytest_graphinstruct.run.config import Cell, RunConfig
from pytest_graphinstruct.run.records.codec import decode, encode

if TYPE_CHECKING:
    from pytest_graphinstruct.run.adaptive import Looks
    from pytest_graphinstruct.run.records.results import CellReport
    from pytest_graphinstruct.run.session import BenchmarkSession
    from pytest_graphinstruct.suite.instruction import Instruction

MAX_QUESTION_BYTES = 64 * 1024
"""The longest question line the service reads (an id, a cell and sample indexes: ~200 bytes)."""
KEY_TIMEOUT_S = 10.0
"""How long a new connection may take to give the run's key (a worker sends it at once)."""
_MAX_KEY_BYTES = 256  # the key line: {"key": "<64 hex digits>"}
_UNIX_PATH_MAX = 100  # sun_path holds 104-108 bytes depending on the system


class ServiceGone(GraphInstructError):
    """The run's answer service cannot be reached, or ended the connection."""


class Refused(GraphInstructError):
    """A question the run's plan does not hold (an item not selected, a sample not planned)."""


def served_models(config: RunConfig) -> frozenset[str]:
    """The run's models the controller's service answers under xdist: every model with an
    endpoint (not the oracle; nothing when the answers are recorded, ``--gi-replay``).  Under
    ``--gi-samples=auto`` the oracle too: the controller's looks decide how many samples each
    item gets, so every item's answers come from the process that ran them."""
    if config.replay is not None:
        return frozenset()
    if config.auto_samples is not None:
        return frozenset(config.models)
    return frozenset(m for m in config.models if m != "oracle")


class _Handler(socketserver.StreamRequestHandler):
    """One worker's connection: its questions answered in turn, until it closes."""

    server: _UnixServer | _TcpServer

    def handle(self) -> None:
        service = self.server.service
        self.connection.settimeout(KEY_TIMEOUT_S)
        try:
            first = self.rfile.readline(_MAX_KEY_BYTES + 1)
        except OSError:  # no key in time, or the client is gone
            first = b""
        if not service.admits(first):
            with contextlib.suppress(OSError):
                self.wfile.write(_error_line("refused: this connection did not give the run's "
                                             "key"))
            return
        self.connection.settimeout(None)
        while True:
            line = self.rfile.readline(MAX_QUESTION_BYTES + 1)
            if not line:
                return
            if not line.endswith(b"\n"):  # too long: drop the rest of the line
                while line and not line.endswith(b"\n"):
                    line = self.rfile.readline(MAX_QUESTION_BYTES + 1)
                reply = _error_line(f"question longer than {MAX_QUESTION_BYTES} bytes")
            else:
                reply = service.reply(line)
            try:
                self.wfile.write(reply)
            except OSError:  # the worker is gone (interrupted, killed): nothing to tell
                return


class _Served:
    service: AnswerService
    daemon_threads = True  # a worker's connection never holds the controller's exit
    block_on_close = False


class _UnixServer(_Served, socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    pass


class _TcpServer(_Served, socketserver.ThreadingMixIn, socketserver.TCPServer):
    pass


class AnswerService:
    """Answers the workers' questions from ``session`` (the controller's), over a socket in
    ``folder`` (a folder private to the run; ignored where Unix sockets are missing).  Serves
    from a daemon thread until :meth:`close`; :attr:`address` is what a worker connects to,
    :attr:`key` what it must say first; it answers only the items :meth:`expect` was given.
    With ``looks`` (``--gi-samples=auto``) a question for a selected item waits until
    :meth:`run_looks` has decided every item's samples."""

    def __init__(self, session: BenchmarkSession, folder: Path, *, looks: bool = False) -> None:
        self.session = session
        self.key = secrets.token_hex(32)  #: the run's secret, for its workers only
        self.asked = 0  #: questions answered (a test's and a curious user's count)
        self.intruders = 0  #: connections closed for not giving the key
        self.refused = 0  #: questions refused as outside the run's plan
        self._count = threading.Lock()
        self._expected: set[tuple[str, Cell]] = set()
        self._decided = threading.Event()  # every item's samples are known (see run_looks)
        self._undecided: str | None = None  # why the looks ended without deciding them
        if not looks:
            self._decided.set()
        path = Path(folder) / "answers.sock"
        server: _UnixServer | _TcpServer
        if hasattr(socket, "AF_UNIX") and len(os.fsencode(path)) <= _UNIX_PATH_MAX:
            server = _UnixServer(str(path), _Handler)
            self.address = f"unix:{path}"
        else:
            server = _TcpServer(("127.0.0.1", 0), _Handler)
            port = server.server_address[1]
            self.address = f"tcp:127.0.0.1:{port}"
        server.service = self
        self._server = server
        self._thread = threading.Thread(target=self._serve, name="gi-answer-service",
                                        daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        quiet_thread()  # a Ctrl+C is the main thread's (the connections' threads inherit it)
        self._server.serve_forever(poll_interval=0.5)

    def expect(self, items: Iterable[tuple[Instruction, Cell]]) -> None:
        """The run's selected items (instruction, cell): the only ones :meth:`reply` serves
        (added to those given before)."""
        with self._count:
            self._expected.update((inst.id, cell) for inst, cell in items)

    def run_looks(self, items: Sequence[tuple[Instruction, Cell]],
                  baselines: Mapping[str, CellReport]) -> Looks:
        """``--gi-samples=auto``: run the looks for ``items`` (the run's selection, whose
        first samples were asked) against ``baselines`` (run cell label → baseline cell) in
        the calling thread, over the service's session (:meth:`.BenchmarkSession
        .ask_adaptively`: each look waits for its answers, verifies them, and decides the
        next); then answer the questions that waited.  From then on an item's answers are
        exactly the samples its looks asked, already fetched.  Looks that end without a
        decision (an interruption) make every waiting and later question an error saying so,
        never a hang or a guess at the samples."""
        decided = False
        try:
            looks = self.session.ask_adaptively(items, baselines)
            decided = True
            return looks
        finally:
            if not decided:
                self._undecided = ("the run's --gi-samples=auto looks ended before they "
                                   "decided each item's samples (the run was stopped)")
            self._decided.set()

    def admits(self, line: bytes) -> bool:
        """Whether ``line`` (a connection's first) gives the run's key; counts one intruder
        when not.  Never raises."""
        try:
            data = json.loads(line)
            given = data.get("key") if isinstance(data, dict) else None
            ok = isinstance(given, str) and hmac.compare_digest(given.encode("utf-8"),
                                                               self.key.encode("utf-8"))
        except (ValueError, UnicodeError):
            ok = False
        if not ok:
            with self._count:
                self.intruders += 1
        return ok

    def reply(self, line: bytes) -> bytes:
        """The reply line (ending in a newline) to one question line of an admitted
        connection: the answers, or one error line (a question outside the run's plan is
        refused before the session sees it).  Never raises."""
        try:
            question = json.loads(line)
            inst_id, cell, samples = _question(question)
            inst = self._planned(inst_id, cell, samples)
            if samples is None:
                answers = self.session.answers(inst, cell)
            else:
                answers = tuple(wait_result(self.session.fetcher.ask(inst, cell, k))
                                for k in samples)
            with self._count:
                self.asked += 1
            return (json.dumps({"answers": [encode(a) for a in answers]},
                               ensure_ascii=False) + "\n").encode("utf-8")
        except Refused as exc:
            with self._count:
                self.refused += 1
            return _error_line(f"refused: {exc}")
        except Exception as exc:  # a bad question or a session fault: the worker is told
            return _error_line(f"{type(exc).__name__}: {exc}")

    def _planned(self, inst_id: str, cell: Cell, samples: Sequence[int] | None) -> Instruction:
        """The instruction of a question the run's plan holds: one of its selected items and,
        when ``samples`` are named, only samples it plans for that item (under
        ``--gi-samples=auto`` once the looks decided them: it waits for them).

        Raises:
            Refused: the item is not one of the run's, or a sample is not planned.
            GraphInstructError: the looks ended without deciding the samples.
        """
        with self._count:
            selected = (inst_id, cell) in self._expected
        inst = self.session.suite.get(inst_id) if selected else None
        if inst is None:
            raise Refused(f"{inst_id!r} [{cell.label}] is not one of the run's items")
        self._decided.wait()  # --gi-samples=auto: the looks decide how many samples it has
        if self._undecided is not None:
            raise GraphInstructError(self._undecided)
        planned = self.session.inputs.samples(inst, cell)
        beyond = [k for k in samples or () if k >= planned]
        if beyond:
            raise Refused(f"sample {beyond[0]} of {inst_id!r} [{cell.label}] is not planned "
                          f"(the run asks {planned} sample(s) of it)")
        return inst

    def close(self) -> None:
        """Stop serving (connections still open end with the process); a question still
        waiting for the looks is answered with an error."""
        if not self._decided.is_set():
            self._undecided = ("the run's answer service closed before its --gi-samples=auto "
                               "looks decided each item's samples")
            self._decided.set()
        self._server.shutdown()
        self._server.server_close()


def _question(data: Any) -> tuple[str, Cell, tuple[int, ...] | None]:
    """The instruction id, the cell and the sample indexes of a question (``ValueError``
    when it is not one)."""
    if not isinstance(data, dict):
        raise ValueError("a question is a JSON object")
    fields = [data.get(k) for k in ("id", "model", "strategy", "method")]
    names = [f for f in fields if isinstance(f, str)]
    if len(names) != len(fields):
        raise ValueError("a question names its id, model, strategy and method as text")
    samples = data.get("samples")
    if samples is not None and not (isinstance(samples, list) and all(
            isinstance(k, int) and not isinstance(k, bool) and k >= 0 for k in samples)):
        raise ValueError("samples is a list of indexes from 0, or null")
    inst_id, model, strategy, method = names
    return inst_id, Cell(model, strategy, method), None if samples is None else tuple(samples)


def _error_line(message: str) -> bytes:
    return (json.dumps({"error": one_line(message)}) + "\n").encode("utf-8")


class AnswerClient:
    """A worker's side of the service at ``address`` (:attr:`AnswerService.address`), which
    it opens with ``key`` (:attr:`AnswerService.key`): one connection, opened on the first
    question; safe from several threads (one question at a time)."""

    def __init__(self, address: str, key: str) -> None:
        self.address = address
        self._key = key
        self._lock = threading.Lock()
        self._stream: Any = None

    def answers(self, inst_id: str, cell: Cell,
                samples: Sequence[int] | None = None) -> tuple[Answer, ...]:
        """The answers of one item (every sample, or those of ``samples``), as the controller's
        session gives them; blocks until they are there.

        Raises:
            ServiceGone: the service cannot be reached or closed the connection.
            GraphInstructError: the service could not answer (its one-line reason).
        """
        question = json.dumps({"id": inst_id, "model": cell.model, "strategy": cell.strategy,
                               "method": cell.method,
                               "samples": None if samples is None else list(samples)})
        with self._lock:
            try:
                stream = self._connect()
                stream.write(question.encode("utf-8") + b"\n")
                stream.flush()
                line = stream.readline()
            except OSError as exc:
                self._drop()
                raise ServiceGone(f"the run's answer service ({self.address}) cannot be "
                                  f"reached: {exc}") from None
            if not line.endswith(b"\n"):
                self._drop()
                raise ServiceGone(f"the run's answer service ({self.address}) closed the "
                                  "connection")
        data = json.loads(line)
        if "error" in data:
            raise GraphInstructError(f"the run's answer service: {data['error']}")
        return tuple(decode(Answer, a) for a in data["answers"])

    def _connect(self) -> Any:
        if self._stream is None:
            kind, _, where = self.address.partition(":")
            if kind == "unix":
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.connect(where)
            else:
                host, _, port = where.rpartition(":")
                sock = socket.create_connection((host, int(port)))
            stream = sock.makefile("rwb")
            sock.close()  # the file holds the connection
            stream.write(json.dumps({"key": self._key}).encode("ascii") + b"\n")
            self._stream = stream
        return self._stream

    def _drop(self) -> None:
        if self._stream is not None:
            with contextlib.suppress(OSError):
                self._stream.close()
            self._stream = None

    def close(self) -> None:
        """Close the connection (a later question opens a new one)."""
        with self._lock:
            self._drop()
