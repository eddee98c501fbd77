"""--gi-shard runs merged back together equal the unsharded run (report/merge.py, run/shard.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pytest_graphinstruct.__main__ import main
from tests.report.schema_check import load_valid_report

from ._suite import CYCLE4, EMPTY3, TREE4

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]


def _run(pytester: pytest.Pytester, report: Path, *extra: str) -> None:
    result = pytester.runpytest(f"--gi-suite={ROOT / 'instructions'}", "--gi-model=oracle",
                                "--gi-cache=none", "-p", "no:cacheprovider",
                                f"--gi-report={report}", *extra)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]


def _without_run(path: Path) -> dict[str, object]:
    data = load_valid_report(path)
    data.pop("run")
    data.pop("gate")  # how this invocation judged the run: a merged report is not judged
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


def _shard(pytester: pytest.Pytester, name: str, k: int, *args: str) -> str:
    """Shard ``k``/2 of the run ``args``, its report at ``name``."""
    part = pytester.path / name
    result = pytester.runpytest(*args, f"--gi-report={part}", f"--gi-shard={k}/2",
                                "--gi-cache=none", "-p", "no:cacheprovider")
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), \
        result.stdout.str()[-2000:]
    return str(part)


def _refused(parts: list[str], out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``merge`` exits 2 with one line and writes nothing; returns the line."""
    capsys.readouterr()
    assert main(["merge", *parts, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    assert not out.exists()
    return err


def test_a_shard_run_at_another_temperature_is_refused(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 19: a shard with --gi-temperature=1.7 is not part of the run at the default."""
    base = (f"--gi-suite={ROOT / 'instructions'}", "--gi-model=oracle", "--gi-levels=0,1",
            "--gi-per-level=2")
    parts = [_shard(pytester, "t1.json", 1, *base),
             _shard(pytester, "t2.json", 2, *base, "--gi-temperature=1.7")]
    err = _refused(parts, pytester.path / "m.json", capsys)
    assert err == (f"error: cell oracle-zero-shot: decoding.temperature is unset in {parts[0]} "
                   f"but 1.7 in {parts[1]}: not parts of one run")


def test_shards_of_two_replay_files_with_one_label_are_refused(
        pytester: pytest.Pytester, suite_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Another answers file under the same --gi-replay-label is another run; the same file
    merges, and the merged run record keeps its hash."""
    def answers(name: str, l1: str) -> Path:
        path = pytester.path / name
        rows = [("L0-001", EMPTY3), ("L1-001", l1), ("L1-002", CYCLE4), ("L2-001", EMPTY3)]
        path.write_text("".join(json.dumps({"instruction_id": iid, "level": int(iid[1]),
                                            "samples": [{"raw_output": raw}]}) + "\n"
                                for iid, raw in rows))
        return path

    good, other = answers("good.jsonl", TREE4), answers("other.jsonl", EMPTY3)
    base = (f"--gi-suite={suite_dir}", "--gi-replay-label=gpt-4o")
    parts = [_shard(pytester, f"good{k}.json", k, *base, f"--gi-replay={good}") for k in (1, 2)]
    merged = pytester.path / "same.json"
    assert main(["merge", *parts, "--out", str(merged)]) == 0
    digest = load_valid_report(merged)["run"]["replay_sha256"]
    assert digest == f"sha256:{hashlib.sha256(good.read_bytes()).hexdigest()}"

    parts = [parts[0], _shard(pytester, "other2.json", 2, *base, f"--gi-replay={other}")]
    err = _refused(parts, pytester.path / "m.json", capsys)
    assert err.startswith(f"error: replay_sha256 is '{digest}' in {parts[0]} but 'sha256:"), err
