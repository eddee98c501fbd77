"""cache_format: the answer cache's record, reading it back, and which record of a key wins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.models.caching.entries import (
    FORMAT_VERSION,
    CacheEntry,
    entry_of,
    level_of,
    record,
    records,
    supersedes,
)
from pytest_graphinstruct.models.caching.snapshot import Snapshot
from tests.models.helpers import req


def ok(text: str = "Graph[] {}") -> Answer:
    return Answer(text=text, usage=Usage(10, 5))


def minimal(**fields: Any) -> dict[str, Any]:
    return {"key": "k", "text": "t", **fields}


def test_level_of() -> None:
    assert level_of("L5-013") == 5 and level_of("custom") is None


@pytest.mark.parametrize(("iid", "level"), [
    ("L12-001", 12), ("L0-x", 0), ("l3-001", None), ("L-001", None), ("XL3-001", None),
    ("L3", None), ("", None),
])
def test_level_of_reads_only_a_leading_level(iid: str, level: int | None) -> None:
    assert level_of(iid) == level


# -- which record of a key wins ------------------------------------------------------------------

def entry(snapshot: str | None, created: float | None) -> CacheEntry:
    return CacheEntry("k", ok(), "ep", "m", "L1-001", 1, "c", 0, created=created,
                      snapshot=snapshot)


@pytest.mark.parametrize(("new", "kept", "replaces"), [
    (entry("b", 2.0), entry("a", 1.0), True),   # asked again from the new snapshot
    (entry("a", 2.0), entry("a", 1.0), False),  # a duplicate: the first wins
    (entry("a", 1.0), entry("b", 2.0), False),  # an older answer never replaces a newer one
    (entry("b", None), entry("a", 1.0), True),  # no time: the later line counts as later
    (entry("b", 2.0), entry(None, 1.0), True),
])
def test_a_later_answer_of_another_snapshot_replaces_the_kept_one(
        new: CacheEntry, kept: CacheEntry, replaces: bool) -> None:
    assert supersedes(new, kept) is replaces


snaps = st.none() | st.sampled_from(["a", "b", "c"])
known_times = st.floats(min_value=0, max_value=4e9, allow_nan=False)


@given(snaps, snaps, st.none() | known_times, st.none() | known_times)
def test_the_same_snapshot_never_replaces_and_known_times_decide_one_way(
        s1: str | None, s2: str | None, t1: float | None, t2: float | None) -> None:
    a, b = entry(s1, t1), entry(s2, t2)
    if s1 == s2:
        assert not supersedes(a, b) and not supersedes(b, a)
    elif t1 is not None and t2 is not None:
        assert not (supersedes(a, b) and supersedes(b, a))  # one of them wins, at most
        assert supersedes(a, b) == (t1 > t2)
    else:
        assert supersedes(a, b) and supersedes(b, a)  # no time: whichever comes later


# -- the record and the entry read back --------------------------------------------------------

def test_a_record_holds_the_request_answer_and_snapshot() -> None:
    r = req("q", iid="L4-002", sample=3, cell="m/caap")
    answer = Answer(text="a", usage=Usage(7, None, "tiktoken:o200k_base"), calls=2,
                    finish_reason="stop", latency_s=1.23456789)
    written = record("key1", r, answer, "ep", Snapshot("snap", "fp"))
    assert written["v"] == FORMAT_VERSION
    assert {k: written[k] for k in ("key", "endpoint", "model", "instruction_id", "level",
                                    "cell", "sample_index", "text", "calls", "finish_reason",
                                    "served_model", "system_fingerprint")} == {
        "key": "key1", "endpoint": "ep", "model": "fake-model", "instruction_id": "L4-002",
        "level": 4, "cell": "m/caap", "sample_index": 3, "text": "a", "calls": 2,
        "finish_reason": "stop", "served_model": "snap", "system_fingerprint": "fp"}
    assert written["usage"] == {"input_tokens": 7, "output_tokens": None,
                                "source": "tiktoken:o200k_base"}
    assert written["latency_s"] == 1.234568  # to the microsecond
    assert isinstance(written["created"], float)
    assert record("k", r, Answer(text="x"), "ep", Snapshot())["usage"] is None


usages = st.none() | st.builds(
    Usage, st.none() | st.integers(0, 10**6), st.none() | st.integers(0, 10**6),
    st.sampled_from(["provider", "recorded", "tiktoken:cl100k_base"]))


@given(text=st.text(max_size=50), usage=usages, calls=st.integers(0, 50),
       finish=st.none() | st.sampled_from(["stop", "length"]),
       latency=st.floats(0, 1e4, allow_nan=False),
       iid=st.text(alphabet="L0123456789-ab", max_size=8), sample=st.integers(0, 1000),
       snap=st.builds(Snapshot, st.none() | st.sampled_from(["m-1", "m-2"]),
                      st.none() | st.just("fp_1")))
def test_a_record_reads_back_as_the_answer_it_was_made_of(
        text: str, usage: Usage | None, calls: int, finish: str | None, latency: float,
        iid: str, sample: int, snap: Snapshot) -> None:
    r = req("q", iid=iid, sample=sample)
    answer = Answer(text=text, usage=usage, calls=calls, finish_reason=finish,
                    latency_s=latency)
    written = record("the-key", r, answer, "ep", snap)
    got = entry_of(json.loads(json.dumps(written, ensure_ascii=False)), offset=7)
    assert got.answer == Answer(text=text, usage=usage, calls=calls, finish_reason=finish,
                                cached=True, latency_s=round(latency, 6))
    assert (got.key, got.endpoint, got.model, got.instruction_id, got.cell) == (
        "the-key", "ep", r.model, iid, r.cell)
    assert (got.level, got.sample_index, got.offset) == (level_of(iid), sample, 7)
    assert (got.snapshot, got.fingerprint) == (snap.model, snap.fingerprint)
    assert got.created == written["created"]


@pytest.mark.parametrize(("obj", "error"), [
    ([1, 2], TypeError), ("text", TypeError), ({"text": "t"}, KeyError),
    ({"key": "k"}, KeyError), ({"key": "", "text": "t"}, ValueError),
    ({"key": 1, "text": "t"}, ValueError), ({"key": "k", "text": None}, ValueError),
])
def test_what_is_not_a_record_raises(obj: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        entry_of(obj)


def test_a_bare_record_reads_with_defaults() -> None:
    got = entry_of(minimal())
    assert got.answer == Answer(text="t", cached=True)
    assert (got.endpoint, got.model, got.instruction_id, got.cell) == ("", "", "", "")
    assert (got.level, got.sample_index, got.created, got.snapshot, got.offset) == (
        None, 0, None, None, None)


def test_fields_of_the_wrong_type_read_as_not_recorded() -> None:
    got = entry_of(minimal(calls=True, level=True, sample_index=False, created=True, run="",
                           finish_reason=3, latency_s="slow", served_model=["m"],
                           usage={"input_tokens": -1, "output_tokens": 2.0, "source": ""}))
    assert got.answer.calls == 1 and got.answer.finish_reason is None
    assert got.answer.latency_s == 0.0
    assert (got.level, got.sample_index, got.created, got.snapshot) == (
        None, 0, None, None)
    # an impossible count is not believed; an integral float is that integer; no source:
    # the provider's (written before sources were recorded)
    assert got.answer.usage == Usage(None, 2, "provider")
    assert entry_of(minimal(usage="lots")).answer.usage is None


# -- reading a file ------------------------------------------------------------------------------

def test_records_skips_damaged_lines_and_stops_at_a_torn_one(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    good = [minimal(key=f"k{i}") for i in range(3)]
    lines = [json.dumps(good[0]).encode(), b"not json", b"\xff\xfe", json.dumps([1]).encode(),
             json.dumps({"key": "", "text": "t"}).encode(), json.dumps(good[1]).encode(),
             json.dumps(good[2]).encode()]
    path.write_bytes(b"\n".join(lines) + b"\n" + b'{"key": "torn", "te')
    assert [r["key"] for r in records(path)] == ["k0", "k1", "k2"]


def test_records_of_an_empty_file_are_none(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_bytes(b"")
    assert list(records(path)) == []


def test_records_of_a_missing_file_raise(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        list(records(tmp_path / "absent.jsonl"))
