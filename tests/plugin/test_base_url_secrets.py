"""Credentials in ``--gi-base-url`` are refused in one line and written nowhere (issue 20)."""

from __future__ import annotations

from pathlib import Path

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

pytest_plugins = ["pytester"]

KEY = "sk-test-KEY-0123456789"
PASSWORD = "hunter2pw"
QUERY_SECRET = "SECRETQ9876"


def test_a_base_url_with_credentials_is_a_one_line_usage_error(
        pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", KEY)
    report = pytester.path / "r.json"
    with FakeOpenAIServer() as server:
        url = (f"http://user:{PASSWORD}@127.0.0.1:{server.port}/v1"
               f"?api_key={QUERY_SECRET}")
        result = pytester.runpytest(
            f"--gi-suite={suite_dir}", "--gi-model=fake-model", f"--gi-base-url={url}",
            "--gi-api-key-env=GI_TEST_KEY", f"--gi-cache={pytester.path / 'cache'}",
            f"--gi-report={report}", "-p", "no:cacheprovider")
        asked = server.request_count + len(server.probes)
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output
    assert asked == 0  # refused before any request
    lines = [line for line in output.splitlines() if "carries credentials" in line]
    assert len(lines) == 1, output
    assert "--gi-api-key-env" in lines[0] and "GI_TEST_KEY" in lines[0]
    assert "***" in lines[0] and "127.0.0.1" in lines[0]
    for secret in (PASSWORD, QUERY_SECRET):
        assert secret not in output
        for path in pytester.path.rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path
