"""The oracle endpoint (serve-oracle): the oracle's answers over HTTP, bounded input, a clear
400 for a prompt it does not know, one printed line, a clean stop."""

from __future__ import annotations

import http.client
import io
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.prompts.builder import build_messages
from pytest_graphinstruct.run.oracle import REFUSAL
from pytest_graphinstruct.run.oracle_lookup import OracleLookup
from pytest_graphinstruct.suite.loader import Suite, load_suite
from pytest_graphinstruct.testing.oracle_server import (
    MAX_REQUEST_BYTES,
    SERVED_MODEL,
    OracleServer,
    pytest_command,
    serve,
)
from pytest_graphinstruct.verify.verifier import Verifier
from tests.plugin._suite import TREE4, write_suite

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Suite:
    return load_suite(write_suite(tmp_path_factory.mktemp("oracle") / "suite"))


@pytest.fixture(scope="module")
def server(suite: Suite) -> Any:
    with OracleServer(OracleLookup(suite)) as srv:
        yield srv


def _post(server: OracleServer, body: bytes, headers: dict[str, str] | None = None
          ) -> tuple[int, dict[str, Any]]:
    host, port = server.base_url.split("//")[1].split("/")[0].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("POST", "/v1/chat/completions", body=body,
                     headers={"Content-Type": "application/json", **(headers or {})})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def _ask(server: OracleServer, messages: object) -> tuple[int, dict[str, Any]]:
    return _post(server, json.dumps({"model": "anything", "messages": messages}).encode())


def test_each_prompt_gets_the_oracles_answer_and_its_usage(suite: Suite,
                                                          server: OracleServer) -> None:
    before = server.answered
    for inst in suite:
        messages = [m.to_json() for m in build_messages(inst, "zero-cot")]
        status, body = _ask(server, messages)
        assert status == 200, body
        text = body["choices"][0]["message"]["content"]
        if inst.feasible:
            assert Verifier().verify(inst, text).passed, inst.id
        else:
            assert text == REFUSAL
        usage = body["usage"]
        words = sum(len(m["content"].split()) for m in messages)
        assert usage == {"prompt_tokens": words, "completion_tokens": len(text.split()),
                         "total_tokens": words + len(text.split())}
        assert body["model"] == "anything"  # the name asked, echoed
    assert server.answered == before + len(suite)


def test_a_prompt_of_no_instruction_is_a_400_that_does_not_echo_it(
        server: OracleServer) -> None:
    refused = server.unknown
    secret = "\x1b[2J Draw me a dragon \u202e"
    status, body = _ask(server, [{"role": "user", "content": secret}])
    assert status == 400
    error = body["error"]
    assert error["type"] == "invalid_request_error"
    assert "no instruction of the served suite (4 instructions)" in error["message"]
    assert "dragon" not in json.dumps(body)
    assert server.unknown == refused + 1


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b'{"messages": 5}', b"{}",
                                 b'{"messages": [{"role": "user", "content": {"a": 1}}]}',
                                 "\ufeff{}".encode()])
def test_a_body_the_endpoint_cannot_read_is_a_400(raw: bytes, server: OracleServer) -> None:
    status, body = _post(server, raw)
    assert status == 400 and body["error"]["message"]


def _raw_exchange(server: OracleServer, head: bytes) -> bytes:
    """Send ``head`` on a fresh connection and read until the server closes it."""
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_body_over_the_limit_is_refused_unread(server: OracleServer) -> None:
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
            f"\r\nContent-Length: {MAX_REQUEST_BYTES + 1}\r\n\r\n").encode()
    answer = _raw_exchange(server, head)  # no body sent: the server answers and closes
    assert answer.startswith(b"HTTP/1.1 413")
    assert b"larger than this server takes" in answer


@pytest.mark.parametrize("length", ["abc", "-5", "1e3", "99999999999999999999"])
def test_a_content_length_that_is_no_whole_number_is_a_400(length: str,
                                                          server: OracleServer) -> None:
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {length}"
            "\r\n\r\n").encode()
    assert _raw_exchange(server, head).startswith(b"HTTP/1.1 400")


def test_the_model_list_names_the_served_model(server: OracleServer) -> None:
    host, port = server.base_url.split("//")[1].split("/")[0].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("GET", "/v1/models")
    data = json.loads(conn.getresponse().read())
    conn.close()
    assert [m["id"] for m in data["data"]] == [SERVED_MODEL]


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.2", "example.com", "", "::"])
def test_only_a_loopback_host_is_taken(host: str, suite: Suite) -> None:
    with pytest.raises(ValueError, match="not a loopback address"):
        OracleServer(OracleLookup(suite), host=host)


