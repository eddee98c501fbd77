"""Frozen records to JSON and back, from their fields: the one definition of a report's shape.

A record's JSON object is its dataclass fields in declaration order, each written by its type
hint: ``str``/``int``/``float``/``bool``, ``X | None``, ``Literal[...]``, ``tuple[X, ...]``
(an array), ``tuple[X, Y]`` (a pair), ``Mapping[K, V]`` (an object; integer keys are written as
text, in key order), a nested record, or ``Any`` (free-form JSON).  ``Annotated`` adds bounds
(:class:`Bounds`, :class:`Pattern`, :class:`MinLength`, :class:`MaxItems`, :class:`Unique`) and
:class:`EveryKey`.  Field metadata (plain dicts, so records below this layer need no import):

* ``{"json": "name"}`` — the key it is written under; ``{"json": None}`` — never written;
* ``{"omit_none": True}`` — not written while ``None``;
* ``{"codec": Custom(...)}`` — a value with its own JSON form (its schema given beside it).

A field with ``init=False`` is derived (computed in ``__post_init__``): written, checked when
read, and not read back.  :func:`decode` is strict — every type, bound and enum is checked and
an unknown key is refused — except that a field with a default may be missing (reports written
before it existed).  :mod:`pytest_graphinstruct.run.schema` describes the same records as JSON
Schema.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, Self, TypeVar, Union, get_args, get_origin


@dataclass(frozen=True)
class Bounds:
    """A number's range (either end ``None``: open)."""

    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class Pattern:
    """A text matching ``regex`` (anchored by the regex itself)."""

    regex: str


@dataclass(frozen=True)
class MinLength:
    """A text of at least ``length`` characters."""

    length: int


@dataclass(frozen=True)
class MaxItems:
    """An array of at most ``count`` items."""

    count: int


@dataclass(frozen=True)
class Unique:
    """An array without repeated items."""


@dataclass(frozen=True)
class OneOf:
    """A text that is one of ``values`` (a vocabulary kept as plain ``str`` in the code)."""

    values: tuple[str, ...]


@dataclass(frozen=True)
class EveryKey:
    """A mapping whose keys are a vocabulary (a ``Literal`` or :class:`OneOf`): every key
    present, written in the vocabulary's order (a key missing from the value: ``null``)."""


@dataclass(frozen=True)
class Custom:
    """A value with its own JSON form: ``encode``, ``decode`` (raising ``ValueError`` with a
    one-line reason) and the ``schema`` of what ``encode`` writes."""

    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]
    schema: Callable[[], dict[str, Any]]


class ShapeError(ValueError):
    """A JSON value that is not the record it should be: ``path`` (``cells[0].summary.tpv``)
    and what is wrong."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path or 'the report'}: {problem}")
        self.path, self.problem = path, problem


Hint = Any  # a resolved type hint, as typing.get_type_hints returns it
T = TypeVar("T")


@cache  # asked once per value written or read: the answer depends on the hint alone
def _origin(hint: Hint) -> Any:
    """``typing.get_origin``, typed loosely (its stub narrows to ``ParamSpec`` forms)."""
    return get_origin(hint)


@dataclass(frozen=True)
class JsonField:
    """One key of a record's JSON object: its name, the field behind it and how it is typed."""

    key: str
    name: str
    hint: Hint
    derived: bool
    required: bool  # no default: a report must have it
    omit_none: bool
    custom: Custom | None


def json_fields(cls: Any) -> tuple[JsonField, ...]:
    """The JSON keys of the record class ``cls``, in the order they are written."""
    return _json_fields(cls)


@cache
def _json_fields(cls: Any) -> tuple[JsonField, ...]:
    """The JSON keys of the record class ``cls``, in the order they are written."""
    hints = typing.get_type_hints(cls, include_extras=True)
    out = []
    for f in dataclasses.fields(cls):
        key = f.metadata.get("json", f.name)
        if key is None:
            continue
        required = (f.init and f.default is dataclasses.MISSING
                    and f.default_factory is dataclasses.MISSING)
        out.append(JsonField(key, f.name, hints[f.name], not f.init, required,
                             bool(f.metadata.get("omit_none")), f.metadata.get("codec")))
    return tuple(out)


@cache
def is_record(hint: Hint) -> bool:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


