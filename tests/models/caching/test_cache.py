"""AnswerCache: round trips, crash safety, concurrent writers, kill -9 resume, merging."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
from pytest_graphinstruct.models.caching.cache import CACHE_FILE, AnswerCache, CacheWarning
from pytest_graphinstruct.models.scheduling.scheduler import Scheduler
from tests.models.fake_openai import FakeOpenAIServer
from tests.models.helpers import KEY_ENV, SECRET, req

ROOT = Path(__file__).resolve().parents[3]
WAIT_S = 60.0  # a safety net for a broken test, never the point of one


def ok(text: str = "Graph[] {}", **kw) -> Answer:
    return Answer(text=text, usage=kw.pop("usage", Usage(10, 5)), **kw)


def test_put_get_round_trip_and_reload(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path / "c")
    r = req("q", iid="L3-007", sample=2)
    key = r.cache_key("ep")
    assert cache.get(key) is None
    assert cache.put(key, r, ok("answer ✓", calls=3, finish_reason="stop", latency_s=1.25),
                     endpoint="ep")
    got = cache.get(key)
    assert got is not None and got.cached
    assert (got.text, got.usage, got.calls, got.finish_reason) == (
        "answer ✓", Usage(10, 5), 3, "stop")
    again = AnswerCache(tmp_path / "c")
    assert len(again) == 1 and again.get(key) == got
    assert again.warnings == []
    record = json.loads((tmp_path / "c" / CACHE_FILE).read_text(encoding="utf-8"))
    assert record["instruction_id"] == "L3-007" and record["level"] == 3
    assert record["cell"] == "fake-model/zero-shot" and record["sample_index"] == 2
    assert record["endpoint"] == "ep" and record["key"] == key


def test_errors_truncated_cached_and_duplicates_are_not_written(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path)
    r = req()
    assert not cache.put("k1", r, Answer(error="HTTP 503"))
    assert not cache.put("k2", r, ok(finish_reason="length"))
    assert not cache.put("k3", r, ok(cached=True))
    assert cache.put("k4", r, ok(usage=None))
    assert not cache.put("k4", r, ok("different"))
    assert len(AnswerCache(tmp_path)) == 1
    assert AnswerCache(tmp_path).get("k4").usage is None


def test_torn_last_line_is_skipped_reported_and_not_glued(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path)
    for i in range(3):
        cache.put(f"k{i}", req(f"q{i}"), ok(f"a{i}"))
    path = tmp_path / CACHE_FILE
    with open(path, "ab") as fh:  # what a writer killed mid-write leaves behind
        fh.write(b'{"v":1,"key":"k9","text":"half an ans')
    with pytest.warns(CacheWarning, match="torn"):
        reopened = AnswerCache(tmp_path)
    assert len(reopened) == 3 and reopened.get("k9") is None
    assert len(reopened.warnings) == 1 and "torn" in reopened.warnings[0]
    # The next writer starts a fresh line: both the new record and the old ones stay readable.
    assert reopened.put("k5", req("q5"), ok("a5"))
    with pytest.warns(CacheWarning, match="corrupt"):
        third = AnswerCache(tmp_path)
    assert {k: third.get(k).text for k in ("k0", "k1", "k2", "k5")} == {
        "k0": "a0", "k1": "a1", "k2": "a2", "k5": "a5"}
    assert len(third.warnings) == 1 and "corrupt" in third.warnings[0]
    assert len(reopened.warnings) == 1  # the same bad bytes are reported once per cache


def test_garbage_in_the_middle_is_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / CACHE_FILE
    good = json.dumps({"key": "a", "text": "x"})
    path.write_bytes(f"{good}\nnot json at all\n[1,2]\n\xff\xfe\n{{}}\n".encode("latin-1")
                     + json.dumps({"key": "b", "text": "y"}).encode() + b"\n")
    with pytest.warns(CacheWarning, match="4 damaged line"):
        cache = AnswerCache(tmp_path)
    assert cache.get("a").text == "x" and cache.get("b").text == "y"
    assert len(cache.warnings) == 4


def test_a_miss_picks_up_other_writers_appends(tmp_path: Path) -> None:
    reader, writer = AnswerCache(tmp_path), AnswerCache(tmp_path)
    assert reader.get("k") is None
    writer.put("k", req(), ok("shared"))
    assert reader.get("k").text == "shared"


def test_unwritable_directory_is_a_model_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ModelError, match="cannot create"):
        AnswerCache(blocker / "sub")


# -- concurrent processes ---------------------------------------------------------------------


def _writer(directory: str, worker: int, n: int) -> None:
    cache = AnswerCache(directory)
    for i in range(n):
        size = 1 + (worker * 7919 + i * 104729) % 60_000  # up to ~60 KB: writes would interleave
        text = f"w{worker}-{i}:" + chr(ord("a") + worker) * size
        cache.put(f"w{worker}-{i}", req(f"w{worker}-{i}", iid=f"L1-{i:03d}", sample=worker),
                  ok(text))


def test_concurrent_writer_processes_never_corrupt_the_file(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
    workers, n = 4, 30
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, n)) for w in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    lines = (tmp_path / CACHE_FILE).read_bytes().split(b"\n")
    assert lines[-1] == b""
    records = [json.loads(line) for line in lines[:-1]]  # every line parses
    assert len(records) == workers * n
    for r in records:
        assert r["text"].startswith(r["key"] + ":")
        assert set(r["text"].split(":", 1)[1]) == {chr(ord("a") + int(r["key"][1]))}
    cache = AnswerCache(tmp_path)
    assert len(cache) == workers * n and cache.warnings == []


# -- kill -9 and resume -----------------------------------------------------------------------

_CHILD = """
import sys
from pytest_graphinstruct.models.caching.cache import AnswerCache
from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
from pytest_graphinstruct.models.scheduling.scheduler import Scheduler
from tests.models.helpers import KEY_ENV, req

