"""The vocabulary's ``as_…`` functions: a value read from outside narrowed to its ``Literal``."""

from __future__ import annotations

from collections.abc import Callable
from typing import get_args

import pytest

from pytest_graphinstruct.vocab import (
    DIMENSIONS,
    FEEDBACK_LEVELS,
    LEVELS,
    PASS_RULES,
    FeedbackLevel,
    PassRule,
    as_dimension,
    as_feedback_level,
    as_level,
    as_pass_rule,
)

PARSERS: dict[str, tuple[Callable[[object], object], tuple[object, ...]]] = {
    "level": (as_level, LEVELS),
    "pass rule": (as_pass_rule, tuple(PASS_RULES)),
    "feedback level": (as_feedback_level, FEEDBACK_LEVELS),
    "dimension": (as_dimension, DIMENSIONS),
}


def test_the_tuples_are_the_literals_values() -> None:
    assert LEVELS == (0, 1, 2, 3, 4, 5)
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
