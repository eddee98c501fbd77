"""Records to JSON and back from their fields: order, names, derived keys, strict reading."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import pytest

from pytest_graphinstruct.run.codec import (
    Bounds,
    EveryKey,
    JsonRecord,
    OneOf,
    ShapeError,
    decode,
    encode,
)
from pytest_graphinstruct.run.schema import record_schema


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
