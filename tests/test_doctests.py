"""The ``>>>`` examples in the package's docstrings run, and hold (the fast tier runs them; the
suite does not turn on ``--doctest-modules``)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_graphinstruct"

#: Modules known to hold examples: the search below must find at least these.
KNOWN = {
    "pytest_graphinstruct.vocab",
    "pytest_graphinstruct.report.analyses.run_set",
    "pytest_graphinstruct.run.evaluate",
    "pytest_graphinstruct.score.levels",
}


def _modules_with_examples() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ">>>" not in path.read_text(encoding="utf-8"):
            continue
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


MODULES = _modules_with_examples()


def test_the_search_finds_the_examples() -> None:
    assert set(MODULES) >= KNOWN


@pytest.mark.parametrize("name", MODULES)
def test_examples_hold(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} holds '>>>' but no example ran"
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
