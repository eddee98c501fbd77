"""An xdist worker scores its last items in small batches: it knows about how many items it
will run (its share of the selected items), and its scoring queue shrinks its batches towards
that (``run/scoring.py``, ``ScoringQueue.batch_limit``); one process keeps full batches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]

# Each process of the run writes what its scoring queue was told, after its session finished.
CONFTEST = """
import json, os

import pytest

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    plugin = session.config.pluginmanager.get_plugin("graphinstruct-session")
    opened = plugin.state.opened
    name = getattr(session.config, "workerinput", {{}}).get("workerid", "main")
    with open(os.path.join({folder!r}, name + ".json"), "w") as f:
        json.dump({{"share": plugin.state.share,
                   "expected": None if opened is None else opened.scoring.expected}}, f)
"""


def _told(pytester: pytest.Pytester, suite_dir: Path, *args: str,
          passed: int = 4) -> dict[str, Any]:
    """Run the tiny suite's oracle with ``args``: what each process's queue was told."""
    folder = pytester.path / "told"
    folder.mkdir()
    pytester.makeconftest(CONFTEST.format(folder=str(folder)))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--gi-suite={suite_dir}",
                                           "--gi-model=oracle", *args)
    result.assert_outcomes(passed=passed)
    return {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")}


def test_each_worker_is_told_its_share_of_the_items(pytester: pytest.Pytester,
                                                    suite_dir: Path) -> None:
    told = _told(pytester, suite_dir, "-n", "2")
    assert told["gw0"] == told["gw1"] == {"share": 2, "expected": 2}  # 4 items, 2 workers


def test_one_process_keeps_full_batches(pytester: pytest.Pytester, suite_dir: Path) -> None:
    told = _told(pytester, suite_dir, "-p", "no:xdist")
    assert told == {"main": {"share": None, "expected": None}}


def test_dist_each_is_refused_before_any_worker_is_told_a_share(pytester: pytest.Pytester,
                                                                 suite_dir: Path) -> None:
    # --dist each would run every item on every worker (each instruction reported once per
    # worker): the run refuses it up front (issue 47), so no process opens a session
    folder = pytester.path / "told"
    folder.mkdir()
    pytester.makeconftest(CONFTEST.format(folder=str(folder)))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--gi-suite={suite_dir}",
                                           "--gi-model=oracle", "-n", "2", "--dist", "each")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--dist each runs every item on every xdist worker" in result.stderr.str()
    assert list(folder.iterdir()) == []
