"""Under xdist the controller is the run's one client of an endpoint (issue 34): the workers
only replay what its answer service obtained.  Counted at the fake server (which process opened
each connection, from Linux's ``/proc``) and in each process (its threads at their peak)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

from ._suite import TREE4, write_suite

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"),
                       reason="finds the process behind a connection in Linux's /proc"),
]

pytest_plugins = ["pytester"]


def run_args(suite: Path, server: FakeOpenAIServer, *extra: str) -> list[str]:
    return [f"--gi-suite={suite}", "--gi-model=fake-model", f"--gi-base-url={server.base_url}",
            "--gi-api-key-env=GI_TEST_KEY", "--gi-pools=none", "--gi-cache=none",
            "-p", "no:cacheprovider", "-p", "no:randomly", *extra]


@pytest.mark.parametrize("workers", ["2", "4"])
def test_only_the_controller_connects_and_every_worker_runs_items(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: str) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    suite = write_suite(pytester.path / "suite")
    with FakeOpenAIServer(responder=lambda body: TREE4, track_clients=True) as server:
        result = pytester.runpytest(*run_args(suite, server, "-n", workers,
                                              "--gi-samples=3", "-v"))
        assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), \
            result.stdout.str()
        assert server.request_count == 4 * 3  # every sample asked once
        assert server.client_pids == {os.getpid()}  # pytester's in-process controller
    ran_on = set(re.findall(r"\[(gw\d+)\]", result.stdout.str()))
    assert len(ran_on) >= 2, result.stdout.str()  # the items ran in the workers


PEAK_CONFTEST = '''
import os
import threading

_peak = [threading.active_count()]
_start = threading.Thread.start


def _counted_start(self, *args, **kwargs):
    _start(self, *args, **kwargs)
    _peak[0] = max(_peak[0], threading.active_count())


threading.Thread.start = _counted_start


def pytest_unconfigure(config):
    with open(os.environ["PEAK_FILE"], "a", encoding="utf-8") as out:
        out.write(f"{os.getpid()} {_peak[0]}\\n")
'''

ITEMS = 800
CONCURRENCY = 64
THREAD_SLACK = 16  # the main thread, the call loop and its resolver, the service, xdist's


def write_big_suite(root: Path) -> Path:
    """800 L1 instructions with distinct prompts (800 distinct requests)."""
    root.mkdir(parents=True, exist_ok=True)
    records = [{"id": f"L1-{n:03d}", "level": 1,
                "instruction": f"Generate a tree with 4 nodes (variant {n}).",
                "explicit_constraints": ["graph_type=tree", "num_nodes=4"],
                "implicit_constraints": ["num_edges=3"], "graph_sizes": ["small"],
                "reference_solutions": [TREE4]} for n in range(1, ITEMS + 1)]
    (root / "level_1.json").write_text(json.dumps(records), encoding="utf-8")
    return root


@pytest.mark.slow
def test_800_items_at_concurrency_64_hold_64_threads_and_a_few_in_any_process(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    peaks = pytester.path / "peaks.txt"
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    monkeypatch.setenv("PEAK_FILE", str(peaks))
    pytester.makeconftest(PEAK_CONFTEST)
    suite = write_big_suite(pytester.path / "suite")
    with FakeOpenAIServer(responder=lambda body: TREE4, latency_s=0.5,
                          track_clients=True) as server:
        result = pytester.runpytest_subprocess(*run_args(
            suite, server, "-n", "2", f"--gi-concurrency={CONCURRENCY}", "-q"))
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
        assert server.request_count == ITEMS
        assert server.max_in_flight > CONCURRENCY // 2  # the concurrency was used
        assert len(server.client_pids) == 1 and None not in server.client_pids
    found = {int(pid): int(peak) for pid, peak in
             (line.split() for line in peaks.read_text(encoding="utf-8").splitlines())}
    assert len(found) == 3, found  # the controller and two workers
    assert max(found.values()) <= CONCURRENCY + THREAD_SLACK, found
    print(f"thread peaks per process: {sorted(found.values())}")
