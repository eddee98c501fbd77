"""Project-wide test configuration: the official-suite fixture.

It is loaded by every pytest run in the checkout, the benchmark's own (``pytest instructions``)
and each of its xdist workers included, so it imports nothing heavy: the Hypothesis profiles are
in ``tests/conftest.py``.

The official GraphInstruct suite is never part of this repository; tests that need it read it from
``../shared/official-suite`` (or ``$GI_OFFICIAL_SUITE``) and skip cleanly when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent


def official_suite_path() -> Path | None:
    """The official suite's ``instructions`` folder, or ``None`` when it is not on this machine."""
    env = os.environ.get("GI_OFFICIAL_SUITE")
    candidates = [Path(env)] if env else []
    candidates.append(ROOT.parent / "shared" / "official-suite" / "instructions")
    for c in candidates:
        if (c / "level_0.json").is_file():
            return c
    return None


@pytest.fixture(scope="session")
def official_suite_dir() -> Path:
    """Path of the official suite's instructions; skips the test when it is absent."""
    path = official_suite_path()
    if path is None:
        pytest.skip("official suite not found (../shared/official-suite or $GI_OFFICIAL_SUITE)")
    return path
