"""--gi-shard=K/N: which instructions a shard runs (run/shard.py)."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.run import shard as shard_module
from pytest_graphinstruct.run.shard import (
    MAX_SHARDS,
    Shard,
    _hash,
    assign,
    check_selection,
    parse_shard,
    select,
)


def _suite(per_level: dict[int, int]) -> dict[str, int]:
    return {f"L{lv}-{i:03d}": lv for lv, n in per_level.items() for i in range(1, n + 1)}


def test_parse() -> None:
    assert parse_shard("2/4") == Shard(2, 4) and str(parse_shard(" 1 / 3 ")) == "1/3"
    for bad in ("0/3", "4/3", "1", "a/b", "1/0", "-1/2"):
        with pytest.raises(GraphInstructError, match="--gi-shard"):
            parse_shard(bad)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_shards_partition_the_suite_and_each_holds_every_level(count: int) -> None:
    suite = _suite({0: 100, 1: 200, 2: 150, 3: 150, 4: 150, 5: 50})
    parts = [select(suite, Shard(k, count)) for k in range(1, count + 1)]
    assert set().union(*parts) == set(suite)
    assert sum(len(p) for p in parts) == len(suite)  # disjoint
    for part in parts:
        assert {suite[i] for i in part} == set(range(6))
        # roughly 1/N of each level (hashing, not round robin)
        assert abs(len(part) - len(suite) / count) < 0.25 * len(suite) / count + 10


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.integers(0, 5), st.integers(0, 12), min_size=1),
       st.integers(1, 5))
def test_a_level_with_at_least_n_items_is_in_every_shard(sizes: dict[int, int],
                                                          count: int) -> None:
    suite = _suite(sizes)
    shards = assign(suite, count)
    assert set(shards) == set(suite)
    for lv, n in sizes.items():
        present = {shards[i] for i in suite if suite[i] == lv}
        if n >= count:
            assert present == set(range(1, count + 1))


def test_growing_the_suite_keeps_existing_shards() -> None:
    before = _suite({1: 200, 2: 150})
    after = {**before, **{f"L1-{i:03d}": 1 for i in range(201, 260)}}
    a, b = assign(before, 4), assign(after, 4)
    assert all(a[i] == b[i] for i in before)


def test_depends_on_ids_not_on_their_order() -> None:
    suite = _suite({0: 30, 5: 9})
    reversed_suite = dict(reversed(list(suite.items())))
    assert assign(suite, 3) == assign(reversed_suite, 3)


@pytest.mark.parametrize("text", [f"1/{10**20}", f"1/{MAX_SHARDS + 1}", "1/" + "9" * 5000,
                                  "9" * 5000 + "/4"])
def test_an_absurd_count_is_refused_when_parsed(text: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # "costs nothing": refused from the digits' length first, so no number longer than
    # MAX_SHARDS is ever converted (the module's int() is spied on)
    converted: list[str] = []

    def spied_int(digits: str) -> int:
        converted.append(digits)
        return int(digits)

    monkeypatch.setattr(shard_module, "int", spied_int, raising=False)
    with pytest.raises(GraphInstructError, match="--gi-shard") as info:
        parse_shard(text)
    assert "\n" not in str(info.value) and len(str(info.value)) < 200
    assert all(len(digits) <= len(str(MAX_SHARDS)) for digits in converted), converted
    assert parse_shard(f"{MAX_SHARDS}/{MAX_SHARDS}") == Shard(MAX_SHARDS, MAX_SHARDS)
    assert converted  # the spy saw the conversions of the valid count


def test_the_table_does_not_grow_with_the_shard_count() -> None:
    suite = _suite({0: 20, 1: 20})
    tracemalloc.start()
    try:
        shards = assign(suite, 2_000_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert set(shards) == set(suite)
    assert all(k == _hash(i) % 2_000_000 + 1 for i, k in shards.items())
    assert peak < 1_000_000  # measured ~10 kB; a table per shard would take ~200 MB


def _reference_assign(levels: dict[str, int], count: int) -> dict[str, int]:
    """The rule of the module docstring, written the direct way (a table of every shard)."""
    out: dict[str, int] = {}
    for level in set(levels.values()):
        ids = [i for i, lv in levels.items() if lv == level]
        table: dict[int, list[str]] = {k: [] for k in range(1, count + 1)}
        for iid in ids:
            table[_hash(iid) % count + 1].append(iid)
        if len(ids) >= count:
            for empty in (k for k in range(1, count + 1) if not table[k]):
                donor = max(table, key=lambda k: (len(table[k]), -k))
                moved = min(table[donor], key=lambda i: (_hash(i), i))
                table[donor].remove(moved)
                table[empty].append(moved)
        out.update({iid: k for k, members in table.items() for iid in members})
    return out


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.integers(0, 5), st.integers(0, 15), min_size=1),
       st.integers(1, 20))
def test_the_assignment_is_the_rule_of_the_docstring(sizes: dict[int, int],
                                                     count: int) -> None:
    suite = _suite(sizes)
    assert assign(suite, count) == _reference_assign(suite, count)


def test_a_count_larger_than_the_selection_is_refused() -> None:
    suite = _suite({0: 1, 1: 2, 2: 1})
    with pytest.raises(GraphInstructError,
                       match=r"--gi-shard=1/1000: 1000 shards of the 4 instructions .*at most 4"):
        check_selection(suite, Shard(1, 1000))
    with pytest.raises(GraphInstructError, match="1 instruction this run"):
        check_selection(_suite({0: 1}), Shard(1, 2))


def test_an_empty_shard_is_refused_and_a_full_one_accepted() -> None:
    suite = _suite({0: 1, 1: 2, 2: 1})  # no level holds 4: placed by hashing alone
    shards = assign(suite, 4)
    empty = [k for k in range(1, 5) if k not in shards.values()]
    assert empty  # this suite leaves a shard of four empty (the test's premise)
    with pytest.raises(GraphInstructError, match=f"shard {empty[0]} of 4 shards holds none"):
        check_selection(suite, Shard(empty[0], 4))
    for k in set(shards.values()):
        check_selection(suite, Shard(k, 4))  # raises nothing
