"""The lexer and the bounded literal reader."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pytest_graphinstruct.graphs.literals import (
    EOF,
    Abbreviation,
    Call,
    Lexer,
    Name,
    ReadOptions,
    decode_string,
    read_value,
)
from pytest_graphinstruct.graphs.parse_errors import (
    AbbreviationError,
    LimitExceeded,
    ParseError,
    TruncatedError,
)


def read(text: str, **opts: Any) -> Any:
    lx = Lexer(text)
    value = read_value(lx, ReadOptions(**opts))
    assert lx.next().kind == EOF, "the reader must consume exactly one value"
    return value


@pytest.mark.parametrize(
    "text, value",
    [
        ("[1, 2, 3]", [1, 2, 3]),
        ("[1, 2, 3,]", [1, 2, 3]),
        ("()", ()),
        ("(1,)", (1,)),
        ("(1)", 1),
        ("(1, 'a')", (1, "a")),
        ("{}", {}),
        ("{1, 2}", {1, 2}),
        ("{'a': [1], 2: (3,),}", {"a": [1], 2: (3,)}),
        ("[{0, 1}, {2}]", [{0, 1}, {2}]),
        ("set()", set()),
        ("frozenset({1})", frozenset({1})),
        ("list((1, 2))", [1, 2]),
        ("tuple([1])", (1,)),
        ("dict(a=1, b=[2])", {"a": 1, "b": [2]}),
        ("float('-inf')", float("-inf")),
        ("-3", -3),
        ("+4", 4),
        ("2.5e-3", 2.5e-3),
        ("true", True),
        ("True", True),
        ("FALSE", False),
        ("null", None),
        ("None", None),
        ("word", "word"),
        ("node-1", "node-1"),
        ("'a' \"b\" ’c’", "abc"),
        ("'''tri\nple'''", "tri\nple"),
        ('"""x"""', "x"),
        ("‘Alice’", "Alice"),
        ("’Bob’", "Bob"),
        ("“Carol”", "Carol"),
        ("'O’Brien'", "O’Brien"),
        ("\u200b[\x00 1 \u202e]", [1]),
        ("[1, # comment ]\n 2 // also ]\n]", [1, 2]),
    ],
)
def test_values(text: str, value: Any) -> None:
    got = read(text)
    assert got == value
    assert type(got) is type(value)


@pytest.mark.parametrize(
    "raw, value",
    [
        (r"'a\'b'", "a'b"),
        (r"'\\'", "\\"),
        (r"'\n\t\r'", "\n\t\r"),
        (r"'\x41\u00e9\U0001F600'", "Aé😀"),
        (r"'\101'", "A"),
        (r"'\N{BULLET}'", "•"),
        (r"'\N{NO SUCH NAME}'", r"\N{NO SUCH NAME}"),
        (r"'C:\path\d'", r"C:\path\d"),
        (r"'\ud800'", "\ud800"),
        ("'a\\\nb'", "ab"),
        (r"‘it\’s’", "it’s"),
    ],
)
def test_escapes(raw: str, value: str) -> None:
    assert decode_string(raw) == value


def test_abbreviations_are_markers_and_recorded() -> None:
    lx = Lexer("[0, 1, ..., 9, …, etc., range(3), list(range(4))]")
    value = read_value(lx, ReadOptions())
    assert [type(v) for v in value if not isinstance(v, int)] == [Abbreviation] * 5
    assert [a.text for a in lx.abbreviations] == ["...", "…", "etc.", "range(...)", "range(...)"]


@pytest.mark.parametrize("text", ["[i for i in x]", "[0-9]", "[1, 2 -5]"])
def test_comprehensions_and_ranges_raise(text: str) -> None:
    with pytest.raises(AbbreviationError):
        read(text)


@pytest.mark.parametrize(
    "text, message",
    [
        ("[1 2]", "unexpected '2' after an item of a list"),
        ("[1,,2]", "unexpected ','"),
        ("{1: 2, 3}", "expected ':'"),
        ("{1, 2: 3}", "after an item of a set"),
        ("{[1]: 2}", "not hashable"),
        ("{[1], 2}", "not hashable"),
        ("'open", "unterminated string"),
        ("'a\nb'", "unterminated string"),
        ("foo(1)", "function call foo(...) is not a literal"),
        ("[1)", "unexpected ')'"),
        ("@", "unexpected '@'"),
        ("9" * 5000, "too long"),
    ],
)
def test_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=re.escape(message)) as info:
        read(text)
    assert "line 1" in str(info.value) or "too long" in message or "hashable" in message


@pytest.mark.parametrize("text", ["[1, 2", "(", "{'a':", "['a' 'b'", "dict(a="])
def test_truncation(text: str) -> None:
    with pytest.raises(TruncatedError):
        read(text)


def test_depth_limit_is_not_recursion() -> None:
    with pytest.raises(LimitExceeded, match="max_depth limit \\(64\\)"):
        read("[" * 100_000)
    assert read("[" * 64 + "]" * 64) is not None
    with pytest.raises(LimitExceeded):
        read("[" * 65 + "]" * 65)
    assert read("[" * 5000 + "]" * 5000, max_depth=10_000) is not None


def test_item_limits_and_key_limits() -> None:
    with pytest.raises(LimitExceeded, match="max_edges limit \\(3\\)"):
        read("[1, 2, 3, 4]", max_items=3)
    opts = {"max_items": 100, "key_limits": {"nodes": (2, "max_nodes")}}
    with pytest.raises(LimitExceeded, match="max_nodes limit \\(2\\)"):
        read('{"Nodes": [1, 2, 3], "edges": [1, 2, 3]}', **opts)
    assert read('{"edges": [1, 2, 3]}', **opts) == {"edges": [1, 2, 3]}


def test_python_mode_names_and_calls() -> None:
    value = read("f(x, [y, 1], k=g(2))", bare_names=False)
    assert isinstance(value, Call) and value.name == "f"
    assert value.args[0] == "x" and isinstance(value.args[0], Name)
    assert isinstance(value.kwargs["k"], Call)


def test_on_dict_sees_every_completed_dict() -> None:
    seen: list[tuple[Any, int, int]] = []
    lx = Lexer('{"a": {"b": 1}, "c": [{"d": 2}]} tail')
    read_value(lx, ReadOptions(on_dict=lambda d, s, e: seen.append((d, s, e))))
    assert [d for d, _, _ in seen] == [{"b": 1}, {"d": 2}, {"a": {"b": 1}, "c": [{"d": 2}]}]
    assert seen[-1][1:] == (0, 32)
