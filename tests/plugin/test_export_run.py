"""``export-cache`` after a real run exports every instruction, also two with the same text
(one request, one cache key: the second is recorded as a use of the first's answer; issue 32
§4: 794 of 800 official instructions were exported), under ``-n 0`` and in a rerun from the
cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pytest_graphinstruct.models.backends.openai_backend  # noqa: F401  (see test_plugin.py)
from pytest_graphinstruct.__main__ import main

from ._suite import suite_records, tree_server

pytest_plugins = ["pytester"]


def _twin_suite(root: Path) -> Path:
    """The tiny suite with L1-002 asking, word for word, what L1-001 asks."""
    root.mkdir(parents=True, exist_ok=True)
    records = suite_records()
    twin = dict(records[1][0], id="L1-002")
    records[1] = [records[1][0], twin]
    for lv, recs in records.items():
        (root / f"level_{lv}.json").write_text(json.dumps(recs), encoding="utf-8")
    return root


def _exported(cache: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, int]:
    assert main(["cache", "export", "--cache", str(cache), "--out", str(out)]) == 0
    capsys.readouterr()
    return {r["instruction_id"]: len(r["samples"])
            for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}


def test_two_instructions_with_one_text_are_both_exported(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GI_TEST_KEY", "sk-test")
    suite = _twin_suite(pytester.path / "suite")
    cache = pytester.path / "cache"
    with tree_server() as server:
        run = [f"--gi-suite={suite}", "--gi-model=fake-model",
               f"--gi-base-url={server.base_url}", "--gi-api-key-env=GI_TEST_KEY",
               f"--gi-cache={cache}", "--gi-samples=2", "-p", "no:cacheprovider"]
        first = pytester.runpytest(*run)
        assert first.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
        assert server.request_count == 6  # 4 instructions x 2 samples, the twins' asked once
        expected = {"L0-001": 2, "L1-001": 2, "L1-002": 2, "L2-001": 2}
        assert _exported(cache, pytester.path / "a.jsonl", capsys) == expected
        # a cache written before uses were recorded: the rerun from it records them
        lines = (cache / "answers.jsonl").read_text(encoding="utf-8").splitlines()
        kept = [ln for ln in lines if json.loads(ln)["instruction_id"] != "L1-002"]
        (cache / "answers.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
        assert pytester.runpytest(*run).ret in (pytest.ExitCode.OK,
                                                pytest.ExitCode.TESTS_FAILED)
        assert server.request_count == 6  # nothing asked again
    assert _exported(cache, pytester.path / "b.jsonl", capsys) == expected
