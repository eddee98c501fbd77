"""vocab: the shared vocabulary's tables, its functions, and the ``as_…`` parsers that narrow
a value read from outside to its ``Literal``."""

from __future__ import annotations

from collections.abc import Callable
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.vocab import (
    COT_STRATEGIES,
    DIMENSIONS,
    FEEDBACK_LEVELS,
    FEW_SHOT_STRATEGIES,
    LEVELS,
    OUTCOMES,
    PASS_RULES,
    SCORED_OUTCOMES,
    SIZE_BUCKETS,
    STRATEGIES,
    FeedbackLevel,
    PassRule,
    as_dimension,
    as_feedback_level,
    as_level,
    as_pass_rule,
    natural_key,
    size_bucket,
)


@pytest.mark.parametrize(("n", "bucket"), [(1, "small"), (20, "small"), (21, "medium"),
                                           (50, "medium"), (51, "large")])
def test_size_bucket(n: int, bucket: str) -> None:
    assert size_bucket(n) == bucket


@given(st.integers(0, 10_000), st.integers(0, 10_000))
def test_size_bucket_is_monotone_and_named(a: int, b: int) -> None:
    lo, hi = sorted((a, b))
    assert size_bucket(lo) in SIZE_BUCKETS
    assert SIZE_BUCKETS.index(size_bucket(lo)) <= SIZE_BUCKETS.index(size_bucket(hi))


def test_tables_are_consistent() -> None:
    assert LEVELS == (0, 1, 2, 3, 4, 5)
    assert set(STRATEGIES) >= FEW_SHOT_STRATEGIES and set(STRATEGIES) >= COT_STRATEGIES
    assert set(OUTCOMES) >= SCORED_OUTCOMES and "error" not in SCORED_OUTCOMES


@pytest.mark.parametrize(("rule", "ok", "k", "passed"), [
    ("all", 3, 3, True), ("all", 2, 3, False),
    ("majority", 2, 3, True), ("majority", 1, 2, False), ("majority", 2, 4, False),
    ("any", 1, 5, True), ("any", 0, 5, False),
])
def test_pass_rules(rule: PassRule, ok: int, k: int, passed: bool) -> None:
    assert PASS_RULES[rule](ok, k) is passed


@given(st.integers(1, 50).flatmap(lambda k: st.tuples(st.integers(0, k), st.just(k))))
def test_pass_rules_are_ordered_all_majority_any(sample: tuple[int, int]) -> None:
    ok, k = sample
    verdicts = [PASS_RULES[r](ok, k) for r in ("all", "majority", "any")]
    assert verdicts == sorted(verdicts)  # all ⇒ majority ⇒ any


def test_natural_key_orders_numbers_numerically_before_text() -> None:
    assert sorted(["10", "b", 3, "2", "a", "-1"], key=natural_key) == [
        "2", 3, "10", "-1", "a", "b"]
    assert natural_key("٣") == (1, "٣")  # a non-ASCII digit is text: int() is never asked


@given(st.lists(st.integers(0, 10**6) | st.text(max_size=5)))
def test_natural_key_is_a_total_order_on_ids(ids: list[object]) -> None:
    once = sorted(ids, key=natural_key)
    assert sorted(reversed(once), key=natural_key) == once
    numeric = [x for x in once if natural_key(x)[0] == 0]
    assert once[:len(numeric)] == numeric


PARSERS: dict[str, tuple[Callable[[object], object], tuple[object, ...]]] = {
    "level": (as_level, LEVELS),
    "pass rule": (as_pass_rule, tuple(PASS_RULES)),
    "feedback level": (as_feedback_level, FEEDBACK_LEVELS),
    "dimension": (as_dimension, DIMENSIONS),
}


def test_the_tuples_are_the_literals_values() -> None:
    assert tuple(PASS_RULES) == get_args(PassRule)
    assert FEEDBACK_LEVELS == get_args(FeedbackLevel) == ("none", "coarse", "fine")


@pytest.mark.parametrize("what", list(PARSERS))
def test_every_member_reads_as_itself(what: str) -> None:
    parse, members = PARSERS[what]
    assert [parse(m) for m in members] == list(members)


@pytest.mark.parametrize(("what", "value"), [
    ("level", 6), ("level", -1), ("level", "2"), ("level", 2.0), ("level", True),
    ("pass rule", "most"), ("pass rule", "ALL"), ("feedback level", "medium"),
    ("feedback level", None), ("dimension", "D6"), ("dimension", "d1"),
])
def test_anything_else_is_refused_naming_the_vocabulary(what: str, value: object) -> None:
    parse, members = PARSERS[what]
    with pytest.raises(ValueError, match=rf"^unknown {what} {value!r} \(one of ") as info:
        parse(value)
    assert all(str(m) in str(info.value) for m in members)
