"""End to end: every report says what produced its run (the ``run`` record), in a single
process and under xdist (where the controller writes it from what the workers send)."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.run.provenance import suite_hash
from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.report.schema_check import load_valid_report

from ._suite import EMPTY3, TREE4

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "instructions"
needs_suite = pytest.mark.skipif(not (SUITE / "level_1.json").is_file(),
                                 reason="no project suite")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                          text=True, timeout=30).stdout


@needs_suite
def test_oracle_run_records_its_provenance(pytester: pytest.Pytester) -> None:
    report = pytester.path / "r.json"
    result = pytester.runpytest(f"--gi-suite={SUITE}", "--gi-model=oracle", "--gi-levels=1",
                                "--gi-per-level=3", "-m", "level1", "-k", "not L1-002",
                                f"--gi-report={report}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, deselected=1)
    run = load_valid_report(report)["run"]
    started, finished = (datetime.fromisoformat(run[k]) for k in ("started", "finished"))
    offset = started.utcoffset()
    assert offset is not None and offset.total_seconds() == 0
    assert started <= finished
    assert run["machine"]["python"] and run["machine"]["platform"]
    assert run["suite"] == str(SUITE)
    assert run["suite_hash"] == suite_hash(load_suite(SUITE, levels=[1]))
    assert run["suite_hash"] != suite_hash(load_suite(SUITE, levels=[0, 1]))
    assert run["git"] is None  # the pytester folder is no git work tree
    assert run["endpoints"] == {"oracle": None}
    assert run["filter"] == {"keyword": "not L1-002", "markers": "level1", "levels": [1],
                             "per_level": 3, "selected": 2, "shard": None}
    assert run["pools"] is None or Path(run["pools"]).is_dir()
    assert run["replay"] is None
    assert run["cache"] == {"oracle-zero-shot": {"cached": 0, "samples": 2, "snapshots": [],
                                                 "oldest": None, "served": None}}
    assert run["d3_device"] == "cpu"


@needs_suite
@pytest.mark.torch
def test_the_d3_device_asked_for_is_recorded_or_refused(pytester: pytest.Pytester) -> None:
    """``auto`` is recorded as what it chose; ``cuda`` without CUDA stops before the run with
    one line (a machine with a GPU runs it: tests/score/test_gcn.py's CUDA test)."""
    import torch

    report = pytester.path / "r.json"
    args = (f"--gi-suite={SUITE}", "--gi-model=oracle", "--gi-levels=3", "--gi-per-level=1",
            f"--gi-report={report}", "-p", "no:cacheprovider")
    cuda = torch.cuda.is_available()
    # in subprocesses: torch_geometric cannot be imported twice in one process, and pytester
    # forgets the modules an in-process run imported
    pytester.runpytest_subprocess(*args, "--gi-d3-device=auto").assert_outcomes(passed=1)
    assert load_valid_report(report)["run"]["d3_device"] == ("cuda" if cuda else "cpu")
    if cuda:
        return
    report.unlink()
    result = pytester.runpytest_subprocess(*args, "--gi-d3-device=cuda")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--gi-d3-device=cuda: D3 on cuda: CUDA is not available*"])
    assert not result.outlines or "passed" not in result.outlines[-1]


# A plugin loaded with -p before the run: the default install, whose environment has neither
# torch nor torch_geometric (whether or not this one has them).
NO_TORCH = """import sys
sys.modules["torch"] = None
sys.modules["torch_geometric"] = None
"""


@needs_suite
def test_without_the_gpu_extra_auto_is_cpu_and_cuda_is_refused_naming_it(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(gi_no_torch=NO_TORCH)
    report = pytester.path / "r.json"
    args = (f"--gi-suite={SUITE}", "--gi-model=oracle", "--gi-levels=3", "--gi-per-level=1",
            f"--gi-report={report}", "-p", "no:cacheprovider", "-p", "gi_no_torch")
    pytester.runpytest_subprocess(*args, "--gi-d3-device=auto").assert_outcomes(passed=1)
    assert load_valid_report(report)["run"]["d3_device"] == "cpu"
    report.unlink()
    result = pytester.runpytest_subprocess(*args, "--gi-d3-device=cuda")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "*--gi-d3-device=cuda: D3 on cuda needs the [[]gpu[]] extra: "
        "pip install 'pytest-graphinstruct[[]gpu[]]' (torch is not installed)"])
    assert not result.outlines or "passed" not in result.outlines[-1]


