"""The cache knows the model: snapshots recorded with each answer, stale answers asked again,
the version in the key (issue 19; the 1-token probe: test_endpoint_probes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
from pytest_graphinstruct.models.caching.cache import CACHE_FILE, AnswerCache
from pytest_graphinstruct.models.caching.entries import CacheEntry
from pytest_graphinstruct.models.caching.snapshot import CacheSource, Snapshot, is_stale
from pytest_graphinstruct.models.scheduling.scheduler import Scheduler
from tests.models.fake_openai import FakeOpenAIServer
from tests.models.helpers import req


def ok(text: str = "Graph[] {}") -> Answer:
    return Answer(text=text, usage=Usage(10, 5))


def text(cache: AnswerCache, key: str) -> str | None:
    answer = cache.get(key)
    assert answer is not None
    return answer.text


def found(cache: AnswerCache, key: str) -> CacheEntry:
    entry = cache.lookup(key)
    assert entry is not None
    return entry


def records(directory: Path) -> list[dict]:
    return [json.loads(line) for line in
            (directory / CACHE_FILE).read_text(encoding="utf-8").splitlines()]


# -- the record ---------------------------------------------------------------------------------

def test_a_record_keeps_the_snapshot_fingerprint_and_time(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path)
    r = req("q")
    assert cache.put("k", r, ok(), endpoint="ep",
                     served=Snapshot("gpt-4o-2024-08-06", "fp_44709d6fcb"))
    (record,) = records(tmp_path)
    assert record["served_model"] == "gpt-4o-2024-08-06"
    assert record["system_fingerprint"] == "fp_44709d6fcb"
    assert isinstance(record["created"], float)
    entry = AnswerCache(tmp_path).lookup("k")
    assert entry is not None
    assert (entry.snapshot, entry.fingerprint) == ("gpt-4o-2024-08-06", "fp_44709d6fcb")
    assert entry.created == record["created"] and entry.offset == 0


def test_an_answer_without_a_snapshot_records_null(tmp_path: Path) -> None:
    AnswerCache(tmp_path).put("k", req(), ok())
    (record,) = records(tmp_path)
    assert record["served_model"] is None and record["system_fingerprint"] is None


def test_old_records_stay_readable_as_an_unknown_snapshot(tmp_path: Path) -> None:
    old = {"v": 1, "key": "k", "endpoint": "ep", "model": "m", "instruction_id": "L1-001",
           "level": 1, "cell": "m-zero-shot", "sample_index": 0, "text": "Graph[] {}",
           "usage": None, "calls": 1, "finish_reason": "stop", "latency_s": 0.1,
           "created": 1700000000.0}
    (tmp_path / CACHE_FILE).write_text(json.dumps(old) + "\n", encoding="utf-8")
    entry = AnswerCache(tmp_path).lookup("k")
    assert entry is not None and entry.answer.text == "Graph[] {}"
    assert entry.snapshot is None and entry.fingerprint is None
    assert entry.created == 1700000000.0



# -- which record of a key wins ------------------------------------------------------------------

def test_store_replaces_a_stale_answer_and_a_reopened_cache_agrees(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path)
    r = req()
    assert cache.put("k", r, ok("old"), served=Snapshot("snap-1"))
    assert not cache.put("k", r, ok("dup"), served=Snapshot("snap-1"))
    assert cache.put("k", r, ok("new"), served=Snapshot("snap-2"))
    assert text(cache, "k") == "new"
    reopened = AnswerCache(tmp_path)
    assert len(reopened) == 1 and text(reopened, "k") == "new"
    assert len(records(tmp_path)) == 2  # append-only: the old line stays


def test_merge_keeps_the_newest_snapshot_whatever_the_order(tmp_path: Path) -> None:
    shard1, shard2, out = tmp_path / "s1", tmp_path / "s2", tmp_path / "out"
    c1 = AnswerCache(shard1)
    c1.put("k", req(), ok("old"), served=Snapshot("snap-1"))
    (shard2 / "x").mkdir(parents=True)
    (shard2 / CACHE_FILE).write_bytes((shard1 / CACHE_FILE).read_bytes())  # restored copy
    c1.put("k", req(), ok("new"), served=Snapshot("snap-2"))  # shard 1 asked again
    target = AnswerCache(out)
    assert target.merge_from(AnswerCache(shard1)) == 2  # its first answer, then the newer one
    assert target.merge_from(AnswerCache(shard2)) == 0  # the old one does not come back
    assert text(AnswerCache(out), "k") == "new"


# -- this run or an earlier one ------------------------------------------------------------------

def test_the_mark_separates_earlier_runs_from_this_one(tmp_path: Path) -> None:
    AnswerCache(tmp_path).put("before", req("a"), ok())
    cache = AnswerCache(tmp_path)
    other = AnswerCache(tmp_path, mark=cache.mark)  # another process of the same run
    other.put("during", req("b"), ok())
    assert cache.earlier(found(cache, "before"))
    assert not cache.earlier(found(cache, "during"))  # read back from the file, after the mark
    assert not other.earlier(found(other, "during"))  # written by this process
    nxt = AnswerCache(tmp_path)
    assert nxt.earlier(found(nxt, "during"))  # the next run


# -- the backend ------------------------------------------------------------------------------

def test_the_version_is_part_of_the_key_and_none_keeps_the_old_keys(
        fake_openai: FakeOpenAIServer, api_key: str) -> None:
    plain = OpenAIBackend(fake_openai.base_url, "m", api_key_env=api_key)
    v1 = OpenAIBackend(fake_openai.base_url, "m", api_key_env=api_key, model_version="v1")
    v2 = OpenAIBackend(fake_openai.base_url, "m", api_key_env=api_key, model_version="v2")
    assert plain.endpoint == fake_openai.base_url  # unchanged: caches made before stay valid
    assert v1.endpoint == f"{fake_openai.base_url}#version=v1"
    keys = {req().cache_key(b.endpoint) for b in (plain, v1, v2)}
    assert len(keys) == 3


def test_complete_served_says_which_snapshot_answered(fake_openai: FakeOpenAIServer,
                                                      backend_for) -> None:
    backend = backend_for()
    answer, served = backend.complete_served(req("x"))
    assert answer.ok and served == Snapshot("fake-model", None)  # the name, echoed
    fake_openai.served_model, fake_openai.system_fingerprint = "fake-2024-06", "fp_1"
    answer, served = backend.complete_served(req("y"))
    assert served == Snapshot("fake-2024-06", "fp_1")
    assert backend.complete(req("z")).text == "echo: z"


# -- the scheduler ----------------------------------------------------------------------------

@pytest.fixture
def backend(fake_openai: FakeOpenAIServer, api_key: str) -> OpenAIBackend:
    return OpenAIBackend(fake_openai.base_url, "fake-model", api_key_env=api_key, timeout_s=5)


def _fill(cache_dir: Path, backend: OpenAIBackend, *texts: str) -> None:
    with Scheduler(backend, cache=AnswerCache(cache_dir)) as sched:
        assert all(a.ok for a in (sched.answer(req(t)) for t in texts))


def test_answers_are_cached_with_the_snapshot_that_served_them(
        fake_openai: FakeOpenAIServer, backend: OpenAIBackend, tmp_path: Path) -> None:
    fake_openai.served_model, fake_openai.system_fingerprint = "snap-1", "fp_a"
    _fill(tmp_path, backend, "a")
    (record,) = records(tmp_path)
    assert (record["served_model"], record["system_fingerprint"]) == ("snap-1", "fp_a")


def test_stale_answers_are_asked_again_and_replace_the_cached_ones(
        fake_openai: FakeOpenAIServer, backend: OpenAIBackend, tmp_path: Path) -> None:
    fake_openai.served_model = "snap-1"
    _fill(tmp_path, backend, "a", "b")
    fake_openai.reset()
    fake_openai.served_model = "snap-2"
    with Scheduler(backend, cache=AnswerCache(tmp_path), snapshot="snap-2") as sched:
        answers = [sched.answer(req(t)) for t in ("a", "b")]
        stats = sched.stats()
        assert sched.cache_sources() == {}
    assert not any(a.cached for a in answers)
    assert fake_openai.request_count == 2
    assert (stats["stale_skipped"], stats["cache_hits"]) == (2, 0)
    reopened = AnswerCache(tmp_path)
    assert {reopened.lookup(req(t).cache_key(backend.endpoint)).snapshot  # type: ignore[union-attr]
            for t in ("a", "b")} == {"snap-2"}
    fake_openai.reset()
    with Scheduler(backend, cache=AnswerCache(tmp_path), snapshot="snap-2") as sched:
        assert all(sched.answer(req(t)).cached for t in ("a", "b"))
    assert fake_openai.request_count == 0


def test_reuse_stale_reuses_them_and_counts_them(fake_openai: FakeOpenAIServer,
                                                 backend: OpenAIBackend, tmp_path: Path) -> None:
    fake_openai.served_model = "snap-1"
    _fill(tmp_path, backend, "a")
    fake_openai.reset()
    with Scheduler(backend, cache=AnswerCache(tmp_path), snapshot="snap-2",
                   reuse_stale=True) as sched:
        answer = sched.answer(req("a", cell="m-zero-shot"))
        stats = sched.stats()
        sources = sched.cache_sources()
    assert answer.cached and fake_openai.request_count == 0
    assert (stats["stale_reused"], stats["cache_hits"]) == (1, 1)
    assert sources["m-zero-shot"].snapshots == frozenset({"snap-1"})


def test_without_a_known_snapshot_every_cached_answer_is_reused(
        fake_openai: FakeOpenAIServer, backend: OpenAIBackend, tmp_path: Path) -> None:
    fake_openai.served_model = "snap-1"
    _fill(tmp_path, backend, "a")
    fake_openai.reset()
    with Scheduler(backend, cache=AnswerCache(tmp_path), snapshot=None) as sched:
        assert sched.answer(req("a")).cached
    assert fake_openai.request_count == 0


def test_cache_sources_name_every_cell_that_shared_the_answer(
        fake_openai: FakeOpenAIServer, backend: OpenAIBackend, tmp_path: Path) -> None:
    fake_openai.served_model = "snap-1"
    _fill(tmp_path, backend, "a")
    created = records(tmp_path)[0]["created"]
    with Scheduler(backend, cache=AnswerCache(tmp_path), snapshot="snap-1") as sched:
        one = sched.answer(req("a", cell="x-zero-shot"))
        two = sched.answer(req("a", cell="x-caap"))  # the same request: the same future
        fresh = sched.answer(req("new", cell="x-zero-shot"))
        sources = sched.cache_sources()
    assert one.cached and two.cached and not fresh.cached
    assert sources == {"x-zero-shot": CacheSource(frozenset({"snap-1"}), created),
                       "x-caap": CacheSource(frozenset({"snap-1"}), created)}


def test_an_answer_another_process_cached_during_the_run_is_not_from_the_cache(
        fake_openai: FakeOpenAIServer, backend: OpenAIBackend, tmp_path: Path) -> None:
    """An answer another process of this run cached is reused through the cache, but the run
    asked for it: it is not reported as an answer from the cache."""
    mine = AnswerCache(tmp_path)
    _fill(tmp_path, backend, "peer")  # another process, after this run began
    with Scheduler(backend, cache=mine) as sched:
        answer = sched.answer(req("peer"))
        assert sched.cache_sources() == {} and sched.stats()["cache_hits"] == 1
    assert answer.ok and not answer.cached
    assert fake_openai.request_count == 1  # asked once, by the peer


def test_a_replacement_another_process_appended_is_seen(tmp_path: Path) -> None:
    """A cache whose memory already holds a stale record for a key still sees the fresh one
    another process appended since, when it looks for a record it accepts."""
    AnswerCache(tmp_path).put("k", req(), ok("old"), served=Snapshot("snap-1"))
    mine = AnswerCache(tmp_path)
    AnswerCache(tmp_path).put("k", req(), ok("new"), served=Snapshot("snap-2"))  # another process
    kept = mine.lookup("k")  # a hit: no re-scan
    assert kept is not None and kept.snapshot == "snap-1"
    fresh = mine.lookup("k", accept=lambda e: not is_stale(e.snapshot, "snap-2"))
    assert fresh is not None and fresh.answer.text == "new"