@cache
def split(hint: Hint) -> tuple[Hint, tuple[Any, ...], bool]:
    """``hint`` without its ``Annotated`` marks and its ``None``: (the type, marks, nullable)."""
    marks: tuple[Any, ...] = ()
    nullable = False
    while True:
        origin = _origin(hint)
        if origin is typing.Annotated:
            hint, *more = get_args(hint)
            marks += tuple(more)
        elif origin in (Union, types.UnionType) and type(None) in get_args(hint):
            rest = tuple(a for a in get_args(hint) if a is not type(None))
            nullable = True
            hint = rest[0] if len(rest) == 1 else Union[rest]  # noqa: UP007
        else:
            return hint, marks, nullable


class JsonRecord:
    """A record written and read by this module: ``to_json`` and a strict ``from_json``."""

    def to_json(self) -> dict[str, Any]:
        """The record's JSON object (fields in order; see the module docstring)."""
        return encode(self)

    @classmethod
    def from_json(cls, data: Any) -> Self:
        """The record from its JSON object.

        Raises:
            ShapeError: a value that does not fit, named by its path.
        """
        return decode(cls, data)


# -- writing -----------------------------------------------------------------------------------

def encode(record: Any) -> dict[str, Any]:
    """The JSON object of ``record`` (see the module docstring)."""
    out: dict[str, Any] = {}
    for f in json_fields(type(record)):
        value = getattr(record, f.name)
        if value is None and f.omit_none:
            continue
        out[f.key] = f.custom.encode(value) if f.custom and value is not None else _encode(
            value, f.hint)
    return out


def _encode(value: Any, hint: Hint) -> Any:
    if value is None:
        return None
    hint, marks, _ = split(hint)
    if is_record(hint):
        return encode(value)
    origin = _origin(hint)
    if origin is tuple:
        args = get_args(hint)
        inner = args[0] if len(args) == 2 and args[1] is Ellipsis else None
        return [_encode(x, inner if inner is not None else args[k]) for k, x in
                enumerate(value)]
    if origin in (Mapping, dict):
        key_hint, value_hint = get_args(hint)
        key_type, _, _ = split(key_hint)
        if any(isinstance(m, EveryKey) for m in marks):
            return {k: _encode(value.get(k), value_hint) for k in vocabulary(key_hint)}
        items = value.items()
        if _key_is_int(key_type):
            items = sorted(items)
        return {str(k): _encode(v, value_hint) for k, v in items}
    return value


def _key_is_int(key_type: Hint) -> bool:
    if key_type is int:
        return True
    return _origin(key_type) is Literal and all(
        isinstance(a, int) for a in get_args(key_type))


# -- reading -----------------------------------------------------------------------------------

def decode(cls: type[T], data: Any, path: str = "") -> T:
    """The record ``cls`` from its JSON object, checked strictly (see the module docstring).

    Raises:
        ShapeError: the first value that does not fit, named by its path.
    """
    if not isinstance(data, Mapping):
        raise ShapeError(path, f"expected an object, got {_shown(data)}")
    fields = json_fields(cls)
    known = {f.key for f in fields}
    for key in data:
        if key not in known:
            raise ShapeError(path, f"unknown field {key!r}")
    kwargs: dict[str, Any] = {}
    for f in fields:
        where = f"{path}.{f.key}" if path else f.key
        if f.key not in data:
            if f.required:
                raise ShapeError(path, f"missing field {f.key!r}")
            continue
        raw = data[f.key]
        if f.custom is not None and raw is not None:
            try:
                value = f.custom.decode(raw)
            except (ValueError, TypeError, KeyError) as exc:
                raise ShapeError(where, str(exc)) from None
        else:
            value = _decode(raw, f.hint, where)
        if not f.derived:
            kwargs[f.name] = value
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:
        raise ShapeError(path, str(exc)) from None


def _decode(raw: Any, hint: Hint, path: str) -> Any:
    hint, marks, nullable = split(hint)
    if raw is None:
        if nullable or hint is Any:
            return None
        raise ShapeError(path, "must not be null")
    if hint is Any:
        return raw
    if is_record(hint):
        return decode(hint, raw, path)
    origin = _origin(hint)
    if origin is Literal:
        options = get_args(hint)
        if not any(raw == o and type(raw) is type(o) for o in options):
            raise ShapeError(path, f"expected one of {', '.join(map(repr, options))}, "
                                   f"got {_shown(raw)}")
        value: Any = raw
    elif origin in (Union, types.UnionType):
        for option in get_args(hint):
            try:
                value = _decode(raw, option, path)
                break
            except ShapeError:
                continue
        else:
            raise ShapeError(path, f"unexpected {_shown(raw)}")
    elif origin is tuple:
        value = _decode_tuple(raw, get_args(hint), path)
    elif origin in (Mapping, dict):
        value = _decode_mapping(raw, hint, marks, path)
    else:
        value = _decode_scalar(raw, hint, path)
    _check_marks(value, marks, path)
    return value