@needs_suite
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_rootdir_commit_is_recorded(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    _git(pytester.path, "init", "-q")
    _git(pytester.path, "add", "tox.ini")
    _git(pytester.path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm",
         "ini")
    head = _git(pytester.path, "rev-parse", "HEAD").strip()
    report = pytester.path / "r.json"
    args = [f"--gi-suite={SUITE}", "--gi-model=oracle", "--gi-levels=0", "--gi-per-level=1",
            f"--gi-report={report}", "-p", "no:cacheprovider"]
    pytester.runpytest(*args).assert_outcomes(passed=1)
    # the report itself is untracked: the tree stays clean
    assert load_valid_report(report)["run"]["git"] == {"commit": head, "dirty": False}
    (pytester.path / "tox.ini").write_text("[pytest]\n# changed\n", encoding="utf-8")
    pytester.runpytest(*args).assert_outcomes(passed=1)
    assert load_valid_report(report)["run"]["git"] == {"commit": head, "dirty": True}


# -- answers from the cache, single process and xdist ------------------------------------------

def _answer(body: dict[str, Any]) -> str:
    user = body["messages"][-1]["content"]
    return TREE4 if "tree with 4 nodes" in user else EMPTY3


@pytest.fixture
def server() -> Any:
    with FakeOpenAIServer(latency_s=0.0, responder=_answer) as srv:
        yield srv


def _args(suite_dir: Path, server: FakeOpenAIServer, cache: Path, report: Path) -> list[str]:
    return [f"--gi-suite={suite_dir}", "--gi-model=fake-model",
            f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY",
            f"--gi-cache={cache}", "--gi-samples=2", f"--gi-report={report}",
            "-p", "no:cacheprovider"]


def _cache(report: Path) -> dict[str, Any]:
    run: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))["run"]
    return run["cache"]["fake-model-zero-shot"]


@pytest.mark.slow
def test_cache_counts_and_endpoint(pytester: pytest.Pytester, suite_dir: Path,
                                   server: FakeOpenAIServer,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test-SECRET-0123")
    report = pytester.path / "r.json"
    args = _args(suite_dir, server, pytester.path / "cache", report)
    pytester.runpytest(*args)
    first = load_valid_report(report)["run"]
    assert first["endpoints"] == {"fake-model": server.base_url.rstrip("/")}
    assert first["cache_dir"] == str(pytester.path / "cache")
    # 4 items x 2 samples; the fake server echoes the model name as its snapshot
    assert _cache(report) == {"cached": 0, "samples": 8, "snapshots": [], "oldest": None,
                              "served": "fake-model"}
    pytester.runpytest(*args)
    again = _cache(report)
    assert again.pop("oldest") is not None
    assert again == {"cached": 8, "samples": 8, "snapshots": ["fake-model"],
                     "served": "fake-model"}
    assert "sk-test-SECRET" not in report.read_text(encoding="utf-8")


@pytest.mark.slow  # xdist workers in a subprocess
def test_cache_counts_under_xdist(pytester: pytest.Pytester, suite_dir: Path,
                                  server: FakeOpenAIServer,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The controller's results are read back from the workers' JSON, which does not keep
    ``cached``; the counts travel beside them."""
    monkeypatch.setenv("GI_TEST_KEY", "sk-test-SECRET-0123")
    report = pytester.path / "r.json"
    args = _args(suite_dir, server, pytester.path / "cache", report)
    pytester.runpytest(*args)  # fill the cache in one process
    result = pytester.runpytest_subprocess(*args, "-n", "2", "-k", "not L2")
    result.assert_outcomes(passed=2, failed=1)  # xdist counts no deselected
    run = load_valid_report(report)["run"]
    use = run["cache"]["fake-model-zero-shot"]
    assert use.pop("oldest") is not None
    assert run["cache"] == {"fake-model-zero-shot": {"cached": 6, "samples": 6,
                                                     "snapshots": ["fake-model"],
                                                     "served": "fake-model"}}
    assert run["filter"]["keyword"] == "not L2" and run["filter"]["selected"] == 3
    assert run["suite_hash"] == suite_hash(load_suite(suite_dir))
