"""``run/overwrites.py``: an output that would overwrite an input — the same file by any
name (another spelling, a symlink, a hard link), or a path inside a folder input — is found,
and refused in one line with its paths escaped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.run.overwrites import (
    Input,
    cache_inputs,
    file_inputs,
    overwrite_problem,
    refuse_overwrite,
    suite_inputs,
)


def test_the_same_file_by_any_name_is_found(tmp_path: Path) -> None:
    report = tmp_path / "in" / "c.json"
    report.parent.mkdir()
    report.write_text("{}", encoding="utf-8")
    (tmp_path / "sym.json").symlink_to(report)
    os.link(report, tmp_path / "hard.json")
    (tmp_path / "folder").symlink_to(report.parent)
    inputs = file_inputs("the report", [report])
    for name in (report, tmp_path / "in" / ".." / "in" / "c.json", tmp_path / "sym.json",
                 tmp_path / "hard.json", tmp_path / "folder" / "c.json"):
        assert overwrite_problem("--out", name, inputs) == (
            f"--out names the report c.json ({report}): writing it would overwrite an input of "
            "this command; write it to another file")
    assert overwrite_problem("--out", tmp_path / "other.json", inputs) is None
    assert overwrite_problem("--out", tmp_path / "in" / "new" / "c.json", inputs) is None


def test_the_answer_caches_files_and_its_pools_folder(tmp_path: Path) -> None:
    cache = tmp_path / "c"
    inputs = cache_inputs(cache)
    assert [i.path.name for i in inputs] == ["answers.jsonl", "batches.json", "pools"]
    answers = overwrite_problem("--gi-report", cache / "answers.jsonl", inputs)
    assert answers is not None and answers.startswith(
        "--gi-report names the answer cache's answers.jsonl")
    ledger = overwrite_problem("--gi-report", cache / "batches.json", inputs)
    assert ledger is not None and "paid for again" in ledger
    pools = overwrite_problem("--gi-report", cache / "pools" / "p" / "x.npz", inputs)
    assert pools is not None and pools.startswith(
        f"--gi-report ({cache / 'pools' / 'p' / 'x.npz'}) lies in the answer cache's folder "
        "pools/")
    # the cache's folder may hold the cache beside other files (--gi-cache=.)
    assert overwrite_problem("--gi-report", cache / "report.json", inputs) is None


def test_a_suite_is_its_level_files(tmp_path: Path) -> None:
    for name in ("level_0.json", "level_2.json", "notes.json"):
        (tmp_path / name).write_text("[]", encoding="utf-8")
    assert [i.path.name for i in suite_inputs(tmp_path)] == ["level_0.json", "level_2.json"]
    assert [i.path for i in suite_inputs(tmp_path / "level_0.json")] == [
        tmp_path / "level_0.json"]
    assert suite_inputs(None) == []


def test_the_refusal_is_one_escaped_line(tmp_path: Path) -> None:
    odd = tmp_path / "a\x1b[2Jb\nc.json"
    with pytest.raises(GraphInstructError) as caught:
        refuse_overwrite("--out", odd, [Input("the report", odd, hint=" (hint)")])
    message = str(caught.value)
    assert "\n" not in message and "\x1b" not in message and "\\x1b[2Jb\\nc.json" in message
    assert message.endswith("write it to another file (hint)")
    refuse_overwrite("--out", None, [Input("the report", odd)])  # nothing to write: fine
