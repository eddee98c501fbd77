"""cache_view: which cached answers a scheduler reuses, what it counts, and which earlier-run
answers each cell took."""

from __future__ import annotations

import threading
from pathlib import Path

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.models.caching.cache import AnswerCache
from pytest_graphinstruct.models.caching.snapshot import CacheSource, Snapshot
from pytest_graphinstruct.models.caching.view import CacheView
from pytest_graphinstruct.models.scheduling.request_stats import RequestStats
from tests.models.helpers import req


def ok(text: str = "Graph[] {}") -> Answer:
    return Answer(text=text, usage=Usage(1, 2))


def view(cache: AnswerCache | None, snapshot: str | None = "s2",
         reuse_stale: bool = False) -> tuple[CacheView, RequestStats]:
    lock = threading.RLock()
    stats = RequestStats(lock)
    return CacheView(cache, snapshot=snapshot, reuse_stale=reuse_stale, lock=lock,
                     stats=stats), stats


def counts(stats: RequestStats, *names: str) -> tuple[int, ...]:
    report = stats.report(0)
    return tuple(report[n] for n in names)


def earlier_run(tmp_path: Path, **answers: str | None) -> AnswerCache:
    """A cache holding, from an earlier run, one answer per key (its snapshot the value)."""
    before = AnswerCache(tmp_path)
    for key, snap in answers.items():
        before.put(key, req(key), ok(f"answer {key}"), served=Snapshot(snap))
    return AnswerCache(tmp_path)  # this run: everything above lies before its mark


def test_without_a_cache_nothing_is_reused_or_counted() -> None:
    v, stats = view(None)
    v.asked_by("k", "cell")
    assert not v.cached("k") and v.hit("k") is None and v.sources() == {}
    assert v.earlier_keys() == frozenset()
    assert counts(stats, "cache_hits", "stale_skipped", "stale_reused") == (0, 0, 0)


def test_a_fresh_hit_from_an_earlier_run_is_counted_and_marked_cached(tmp_path: Path) -> None:
    v, stats = view(earlier_run(tmp_path, k="s2"))
    assert v.cached("k")
    got = v.hit("k")
    assert got is not None and got.cached and got.text == "answer k"
    assert counts(stats, "cache_hits", "stale_reused", "stale_skipped") == (1, 0, 0)
    assert v.hit("absent") is None


def test_a_stale_answer_is_skipped_and_counted_once(tmp_path: Path) -> None:
    v, stats = view(earlier_run(tmp_path, k="s1"))
    assert not v.cached("k")
    assert v.hit("k") is None and v.hit("k") is None  # looked up again right before issuing
    assert counts(stats, "cache_hits", "stale_skipped") == (0, 1)


def test_a_stale_answer_is_reused_on_request_and_counted_as_such(tmp_path: Path) -> None:
    v, stats = view(earlier_run(tmp_path, k="s1"), reuse_stale=True)
    assert v.cached("k")
    got = v.hit("k")
    assert got is not None and got.cached
    assert counts(stats, "cache_hits", "stale_reused", "stale_skipped") == (1, 1, 0)


def test_an_unknown_snapshot_on_either_side_is_never_stale(tmp_path: Path) -> None:
    v, _ = view(earlier_run(tmp_path, old=None, new="s1"), snapshot="s2")
    assert v.cached("old") and not v.cached("new")
    v, _ = view(AnswerCache(tmp_path), snapshot=None)
    assert v.cached("old") and v.cached("new")


def test_an_answer_of_this_run_is_a_hit_but_not_from_the_cache(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path)
    cache.put("k", req(), ok("this run's"))
    v, stats = view(cache)
    v.asked_by("k", "cell")
    got = v.hit("k")
    assert got is not None and not got.cached and counts(stats, "cache_hits") == (1,)
    assert v.sources() == {}


def test_sources_name_every_cell_that_asked_for_an_earlier_runs_answer(tmp_path: Path) -> None:
    cache = earlier_run(tmp_path, a="s2", b=None)
    created = {k: e.created for k in ("a", "b") if (e := cache.lookup(k)) is not None}
    v, _ = view(cache)
    v.asked_by("a", "x-zero-shot")
    v.asked_by("a", "x-caap")
    v.asked_by("b", "x-caap")
    v.asked_by("never-hit", "y")
    v.hit("a")
    v.hit("b")
    v.hit("a")  # the same answer twice: one source
    assert v.sources() == {
        "x-zero-shot": CacheSource(frozenset({"s2"}), created["a"]),
        "x-caap": CacheSource(frozenset({"s2", None}), min(created.values())),  # type: ignore[type-var]
    }
