"""A ``--gi-*`` run without pytest-xdist: ``pip install pytest-graphinstruct`` has no xdist.

The plugin implements xdist's hooks (``pytest_configure_node``, ``pytest_testnodedown``,
``pytest_xdist_node_collection_finished``); without xdist their specs are never registered, and
pluggy fails the run at collection (INTERNALERROR ``unknown hook``) unless the class that holds
them (``pytest_run.xdist_hooks.XdistHooks``) is registered only when xdist is loaded.
``-p no:xdist`` gives the pytest a plain install gets; ``.ci/run`` also runs the plugin from a
real install without extras.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ._suite import CYCLE4, EMPTY3, TREE4

pytest_plugins = ["pytester"]


def test_oracle_run_without_xdist(pytester: pytest.Pytester, suite_dir: Path) -> None:
    report = pytester.path / "r.json"
    result = pytester.runpytest("-p", "no:xdist", "-p", "no:cacheprovider",
                                f"--gi-suite={suite_dir}", "--gi-model=oracle",
                                f"--gi-report={report}")
    out = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in out
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=4)
    data = json.loads(report.read_text(encoding="utf-8"))
    assert [r["instruction_id"] for r in data["cells"][0]["per_instruction"]] == [
        "L0-001", "L1-001", "L1-002", "L2-001"]


def test_replay_run_without_xdist(pytester: pytest.Pytester, suite_dir: Path) -> None:
    replay = pytester.path / "a.jsonl"
    answers = {"L0-001": EMPTY3, "L1-001": TREE4, "L1-002": CYCLE4,
               "L2-001": "Impossible: 3*5 is odd, so no such graph exists."}
    replay.write_text("".join(
        json.dumps({"instruction_id": iid, "level": int(iid[1]), "samples": [
            {"raw_output": text, "input_tokens": 10, "output_tokens": 5, "api_calls": 1}]}) + "\n"
        for iid, text in answers.items()), encoding="utf-8")
    result = pytester.runpytest("-p", "no:xdist", "-p", "no:cacheprovider",
                                f"--gi-suite={suite_dir}", f"--gi-replay={replay}")
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=4)


def test_a_required_xdist_hook_would_fail_without_xdist(pytester: pytest.Pytester) -> None:
    """The check above can fail: an xdist hook that is not optional, with ``-p no:xdist``,
    is the INTERNALERROR a plain install used to end in."""
    pytester.makeconftest("def pytest_testnodedown(node, error):\n    pass\n")
    pytester.makepyfile("def test_x():\n    assert True\n")
    result = pytester.runpytest("-p", "no:xdist", "-p", "no:cacheprovider")
    assert "unknown hook 'pytest_testnodedown'" in result.stdout.str() + result.stderr.str()
    assert result.ret != pytest.ExitCode.OK
