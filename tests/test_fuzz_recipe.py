"""The fuzzing recipe of docs/STRATEGIES.md works as written: its first Python block, copied
into an empty folder, passes under pytest (a fresh process, no conftest of ours)."""

from __future__ import annotations

import re

import pytest

from tests.packaging import ROOT

pytest_plugins = ["pytester"]


def test_the_documented_recipe_passes_as_written(pytester: pytest.Pytester) -> None:
    doc = (ROOT / "docs" / "STRATEGIES.md").read_text(encoding="utf-8")
    match = re.search(r"```python\n(.*?)```", doc, re.S)
    assert match is not None, "docs/STRATEGIES.md has no Python block"
    (pytester.path / "test_fuzz_my_parser.py").write_text(match.group(1), encoding="utf-8")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist",
                                           "test_fuzz_my_parser.py")
    result.assert_outcomes(passed=4)
