"""``fewer_collections``: the collector's thresholds inside the block, and given back after."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from pytest_graphinstruct.run.gc_policy import THRESHOLDS, fewer_collections


@pytest.fixture
def odd_thresholds() -> Iterator[tuple[int, int, int]]:
    """Thresholds no one would choose, so a restore to CPython's defaults cannot pass."""
    before = gc.get_threshold()
    odd = (123, 4, 5)
    gc.set_threshold(*odd)
    yield odd
    gc.set_threshold(*before)


def test_the_block_runs_with_the_policy_and_the_old_thresholds_come_back(
        odd_thresholds: tuple[int, int, int]) -> None:
    with fewer_collections():
        assert gc.get_threshold() == THRESHOLDS
    assert gc.get_threshold() == odd_thresholds


def test_the_old_thresholds_come_back_when_the_block_raises(
        odd_thresholds: tuple[int, int, int]) -> None:
    with pytest.raises(KeyError), fewer_collections():
        raise KeyError("x")
    assert gc.get_threshold() == odd_thresholds


def test_nested_blocks_unwind_in_order(odd_thresholds: tuple[int, int, int]) -> None:
    with fewer_collections():
        with fewer_collections():
            assert gc.get_threshold() == THRESHOLDS
        assert gc.get_threshold() == THRESHOLDS
    assert gc.get_threshold() == odd_thresholds


def test_the_policy_collects_less_often_than_cpython_by_default() -> None:
    assert THRESHOLDS[0] > 700 and all(t > 0 for t in THRESHOLDS)  # 0 would turn a generation off
