"""The oracle endpoint: an OpenAI-compatible server on this machine that answers every prompt of
a suite with the oracle's answer, so the plugin can be tried over HTTP without a key or a model
(``python -m pytest_graphinstruct serve-oracle``; docs/PLUGIN.md, "Trying it without a key")::

    with OracleServer(OracleLookup(suite)) as server:
        ...  # pytest --gi-model=served-oracle --gi-base-url={server.base_url}

It is a :class:`~.openai_server.FakeOpenAIServer` (``POST /v1/chat/completions``,
``GET /v1/models``, on a loopback address only) whose answer to a chat request is
:meth:`~pytest_graphinstruct.run.oracle_lookup.OracleLookup.find`'s for its messages: the
instruction the prompt quotes, answered as ``--gi-model=oracle`` answers it (the suite's first
passing reference; for an infeasible instruction the oracle's refusal).  Any prompting strategy
and method of a run of that suite is answered; the answer is the same for every sample.

What comes in is bounded and never echoed: a body over :data:`MAX_REQUEST_BYTES` gets HTTP 413
unread; a body that is not a JSON object, or whose user messages quote no instruction of the
suite, gets HTTP 400 with a JSON error saying so (an OpenAI-style ``error`` object; the prompt
is not repeated); requests are counted, not kept.  Usage is reported as the fake reports it:
``prompt_tokens`` = words of the messages, ``completion_tokens`` = words of the answer.
"""

from __future__ import annotations

import shlex
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, TextIO

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.escaping import escape
from pytest_graphinstruct.run.oracle_lookup import Asked, OracleLookup
from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.suite.shipped import (
    default_suite,
    describe_suite,
    holds_levels,
    same_folder,
    shipped_suite,
)
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer, Fault

__all__ = ["DEFAULT_PORT", "MAX_REQUEST_BYTES", "SERVED_MODEL", "OracleServer", "serve"]

DEFAULT_PORT: Final = 8000
SERVED_MODEL: Final = "served-oracle"
"""The model name the endpoint lists and the printed command asks for (any name works: the
endpoint answers every model name alike; not ``oracle``, which is the built-in oracle)."""
MAX_REQUEST_BYTES: Final = 4 << 20
"""The largest request body the endpoint reads (4 MiB: a few-shot prompt of the largest L5
base graph is some tens of KB)."""


