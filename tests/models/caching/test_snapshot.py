"""snapshot: what a response said served it, the stale rule, and what a run took from the cache."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.models.caching.snapshot import (
    MAX_SNAPSHOT_CHARS,
    CacheSource,
    Snapshot,
    is_stale,
    merge_sources,
    snapshot_of,
    sorted_snapshots,
)

names = st.text(alphabet="abcdefgh-_.0123456789", min_size=1, max_size=20)
optional_names = st.none() | names
times = st.none() | st.floats(min_value=0, max_value=4e9, allow_nan=False)
sources = st.builds(CacheSource, st.frozensets(optional_names, max_size=4), times)


def test_odd_snapshot_fields_are_kept_as_one_short_printable_line() -> None:
    assert Snapshot.from_json({"model": " a\nb ", "fingerprint": 7}) == Snapshot("a b", None)
    assert Snapshot.from_json({"model": "\x1b[2Jx"}).model == "\\x1b[2Jx"  # escaped
    assert len(Snapshot.from_json({"model": "x" * 999}).model or "") == 200
    assert Snapshot.from_json(None) == Snapshot()
    assert Snapshot("m", "fp").describe() == "m (fp)"
    assert Snapshot().describe() == "unknown snapshot"


def test_an_empty_or_blank_name_is_not_known() -> None:
    assert Snapshot.from_json({"model": "", "fingerprint": "  \n "}) == Snapshot()
    assert not Snapshot.from_json({"model": " \t"}).known
    assert Snapshot("m").known and Snapshot("m").describe() == "m"  # no fingerprint: no ()


def test_from_json_reads_both_fields() -> None:
    for snap in (Snapshot(), Snapshot("m"), Snapshot("m", "fp_1")):
        assert Snapshot.from_json({"model": snap.model, "fingerprint": snap.fingerprint}) == snap


@given(st.text(max_size=400))
def test_any_name_becomes_one_bounded_line_without_control_bytes(raw: str) -> None:
    name = Snapshot.from_json({"model": raw}).model
    if name is not None:
        assert 0 < len(name) <= MAX_SNAPSHOT_CHARS
        assert name == name.strip() and "\n" not in name and "\x1b" not in name
        assert "  " not in name


def test_what_is_stale() -> None:
    assert is_stale("gpt-4o-2024-05-13", "gpt-4o-2024-08-06")
    assert not is_stale("gpt-4o-2024-08-06", "gpt-4o-2024-08-06")
    assert not is_stale(None, "gpt-4o-2024-08-06")  # nothing known against it: reused
    assert not is_stale("gpt-4o-2024-05-13", None)  # the endpoint says nothing: as before


@given(optional_names, optional_names)
def test_stale_means_both_known_and_different(cached: str | None, served: str | None) -> None:
    assert is_stale(cached, served) == is_stale(served, cached)
    assert is_stale(cached, served) == (None not in (cached, served) and cached != served)


def test_snapshot_of_reads_only_strings() -> None:
    class Completion:
        model = "m-1"
        system_fingerprint = None

    assert snapshot_of(Completion()) == Snapshot("m-1", None)
    assert snapshot_of(object()) == Snapshot()


def test_snapshot_of_ignores_fields_that_are_not_strings() -> None:
    class Odd:
        model = 42
        system_fingerprint = b"fp_bytes"

    assert snapshot_of(Odd()) == Snapshot()
    assert snapshot_of(None) == Snapshot()


# -- sources ----------------------------------------------------------------------------------

def test_cache_sources_merge_as_sets_and_the_oldest_time() -> None:
    a = CacheSource().add("s1", 20.0).add(None, None)
    b = CacheSource().add("s2", 10.0)
    assert a.merge(b) == CacheSource(frozenset({"s1", "s2", None}), 10.0)
    assert merge_sources({"x": a}, {"x": b, "y": b}) == {"x": a.merge(b), "y": b}
    assert sorted_snapshots([None, "b", "a", "b"]) == ["a", "b", None]


def test_a_source_without_times_has_no_oldest() -> None:
    assert CacheSource().add("s", None).oldest is None
    assert CacheSource().merge(CacheSource()) == CacheSource()


@given(sources, sources, sources)
def test_merging_sources_is_commutative_associative_and_idempotent(
        a: CacheSource, b: CacheSource, c: CacheSource) -> None:
    assert a.merge(b) == b.merge(a)
    assert a.merge(b).merge(c) == a.merge(b.merge(c))
    assert a.merge(a) == a
    assert a.merge(CacheSource()) == a


@given(sources, optional_names, times)
def test_add_is_a_merge_of_one_answer(a: CacheSource, snap: str | None,
                                      created: float | None) -> None:
    assert a.add(snap, created) == a.merge(CacheSource(frozenset({snap}), created))
    oldest = a.add(snap, created).oldest
    known = [t for t in (a.oldest, created) if t is not None]
    assert oldest == (min(known) if known else None)


@given(st.lists(optional_names, max_size=8))
def test_sorted_snapshots_are_distinct_named_first_then_none(snaps: list[str | None]) -> None:
    out = sorted_snapshots(snaps)
    assert set(out) == set(snaps) and len(out) == len(set(snaps))
    named = [s for s in out if s is not None]
    assert named == sorted(named)
    assert out[len(named):] == ([None] if None in snaps else [])


@given(st.lists(st.dictionaries(st.sampled_from("xyz"), sources, max_size=3), max_size=4))
def test_merge_sources_is_the_union_per_cell(groups: list[dict[str, CacheSource]]) -> None:
    merged = merge_sources(*groups)
    assert set(merged) == {cell for g in groups for cell in g}
    for cell, got in merged.items():
        expected = CacheSource()
        for g in groups:
            if cell in g:
                expected = expected.merge(g[cell])
        assert got == expected