base_url, directory, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
backend = OpenAIBackend(base_url, "fake-model", api_key_env=KEY_ENV)
with Scheduler(backend, concurrency=2, cache=AnswerCache(directory)) as s:
    for f in s.submit_all(req(f"question {i}", iid=f"L2-{i:03d}") for i in range(n)):
        f.result()
print("finished")
"""


@pytest.mark.slow
def test_rerun_after_sigkill_requests_only_the_missing_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = 40
    directory = tmp_path / "cache"
    path = directory / CACHE_FILE
    env = {**os.environ, KEY_ENV: SECRET}
    with FakeOpenAIServer() as server:
        # The first 8 requests are answered, every later one is held: the child is killed
        # with 8 answers cached and two calls in flight, however slowly it runs.
        server.hold(after=8)
        child = subprocess.Popen([sys.executable, "-c", _CHILD, server.base_url, str(directory),
                                  str(n)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        try:
            assert server.wait_for_requests(10, timeout=WAIT_S)  # 8 answered, 2 held
            deadline = time.monotonic() + WAIT_S  # a safety net, not a measurement
            while not (path.exists() and path.read_bytes().count(b"\n") >= 8):
                assert child.poll() is None, f"child exited early: {child.communicate()}"
                assert time.monotonic() < deadline, "the 8 answers never reached the cache"
                time.sleep(0.01)
            assert server.request_count == 10  # the held calls block the child's two slots
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(WAIT_S)
        assert child.returncode == -signal.SIGKILL
        with open(path, "ab") as fh:  # as if it died in the middle of a write, too
            fh.write(b'{"v":1,"key":"dead","te')

        with pytest.warns(CacheWarning, match="torn"):
            cache = AnswerCache(directory)
        saved = len(cache)
        assert saved == 8
        assert len(cache.warnings) == 1
        assert SECRET.encode() not in path.read_bytes()

        server.release()  # the dead child's held calls end on a closed connection
        server.reset()
        monkeypatch.setenv(KEY_ENV, SECRET)
        backend = OpenAIBackend(server.base_url, "fake-model", api_key_env=KEY_ENV)
        with Scheduler(backend, concurrency=4, cache=cache) as sched:
            answers = [f.result() for f in sched.submit_all(
                req(f"question {i}", iid=f"L2-{i:03d}") for i in range(n))]
            stats = sched.stats()
        assert all(a.ok for a in answers)
        assert [a.text for a in answers] == [f"echo: question {i}" for i in range(n)]
        assert server.request_count == n - saved
        assert stats["cache_hits"] == saved and stats["issued"] == n - saved
        with pytest.warns(CacheWarning, match="corrupt"):  # the torn line, now terminated
            assert len(AnswerCache(directory)) == n


# -- failures are noticed (issue 11) ----------------------------------------------------------


def _enospc(fd: int, data: object) -> int:
    raise OSError(28, "No space left on device")


def test_failed_writes_are_counted_warned_once_and_never_raise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = AnswerCache(tmp_path)
    with pytest.warns(CacheWarning) as caught, monkeypatch.context() as m:
        m.setattr(os, "write", _enospc)
        assert not cache.put("k1", req("q1"), ok())
        assert not cache.put("k2", req("q2"), ok())
    assert len(caught) == 1
    message = str(caught[0].message)
    assert str(cache.path) in message and "No space left on device" in message
    assert "\n" not in message
    assert cache.write_failures == 2 and cache.writes == 0
    assert cache.first_write_error is not None and "No space left" in cache.first_write_error
    assert "2 answer(s)" in (cache.write_failure_summary() or "")
    assert cache.get("k1") is None  # nothing pretends to be cached
    assert cache.put("k3", req("q3"), ok())  # the disk came back: writes resume
    assert cache.write_failures == 2 and len(AnswerCache(tmp_path)) == 1


def test_an_unopenable_cache_file_is_a_counted_failure(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    cache = AnswerCache(tmp_path)
    real_open = os.open

    def read_only(path, flags, *args):
        if str(path) == str(cache.path) and flags & (os.O_WRONLY | os.O_RDWR):
            raise OSError(30, "Read-only file system", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", read_only)
    with pytest.warns(UserWarning, match="Read-only file system"):
        assert not cache.put("k", req(), ok())
    assert cache.write_failures == 1
    assert cache.write_failure_summary() is not None


@pytest.mark.slow
def test_a_scheduler_survives_a_full_disk(fake_openai, backend_for, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    cache = AnswerCache(tmp_path)
    monkeypatch.setattr("pytest_graphinstruct.models.caching.writer._write_all", _enospc)
    with pytest.warns(UserWarning), Scheduler(backend_for(), concurrency=2, cache=cache) as s:
        answers = [f.result() for f in s.submit_all([req(f"q{i}") for i in range(3)])]
        stats = s.stats()
    assert all(a.ok for a in answers)
    assert stats["cache_write_errors"] == 3 == cache.write_failures


def test_damaged_lines_are_reported_with_one_warning(tmp_path: Path) -> None:
    path = tmp_path / CACHE_FILE
    good = json.dumps({"key": "a", "text": "x"})
    path.write_text(f"{good}\nnot json\n{{\"key\": 1}}\n{good[:-1]}", encoding="utf-8")
    with pytest.warns(CacheWarning) as caught:
        cache = AnswerCache(tmp_path)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert str(path) in message and "3 damaged line(s) skipped" in message
    assert "the first: line 2 (byte 26): corrupt record" in message
    assert (caught[0].filename, caught[0].lineno) == (str(path), 2)  # where pytest shows it
    assert cache.damaged_lines == 3 and len(cache.warnings) == 3
    assert cache.get("a").text == "x"
    summary = cache.damage_summary()
    assert summary is not None and "3 damaged line(s)" in summary and str(path) in summary


def test_an_intact_cache_warns_nothing(tmp_path: Path) -> None:
    import warnings

    AnswerCache(tmp_path).put("k", req(), ok())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cache = AnswerCache(tmp_path)
    assert cache.damaged_lines == 0 and cache.damage_summary() is None
    assert cache.write_failures == 0 and cache.write_failure_summary() is None


# -- merging ----------------------------------------------------------------------------------


def test_merge_from_adds_the_keys_it_lacks_once(tmp_path: Path) -> None:
    a, b = AnswerCache(tmp_path / "a"), AnswerCache(tmp_path / "b")
    shared = req("shared")
    for cache, text in ((a, "from a"), (b, "from b")):
        cache.put(shared.cache_key("ep"), shared, ok(text))
    for i in range(3):
        r = req(f"only b {i}", iid=f"L2-00{i}", sample=i)
        b.put(r.cache_key("ep"), r, ok(f"b{i}"))
    assert a.merge_from(b) == 3
    assert a.merge_from(b) == 0  # idempotent
    assert a.get(shared.cache_key("ep")).text == "from a"  # the target's answer stays
    reopened = AnswerCache(tmp_path / "a")
    assert len(reopened) == 4
    entry = next(e for e in reopened.entries() if e.instruction_id == "L2-002")
    assert entry.answer.text == "b2" and entry.sample_index == 2 and entry.level == 2


def test_merge_from_skips_damaged_lines_of_the_source(tmp_path: Path) -> None:
    a, b = AnswerCache(tmp_path / "a"), AnswerCache(tmp_path / "b")
    r = req("q")
    b.put(r.cache_key("ep"), r, ok("good"))
    with open(b.path, "ab") as fh:
        fh.write(b'{"not": "a record"}\n{"key": "torn')
    with pytest.warns(CacheWarning):
        damaged = AnswerCache(tmp_path / "b")
    assert a.merge_from(damaged) == 1
    assert AnswerCache(tmp_path / "a").path.read_bytes().count(b"\n") == 1


def test_merge_from_a_missing_cache_is_a_model_error(tmp_path: Path) -> None:
    a = AnswerCache(tmp_path / "a")
    empty = AnswerCache(tmp_path / "b")  # a directory without answers.jsonl
    with pytest.raises(ModelError, match="cannot merge"):
        a.merge_from(empty)
