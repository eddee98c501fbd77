"""The run store: numbered saves that never overwrite, listing, and refs."""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.run.store import (
    RunStore,
    StoredRun,
    StoreError,
    default_store,
)

T0 = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)


def _report(tmp_path: Path, text: str = '{"schema": "x"}\n', name: str = "r.json") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_default_store_is_under_the_rootdir(tmp_path: Path) -> None:
    assert default_store(tmp_path) == tmp_path / ".graphinstruct" / "runs"


def test_save_numbers_from_one_and_copies_the_bytes(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    src = _report(tmp_path, "first\n")
    run = store.save(src, now=T0)
    assert run == StoredRun(1, tmp_path / "store" / "0001_20250304T050607.json", T0)
    assert run.name == "0001"
    assert run.path.read_text(encoding="utf-8") == "first\n"
    src.write_text("second\n", encoding="utf-8")
    second = store.save(src, now=T0)  # same second: the number still differs
    assert second.number == 2
    assert run.path.read_text(encoding="utf-8") == "first\n"
    assert second.path.read_text(encoding="utf-8") == "second\n"
    assert [r.number for r in store.runs()] == [1, 2]


def test_next_number_is_highest_plus_one_and_gaps_are_kept(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    (root / "0007_20240101T000000.json").write_text("{}", encoding="utf-8")
    (root / "0002_20230101T000000.json").write_text("{}", encoding="utf-8")
    run = RunStore(root).save(_report(tmp_path), now=T0)
    assert run.number == 8
    assert [r.number for r in RunStore(root).runs()] == [2, 7, 8]


def test_save_converts_the_time_to_utc(tmp_path: Path) -> None:
    from datetime import timedelta, timezone

    local = datetime(2025, 3, 4, 7, 6, 7, tzinfo=timezone(timedelta(hours=2)))
    run = RunStore(tmp_path / "s").save(_report(tmp_path), now=local)
    assert run.path.name == "0001_20250304T050607.json"
    assert run.saved == T0


def test_runs_ignores_other_files_and_a_missing_folder(tmp_path: Path) -> None:
    root = tmp_path / "s"
    assert RunStore(root).runs() == []
    root.mkdir()
    for name in ("notes.txt", "0001.json", "01_20240101T000000.json",
                 "0003_20241301T000000.json", ".9.20240101T000000.tmp", "0004_x.json"):
        (root / name).write_text("{}", encoding="utf-8")
    (root / "0005_20240102T030405.json").write_text("{}", encoding="utf-8")
    runs = RunStore(root).runs()
    assert [(r.number, r.saved) for r in runs] == [
        (5, datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC))]


def test_save_leaves_no_temporary_file(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "s")
    store.save(_report(tmp_path), now=T0)
    left = sorted(p.name for p in store.root.iterdir() if p.name != ".lock")
    assert left == ["0001_20250304T050607.json"]


def test_save_of_a_missing_report_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(GraphInstructError) as exc:
        RunStore(tmp_path / "s").save(tmp_path / "absent.json")
    message = str(exc.value)
    assert "\n" not in message and "absent.json" in message and str(tmp_path / "s") in message


def test_save_into_a_file_in_place_of_the_folder_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "s"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(StoreError, match="cannot save a run in the run store"):
        RunStore(blocker).save(_report(tmp_path))


def test_concurrent_saves_get_distinct_numbers(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "s")
    src = _report(tmp_path)
    got: list[int] = []
    lock = threading.Lock()

    def save() -> None:
        run = store.save(src, now=T0)
        with lock:
            got.append(run.number)

    threads = [threading.Thread(target=save) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == list(range(1, 9))
    assert len(store.runs()) == 8


def test_a_taken_name_is_never_overwritten(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process that links the same name between listing and linking: the save moves
    on to the next number and the other file keeps its bytes."""
    store = RunStore(tmp_path / "s")
    store.root.mkdir()
    real_link = os.link
    calls: list[str] = []

    def racing_link(src: os.PathLike[str], dst: os.PathLike[str]) -> None:
        if not calls:
            Path(dst).write_text("theirs", encoding="utf-8")
        calls.append(str(dst))
        real_link(src, dst)

    monkeypatch.setattr(os, "link", racing_link)
    run = store.save(_report(tmp_path, "ours"), now=T0)
    assert run.number == 2
    assert (store.root / "0001_20250304T050607.json").read_text(encoding="utf-8") == "theirs"
    assert run.path.read_text(encoding="utf-8") == "ours"


# -- refs ----------------------------------------------------------------------------------------

@pytest.fixture
def three(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path / "s")
    for text in ("a", "b", "c"):
        store.save(_report(tmp_path, text), now=T0)
    return store


@pytest.mark.parametrize(("ref", "text"), [
    ("1", "a"), ("0002", "b"), ("3", "c"), ("latest", "c"), ("-1", "c"), ("-2", "b"),
    ("-3", "a"), (" 2 ", "b"),
])
def test_resolve_refs(three: RunStore, ref: str, text: str) -> None:
    assert three.resolve(ref).read_text(encoding="utf-8") == text


def test_resolve_a_file_path(three: RunStore, tmp_path: Path) -> None:
    other = _report(tmp_path, "x", name="elsewhere.json")
    assert three.resolve(str(other)) == other
    assert three.resolve(str(three.runs()[0].path)) == three.runs()[0].path


@pytest.mark.parametrize("ref", ["4", "0", "-0", "-4", "first", "", "1.5", "--1", "³", "a\0b",
                                 "~nosuchuser-gi/x.json"])
def test_a_bad_ref_is_one_line_naming_the_store(three: RunStore, ref: str) -> None:
    with pytest.raises(StoreError) as exc:
        three.resolve(ref)
    message = str(exc.value)
    assert "\n" not in message
    assert str(three.root) in message
    assert "it holds 3 runs: 0001-0003" in message


def test_a_bad_ref_names_an_empty_or_missing_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="the folder does not exist"):
        RunStore(tmp_path / "none").resolve("latest")
    (tmp_path / "empty").mkdir()
    with pytest.raises(StoreError, match="it holds no runs"):
        RunStore(tmp_path / "empty").resolve("1")


def test_a_bad_ref_lists_scattered_numbers(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    for n in (1, 4, 9):
        (root / f"{n:04d}_20240101T000000.json").write_text("{}", encoding="utf-8")
    with pytest.raises(StoreError, match=r"it holds 3 runs: 0001, 0004, 0009"):
        RunStore(root).resolve("2")


@settings(max_examples=60, deadline=None)
@given(ref=st.text(max_size=12))
def test_resolve_any_text_is_a_path_or_a_store_error(tmp_path_factory: pytest.TempPathFactory,
                                                     ref: str) -> None:
    """Refs come from the command line: any text resolves to a stored file or fails with a
    one-line StoreError, never another exception."""
    root = tmp_path_factory.mktemp("refs")
    store = RunStore(root / "s")
    store.save(_report(root, "a"), now=T0)
    try:
        got = store.resolve(ref)
    except StoreError as exc:
        assert "\n" not in str(exc).replace(ref, "")
    else:
        assert got.is_file()


def test_save_bytes_and_writability(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "new" / "store")
    assert store.unwritable_reason() is None
    assert store.root.is_dir()  # created, as a save would
    run = store.save_bytes(b"{}\n", now=T0)
    assert run.number == 1 and run.path.read_bytes() == b"{}\n"
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    assert RunStore(blocker).unwritable_reason() == f"the run store {blocker} is not a folder"
    assert "cannot create" in (RunStore(blocker / "sub").unwritable_reason() or "")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_store_is_unwritable(tmp_path: Path) -> None:
    root = tmp_path / "ro"
    root.mkdir()
    root.chmod(0o500)
    try:
        assert "not writable" in (RunStore(root).unwritable_reason() or "")
    finally:
        root.chmod(0o700)