class OracleServer:
    """The oracle endpoint for the instructions of ``lookup`` (module docstring), started in a
    background thread by :meth:`start` (or ``with``).

    Args:
        lookup: finds the instruction a prompt asks and the oracle's answer.
        host: a loopback address (``127.0.0.1``, ``::1``, ``localhost``).
        port: the port (0: any free port).

    Raises:
        ValueError: ``host`` is not a loopback address.
    """

    def __init__(self, lookup: OracleLookup, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.lookup = lookup
        self._counts = {"answered": 0, "unknown": 0}
        self._lock = threading.Lock()
        self._server = FakeOpenAIServer(responder=self._respond, fault_for=self._refusal,
                                        model=SERVED_MODEL, port=port, host=host,
                                        keep_requests=False,
                                        max_request_bytes=MAX_REQUEST_BYTES)

    def start(self) -> OracleServer:
        """Listen and answer in a daemon thread; returns ``self``.

        Raises:
            OSError: the address cannot be bound (e.g. the port is in use).
        """
        self._server.start()
        return self

    def stop(self) -> None:
        """Stop answering and close every connection."""
        self._server.stop()

    def __enter__(self) -> OracleServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1``: what ``--gi-base-url`` takes."""
        return self._server.base_url

    @property
    def answered(self) -> int:
        """Chat requests answered so far."""
        with self._lock:
            return self._counts["answered"]

    @property
    def unknown(self) -> int:
        """Chat requests refused so far because their prompt quotes no instruction of the
        suite (or the oracle has no answer to it)."""
        with self._lock:
            return self._counts["unknown"]

    def _asked(self, body: dict[str, Any]) -> Asked | None:
        return self.lookup.find(body.get("messages"))

    def _refusal(self, body: dict[str, Any]) -> Fault | None:
        """HTTP 400 for a prompt the lookup does not know or the oracle has no answer to."""
        asked = self._asked(body)
        why = None
        if asked is None:
            why = (f"no instruction of the served suite ({len(self.lookup.suite)} "
                   "instructions) is quoted in the user messages: this endpoint answers only "
                   "the prompts a run of that suite sends (serve-oracle --suite names the "
                   "suite; the run's --gi-suite must be the same)")
        elif asked.answer.error is not None:
            why = (f"the oracle has no answer for {', '.join(asked.instruction_ids)}: "
                   f"{escape(asked.answer.error)}")
        with self._lock:
            self._counts["unknown" if why else "answered"] += 1
        return None if why is None else Fault.bad_request(why)

    def _respond(self, body: dict[str, Any]) -> str:
        asked = self._asked(body)  # found before (_refusal): remembered by the lookup
        assert asked is not None and asked.answer.text is not None
        return asked.answer.text


def _suite_folder(named: str | None) -> Path:
    """The suite folder served: ``named``, else the suite the package ships.

    Raises:
        GraphInstructError: ``named`` holds no level files; or none was named and this
            install carries no suite.
    """
    if named is not None:
        folder = Path(named).expanduser()
        if not holds_levels(folder):
            raise GraphInstructError(f"suite not found: {folder} (--suite needs a directory "
                                     "with level_<L>.json files)")
        return folder
    shipped = shipped_suite()
    if shipped is None:
        raise GraphInstructError("this install of pytest-graphinstruct carries no suite: pass "
                                 "--suite DIR")
    return shipped.instructions


def pytest_command(base_url: str, folder: Path, cwd: Path) -> str:
    """The pytest command that runs two instructions per level of the suite in ``folder``
    against the endpoint at ``base_url``, as typed in ``cwd`` (a POSIX shell), with
    ``--gi-suite`` when the plugin's own default there is another suite.  It needs no key: the
    plugin sends a placeholder to a loopback endpoint whose key variable is unset
    (:func:`~pytest_graphinstruct.run.model_names.backend_for`)."""
    words = ["pytest", f"--gi-model={SERVED_MODEL}", f"--gi-base-url={base_url}",
             "--gi-per-level=2"]
    if not same_folder(default_suite(cwd)[0], folder):
        words.append("--gi-suite=" + str(folder.resolve()))
    return " ".join(shlex.quote(w) for w in words)


def serve(suite: str | None = None, *, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
          out: TextIO = sys.stdout, err: TextIO = sys.stderr,
          stop: threading.Event | None = None) -> int:
    """Serve the oracle endpoint for ``suite`` (a folder; default: the suite the package ships)
    until Ctrl-C, SIGTERM or ``stop`` is set; returns 0.

    Prints one line on ``out`` once it listens: where, and the pytest command to try; on the way
    out, one line counting the requests answered and refused.  A line on ``err`` names the
    instructions the oracle has no answer for, if any.

    Raises:
        GraphInstructError: no suite, a suite that does not load, a host that is not a loopback
            address, or an address that cannot be bound (one line each).
    """
    folder = _suite_folder(suite)
    loaded = load_suite(folder)
    try:
        server = OracleServer(OracleLookup(loaded), host=host, port=port)
    except ValueError as exc:
        raise GraphInstructError(f"--host: {exc}") from None
    try:
        server.start()
    except OSError as exc:
        raise GraphInstructError(f"cannot listen on {escape(host)} port {port}: "
                                 f"{exc.strerror or exc} (--port 0 takes any free port)"
                                 ) from None
    try:
        with server, _stopped_by_sigterm():
            missing = server.lookup.unanswered
            if missing:
                shown = ", ".join(escape(i) for i in missing[:5])
                print(f"warning: the oracle has no answer for {len(missing)} instruction(s) "
                      f"({shown}{', …' if len(missing) > 5 else ''}): their prompts get "
                      "HTTP 400", file=err, flush=True)
            name, _ = describe_suite(folder)
            print(f"oracle endpoint for {escape(name)} ({len(loaded)} instructions) listening "
                  f"on {server.base_url} (Ctrl-C stops it); try: "
                  f"{escape(pytest_command(server.base_url, folder, Path.cwd()))}", file=out,
                  flush=True)
            (stop or threading.Event()).wait()
    except KeyboardInterrupt:
        pass
    print(f"oracle endpoint stopped: {server.answered} answer(s) sent, {server.unknown} "
          "request(s) refused", file=out, flush=True)
    return 0


@contextmanager
def _stopped_by_sigterm() -> Iterator[None]:
    """SIGTERM stops :func:`serve` as Ctrl-C does (in the main thread; elsewhere nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
