"""A small suite and the run configuration of model ``gpt-x`` over it (the preflight and
model-snapshot tests share them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.run.config import RunConfig, build_run_config
from tests.plugin._suite import write_suite


@pytest.fixture(name="suite")
def suite_fixture(tmp_path: Path) -> Path:
    """The test suite of tests/plugin/_suite.py, written under ``tmp_path/suite``."""
    return write_suite(tmp_path / "suite")


def config(suite: Path, **raw: Any) -> RunConfig:
    """The run of ``gpt-x`` over ``suite`` with the raw options ``raw``."""
    run = build_run_config({"model": "gpt-x", "suite": str(suite), **raw}, rootdir=suite.parent)
    assert run is not None
    return run
