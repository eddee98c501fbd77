"""A response body beyond the bound (8 MiB) is that item's error, one clear line, never read
whole, never cached, never retried (issue 32 §4: 16 answers of 50 MB took 2.08 GB and 786 MB of
cache)."""

from __future__ import annotations

from pathlib import Path

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.models.backends.bounded_calls import MAX_RESPONSE_BYTES
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer, Fault

from ._suite import TREE4

pytest_plugins = ["pytester"]

HUGE = "x" * (MAX_RESPONSE_BYTES + 1)


def _args(suite_dir: Path, server: FakeOpenAIServer, cache: Path) -> list[str]:
    return [f"--gi-suite={suite_dir}", "--gi-model=fake-model",
            f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY",
            f"--gi-cache={cache}", "--override-ini=gi_max_error_rate=1", "-rA",
            "-p", "no:cacheprovider"]


def _only_error(result: pytest.RunResult, item: str) -> tuple[str, str]:
    """The run's output and the one line of ``item``'s error (the run's only one: the other
    items were answered)."""
    out = result.stdout.str()
    lines = out.splitlines()
    assert sum("ERROR at setup" in ln for ln in lines) == 1, out
    at = lines.index(next(ln for ln in lines if f"ERROR at setup of {item}" in ln))
    return out, lines[at + 1]


def test_an_answer_beyond_the_bound_is_an_error_of_its_item_and_never_cached(
        pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    cache = pytester.path / "cache"

    def answer(body: dict[str, object]) -> str:  # L1-002's answer is huge, the others a tree
        return HUGE if "cycle" in str(body.get("messages")) else TREE4

    # the huge one without a Content-Length: only reading tells its length
    with FakeOpenAIServer(responder=answer,
                          fault_for=lambda b: Fault.unsized() if "cycle" in str(b) else None
                          ) as server:
        result = pytester.runpytest(*_args(suite_dir, server, cache))
        asked = server.request_count
    out, error = _only_error(result, "L1-002")
    assert "response body too large" in error, out  # the item's one line
    assert f"larger than {MAX_RESPONSE_BYTES} bytes" in error
    assert asked == 4  # not retried
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), out
    assert (cache / "answers.jsonl").stat().st_size < 100_000  # three trees, no huge answer


def test_a_small_gzip_body_decoding_past_the_bound_is_an_error_never_decoded_whole(
        pytester: pytest.Pytester, suite_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 47 §4: 100 KB of gzip on the wire decoding to 100 MB took 730 MB and a 201 MB cache
    # for 2 items (500 MB: 22.7 GB, the process killed).  Here 64 MB in ~64 KB of gzip; the
    # other answers come gzip-compressed too, and small: read as usual
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    cache = pytester.path / "cache"
    bomb = 64 * 1024 * 1024

    def compressed(body: dict[str, object]) -> Fault:
        return Fault.gzip(bomb if "cycle" in str(body.get("messages")) else 10)

    with FakeOpenAIServer(responder=lambda body: TREE4, fault_for=compressed) as server:
        result = pytester.runpytest_subprocess(*_args(suite_dir, server, cache))
        asked = server.request_count
    out, error = _only_error(result, "L1-002")
    assert f"the response body decodes to more than {MAX_RESPONSE_BYTES} bytes" in error, out
    assert "L1-001[fake-model-zero-shot] PASSED" in out or "PASSED L1-001" in out, out
    assert asked == 4  # not retried
    assert (cache / "answers.jsonl").stat().st_size < 100_000  # three trees, no 64 MB answer
