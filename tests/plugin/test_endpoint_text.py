"""Text from an endpoint never reaches a terminal or the Markdown raw.

A server answering 400 with ``ESC ]0;pwned BEL ESC [2J`` in its message (retitle the terminal,
clear the screen): no raw ESC or BEL byte in pytest's output, the Markdown summary, or the
report as ``show`` prints it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer, Fault

pytest_plugins = ["pytester"]

HOSTILE = "\x1b]0;pwned\x07\x1b[2J"


def test_an_endpoint_error_with_escape_bytes_is_escaped_everywhere(
        pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "k")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    summary, report = pytester.path / "summary.md", pytester.path / "r.json"

    def fault(body: dict[str, Any]) -> Fault:
        return Fault.bad_request(message=f"bad request {HOSTILE}")

    with FakeOpenAIServer(latency_s=0.0) as server:
        server.fault_for = fault
        result = pytester.runpytest(
            f"--gi-suite={suite_dir}", "--gi-model=fake-model", "--gi-levels=1",
            f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY", "--gi-cache=none",
            "--override-ini=gi_max_retries=0", f"--gi-markdown={summary}", f"--gi-report={report}",
            "-rA", "-p", "no:cacheprovider")
        assert server.request_count >= 1  # the fault was served
    output = result.stdout.str() + result.stderr.str()
    assert "pwned" in output  # the endpoint's text is shown, escaped
    markdown = summary.read_text(encoding="utf-8")
    assert main(["show", "L1-001", "--report", str(report)]) == 0
    printed = capsys.readouterr().out
    assert "pwned" in printed
    for where, text in (("pytest output", output), ("markdown", markdown), ("show", printed)):
        assert "\x1b" not in text and "\x07" not in text, where
