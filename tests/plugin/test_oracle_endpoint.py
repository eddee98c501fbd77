"""The plugin against the oracle endpoint (serve-oracle) over HTTP: every item passes, under any
prompting strategy and method, with any model name."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.run.oracle_lookup import OracleLookup
from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.suite.shipped import shipped_suite
from pytest_graphinstruct.testing.oracle_server import OracleServer, pytest_command

pytestmark = pytest.mark.slow  # whole-suite runs: the full tier (.ci/run)

pytest_plugins = ["pytester"]


@pytest.fixture(scope="module")
def server() -> Any:
    shipped = shipped_suite()
    assert shipped is not None
    with OracleServer(OracleLookup(load_suite(shipped.instructions))) as srv:
        yield srv


def _printed(server: OracleServer, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pytest arguments of the command the endpoint prints, run with no API key set (a
    loopback endpoint needs none)."""
    shipped = shipped_suite()
    assert shipped is not None
    for name in [n for n in os.environ if n.startswith("OPENAI_")]:
        monkeypatch.delenv(name)
    words = shlex.split(pytest_command(server.base_url, shipped.instructions, cwd))
    assert words[0] == "pytest"
    return words[1:]


def test_the_printed_command_passes_every_item(pytester: pytest.Pytester,
                                              server: OracleServer,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    refused = server.unknown
    args = _printed(server, pytester.path, monkeypatch)
    assert "--gi-per-level=2" in args
    result = pytester.runpytest(*args, "-p", "no:cacheprovider",
                                f"--gi-cache={pytester.path / 'cache'}")
    result.assert_outcomes(passed=12)
    assert server.unknown == refused


@pytest.mark.parametrize("extra", [
    ("--gi-strategy=few-shot,zero-cot,few-cot", "--gi-model=any-name"),
    ("--gi-method=vgig,retry", "--gi-model=another-name", "--gi-samples=2"),
])
def test_strategies_and_methods_are_answered(extra: tuple[str, ...], pytester: pytest.Pytester,
                                             server: OracleServer,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    refused = server.unknown
    args = [a for a in _printed(server, pytester.path, monkeypatch)
            if not a.startswith(("--gi-model=", "--gi-per-level="))]
    result = pytester.runpytest(*args, *extra, "--gi-per-level=1", "-p", "no:cacheprovider",
                                "--gi-cache=none")
    outcomes = result.parseoutcomes()
    assert set(outcomes) <= {"passed", "warnings"}, result.stdout.str()[-3000:]
    assert outcomes["passed"] >= 12
    assert server.unknown == refused


def test_a_run_of_another_suite_errors_saying_why(pytester: pytest.Pytester, suite_dir: Path,
                                                  server: OracleServer,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    args = _printed(server, pytester.path, monkeypatch)
    result = pytester.runpytest(*args, f"--gi-suite={suite_dir}", "-p", "no:cacheprovider",
                                "--gi-cache=none", "-o", "gi_max_error_rate=1")
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines(["*HTTP 400 (not retried): [[]invalid_request[]] no instruction "
                                 "of the served suite (800 instructions) is quoted*"])
