"""The API key is written nowhere: not when the key itself is passed as ``--gi-api-key-env``
(refused in one line showing a redacted form), not when the endpoint echoes it in an answer
(issue 32 §4).  Such an answer is withheld — its item an error saying why, nothing of it in the
cache, the report or the HTML page — never rewritten (issue 47 §3: a scored answer is the one
received)."""

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


def test_an_answer_echoing_the_key_is_withheld_from_the_cache_report_and_page(
        pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", KEY)
    out = pytester.path / "out"

    def answer(body: dict[str, object]) -> str:  # L1-001's answer echoes the key
        return f"my key is {KEY}\n{TREE4}" if "tree with 4" in str(body) else TREE4

    with FakeOpenAIServer(responder=answer) as server:
        result = pytester.runpytest(
            f"--gi-suite={suite_dir}", "--gi-model=fake-model",
            f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY",
            f"--gi-cache={out / 'cache'}", f"--gi-report={out / 'r.json'}",
            f"--gi-html={out / 'r.html'}", f"--gi-markdown={out / 'r.md'}", "-v", "-rA",
            "--override-ini=gi_max_error_rate=1", "-p", "no:cacheprovider")
        assert server.request_count == 4  # not retried: it would echo again
    text = result.stdout.str()
    assert KEY not in text + result.stderr.str()
    assert _files_hold(pytester.path, KEY) == []
    assert result.parseoutcomes().get("errors") == 1, text
    assert "holds the API key (the value of GI_TEST_KEY): withheld" in text
    cached = (out / "cache" / "answers.jsonl").read_text(encoding="utf-8")
    assert "my key is" not in cached and "REDACTED" not in cached  # not cached at all
    assert len(cached.splitlines()) == 3  # the three other answers
