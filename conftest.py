"""Project-wide test configuration: Hypothesis profiles and the official-suite fixture.

The official GraphInstruct suite is never part of this repository; tests that need it read it from
``../shared/official-suite`` (or ``$GI_OFFICIAL_SUITE``) and skip cleanly when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent

settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


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
