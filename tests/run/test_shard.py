"""--gi-shard=K/N: which instructions a shard runs (run/shard.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.run.shard import Shard, assign, parse_shard, select


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
