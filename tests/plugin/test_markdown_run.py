"""The Markdown summary of a pytest run agrees with the run's exit status (--gi-markdown).

Without --gi-violations=report a model violation fails its test, so pytest exits 1: the
summary must say failed, and why, not "passed" because no gate failed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

from ._suite import TREE4

pytest_plugins = ["pytester"]


@pytest.mark.parametrize(("benchmark", "rc", "heading"), [
    ((), 1, "## GraphInstruct: ❌ failed"),
    (("--gi-violations=report",), 0, "## GraphInstruct: ✅ passed")])
def test_the_markdown_heading_agrees_with_the_exit_status(
        pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch,
        benchmark: tuple[str, ...], rc: int, heading: str) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "k")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    summary = pytester.path / "summary.md"

    def answer(body: dict[str, Any]) -> str:
        return TREE4  # right for the tree, a violation for every other instruction

    with FakeOpenAIServer(latency_s=0.0, responder=answer) as server:
        result = pytester.runpytest(
            f"--gi-suite={suite_dir}", "--gi-model=fake-model", "--gi-levels=1",
            f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY", "--gi-cache=none",
            f"--gi-markdown={summary}", "-p", "no:cacheprovider", *benchmark)
    assert result.ret == rc, result.stdout.str()
    text = summary.read_text(encoding="utf-8")
    assert text.startswith(heading + "\n"), text
    if rc:
        assert "1 test(s) failed, so pytest exits 1: 1 item(s) violated their instructions" \
            in text and "without --gi-violations=report" in text
