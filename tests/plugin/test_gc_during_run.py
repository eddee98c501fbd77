"""A benchmark run collects garbage less often while it runs (``run/gc_policy.py``) and gives
the process its thresholds back: pytester runs it in this very process."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from pytest_graphinstruct.run.gc_policy import THRESHOLDS

pytest_plugins = ["pytester"]


def test_items_run_under_the_policy_and_the_process_gets_its_thresholds_back(
        pytester: pytest.Pytester, suite_dir: Path) -> None:
    seen = pytester.path / "seen.json"
    pytester.makeconftest(
        "import gc, json\n"
        "def pytest_runtest_call(item):\n"
        f"    open({str(seen)!r}, 'a').write(json.dumps(gc.get_threshold()) + '\\n')\n")
    before = gc.get_threshold()
    gc.set_threshold(123, 4, 5)
    try:
        result = pytester.runpytest_inprocess("-p", "no:xdist", "-p", "no:cacheprovider",
                                              f"--gi-suite={suite_dir}", "--gi-model=oracle")
        after = gc.get_threshold()
    finally:
        gc.set_threshold(*before)
    result.assert_outcomes(passed=4)
    during = [tuple(json.loads(line)) for line in seen.read_text().splitlines()]
    assert during == [THRESHOLDS] * 4
    assert after == (123, 4, 5)


def test_a_run_without_the_benchmark_leaves_the_collector_alone(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile("import gc\ndef test_x():\n    assert gc.get_threshold() == (123, 4, 5)\n")
    before = gc.get_threshold()
    gc.set_threshold(123, 4, 5)
    try:
        result = pytester.runpytest_inprocess("-p", "no:xdist", "-p", "no:cacheprovider")
    finally:
        gc.set_threshold(*before)
    result.assert_outcomes(passed=1)
