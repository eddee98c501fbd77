"""graphs.parse_errors: positions in messages and the exception family."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.errors import GraphSyntaxError
from pytest_graphinstruct.graphs.parse_errors import (
    AbbreviationError,
    LimitExceeded,
    ParseError,
    TruncatedError,
    where,
)


@pytest.mark.parametrize(("text", "pos", "at"), [
    ("abc", 0, "line 1, column 1"),
    ("abc", 2, "line 1, column 3"),
    ("ab\ncd", 3, "line 2, column 1"),
    ("ab\ncd", 2, "line 1, column 3"),  # the newline itself ends line 1
    ("ab\n\ncd", 5, "line 3, column 2"),
    ("ab", -4, "line 1, column 1"),  # clamped into the text
    ("a\nb", 99, "line 2, column 2"),
    ("", 0, "line 1, column 1"),
])
def test_where(text: str, pos: int, at: str) -> None:
    assert where(text, pos) == at


@given(st.text(alphabet="ab\n", max_size=40), st.data())
def test_where_names_the_line_and_column_of_the_offset(text: str, data: st.DataObject) -> None:
    pos = data.draw(st.integers(0, len(text)))
    lines = text[:pos].split("\n")
    assert where(text, pos) == f"line {len(lines)}, column {len(lines[-1]) + 1}"


def test_the_position_is_appended_only_when_known() -> None:
    assert str(ParseError("bad")) == "bad"
    assert str(ParseError("bad", "x\ny", None)) == "bad"
    assert str(ParseError("bad", None, 3)) == "bad"
    err = ParseError("bad", "x\nyz", 3)
    assert str(err) == "bad at line 2, column 2"
    assert (err.message, err.pos) == ("bad", 3)


def test_moving_the_resume_position_keeps_the_reported_one() -> None:
    err = ParseError("bad", "abc\ndef", 1)
    err.pos = 7
    assert str(err) == "bad at line 1, column 2"


def test_every_parse_error_is_a_graph_syntax_error() -> None:
    for cls in (ParseError, TruncatedError, AbbreviationError):
        assert issubclass(cls, GraphSyntaxError)
    limit = LimitExceeded("node list", "max_nodes", 10)
    assert isinstance(limit, GraphSyntaxError)
    assert limit.limit == "max_nodes"
    assert str(limit) == "node list exceeds max_nodes limit (10)"
