"""Reports edited by hand are not trusted (issue 32, section 3), end to end: real reports of
the tiny suite (L0-001, L1-001, L1-002, L2-001) written by pytester runs, then damaged the way
a probe did, then handed to ``gate`` and ``merge`` — each refuses with one line naming the file
and the problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.__main__ import main
from tests.report.schema_check import load_valid_report

from ._suite import write_suite

pytestmark = pytest.mark.slow  # whole pytester runs: the full tier (.ci/run)

pytest_plugins = ["pytester"]


def _report(pytester: pytest.Pytester, suite: Path, name: str, *extra: str) -> Path:
    """The report of a run of the oracle on ``suite`` (every answer right) at ``name``."""
    path = pytester.path / name
    result = pytester.runpytest(f"--gi-suite={suite}", "--gi-model=oracle", "--gi-cache=none",
                                "-p", "no:cacheprovider", f"--gi-report={path}", *extra)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]
    return path


def _edit(path: Path, change: Any) -> Path:
    """``path`` rewritten with ``change`` applied to its JSON (in place)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The command exits 2 with one line on stderr; returns the line."""
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    return err


def _drop_item(data: dict[str, Any]) -> None:
    data["cells"][0]["per_instruction"].pop()


def _twice(data: dict[str, Any]) -> None:
    items = data["cells"][0]["per_instruction"]
    copy = json.loads(json.dumps(items[1]))
    copy["outcome"], copy["level_score"] = "failed", 0.0  # another copy, another verdict
    items.append(copy)


@pytest.mark.parametrize(("change", "problem"), [
    (_drop_item, "its coverage says 4 item(s) selected and complete, but its cells hold 3 "
                 "result(s)"),
    (_twice, "cell oracle-zero-shot holds instruction L1-001 more than once"),
])
def test_gate_refuses_a_report_that_contradicts_itself(
        pytester: pytest.Pytester, suite_dir: Path, capsys: pytest.CaptureFixture[str],
        change: Any, problem: str) -> None:
    base = _report(pytester, suite_dir, "baseline.json")
    cand = _edit(_report(pytester, suite_dir, "cand.json"), change)
    err = _refused(["gate", str(cand), "--baseline", str(base)], capsys)
    assert err.startswith(f"error: {cand}: the report contradicts itself: {problem}"), err
    # the same damage in the baseline: refused too, named
    good = _report(pytester, suite_dir, "good.json")
    _edit(base, change)
    err = _refused(["gate", str(good), "--baseline", str(base)], capsys)
    assert f"{base}: the report contradicts itself: {problem}" in err, err
    # ... and by a pytest run gated against it (a usage error, before any request)
    gated = pytester.runpytest(f"--gi-suite={suite_dir}", "--gi-model=oracle", "--gi-cache=none",
                               "-p", "no:cacheprovider", f"--gi-baseline={base}")
    assert gated.ret == pytest.ExitCode.USAGE_ERROR
    assert f"{base}: the report contradicts itself: {problem}" in gated.stderr.str()


def test_merge_refuses_a_shard_that_contradicts_itself(
        pytester: pytest.Pytester, suite_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = _edit(_report(pytester, suite_dir, "s1.json", "--gi-shard=1/2"), _drop_item)
    two = _report(pytester, suite_dir, "s2.json", "--gi-shard=2/2")
    out = pytester.path / "merged.json"
    err = _refused(["merge", str(one), str(two), "--out", str(out)], capsys)
    assert err.startswith(f"error: {one}: the report contradicts itself: its coverage says"), err
    assert not out.exists()


# -- merge: the older-report leniency is for older schemas, not for missing fields --------------

def _other_suite(pytester: pytest.Pytester) -> Path:
    """The tiny suite with one instruction's text changed: another suite, the same ids."""
    root = write_suite(pytester.path / "other")
    level = json.loads((root / "level_1.json").read_text(encoding="utf-8"))
    level[0]["instruction"] = "Generate a tree with 4 nodes, please."
    (root / "level_1.json").write_text(json.dumps(level), encoding="utf-8")
    return root


def _no_hashes(data: dict[str, Any]) -> None:
    data["run"].pop("suite_hash")
    data["run"].pop("level_hashes")


def test_merge_refuses_a_shard_of_another_suite_whose_hashes_were_deleted(
        pytester: pytest.Pytester, suite_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = _report(pytester, suite_dir, "s1.json", "--gi-shard=1/2")
    two = _edit(_report(pytester, _other_suite(pytester), "s2.json", "--gi-shard=2/2"),
                _no_hashes)
    out = pytester.path / "merged.json"
    err = _refused(["merge", str(one), str(two), "--out", str(out)], capsys)
    assert err == (f"error: {two} records no suite hash, but it is a graphinstruct-report/2 "
                   "report, which always records one: its run record was edited; merge only "
                   "shards as their runs wrote them"), err
    assert not out.exists()
    # the whole run record deleted: the same
    _edit(two, lambda data: data.pop("run"))
    err = _refused(["merge", str(one), str(two), "--out", str(out)], capsys)
    assert f"{two} records no suite hash" in err
    # the shards as written merge
    fine = _report(pytester, suite_dir, "s2b.json", "--gi-shard=2/2")
    assert main(["merge", str(one), str(fine), "--out", str(out)]) == 0
    merged = load_valid_report(out)
    assert merged["coverage"]["complete"] and len(merged["cells"][0]["per_instruction"]) == 4

