"""Records to JSON and back from their fields: order, names, derived keys, strict reading."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import pytest

from pytest_graphinstruct.run.records.codec import (
    Bounds,
    Custom,
    EveryKey,
    JsonRecord,
    OneOf,
    ShapeError,
    decode,
    encode,
)
from pytest_graphinstruct.run.records.schema import record_schema


@dataclass(frozen=True)
class Inner(JsonRecord):
    """A nested record."""

    n: Annotated[int, Bounds(0)]


@dataclass(frozen=True)
class Outer(JsonRecord):
    """A record with every kind of field."""

    name: str
    twice: int = field(init=False, compare=False)
    kind: Literal["a", "b"] = "a"
    renamed: float | None = field(default=None, metadata={"json": "written_as"})
    hidden: bool = field(default=False, compare=False, metadata={"json": None})
    when_set: str | None = field(default=None, metadata={"omit_none": True})
    by_level: Mapping[int, Inner] = field(default_factory=dict)
    every: Annotated[Mapping[Annotated[str, OneOf(("x", "y"))], int | None], EveryKey()] = \
        field(default_factory=dict)
    pair: tuple[float, float] | None = None
    free: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "twice", 2 * len(self.name))


def test_fields_are_written_in_order_under_their_json_names() -> None:
    r = Outer("ab", renamed=0.5, hidden=True, by_level={2: Inner(1), 0: Inner(0)},
              every={"x": None, "y": 3}, pair=(0.1, 0.2), free={"k": [1]})
    assert encode(r) == {"name": "ab", "twice": 4, "kind": "a", "written_as": 0.5,
                         "by_level": {"0": {"n": 0}, "2": {"n": 1}},
                         "every": {"x": None, "y": 3}, "pair": [0.1, 0.2],
                         "free": {"k": [1]}}
    assert list(encode(r)["by_level"]) == ["0", "2"]
    assert Outer.from_json(encode(r)) == r
    assert "when_set" in encode(Outer("a", when_set="s"))


def test_a_field_with_a_default_may_be_missing_and_a_derived_one_is_not_read() -> None:
    assert decode(Outer, {"name": "ab", "twice": 99}) == Outer("ab")


@pytest.mark.parametrize(("data", "fragment"), [
    ({}, "the report: missing field 'name'"),
    ({"name": "a", "extra": 1}, "unknown field 'extra'"),
    ({"name": 1}, "name: expected a string, got a number 1"),
    ({"name": "a", "kind": "c"}, "kind: expected one of 'a', 'b'"),
    ({"name": "a", "by_level": {"x": {"n": 1}}}, "by_level: expected an integer key"),
    ({"name": "a", "by_level": {"1": {"n": -1}}}, "by_level.1.n: -1 is below 0"),
    ({"name": "a", "every": {"x": 1}}, "every: missing field 'y'"),
    ({"name": "a", "every": {"x": 1, "y": 2, "z": 3}}, "every.z: expected one of 'x', 'y'"),
    ({"name": "a", "pair": [1.0]}, "pair: expected 2 items, got 1"),
    ({"name": "a", "written_as": True}, "written_as: is not a finite number: True"),
    ({"name": "a", "kind": None}, "kind: must not be null"),
])
def test_reading_is_strict_and_names_the_path(data: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ShapeError) as info:
        decode(Outer, data)
    assert fragment in str(info.value)


def test_the_schema_follows_the_fields() -> None:
    schema = record_schema(Outer)
    assert list(schema["properties"]) == ["name", "twice", "kind", "written_as", "when_set",
                                          "by_level", "every", "pair", "free"]
    assert "when_set" not in schema["required"] and schema["additionalProperties"] is False
    assert schema["properties"]["kind"] == {"enum": ["a", "b"]}
    assert schema["properties"]["written_as"] == {"type": ["number", "null"]}
    assert schema["properties"]["every"]["required"] == ["x", "y"]
    assert schema["$defs"]["Inner"]["properties"]["n"] == {"type": "integer", "minimum": 0}


Level = Literal[0, 1, 2, 3, 4, 5]


@dataclass(frozen=True)
class Leaf(JsonRecord):
    """A record nested optionally, in arrays and under integer keys."""

    level: Annotated[Level, "a level"]
    score: Annotated[float, Bounds(0, 1)] | None = None


def _point(value: tuple[int, int]) -> list[int]:
    return [value[0], value[1]]


def _read_point(raw: Any) -> tuple[int, int]:
    if not isinstance(raw, list) or len(raw) != 2:
        raise ValueError(f"not a point: {raw!r}")
    return (int(raw[0]), int(raw[1]))


@dataclass(frozen=True)
class Tree(JsonRecord):
    """Nested optional records, a Literal-keyed mapping, a custom value and a derived count."""

    leaf: Leaf | None = None
    leaves: tuple[Leaf, ...] = ()
    by_level: Mapping[Level, Leaf] = field(default_factory=dict)
    point: tuple[int, int] | None = field(default=None, metadata={
        "codec": Custom(_point, _read_point, lambda: {"type": "array"})})
    note: str | None = field(default=None, metadata={"omit_none": True})
    size: int = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", len(self.leaves) + len(self.by_level))


def test_nested_records_literal_keys_custom_and_derived_fields_round_trip() -> None:
    tree = Tree(Leaf(2, 0.5), (Leaf(0), Leaf(5, 1.0)), {3: Leaf(3), 1: Leaf(1, 0.0)}, (4, 7))
    data = encode(tree)
    assert data == {"leaf": {"level": 2, "score": 0.5},
                    "leaves": [{"level": 0, "score": None}, {"level": 5, "score": 1.0}],
                    "by_level": {"1": {"level": 1, "score": 0.0}, "3": {"level": 3, "score": None}},
                    "point": [4, 7], "size": 4}
    assert list(data) == ["leaf", "leaves", "by_level", "point", "size"]
    assert list(data["by_level"]) == ["1", "3"]
    assert Tree.from_json(data) == tree and Tree.from_json(data).size == 4
    assert encode(Tree(note="n"))["note"] == "n" and "note" not in encode(Tree())
    assert encode(Tree()) == {"leaf": None, "leaves": [], "by_level": {}, "point": None,
                              "size": 0}


@pytest.mark.parametrize(("data", "message"), [
    ({"leaf": {"level": 6}}, "leaf.level: expected one of 0, 1, 2, 3, 4, 5, got a number 6"),
    ({"leaf": {"level": True}}, "leaf.level: expected one of 0, 1, 2, 3, 4, 5, got a boolean"),
    ({"leaf": {"level": 1, "score": 1.5}}, "leaf.score: 1.5 is above 1"),
    ({"leaf": {"level": 1, "x": 1}}, "leaf: unknown field 'x'"),
    ({"leaf": {}}, "leaf: missing field 'level'"),
    ({"leaves": [{"level": 0}, {"level": 1, "score": "a"}]},
     "leaves[1].score: is not a finite number: 'a'"),
    ({"leaves": [None]}, "leaves[0]: must not be null"),
    ({"leaves": {}}, "leaves: expected an array, got an object {}"),
    ({"by_level": {"7": {"level": 0}}}, "by_level.7: expected one of 0, 1, 2, 3, 4, 5"),
    ({"by_level": {"x": {"level": 0}}}, "by_level: expected an integer key, got 'x'"),
    ({"by_level": {"x": {"level": 9}}}, "by_level.x.level: expected one of"),
    ({"point": [1]}, "point: not a point: [1]"),
    ({"size": "a"}, "size: expected an integer, got a string 'a'"),
    ({"note": 3}, "note: expected a string"),
    ([], "the report: expected an object, got an array []"),
])
def test_a_refused_value_is_named_by_its_path(data: Any, message: str) -> None:
    with pytest.raises(ShapeError) as info:
        decode(Tree, data)
    assert str(info.value).startswith(message)


def test_a_path_given_to_decode_prefixes_the_fault() -> None:
    with pytest.raises(ShapeError) as info:
        decode(Tree, {"leaves": [{"level": 9}]}, "cells[2]")
    assert info.value.path == "cells[2].leaves[0].level"
    assert info.value.problem.startswith("expected one of 0")


def test_an_integer_valued_float_reads_as_an_integer_and_a_derived_field_is_checked() -> None:
    assert decode(Tree, {"size": 3.0}) == Tree()
    assert decode(Inner, {"n": 2.0}).n == 2 and type(decode(Inner, {"n": 2.0}).n) is int
    with pytest.raises(ShapeError, match="n: -1 is below 0"):
        decode(Inner, {"n": -1})
