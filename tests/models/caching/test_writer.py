"""cache_writer: which answers are written, whole-line appends, merging, and failed writes."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.caching.entries import CacheEntry, records
from pytest_graphinstruct.models.caching.index import CacheIndex
from pytest_graphinstruct.models.caching.snapshot import Snapshot
from pytest_graphinstruct.models.caching.writer import CacheWriter, append_whole
from tests.models.helpers import req

WAIT_S = 60.0  # a safety net for a broken test, never the point of one


class Warnings:
    def __init__(self) -> None:
        self.seen: list[tuple[str, Path, int]] = []

    def __call__(self, message: str, path: Path, line: int) -> None:
        self.seen.append((message, path, line))


def writer(path: Path) -> tuple[CacheWriter, Warnings]:
    warn = Warnings()
    index = CacheIndex(path, warn)
    index.scan()
    return CacheWriter(path, index=index, lock=threading.RLock(), warn=warn), warn


def index_of(w: CacheWriter) -> dict[str, CacheEntry]:
    return w._index.entries


def read_back(path: Path) -> dict[str, CacheEntry]:
    fresh = CacheIndex(path, Warnings())
    fresh.scan()
    return fresh.entries


def ok(text: str = "Graph[] {}", **kw: object) -> Answer:
    return Answer(text=text, usage=Usage(3, 4), **kw)  # type: ignore[arg-type]


def refuse_writes_to(path: Path, monkeypatch: pytest.MonkeyPatch, errno: int = 28,
                     why: str = "No space left on device") -> None:
    real_open = os.open

    def refusing(p: object, flags: int, *args: object) -> int:
        if str(p) == str(path) and flags & (os.O_WRONLY | os.O_RDWR):
            raise OSError(errno, why, str(p))
        return real_open(p, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refusing)


# -- store ----------------------------------------------------------------------------------

@pytest.mark.parametrize("answer", [
    Answer(error="HTTP 503"), ok(finish_reason="length"), ok(cached=True),
])
def test_what_is_not_cacheable_is_skipped_and_never_written(tmp_path: Path,
                                                           answer: Answer) -> None:
    w, _ = writer(tmp_path / "answers.jsonl")
    assert w.store("k", req(), answer) == "skipped"
    assert not (tmp_path / "answers.jsonl").exists() and index_of(w) == {} and w.writes == 0


def test_a_stored_answer_is_one_line_kept_in_the_index(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    w, warn = writer(path)
    assert w.store("k", req("q"), ok("ünïcode"), endpoint="ep",
                   served=Snapshot("s1", "fp")) == "written"
    raw = path.read_bytes()
    assert raw.count(b"\n") == 1 and raw.endswith(b"\n")
    assert "ünïcode".encode() in raw  # not \u-escaped
    (written,) = records(path)
    assert (written["endpoint"], written["served_model"]) == ("ep", "s1")
    assert "run" not in written  # one process of a run writes: the byte mark tells runs apart
    kept = index_of(w)["k"]
    assert kept.offset is None and kept.answer.text == "ünïcode"
    assert w.writes == 1 and w.write_failures == 0 and warn.seen == []
    assert w.failure_summary() is None


def test_a_key_kept_already_is_skipped_unless_another_snapshot_replaces_it(
        tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    w, _ = writer(path)
    assert w.store("k", req(), ok("one"), served=Snapshot("s1")) == "written"
    assert w.store("k", req(), ok("dup"), served=Snapshot("s1")) == "skipped"
    assert w.store("k", req(), ok("two"), served=Snapshot("s2")) == "written"
    assert index_of(w)["k"].answer.text == "two" and w.writes == 2
    assert [r["text"] for r in records(path)] == ["one", "two"]


def test_a_write_after_a_torn_record_starts_a_fresh_line(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_bytes(b'{"key":"dead","te')  # a writer killed mid-write
    w, _ = writer(path)
    assert w.store("k", req(), ok("after")) == "written"
    assert path.read_bytes().startswith(b'{"key":"dead","te\n{')
    assert [r["key"] for r in records(path)] == ["k"]


def test_a_short_write_is_finished_not_left_torn(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "answers.jsonl"
    w, _ = writer(path)
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data[:7])))
    assert w.store("k", req(), ok("x" * 100)) == "written"
    monkeypatch.undo()
    assert read_back(path)["k"].answer.text == "x" * 100


def test_failed_writes_are_counted_the_first_warned_and_never_raise(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "answers.jsonl"
    w, warn = writer(path)
    refuse_writes_to(path, monkeypatch)
    assert w.store("k1", req("1"), ok()) == "failed"
    assert w.store("k2", req("2"), ok()) == "failed"
    assert w.write_failures == 2 and w.writes == 0 and index_of(w) == {}
    assert w.first_write_error == f"cannot write {path}: [Errno 28] No space left on device"
    ((message, where, line),) = warn.seen  # once
    assert w.first_write_error in message and (where, line) == (path, 0)
    assert w.failure_summary() == f"2 answer(s) not cached: {w.first_write_error}"
    monkeypatch.undo()
    assert w.store("k1", req("1"), ok()) == "written"  # writes resume; the first error stays
    assert w.write_failures == 2 and "Errno 28" in (w.first_write_error or "")


def test_a_failure_without_an_errno_is_still_named(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "answers.jsonl"
    w, _ = writer(path)

    def refuse(fd: int, data: object) -> int:
        raise OSError("device\ngone")

    monkeypatch.setattr(os, "write", refuse)
    assert w.store("k", req(), ok()) == "failed"
    assert w.first_write_error == f"cannot write {path}: device gone"


def test_threads_storing_at_once_write_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    w, _ = writer(path)
    n, per = 6, 10
    start = threading.Barrier(n)

    def store(i: int) -> None:
        start.wait(WAIT_S)
        for j in range(per):
            w.store(f"k{i}-{j}", req(f"{i}-{j}"), ok(f"{i}-{j}:" + "y" * 5000))

    threads = [threading.Thread(target=store, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
    assert w.writes == n * per
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == n * per + 1
    assert all(json.loads(line)["text"].endswith("y" * 5000) for line in lines[:-1])
    assert set(read_back(path)) == set(index_of(w))


stores = st.lists(st.tuples(st.sampled_from(["a", "b", "c"]),
                            st.none() | st.sampled_from(["s1", "s2"]),
                            st.text(max_size=5)), max_size=10)


def _no_fsync(fd: int) -> None:
    pass


@given(stores)
def test_the_index_agrees_with_a_reader_of_the_file(done: list[tuple[str, str | None, str]]
                                                    ) -> None:
    # fsync is not the point here (each store would wait for the disk)
    with tempfile.TemporaryDirectory() as folder, mock.patch.object(os, "fsync", _no_fsync):
        path = Path(folder) / "answers.jsonl"
        w, _ = writer(path)
        for key, snap, text in done:
            w.store(key, req(key), ok(text), served=Snapshot(snap))
        assert {k: replace(e, offset=None) for k, e in read_back(path).items()} == index_of(w)


# -- merge ----------------------------------------------------------------------------------

def filled(path: Path, *items: tuple[str, str, str | None]) -> CacheWriter:
    w, _ = writer(path)
    for key, text, snap in items:
        assert w.store(key, req(key), ok(text), served=Snapshot(snap)) == "written"
    return w


def test_merge_appends_what_is_lacking_or_replaced_once(tmp_path: Path) -> None:
    mine = filled(tmp_path / "a.jsonl", ("both", "mine", "s1"), ("newer", "old", "s1"))
    filled(tmp_path / "b.jsonl", ("both", "theirs", "s1"), ("only-b", "b", None),
           ("newer", "new", "s2"))
    before = (tmp_path / "a.jsonl").read_bytes()
    assert mine.merge(tmp_path / "b.jsonl") == 2
    assert mine.merge(tmp_path / "b.jsonl") == 0  # idempotent
    texts = {k: e.answer.text for k, e in index_of(mine).items()}
    assert texts == {"both": "mine", "only-b": "b", "newer": "new"}
    assert (tmp_path / "a.jsonl").read_bytes().startswith(before)  # appended, never rewritten
    assert {k: e.answer.text for k, e in read_back(tmp_path / "a.jsonl").items()} == texts


def test_a_use_of_a_kept_answer_is_recorded_once_and_never_replaces_it(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    w, _ = writer(path)
    first, twin = req("same words", iid="L1-001"), req("same words", iid="L1-002")
    assert w.record_use("k", twin) == "skipped"  # nothing kept yet
    assert w.store("k", first, ok("answer"), endpoint="ep", served=Snapshot("s1", "fp")) == (
        "written")
    assert w.record_use("k", first) == "skipped"  # its own record names it
    assert w.record_use("k", twin) == "written"
    assert w.record_use("k", twin) == "skipped"  # once
    written = list(records(path))
    assert [r["instruction_id"] for r in written] == ["L1-001", "L1-002"]
    assert written[1]["text"] == "answer" and written[1]["served_model"] == "s1"
    assert written[1]["created"] == written[0]["created"]  # when the answer was cached
    fresh = CacheIndex(path, Warnings())
    fresh.scan()
    assert fresh.entries["k"].instruction_id == "L1-001"  # the first record stays the answer
    assert fresh.uses["k"] == {("L1-001", "fake-model/zero-shot", 0),
                               ("L1-002", "fake-model/zero-shot", 0)}


def test_merge_brings_the_uses_the_other_cache_recorded(tmp_path: Path) -> None:
    mine, _ = writer(tmp_path / "a.jsonl")
    theirs, _ = writer(tmp_path / "b.jsonl")
    first, twin = req("same words", iid="L1-001"), req("same words", iid="L1-002")
    for w in (mine, theirs):
        assert w.store("k", first, ok("answer")) == "written"
    assert theirs.record_use("k", twin) == "written"
    assert mine.merge(tmp_path / "b.jsonl") == 1  # the use, not the answer again
    assert mine.merge(tmp_path / "b.jsonl") == 0
    assert [r["instruction_id"] for r in records(tmp_path / "a.jsonl")] == ["L1-001", "L1-002"]
    assert index_of(mine)["k"].instruction_id == "L1-001"


def test_merge_picks_up_what_other_writers_appended_first(tmp_path: Path) -> None:
    mine = filled(tmp_path / "a.jsonl")
    filled(tmp_path / "a.jsonl", ("k", "a peer's", None))  # another process, same file
    filled(tmp_path / "b.jsonl", ("k", "b's", None))
    assert mine.merge(tmp_path / "b.jsonl") == 0
    assert index_of(mine)["k"].answer.text == "a peer's"


def test_merge_from_an_unreadable_file_is_a_model_error(tmp_path: Path) -> None:
    mine = filled(tmp_path / "a.jsonl", ("k", "mine", None))
    with pytest.raises(ModelError, match="cannot merge"):
        mine.merge(tmp_path / "absent.jsonl")
    assert set(index_of(mine)) == {"k"}


def test_a_merge_that_cannot_be_written_leaves_the_index_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.jsonl"
    mine = filled(path, ("kept", "mine", "s1"), ("replaced", "old", "s1"))
    filled(tmp_path / "b.jsonl", ("new", "b", None), ("replaced", "new", "s2"))
    before = dict(index_of(mine))
    refuse_writes_to(path, monkeypatch, 30, "Read-only file system")
    with pytest.raises(ModelError, match="Read-only file system"):
        mine.merge(tmp_path / "b.jsonl")
    assert index_of(mine) == before


# -- append_whole ---------------------------------------------------------------------------

def test_append_whole_creates_and_appends(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    append_whole(path, b"one\n")
    append_whole(path, b"two\n")
    assert path.read_bytes() == b"one\ntwo\n"


def test_append_whole_raises_when_it_cannot_write(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        append_whole(tmp_path, b"x\n")  # a directory
