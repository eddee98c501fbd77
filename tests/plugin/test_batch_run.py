"""``--gi-batch`` end to end against the fake Batch API (issue 23; under ``-n 2`` too, issue 34):
100 items, some lines failed and some expired, the run SIGKILLed while its batch is in progress;
the rerun resumes the same batch, no request is submitted twice (counted at the server) but the
failed and expired ones, once more each, and the report equals the one the same answers give
without batch mode."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.testing.batch_server import FakeBatchAPI
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

from ._suite import CYCLE4, TREE4

pytestmark = pytest.mark.slow  # whole runs, one of them a subprocess

pytest_plugins = ["pytester"]

ITEMS = 100


def write_suite(root: Path) -> Path:
    """100 L1 instructions (distinct prompts: distinct requests)."""
    root.mkdir(parents=True, exist_ok=True)
    records = [{"id": f"L1-{n:03d}", "level": 1,
                "instruction": f"Generate a tree with 4 nodes (variant {n}).",
                "explicit_constraints": ["graph_type=tree", "num_nodes=4"],
                "implicit_constraints": ["num_edges=3"], "graph_sizes": ["small"],
                "reference_solutions": [TREE4]} for n in range(1, ITEMS + 1)]
    (root / "level_1.json").write_text(json.dumps(records), encoding="utf-8")
    return root


def responder(body: dict[str, Any]) -> str:
    """A tree for most prompts, a cycle (a failing answer) for some: the same in both runs."""
    text = json.dumps(body.get("messages"), sort_keys=True)
    return CYCLE4 if hashlib.sha256(text.encode()).digest()[0] % 4 == 0 else TREE4


def fault_of(custom_id: str) -> str | None:
    """Which lines fail (HTTP 500) or expire in their first batch."""
    return {0: "failed", 1: "expired"}.get(int(custom_id[:8], 16) % 8)


def line_fault(custom_id: str, submission: int) -> str | None:
    return fault_of(custom_id) if submission == 1 else None


def run_args(suite: Path, server: FakeOpenAIServer, cache: Path, report: Path,
             *extra: str) -> list[str]:
    return [f"--gi-suite={suite}", "--gi-model=fake-model", f"--gi-base-url={server.base_url}",
            "--gi-api-key-env=GI_TEST_KEY", f"--gi-cache={cache}", f"--gi-report={report}",
            "--override-ini=gi_max_retries=0", "-p", "no:cacheprovider", "-p", "no:randomly",
            *extra]


BATCH = ("--gi-batch", "--override-ini=gi_batch_poll=0.05", "--override-ini=gi_batch_quiet=0.3")


def comparable(report: Path) -> Any:
    """The report less what differs between two runs of the same answers: the run record
    (times, provenance) and latencies."""
    data = json.loads(report.read_text(encoding="utf-8"))
    data.pop("run", None)

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items()
                    if k not in ("latency_s", "created", "started", "finished", "duration_s",
                                 "cached_since")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(data)


@pytest.mark.parametrize("procs", [(), ("-n", "2")], ids=["one-process", "xdist"])
def test_a_killed_batch_run_resumes_its_batch_and_reports_as_without_batch_mode(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, procs: tuple[str, ...]
        ) -> None:
    # under xdist the controller's answer service batches and the workers only replay: the
    # same batches, the same report
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    suite = write_suite(pytester.path / "suite")
    cache, batch_report = pytester.path / "cache", pytester.path / "batch.json"
    with FakeOpenAIServer(responder=responder) as server:
        api = FakeBatchAPI(server, hold=True, line_fault=line_fault)
        args = run_args(suite, server, cache, batch_report, *BATCH, *procs)
        proc = subprocess.Popen([sys.executable, "-m", "pytest", *args], cwd=pytester.path,
                                env={**os.environ}, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        try:
            assert api.wait_for_batches(1, 300), "the run created no batch"
            first = api.batch_ids()[0]
            assert api.wait_for_polls(first, 2, 300), "the run never polled its batch"
        finally:
            proc.kill()  # SIGKILL while the batch is in progress
            out, _ = proc.communicate(timeout=120)
        assert proc.returncode == -9, out.decode()
        ledger = json.loads((cache / "batches.json").read_text(encoding="utf-8"))
        assert [b["batch_id"] for b in ledger["batches"]] == [first]
        assert len(api.submitted) == ITEMS and set(api.submitted.values()) == {1}

        api.hold = False  # the rerun's first poll finds the batch done
        rerun = pytester.runpytest(*args)
        assert rerun.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), \
            rerun.stdout.str()
        ids = api.batch_ids()
        assert ids[0] == first and len(ids) == 2  # resumed, then one batch of the retries
        # and the rerun says it resumed the killed run's batch
        assert f"resumed 1 batch an earlier run left at the endpoint ({first}: {ITEMS} " \
            "request(s); " in rerun.stdout.str()
        assert "their requests are collected from there, not sent again" in rerun.stdout.str()
        assert api.batches[first].polls >= 3  # polled by both runs
        faulted = {c for c in api.submitted if fault_of(c)}
        assert {fault_of(c) for c in faulted} == {"failed", "expired"}
        assert len(api.submitted) == ITEMS
        assert all(n == (2 if c in faulted else 1) for c, n in api.submitted.items())
        assert server.request_count == 0  # every answer came through batches
        assert {x["custom_id"] for x in api.batches[ids[1]].lines} == faulted

    plain_report = pytester.path / "plain.json"
    with FakeOpenAIServer(responder=responder) as plain:
        result = pytester.runpytest(*run_args(suite, plain, pytester.path / "cache2",
                                              plain_report))
        assert result.ret == rerun.ret
        assert plain.request_count == ITEMS
    assert comparable(batch_report) == comparable(plain_report)
