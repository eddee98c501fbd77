"""Issue 47 §9: the xdist controller's answer service, reached over its loopback-TCP fallback
(a run's folder too long for a Unix socket: a long ``TMPDIR``) by another local process while
the run is on.  Before, such a client was served whatever it asked — 5 extra paid requests
were seen; now a connection must give the run's key first (handed to the workers only), and
even a client with the key gets only the run's selected items and planned samples.

The "attacker" is a conftest hook in the controller that runs once the workers have collected
(the service has just been told the selection); it writes what the service replied to a file.
The fake endpoint counts every chat request."""

from __future__ import annotations

import json
import tempfile

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

from ._suite import TREE4, write_suite

pytest_plugins = ["pytester"]

ATTACKER = '''
import json
import os
import socket

import pytest

_config = []


def pytest_configure(config):
    _config.append(config)


def _ask(address, first, question):
    """Send ``first`` (a key line, or nothing) and one question; return the one reply line."""
    host, _, port = address.partition(":")[2].rpartition(":")
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        stream = sock.makefile("rwb")
        stream.write(first + json.dumps(question).encode() + b"\\n")
        stream.flush()
        line = stream.readline()
    return json.loads(line) if line else {"closed": True}


def _question(inst_id, samples):
    return {"id": inst_id, "model": "fake-model", "strategy": "zero-shot",
            "method": "baseline", "samples": samples}


@pytest.hookimpl(trylast=True)  # after the plugin told its service the selection
def pytest_xdist_node_collection_finished(node, ids):
    out = os.environ["ATTACK_FILE"]
    if os.path.exists(out):
        return  # the first worker's collection only
    state = _config[0].pluginmanager.get_plugin("graphinstruct-service").state
    address = state.service.address
    key = getattr(state.service, "key", None)  # the run's own secret (None before it had one)
    insider = b"" if key is None else json.dumps({"key": key}).encode() + b"\\n"
    replies = {
        "address": address,
        # a local process that found the port: an extra sample of a selected item
        "no key": _ask(address, b"", _question("L1-001", [5])),
        "guessed key": _ask(address, b'{"key": "0000"}\\n', _question("L1-001", [5])),
        # a client with the key (a worker gone wrong) outside the run's plan
        "extra sample": _ask(address, insider, _question("L1-001", [5])),
        "not selected": _ask(address, insider, _question("L1-002", None)),
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(replies, f)
'''


def test_a_local_client_on_the_fallback_port_is_refused_and_nothing_extra_is_paid(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    long_tmp = pytester.path / ("t" * 110)  # the run's folder: too long for a Unix socket
    long_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(long_tmp))
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    attack = pytester.path / "attack.json"
    monkeypatch.setenv("ATTACK_FILE", str(attack))
    pytester.makeconftest(ATTACKER)
    suite = write_suite(pytester.path / "suite")
    with FakeOpenAIServer(responder=lambda body: TREE4) as server:
        result = pytester.runpytest(
            f"--gi-suite={suite}", "--gi-model=fake-model", f"--gi-base-url={server.base_url}",
            "--gi-api-key-env=GI_TEST_KEY", "--gi-pools=none", "--gi-cache=none",
            "--gi-samples=2", "-k", "not L1-002", "-n", "2",
            "-p", "no:cacheprovider", "-p", "no:randomly")
        asked = server.request_count
    out = result.stdout.str()
    replies = json.loads(attack.read_text(encoding="utf-8"))
    assert replies.pop("address").startswith("tcp:127.0.0.1:")  # the fallback was in use
    for what, reply in replies.items():
        assert "answers" not in reply, (what, reply)
        assert reply.get("error", "").startswith("refused: "), (what, reply)
    assert "did not give the run's key" in replies["no key"]["error"]
    assert "did not give the run's key" in replies["guessed key"]["error"]
    assert "sample 5 of 'L1-001' [fake-model-zero-shot] is not planned" in \
        replies["extra sample"]["error"]
    assert "'L1-002' [fake-model-zero-shot] is not one of the run's items" in \
        replies["not selected"]["error"]
    assert asked == 3 * 2  # the 3 selected items' 2 samples each, nothing more
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), out[-3000:]
    result.assert_outcomes(passed=1, failed=2)  # a tree answers L1-001 only
    assert ("WARNING: the run's answer service refused 2 connection(s) that did not give the "
            "run's key (another local process tried to use it) and 2 question(s) for items "
            "or samples outside the run's plan") in out


USER_TEST = '''
def test_query_under_xdist(gi_suite, gi_query):
    inst = gi_suite["L1-001"]
    assert gi_query(inst).ok  # one of the run's items, a planned sample
    refused = gi_query(inst, strategy="few-shot")  # not a cell of the run
    assert not refused.ok and "refused:" in refused.error, refused.error
    assert "refused:" in gi_query(inst, sample=7).error  # not a planned sample
'''


def test_gi_query_under_xdist_gets_the_runs_items_and_a_refusal_for_anything_else(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan bounds a worker too: ``gi_query`` under ``-n`` answers the run's own items and
    samples, and anything else is an answer whose error says it was refused, never a request."""
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    pytester.makepyfile(test_mine=USER_TEST)
    suite = write_suite(pytester.path / "suite")
    with FakeOpenAIServer(responder=lambda body: TREE4) as server:
        result = pytester.runpytest(
            f"--gi-suite={suite}", "--gi-model=fake-model", f"--gi-base-url={server.base_url}",
            "--gi-api-key-env=GI_TEST_KEY", "--gi-pools=none", "--gi-cache=none",
            "-k", "L1-001 or test_query", "-n", "2", "-p", "no:cacheprovider",
            "-p", "no:randomly")
        asked = server.request_count
    result.assert_outcomes(passed=2)
    assert asked == 1  # L1-001's one sample, asked once for the item and the query alike
    assert "2 question(s) for items or samples outside the run's plan" in result.stdout.str()
