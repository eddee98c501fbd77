"""The live progress line in real runs: absent when the output is not a terminal and under -q,
shown with --override-ini=gi_progress=on without changing pytest's own output, and its counts
are exact (single process and xdist)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer
from tests.report.live.test_line import screen

pytest_plugins = ["pytester"]

STATUS = "GraphInstruct: answers"

# A conftest that records the plugin's counts once the run is over (before the summary).
COUNTS_CONFTEST = """
import dataclasses
import json
import pytest

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    if hasattr(session.config, "workerinput"):
        return
    plugin = session.config.pluginmanager.get_plugin("graphinstruct-session")
    with open("counts.json", "w") as f:
        json.dump({"counts": dataclasses.asdict(plugin.state.progress_counts()),
                   "items_done": plugin.state.items_done}, f)
"""


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    with FakeOpenAIServer(latency_s=0.0) as srv:
        yield srv


def args(suite_dir: Path, server: FakeOpenAIServer, *extra: str) -> list[str]:
    return [f"--gi-suite={suite_dir}", "--gi-model=fake-model", f"--gi-base-url={server.base_url}",
            "--gi-api-key-env=GI_TEST_KEY", "--gi-pools=none", "-p", "no:cacheprovider",
            *(extra if any(e.startswith("--gi-cache=") for e in extra)
              else ("--gi-cache=none", *extra))]


@pytest.mark.slow
def test_quiet_when_not_a_terminal_and_under_q(pytester: pytest.Pytester, suite_dir: Path,
                                               server: FakeOpenAIServer) -> None:
    for extra in ((), ("-q",), ("-qq",), ("--override-ini=gi_progress=on", "-q"),
                  ("--override-ini=gi_progress=off",)):
        result = pytester.runpytest(*args(suite_dir, server, *extra))
        out = result.stdout.str()
        assert result.ret == pytest.ExitCode.TESTS_FAILED  # the echoing model fails them all
        assert "4 failed" in out or "FFFF" in out
        assert STATUS not in out, extra
        assert "\x1b[" not in out, extra  # pytester's output is not a TTY: no escape codes


def test_forced_line_leaves_pytests_output_as_it_was(pytester: pytest.Pytester,
                                                      suite_dir: Path,
                                                      server: FakeOpenAIServer) -> None:
    plain = pytester.runpytest(*args(suite_dir, server, "--color=no"))
    live = pytester.runpytest(*args(suite_dir, server, "--color=no",
                                    "--override-ini=gi_progress=on"))
    raw = "\n".join(live.outlines)
    assert STATUS in raw and "items " in raw and "tokens " in raw
    # on a terminal, the screen ends up as pytest's own (the timing in the last line aside)
    shown = screen(raw, width=10_000)
    assert not any(STATUS in row for row in shown)
    assert shown[:-1] == screen("\n".join(plain.outlines), width=10_000)[:-1]


def test_bad_mode_is_a_usage_error(pytester: pytest.Pytester, suite_dir: Path,
                                   server: FakeOpenAIServer) -> None:
    result = pytester.runpytest(*args(suite_dir, server, "--override-ini=gi_progress=sometimes"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*gi_progress must be one of auto, on, off*"])


@pytest.mark.parametrize("xdist", [(), pytest.param(("-n", "2"), marks=pytest.mark.slow)],
                         ids=["single", "xdist"])
@pytest.mark.slow
def test_counts_are_exact(pytester: pytest.Pytester, suite_dir: Path, server: FakeOpenAIServer,
                          xdist: tuple[str, ...]) -> None:
    pytester.makeconftest(COUNTS_CONFTEST)
    report = pytester.path / "r.json"
    # under xdist the controller's answer service asks every sample once and its own counts
    # join the workers': the same counts as one process
    result = pytester.runpytest_subprocess(*args(suite_dir, server, "--override-ini=gi_progress=on",
                                                 "--gi-samples=2", f"--gi-report={report}",
                                                 f"--gi-cache={pytester.path / 'cache'}",
                                                 *xdist))
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    seen = json.loads((pytester.path / "counts.json").read_text())
    data = json.loads(report.read_text())
    items = [r for cell in data["cells"] for r in cell["per_instruction"]]
    samples = [s for r in items for s in r["samples"]]
    tokens = sum((s["input_tokens"] or 0) + (s["output_tokens"] or 0) for s in samples)
    assert len(samples) == 2 * len(items) and tokens > 0
    assert seen["items_done"] == len(items)
    assert not any(r["outcome"] == "error" for r in items)  # the server never failed
    assert seen["counts"] == {"requested": len(samples), "received": len(samples), "cached": 0,
                              "errors": 0, "tokens": tokens}
