"""The API key is written nowhere: not when the key itself is passed as ``--gi-api-key-env``
(refused in one line showing a redacted form), not when the model echoes it in an answer (the
answer is kept with the key redacted, in the cache, the report and the HTML page; issue 32
§4)."""

from __future__ import annotations

from pathlib import Path

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

from ._suite import TREE4

pytest_plugins = ["pytester"]

KEY = "sk-proj-Q7x2LmN4pR8sT1vW3yZ5aB6cD9eF0gH"


def _files_hold(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_the_key_passed_as_the_variable_name_is_refused_without_showing_it(
        pytester: pytest.Pytester, suite_dir: Path) -> None:
    report = pytester.path / "r.json"
    with FakeOpenAIServer() as server:
        result = pytester.runpytest(
            f"--gi-suite={suite_dir}", "--gi-model=fake-model",
            f"--gi-base-url={server.base_url}", f"--gi-api-key-env={KEY}",
            f"--gi-cache={pytester.path / 'cache'}", f"--gi-report={report}",
            "-p", "no:cacheprovider")
        asked = server.request_count + len(server.probes)
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output
    assert asked == 0
    lines = [line for line in output.splitlines() if "pytest-graphinstruct:" in line]
    assert len(lines) == 1 and "looks like the key itself" in lines[0], output
    assert "'sk-…' (39 characters)" in lines[0]
    assert KEY not in output and KEY[3:] not in output
    assert report.is_file() and _files_hold(pytester.path, KEY[3:]) == []


def test_a_key_the_model_echoes_is_redacted_in_the_cache_report_and_page(
        pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", KEY)
    out = pytester.path / "out"
    with FakeOpenAIServer(responder=lambda body: f"my key is {KEY}\n{TREE4}") as server:
        result = pytester.runpytest(
            f"--gi-suite={suite_dir}", "--gi-model=fake-model",
            f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY",
            f"--gi-cache={out / 'cache'}", f"--gi-report={out / 'r.json'}",
            f"--gi-html={out / 'r.html'}", f"--gi-markdown={out / 'r.md'}", "-v", "-rA",
            "-p", "no:cacheprovider")
        assert server.request_count > 0
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
    assert KEY not in result.stdout.str() + result.stderr.str()
    assert _files_hold(pytester.path, KEY) == []
    cached = (out / "cache" / "answers.jsonl").read_text(encoding="utf-8")
    assert "my key is [REDACTED]" in cached
    assert "[REDACTED]" in (out / "r.json").read_text(encoding="utf-8")