def _decode_scalar(raw: Any, hint: Hint, path: str) -> Any:
    if hint is bool:
        if isinstance(raw, bool):
            return raw
        raise ShapeError(path, f"expected true or false, got {_shown(raw)}")
    if hint is int:
        if isinstance(raw, float) and raw.is_integer():
            return int(raw)
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw
        raise ShapeError(path, f"expected an integer, got {_shown(raw)}")
    if hint is float:
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            if not math.isfinite(raw):
                raise ShapeError(path, f"is not a finite number: {raw!r}")
            return raw
        raise ShapeError(path, f"is not a finite number: {raw!r}")
    if hint is str:
        if isinstance(raw, str):
            return raw
        raise ShapeError(path, f"expected a string, got {_shown(raw)}")
    raise TypeError(f"{path}: no JSON form for {hint!r}")  # a record declared a type we lack


def _decode_tuple(raw: Any, args: tuple[Any, ...], path: str) -> tuple[Any, ...]:
    if not isinstance(raw, list):
        raise ShapeError(path, f"expected an array, got {_shown(raw)}")
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_decode(x, args[0], f"{path}[{k}]") for k, x in enumerate(raw))
    if len(raw) != len(args):
        raise ShapeError(path, f"expected {len(args)} items, got {len(raw)}")
    return tuple(_decode(x, a, f"{path}[{k}]") for k, (x, a) in enumerate(zip(raw, args,
                                                                              strict=True)))


def _decode_mapping(raw: Any, hint: Hint, marks: tuple[Any, ...], path: str) -> dict[Any, Any]:
    if not isinstance(raw, Mapping):
        raise ShapeError(path, f"expected an object, got {_shown(raw)}")
    key_hint, value_hint = get_args(hint)
    out: dict[Any, Any] = {}
    for key, v in raw.items():
        out[_decode_key(key, key_hint, path)] = _decode(v, value_hint, f"{path}.{key}")
    if any(isinstance(m, EveryKey) for m in marks):
        names = vocabulary(key_hint)
        missing = [k for k in names if k not in out]
        if missing:
            raise ShapeError(path, f"missing field {missing[0]!r}")
        out = {k: out[k] for k in names}
    return out


def vocabulary(hint: Hint) -> tuple[Any, ...]:
    """The values a ``Literal`` or a :class:`OneOf` text allows, in order."""
    base, marks, _ = split(hint)
    for m in marks:
        if isinstance(m, OneOf):
            return m.values
    return get_args(base)


def _decode_key(key: str, key_hint: Hint, path: str) -> Any:
    key_type, _, _ = split(key_hint)
    if key_type is Any:
        return key
    if _key_is_int(key_type):
        if not re.fullmatch(r"-?[0-9]+", key):
            raise ShapeError(path, f"expected an integer key, got {key!r}")
        return _decode(int(key), key_hint, f"{path}.{key}")
    return _decode(key, key_hint, f"{path}.{key}")


def _check_marks(value: Any, marks: tuple[Any, ...], path: str) -> None:
    for m in marks:
        if isinstance(m, Bounds) and value is not None:
            if m.minimum is not None and value < m.minimum:
                raise ShapeError(path, f"{value!r} is below {m.minimum}")
            if m.maximum is not None and value > m.maximum:
                raise ShapeError(path, f"{value!r} is above {m.maximum}")
        elif isinstance(m, Pattern) and not re.search(m.regex, value):
            raise ShapeError(path, f"{value!r} does not match {m.regex}")
        elif isinstance(m, MinLength) and len(value) < m.length:
            raise ShapeError(path, f"shorter than {m.length}")
        elif isinstance(m, MaxItems) and len(value) > m.count:
            raise ShapeError(path, f"more than {m.count} items")
        elif isinstance(m, Unique) and len(set(value)) != len(value):
            raise ShapeError(path, "has repeated items")
        elif isinstance(m, OneOf) and value not in m.values:
            raise ShapeError(path, f"expected one of {', '.join(map(repr, m.values))}, "
                                   f"got {_shown(value)}")


def _shown(value: Any) -> str:
    kind = {list: "an array", dict: "an object", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")
    text = repr(value)
    return f"{kind} {text if len(text) <= 40 else text[:39] + '…'}"