def test_localhost_and_another_loopback_address_serve(suite: Suite) -> None:
    for host, url in (("localhost", "http://127.0.0.1:"), ("127.0.0.2", "http://127.0.0.2:")):
        with OracleServer(OracleLookup(suite), host=host) as srv:
            assert srv.base_url.startswith(url)
            status, _ = _ask(srv, [{"role": "user", "content": "Generate a tree with 4 nodes."}])
            assert status == 200


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback on this machine")
def test_the_ipv6_loopback_serves(suite: Suite) -> None:
    with OracleServer(OracleLookup(suite), host="::1") as srv:
        assert srv.base_url.startswith("http://[::1]:")
        port = int(srv.base_url.rsplit(":", 1)[1].split("/")[0])
        conn = http.client.HTTPConnection("::1", port, timeout=30)
        body = json.dumps({"messages": [{"role": "user",
                                         "content": "Generate a tree with 4 nodes."}]})
        conn.request("POST", "/v1/chat/completions", body=body)
        assert conn.getresponse().status == 200
        conn.close()


def test_the_printed_command_names_the_suite_only_when_the_default_differs(
        tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "instructions")
    url = "http://127.0.0.1:8000/v1"
    # in the folder that holds it, the suite is the plugin's default there
    assert pytest_command(url, suite, tmp_path) == (
        "pytest --gi-model=served-oracle --gi-base-url=http://127.0.0.1:8000/v1 "
        "--gi-per-level=2")
    elsewhere = tmp_path / "other folder"
    elsewhere.mkdir()
    command = pytest_command(url, suite, elsewhere)
    assert shlex.split(command)[-1] == f"--gi-suite={suite.resolve()}"


class _Lines(io.StringIO):
    """What :func:`serve` prints, with an event set once a line was written."""

    def __init__(self) -> None:
        super().__init__()
        self.written = threading.Event()

    def write(self, s: str) -> int:
        n = super().write(s)
        if "\n" in s:
            self.written.set()
        return n


def test_serve_prints_one_line_and_stops_when_told(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    out, err, stop = _Lines(), io.StringIO(), threading.Event()
    statuses: list[int] = []
    thread = threading.Thread(target=lambda: statuses.append(
        serve(str(suite), port=0, out=out, err=err, stop=stop)))
    thread.start()
    try:
        assert out.written.wait(60)
        (line,) = out.getvalue().splitlines()
        assert line.startswith("oracle endpoint for suite (4 instructions) listening on "
                               "http://127.0.0.1:")
        command = line.split("; try: ", 1)[1]
        assert command.startswith("pytest --gi-model=served-oracle "
                                  "--gi-base-url=http://127.0.0.1:")
        assert f"--gi-suite={suite.resolve()}" in command
    finally:
        stop.set()
        thread.join(60)
    assert statuses == [0]
    assert out.getvalue().splitlines()[-1] == ("oracle endpoint stopped: 0 answer(s) sent, "
                                               "0 request(s) refused")
    assert err.getvalue() == ""


def test_serve_warns_of_instructions_the_oracle_cannot_answer(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "level_1.json").write_text(json.dumps([
        {"id": "L1-001", "level": 1, "instruction": "Generate a tree with 4 nodes.",
         "explicit_constraints": ["graph_type=tree", "num_nodes=4"],
         "reference_solutions": [TREE4]},
        {"id": "L1-002", "level": 1, "instruction": "Generate a graph.",
         "explicit_constraints": ["graph_type=tree"], "reference_solutions": []}]),
        encoding="utf-8")
    out, err, stop = _Lines(), io.StringIO(), threading.Event()
    stop.set()  # returns at once
    assert serve(str(suite), port=0, out=out, err=err, stop=stop) == 0
    assert err.getvalue() == ("warning: the oracle has no answer for 1 instruction(s) "
                              "(L1-002): their prompts get HTTP 400\n")


@pytest.mark.parametrize(("argv", "message"), [
    (["--suite", "no/such/folder"], "error: suite not found: no/such/folder (--suite needs "),
    (["--host", "0.0.0.0"], "error: --host: host '0.0.0.0' is not a loopback address"),
    (["--port", "70000"], "error: --port must be 0 to 65535, got 70000"),
])
def test_the_command_refuses_bad_input_in_one_line(argv: list[str], message: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve-oracle", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_a_port_in_use_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve-oracle", "--suite", str(write_suite(tmp_path / "s")),
                     "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot listen on 127.0.0.1 port {port}: ")
    assert err.rstrip().endswith("(--port 0 takes any free port)")


@pytest.mark.slow  # a subprocess serving the shipped suite, and a pytest run in another
def test_the_command_serves_until_ctrl_c_and_its_printed_command_passes(
        tmp_path: Path) -> None:
    # no OPENAI_API_KEY: the printed command needs none (a loopback endpoint gets a placeholder)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GI_", "PYTEST_", "OPENAI_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.Popen([sys.executable, "-m", "pytest_graphinstruct", "serve-oracle",
                             "--port", "0"], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert " (800 instructions) listening on http://127.0.0.1:" in line, line
        command = line.rstrip("\n").split("; try: ", 1)[1]
        run = subprocess.run(command + " -p no:cacheprovider", shell=True, cwd=tmp_path,
                             env=env, text=True, capture_output=True, timeout=600, check=False)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
        assert "12 passed" in run.stdout
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert out == "oracle endpoint stopped: 12 answer(s) sent, 0 request(s) refused\n"
    assert err == ""
