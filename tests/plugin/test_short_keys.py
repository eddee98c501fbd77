"""A key too short to be a secret changes no answer and no error text (issue 47 §3:
``OPENAI_API_KEY=e`` — local servers accept any key — made 8 of 18 right answers fail, every
``e`` of them replaced by ``[REDACTED]``, in the cache too, and errors read
``e[REDACTED]pected``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer, Fault

from ._suite import CYCLE4, EMPTY3, TREE4

pytest_plugins = ["pytester"]

REFUSAL = "No such graph exists: the constraints are contradictory."


def right_answer(body: dict[str, object]) -> str:
    """The right answer to each instruction of the tiny suite."""
    prompt = str(body.get("messages"))
    if "tree with 4 nodes" in prompt:
        return TREE4
    if "cycle with 4 nodes" in prompt:
        return CYCLE4
    return EMPTY3 if "3 nodes" in prompt else REFUSAL


@pytest.mark.parametrize("key", ["e", "x", "1", "dummy"])
def test_right_answers_pass_and_are_cached_as_sent_whatever_the_short_key(
        pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch,
        key: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", key)
    cache = pytester.path / "cache"
    with FakeOpenAIServer(responder=right_answer) as server:
        result = pytester.runpytest(
            f"--gi-suite={suite_dir}", "--gi-model=fake-model",
            f"--gi-base-url={server.base_url}", f"--gi-cache={cache}", "--gi-samples=3",
            "-p", "no:cacheprovider")
        asked = server.request_count
    result.assert_outcomes(passed=4)
    assert asked == 12
    cached = [json.loads(line)["text"] for line in
              (cache / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(cached) == 12 and set(cached) == {TREE4, CYCLE4, EMPTY3, REFUSAL}
    assert "REDACTED" not in result.stdout.str()


def test_an_endpoint_error_is_shown_as_sent_with_a_short_key(
        pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "e")
    message = "expected 'messages' to be a non-empty array"
    with FakeOpenAIServer(fault_for=lambda body: Fault.bad_request(message)) as server:
        result = pytester.runpytest(
            f"--gi-suite={suite_dir}", "--gi-model=fake-model",
            f"--gi-base-url={server.base_url}", "--gi-cache=none", "-p", "no:cacheprovider")
    out = result.stdout.str()
    assert message in out and "REDACTED" not in out, out
