"""--gi-shard runs merged back together equal the unsharded run (report/merge.py, run/shard.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphinstruct.__main__ import main
from tests.report.schema_check import load_valid_report

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]


def _run(pytester: pytest.Pytester, report: Path, *extra: str) -> None:
    result = pytester.runpytest(f"--gi-suite={ROOT / 'instructions'}", "--gi-model=oracle",
                                "--gi-no-cache", "-p", "no:cacheprovider",
                                f"--gi-report={report}", *extra)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]


def _without_run(path: Path) -> dict[str, object]:
    data = load_valid_report(path)
    data.pop("run")
    return data


def _sharded(pytester: pytest.Pytester, subset: tuple[str, ...], count: int) -> Path:
    parts = []
    for k in range(1, count + 1):
        part = pytester.path / f"shard{k}of{count}.json"
        _run(pytester, part, f"--gi-shard={k}/{count}", *subset)
        shard = load_valid_report(part)["run"]["filter"]["shard"]
        assert (shard["index"], shard["count"]) == (k, count)
        levels = {r["level"] for r in load_valid_report(part)["cells"][0]["per_instruction"]}
        assert levels == set(range(6))  # every level in every shard
        parts.append(part)
    merged = pytester.path / f"merged{count}.json"
    assert main(["merge", *map(str, parts), "--out", str(merged)]) == 0
    return merged


def _check(pytester: pytest.Pytester, subset: tuple[str, ...], counts: tuple[int, ...]) -> None:
    whole = pytester.path / "whole.json"
    _run(pytester, whole, *subset)
    for count in counts:
        merged = _sharded(pytester, subset, count)
        assert json.dumps(_without_run(merged)) == json.dumps(_without_run(whole))


def test_three_shards_merge_to_the_unsharded_report(pytester: pytest.Pytester) -> None:
    """The fast tier's case: 6 instructions per level in three shards."""
    _check(pytester, ("--gi-per-level=6",), (3,))


@pytest.mark.slow
def test_one_three_and_four_shards_merge_to_the_unsharded_report(
        pytester: pytest.Pytester) -> None:
    _check(pytester, ("--gi-per-level=8",), (1, 3, 4))


@pytest.mark.slow
def test_shards_of_the_whole_suite_merge_to_the_unsharded_report(
        pytester: pytest.Pytester) -> None:
    _check(pytester, (), (1, 3, 4))


@pytest.mark.slow
def test_a_missing_shard_makes_a_partial_report_that_fails_the_gate(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    parts = []
    for k in (1, 3):
        part = pytester.path / f"s{k}.json"
        _run(pytester, part, f"--gi-shard={k}/3", "--gi-per-level=6")
        parts.append(str(part))
    merged = pytester.path / "m.json"
    assert main(["merge", *parts, "--out", str(merged)]) == 0
    assert "shard(s) 2/3 missing" in capsys.readouterr().err
    data = load_valid_report(merged)
    assert data["partial"] is True and data["coverage"]["missing_count"] > 0
    missing = data["coverage"]["missing"]
    assert all(m.endswith("[oracle-zero-shot]") for m in missing)
    assert main(["gate", str(merged)]) == 1
    assert "no gate passes on a partial run" in capsys.readouterr().out
