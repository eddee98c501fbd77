"""Writing a report as JSON: deterministic text, an atomic write, and why a path cannot take
one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records import writer
from pytest_graphinstruct.run.records.results import CellMetadata, Coverage, RunReport
from pytest_graphinstruct.run.records.writer import report_json, unwritable_reason, write_report


def _report() -> RunReport:
    return with_pareto([build_cell(CellMetadata("modèle", "zero-shot"), [])])


def test_the_json_text_is_indented_utf8_newline_terminated_and_deterministic() -> None:
    text = report_json(_report())
    assert text.endswith("}\n") and text.startswith("{\n  ")
    assert "modèle" in text  # not \u escaped
    assert report_json(_report()) == text
    assert RunReport.from_json(json.loads(text)) == _report()


def test_write_report_creates_the_folder_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "r.json"
    write_report(_report(), path)
    assert path.read_text(encoding="utf-8") == report_json(_report())
    write_report(RunReport((), coverage=Coverage.partial("x")), str(path))  # replaced
    assert json.loads(path.read_text(encoding="utf-8"))["cells"] == []
    assert sorted(p.name for p in path.parent.iterdir()) == ["r.json"]


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.json"
    path.write_text("the old report", encoding="utf-8")

    def crash(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer.os, "fsync", crash)
    with pytest.raises(OSError, match="No space left"):
        write_report(_report(), path)
    assert path.read_text(encoding="utf-8") == "the old report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_writable_path_has_no_reason_and_gets_its_folder(tmp_path: Path) -> None:
    assert unwritable_reason(tmp_path / "new" / "r.json") is None
    assert (tmp_path / "new").is_dir()
    (tmp_path / "r.json").write_text("{}", encoding="utf-8")
    assert unwritable_reason(str(tmp_path / "r.json")) is None


def test_why_a_path_cannot_take_a_report(tmp_path: Path) -> None:
    assert unwritable_reason(tmp_path) == (
        f"cannot write a report to {tmp_path}: it is a directory")
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    reason = unwritable_reason(blocker / "r.json")
    assert reason is not None and reason.startswith(f"cannot create the folder of {blocker}")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="permissions do not bind root (or this system)")
def test_read_only_folders_and_files(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "r.json").write_text("{}", encoding="utf-8")
    (tmp_path / "ro.json").write_text("{}", encoding="utf-8")
    (tmp_path / "ro.json").chmod(0o444)
    locked.chmod(0o555)
    try:
        assert unwritable_reason(locked / "r.json") == (
            f"cannot write a report to {locked / 'r.json'}: its folder is not writable")
        assert unwritable_reason(tmp_path / "ro.json") == (
            f"cannot write a report to {tmp_path / 'ro.json'}: the file is read-only")
    finally:
        locked.chmod(0o755)


def test_same_file_sees_through_spellings_symlinks_and_hard_links(tmp_path: Path) -> None:
    base = tmp_path / "b" / "base.json"
    assert writer.same_file(base, tmp_path / "b" / ".." / "b" / "base.json")  # not there yet
    base.parent.mkdir()
    base.write_text("{}", encoding="utf-8")
    (tmp_path / "link.json").symlink_to(base)
    os.link(base, tmp_path / "hard.json")
    assert writer.same_file(tmp_path / "link.json", base)
    assert writer.same_file(tmp_path / "hard.json", base)
    assert not writer.same_file(tmp_path / "other.json", base)
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert not writer.same_file(tmp_path / "loop", base)  # never raises
