"""cache_notes: notes to peers about answers this process will not cache, in the cache folder
or, when it cannot be written, in the system's temporary folder."""

from __future__ import annotations

import json
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.models.cache_notes import ATTEMPTS_FILE, UncachedNotes, notes_fallback

WAIT_S = 60.0  # a safety net for a broken test, never the point of one


@pytest.fixture(autouse=True)
def private_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The system's temporary folder, for these tests: one of their own (the fallback notes)."""
    temp = tmp_path / "systemp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return temp


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_note_is_one_compact_line_with_its_calls_and_run(tmp_path: Path) -> None:
    notes = UncachedNotes(tmp_path, "run-1")
    notes.note("k1", "error", calls=3)
    notes.note("k2", "budget")  # no call made: no calls field
    assert lines(tmp_path / ATTEMPTS_FILE) == [
        {"key": "k1", "reason": "error", "calls": 3, "run": "run-1"},
        {"key": "k2", "reason": "budget", "run": "run-1"}]
    assert (tmp_path / ATTEMPTS_FILE).read_text().startswith('{"key":"k1","reason":"error"')
    assert notes.calls_by_key() == {"k1": 3, "k2": 0} and notes.keys() == {"k1", "k2"}


def test_without_a_run_id_nothing_of_the_run_is_written(tmp_path: Path) -> None:
    UncachedNotes(tmp_path, None).note("k", "truncated")
    assert lines(tmp_path / ATTEMPTS_FILE) == [{"key": "k", "reason": "truncated"}]


def test_notes_of_other_runs_are_ignored_unless_the_run_is_not_known(tmp_path: Path) -> None:
    UncachedNotes(tmp_path, "old").note("stale", "error", 2)
    UncachedNotes(tmp_path, "new").note("mine", "error", 1)
    UncachedNotes(tmp_path, None).note("anonymous", "error")
    assert UncachedNotes(tmp_path, "new").keys() == {"mine"}
    assert UncachedNotes(tmp_path, None).calls_by_key() == {"stale": 2, "mine": 1,
                                                           "anonymous": 0}


def test_the_most_calls_one_process_noted_count(tmp_path: Path) -> None:
    notes = UncachedNotes(tmp_path, "r")
    for calls in (2, 5, 0, 3):
        notes.note("k", "error", calls)
    assert notes.calls_by_key() == {"k": 5}


def test_damaged_and_implausible_notes_are_skipped_or_read_as_no_calls(tmp_path: Path) -> None:
    good = json.dumps({"key": "good", "reason": "error", "calls": 2})
    (tmp_path / ATTEMPTS_FILE).write_bytes(
        b"not json\n[1, 2]\n" + json.dumps({"reason": "no key"}).encode() + b"\n"
        + json.dumps({"key": "neg", "calls": -4}).encode() + b"\n"
        + json.dumps({"key": "huge", "calls": 10**6}).encode() + b"\n"
        + json.dumps({"key": "text", "calls": "7"}).encode() + b"\n\xff\xfe\n"
        + good.encode() + b"\n" + b'{"key": "torn')
    assert UncachedNotes(tmp_path, None).calls_by_key() == {
        "neg": 0, "huge": 0, "text": 0, "good": 2}


def test_no_notes_at_all_is_an_empty_answer(tmp_path: Path) -> None:
    assert UncachedNotes(tmp_path / "absent", "r").keys() == set()


def test_an_unwritable_cache_folder_sends_notes_to_the_fallback(tmp_path: Path,
                                                                private_temp: Path) -> None:
    (tmp_path / ATTEMPTS_FILE).mkdir()  # where the notes file should be: cannot be opened
    notes = UncachedNotes(tmp_path, "r")
    notes.note("k", "circuit open", 4)
    fallback = notes_fallback(tmp_path)
    assert fallback.parent == private_temp
    assert lines(fallback) == [{"key": "k", "reason": "circuit open", "calls": 4, "run": "r"}]
    assert UncachedNotes(tmp_path, "r").calls_by_key() == {"k": 4}  # another process reads it


def test_both_files_are_read(tmp_path: Path) -> None:
    UncachedNotes(tmp_path, "r").note("in-folder", "error", 1)
    notes_fallback(tmp_path).write_text(json.dumps({"key": "in-temp", "run": "r", "calls": 2})
                                        + "\n", encoding="utf-8")
    assert UncachedNotes(tmp_path, "r").calls_by_key() == {"in-folder": 1, "in-temp": 2}


def test_a_note_nowhere_to_be_written_is_dropped_without_raising(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ATTEMPTS_FILE).mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no such folder"))
    notes = UncachedNotes(tmp_path, "r")
    notes.note("k", "error")
    assert notes.keys() == set()


def test_the_fallback_is_one_file_per_cache_folder(tmp_path: Path, private_temp: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert notes_fallback(a) != notes_fallback(b)
    assert notes_fallback(a) == notes_fallback(tmp_path / "b" / ".." / "a")
    monkeypatch.chdir(tmp_path)
    assert notes_fallback(Path("a")) == notes_fallback(a)  # relative or absolute: one file
    assert notes_fallback(a).parent == private_temp
    assert notes_fallback(a).name.startswith("graphinstruct-notes-")


def test_notes_written_at_once_by_many_threads_stay_whole(tmp_path: Path) -> None:
    n, per = 8, 25
    start = threading.Barrier(n)

    def write(i: int) -> None:
        start.wait(WAIT_S)
        notes = UncachedNotes(tmp_path, "r")
        for j in range(per):
            notes.note(f"t{i}-{j}-" + "x" * 2000, "error", j + 1)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
    assert len(lines(tmp_path / ATTEMPTS_FILE)) == n * per  # every line parses
    got = UncachedNotes(tmp_path, "r").calls_by_key()
    assert got == {f"t{i}-{j}-" + "x" * 2000: j + 1 for i in range(n) for j in range(per)}


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 50)), max_size=12))
def test_calls_by_key_is_the_most_noted_per_key(noted: list[tuple[str, int]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        notes = UncachedNotes(Path(folder), "r")
        for key, calls in noted:
            notes.note(key, "error", calls)
        expected: dict[str, int] = {}
        for key, calls in noted:
            expected[key] = max(expected.get(key, 0), calls)
        assert notes.calls_by_key() == expected
