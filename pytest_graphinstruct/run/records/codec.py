"""Frozen records to JSON and back, from their fields: the one definition of a report's shape.

A record's JSON object is its dataclass fields in declaration order, each written by its type
hint: ``str``/``int``/``float``/``bool``, ``X | None``, ``Literal[...]``, ``tuple[X, ...]``
(an array), ``frozenset[X]`` (an array in a fixed order: by text, ``None`` last), ``tuple[X, Y]``
(a pair), ``Mapping[K, V]`` (an object; integer keys are written as
text, in key order), a nested record, or ``Any`` (free-form JSON).  ``Annotated`` adds bounds
(:class:`Bounds`, :class:`Pattern`, :class:`MinLength`, :class:`MaxItems`, :class:`Unique`) and
:class:`EveryKey`.  Field metadata (plain dicts, so records below this layer need no import):

* ``{"json": "name"}`` — the key it is written under; ``{"json": None}`` — never written;
* ``{"omit_none": True}`` — not written while ``None``;
* ``{"codec": Custom(...)}`` — a value with its own JSON form (its schema given beside it).

A field with ``init=False`` is derived (computed in ``__post_init__``): written, checked when
read, and not read back.  :func:`decode` is strict — every type, bound and enum is checked and
an unknown key is refused — except that a field with a default may be missing (reports written
before it existed).  :mod:`.schema` describes the same records as JSON
Schema.

Each record class is compiled once, on first use, into a writer and a reader of its own
(generated source, its keys and checks in line), so writing or reading a value looks up no hint.
"""

from __future__ import annotations

import dataclasses
import math
import re
import threading
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
JsonObject = dict[str, Any]
"""A JSON object as ``json`` reads and writes it (its values: any JSON value)."""
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


def json_fields(cls: type) -> tuple[JsonField, ...]:
    """The JSON keys of the record class ``cls``, in the order they are written."""
    return _json_fields(cls)


@cache
def _json_fields(cls: type) -> tuple[JsonField, ...]:
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

    def to_json(self) -> JsonObject:
        """The record's JSON object (fields in order; see the module docstring)."""
        return (_ENCODERS.get(type(self)) or _record_encoder(type(self)))(self)

    @classmethod
    def from_json(cls, data: object) -> Self:
        """The record from its JSON object.

        Raises:
            ShapeError: a value that does not fit, named by its path.
        """
        return decode(cls, data)


# -- compiled codecs -----------------------------------------------------------------------------
#
# Each record class, and each array or object hint, is compiled once into a Python function
# written for it (as ``dataclasses`` writes ``__init__``): its keys, conversions and checks in
# line, so a value written or read costs no look-up of its hint.  A value is first tried against
# a cheap test of the common case (``type(v) is str``, a number in its bounds); only one that
# fails it goes through the full reader, which converts it or raises _Fault.  Every function
# that holds the refused value adds its path segment on the way out, and decode turns the fault
# into a ShapeError naming the whole path.

Decoder = Callable[[Any], Any]
Encoder = Callable[[Any], Any]
_MISSING: Any = object()
_INT_KEY = re.compile(r"-?[0-9]+")


class _Fault(Exception):
    """A value a compiled reader refuses: the problem and the path segments (``.key``,
    ``[3]``) from the value up.  ``unsupported``: a hint with no JSON form (a ``TypeError``)."""

    def __init__(self, problem: str, *, unsupported: bool = False) -> None:
        super().__init__(problem)
        self.problem, self.unsupported = problem, unsupported
        self.segments: list[str] = []

    def error(self, base: str) -> Exception:
        """The exception ``decode`` raises for it, the path starting at ``base``."""
        tail = "".join(reversed(self.segments))
        path = base + tail if base else tail.removeprefix(".")
        if self.unsupported:
            return TypeError(f"{path}: {self.problem}")
        return ShapeError(path, self.problem)


class _Source:
    """The text of one generated function and the names it uses."""

    def __init__(self, head: str) -> None:
        self.lines = [head]
        self.names: dict[str, Any] = {"_Fault": _Fault, "_MISSING": _MISSING,
                                      "_Mapping": Mapping, "_shown": _shown}

    def name(self, value: Any) -> str:
        """A name the function sees ``value`` under."""
        name = f"_v{len(self.names)}"
        self.names[name] = value
        return name

    def add(self, indent: int, *lines: str) -> None:
        self.lines.extend("    " * indent + line for line in lines)

    def read_into(self, indent: int, var: str, hint: Hint, segment: str) -> None:
        """Lines reading the JSON value in ``var`` as ``hint`` into ``var``; a fault gets
        ``segment`` (an expression) added to its path."""
        base, marks, nullable = split(hint)
        accept = _accept(self, var, hint)
        if accept == "True":
            return
        branch = "if"
        if _is_array(base) and all(isinstance(m, Unique | MaxItems) for m in marks):
            self.add(indent, f"if type({var}) is list and not {var}:", f"    {var} = ()")
            branch = "elif"
        self.add(indent, f"{branch} not ({accept}):" if accept else f"{branch} True:",
                 "    try:")
        if not nullable:
            self.add(indent, f"        if {var} is None:",
                     "            raise _Fault('must not be null')")
        self.add(indent, f"        {var} = {self.name(_core_decoder(base, marks))}({var})")
        if not is_record(base):
            for check in filter(None, map(_check, marks)):
                self.add(indent, f"        {self.name(check)}({var})")
        self.add(indent, "    except _Fault as fault:",
                 f"        fault.segments.append({segment})",
                 "        raise")

    def compile(self, name: str) -> Callable[[Any], Any]:
        exec("\n".join(self.lines), self.names)  # the text built above, no input in it
        function: Callable[[Any], Any] = self.names[name]
        return function


def _accept(src: _Source, var: str, hint: Hint) -> str | None:
    """An expression true when the JSON value in ``var`` reads as ``hint`` as it is (a test
    of the common case; ``None``: none, the full reader always runs)."""
    base, marks, nullable = split(hint)
    if base is Any:
        return "True"
    test = None
    if base in (str, bool, int, float):
        test = f"type({var}) is {base.__name__}"
        if base is float:
            test += f" and {var} - {var} == 0.0"  # finite
        for m in marks:
            if isinstance(m, Bounds) and base in (int, float):
                if m.minimum is not None:
                    test += f" and {var} >= {src.name(m.minimum)}"
                if m.maximum is not None:
                    test += f" and {var} <= {src.name(m.maximum)}"
            elif isinstance(m, MinLength) and base is str:
                test += f" and len({var}) >= {m.length}"
            elif isinstance(m, OneOf) and base is str:
                test += f" and {var} in {src.name(frozenset(m.values))}"
            else:
                test = None
                break
    elif _origin(base) is Literal and not marks and all(type(a) is str
                                                       for a in get_args(base)):
        test = f"type({var}) is str and {var} in {src.name(frozenset(get_args(base)))}"
    if nullable:
        return f"{var} is None" + (f" or ({test})" if test else "")
    return test


_LOCK = threading.RLock()
_DECODERS: dict[type[Any], Decoder] = {}
_ENCODERS: dict[type[Any], Encoder] = {}
_BUILDING: set[type[Any]] = set()


def _record_decoder(cls: type[Any]) -> Decoder:
    """The compiled reader of the record class ``cls``."""
    decoder = _DECODERS.get(cls)
    if decoder is None:
        with _LOCK:
            if cls in _BUILDING:  # a record holding itself: found once it is built
                return lambda raw: _DECODERS[cls](raw)
            _build(cls)
            decoder = _DECODERS[cls]
    return decoder


def _record_encoder(cls: type[Any]) -> Encoder:
    """The compiled writer of the record class ``cls``."""
    encoder = _ENCODERS.get(cls)
    if encoder is None:
        with _LOCK:
            _build(cls)
            encoder = _ENCODERS[cls]
    return encoder


def _build(cls: type[Any]) -> None:
    if cls in _DECODERS:
        return
    _BUILDING.add(cls)
    try:
        fields = json_fields(cls)
        encoder, decoder = _compile_encoder(fields), _compile_decoder(cls, fields)
    finally:
        _BUILDING.discard(cls)
    _ENCODERS[cls], _DECODERS[cls] = encoder, decoder


# -- writing -----------------------------------------------------------------------------------

def encode(record: object) -> JsonObject:
    """The JSON object of ``record`` (see the module docstring)."""
    encoder = _ENCODERS.get(type(record)) or _record_encoder(type(record))
    out: JsonObject = encoder(record)
    return out


def _compile_encoder(fields: tuple[JsonField, ...]) -> Encoder:
    src = _Source("def encode(r):")
    shown: list[str] | None = []  # keys written in one dict display, up to an omit_none one
    for f in fields:
        encoder = f.custom.encode if f.custom is not None else _encoder(f.hint)
        base = split(f.hint)[0]
        if f.custom is None and is_record(base) and base not in _BUILDING:
            value = (f"(None if (v := r.{f.name}) is None else {src.name(_record_encoder(base))}"
                     f"(v) if type(v) is {src.name(base)} else {src.name(encode)}(v))")
        elif encoder is not None:
            value = f"(None if (v := r.{f.name}) is None else {src.name(encoder)}(v))"
        else:
            value = f"r.{f.name}"
        if f.omit_none:
            if shown is not None:
                src.add(1, "out = {" + ", ".join(shown) + "}")
                shown = None
            src.add(1, f"v = r.{f.name}", "if v is not None:",
                    f"    out[{f.key!r}] = " + (f"{src.name(encoder)}(v)" if encoder else "v"))
        elif shown is not None:
            shown.append(f"{f.key!r}: {value}")
        else:
            src.add(1, f"out[{f.key!r}] = {value}")
    src.add(1, "return out" if shown is None else "return {" + ", ".join(shown) + "}")
    return src.compile("encode")


def _nested_encoder(cls: type[Any]) -> Encoder:
    """The writer of a nested record declared as ``cls`` (one of a subclass: its own)."""
    with _LOCK:
        if cls in _BUILDING:  # a record holding itself
            return encode
        own = _record_encoder(cls)
    return lambda value: own(value) if type(value) is cls else encode(value)


@cache
def _encoder(hint: Hint) -> Encoder | None:
    """How a value of ``hint`` other than ``None`` is written (``None``: as it is)."""
    base, marks, _ = split(hint)
    if is_record(base):
        return _nested_encoder(base)
    origin = _origin(base)
    if origin is tuple:
        args = get_args(base)
        if len(args) == 2 and args[1] is Ellipsis:
            item_base = split(args[0])[0]
            if is_record(item_base) and item_base not in _BUILDING:
                own, cls = _record_encoder(item_base), item_base
                return lambda value: [own(x) if type(x) is cls else None if x is None
                                      else encode(x) for x in value]
            item = _encoder(args[0])
            if item is None:
                return list
            return lambda value: [None if x is None else item(x) for x in value]
        items = tuple(_or_none(_encoder(a)) for a in args)
        return lambda value: [items[k](x) for k, x in enumerate(value)]
    if origin is frozenset:
        member = _or_none(_encoder(get_args(base)[0]))
        return lambda value: [member(x) for x in sorted(value, key=_set_order)]
    if origin in (Mapping, dict):
        key_hint, value_hint = get_args(base)
        inner = _or_none(_encoder(value_hint))
        if any(isinstance(m, EveryKey) for m in marks):
            names = vocabulary(key_hint)
            if inner is _same:
                return lambda value: {k: value.get(k) for k in names}
            return lambda value: {k: inner(value.get(k)) for k in names}
        if _key_is_int(split(key_hint)[0]):
            return lambda value: {str(k): inner(v) for k, v in sorted(value.items())}
        if inner is _same:
            return lambda value: {str(k): v for k, v in value.items()}
        return lambda value: {str(k): inner(v) for k, v in value.items()}
    return None


def _or_none(encoder: Encoder | None) -> Encoder:
    """``encoder`` extended to ``None`` (written as ``None``), or as-it-is when ``None``."""
    if encoder is None:
        return _same
    return lambda value: None if value is None else encoder(value)


def _same(value: Any) -> Any:
    return value


def _set_order(value: Any) -> tuple[bool, str]:
    """A set's members in a fixed order: by their text, ``None`` last."""
    return value is None, str(value)


def _key_is_int(key_type: Hint) -> bool:
    if key_type is int:
        return True
    return _origin(key_type) is Literal and all(
        isinstance(a, int) for a in get_args(key_type))


# -- reading -----------------------------------------------------------------------------------

def decode(cls: type[T], data: object, path: str = "") -> T:
    """The record ``cls`` from its JSON object, checked strictly (see the module docstring).

    Raises:
        ShapeError: the first value that does not fit, named by its path.
    """
    try:
        value: T = (_DECODERS.get(cls) or _record_decoder(cls))(data)
    except _Fault as fault:
        raise fault.error(path) from None
    return value


def _compile_decoder(cls: type[Any], fields: tuple[JsonField, ...]) -> Decoder:
    known = frozenset(f.key for f in fields)
    src = _Source("def decode(data):")
    src.add(1, "if not isinstance(data, _Mapping):",
            "    raise _Fault('expected an object, got ' + _shown(data))",
            f"if not {src.name(known)}.issuperset(data):",
            f"    raise {src.name(_unknown_key)}(data, {src.name(known)})")
    arguments = []
    for k, f in enumerate(fields):
        var, key = f"v{k}", repr(f.key)
        src.add(1, f"{var} = data.get({key}, _MISSING)", f"if {var} is not _MISSING:")
        if f.custom is None:
            src.read_into(2, var, f.hint, repr("." + f.key))
            src.add(2, "pass")
        else:
            src.add(2, "try:",
                    f"    {var} = {src.name(_custom_decoder(f.custom, f.hint))}({var})",
                    "except _Fault as fault:",
                    f"    fault.segments.append({'.' + f.key!r})",
                    "    raise")
        if f.required:
            src.add(1, "else:", f"    raise _Fault({'missing field ' + key!r})")
        elif not f.derived:
            src.add(1, "else:", f"    {var} = {_default(src, cls, f.name)}")
        if not f.derived:
            arguments.append(f"{f.name}={var}")
    src.add(1, "try:",
            f"    return {src.name(cls)}({', '.join(arguments)})",
            "except (ValueError, TypeError) as exc:",
            "    raise _Fault(str(exc)) from None")
    return src.compile("decode")


def _default(src: _Source, cls: type[Any], name: str) -> str:
    """An expression for the default of the field ``name`` of ``cls`` (what its ``__init__``
    would use when it is not given)."""
    f = next(f for f in dataclasses.fields(cls) if f.name == name)
    if f.default_factory is not dataclasses.MISSING:
        return f"{src.name(f.default_factory)}()"
    return src.name(f.default)


def _unknown_key(data: Mapping[str, Any], known: frozenset[str]) -> _Fault:
    key = next(k for k in data if k not in known)
    return _Fault(f"unknown field {key!r}")


def _custom_decoder(custom: Custom, hint: Hint) -> Decoder:
    """A :class:`Custom` field's reader: ``null`` read by the field's hint, anything else by
    ``custom.decode``."""
    base, _, nullable = split(hint)
    null_ok, custom_decode = nullable or base is Any, custom.decode

    def decode_custom(raw: Any) -> Any:
        if raw is None:
            if null_ok:
                return None
            raise _Fault("must not be null")
        try:
            return custom_decode(raw)
        except (ValueError, TypeError, KeyError) as exc:
            raise _Fault(str(exc)) from None
    return decode_custom


@cache
def _decoder(hint: Hint) -> Decoder:
    """The reader of a JSON value as ``hint``: the value, or a :class:`_Fault`."""
    base, marks, nullable = split(hint)
    if base is Any:
        return _same
    inner = _core_decoder(base, marks)
    if not is_record(base):
        inner = _with_marks(inner, marks)
    if nullable:
        return lambda raw: None if raw is None else inner(raw)

    def decode_not_null(raw: Any) -> Any:
        if raw is None:
            raise _Fault("must not be null")
        return inner(raw)
    return decode_not_null


def _core_decoder(base: Hint, marks: tuple[Any, ...]) -> Decoder:
    """The reader of a value other than ``None`` as ``base`` (not ``Any``), its marks not yet
    checked."""
    if is_record(base):
        return _record_decoder(base)
    origin = _origin(base)
    if origin is Literal:
        return _literal_decoder(get_args(base))
    if origin in (Union, types.UnionType):
        return _union_decoder(tuple(_decoder(a) for a in get_args(base)))
    if origin is tuple:
        return _tuple_decoder(get_args(base))
    if origin is frozenset:
        array = _tuple_decoder((get_args(base)[0], Ellipsis))
        return lambda raw: frozenset(array(raw))
    if origin in (Mapping, dict):
        key_hint, value_hint = get_args(base)
        return _mapping_decoder(key_hint, value_hint,
                                any(isinstance(m, EveryKey) for m in marks))
    scalar = _SCALARS.get(base)
    if scalar is not None:
        return scalar

    def unsupported(raw: Any) -> Any:  # a record declared a type we lack
        raise _Fault(f"no JSON form for {base!r}", unsupported=True)
    return unsupported


def _literal_decoder(options: tuple[Any, ...]) -> Decoder:
    allowed = frozenset((type(o), o) for o in options)
    expected = f"expected one of {', '.join(map(repr, options))}, got "

    def decode_literal(raw: Any) -> Any:
        try:
            if (type(raw), raw) in allowed:
                return raw
        except TypeError:  # unhashable: an array or an object
            pass
        raise _Fault(expected + _shown(raw))
    return decode_literal


def _union_decoder(options: tuple[Decoder, ...]) -> Decoder:
    def decode_union(raw: Any) -> Any:
        for option in options:
            try:
                return option(raw)
            except _Fault as fault:
                if fault.unsupported:
                    raise
        raise _Fault(f"unexpected {_shown(raw)}")
    return decode_union


def _is_array(base: Hint) -> bool:
    """Whether ``base`` is ``tuple[X, ...]``."""
    if _origin(base) is not tuple:
        return False
    args = get_args(base)
    return len(args) == 2 and args[1] is Ellipsis


def _tuple_decoder(args: tuple[Any, ...]) -> Decoder:
    src = _Source("def decode_array(raw):")
    src.add(1, "if not isinstance(raw, list):",
            "    raise _Fault('expected an array, got ' + _shown(raw))")
    if len(args) == 2 and args[1] is Ellipsis:
        src.add(1, "out = []", "for x in raw:")
        src.read_into(2, "x", args[0], "f'[{len(out)}]'")
        src.add(2, "out.append(x)")
        src.add(1, "return tuple(out)")
    else:
        src.add(1, f"if len(raw) != {len(args)}:",
                f"    raise _Fault('expected {len(args)} items, got ' + str(len(raw)))")
        for k, a in enumerate(args):
            src.add(1, f"x{k} = raw[{k}]")
            src.read_into(1, f"x{k}", a, repr(f"[{k}]"))
        src.add(1, "return (" + "".join(f"x{k}, " for k in range(len(args))) + ")")
    return src.compile("decode_array")


def _mapping_decoder(key_hint: Hint, value_hint: Hint, every_key: bool) -> Decoder:
    src = _Source("def decode_object(raw):")
    src.add(1, "if not isinstance(raw, _Mapping):",
            "    raise _Fault('expected an object, got ' + _shown(raw))",
            "out = {}", "for key, v in raw.items():")
    src.read_into(2, "v", value_hint, "f'.{key}'")  # the value first, as `out[k] = v` reads
    key_type = split(key_hint)[0]
    if key_type is Any:
        src.add(2, "out[key] = v")
    else:
        if _key_is_int(key_type):
            src.add(2, f"if not {src.name(_INT_KEY.fullmatch)}(key):",
                    "    raise _Fault(f'expected an integer key, got {key!r}')",
                    "k = int(key)")
        else:
            src.add(2, "k = key")
        src.read_into(2, "k", key_hint, "f'.{key}'")
        src.add(2, "out[k] = v")
    if every_key:
        names = vocabulary(key_hint)
        src.add(1, f"if len(out) != {len(names)} or list(out) != {src.name(list(names))}:",
                f"    out = {src.name(_every_key)}(out, {src.name(names)})")
    src.add(1, "return out")
    return src.compile("decode_object")


def _every_key(out: dict[Any, Any], names: tuple[Any, ...]) -> dict[Any, Any]:
    """``out`` in the vocabulary's order, or a fault naming the first key it lacks."""
    missing = [k for k in names if k not in out]
    if missing:
        raise _Fault(f"missing field {missing[0]!r}")
    return {k: out[k] for k in names}


def vocabulary(hint: Hint) -> tuple[Any, ...]:
    """The values a ``Literal`` or a :class:`OneOf` text allows, in order."""
    base, marks, _ = split(hint)
    for m in marks:
        if isinstance(m, OneOf):
            return m.values
    return get_args(base)


def _decode_bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    raise _Fault(f"expected true or false, got {_shown(raw)}")


def _decode_int(raw: Any) -> int:
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    raise _Fault(f"expected an integer, got {_shown(raw)}")


def _decode_float(raw: Any) -> float:
    if isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw):
        return raw
    raise _Fault(f"is not a finite number: {raw!r}")


def _decode_str(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    raise _Fault(f"expected a string, got {_shown(raw)}")


_SCALARS: dict[Any, Decoder] = {bool: _decode_bool, int: _decode_int, float: _decode_float,
                                str: _decode_str}


def _with_marks(decoder: Decoder, marks: tuple[Any, ...]) -> Decoder:
    """``decoder`` followed by the checks its marks ask for, in order."""
    checks = tuple(c for c in map(_check, marks) if c is not None)
    if not checks:
        return decoder

    def decode_checked(raw: Any) -> Any:
        value = decoder(raw)
        for c in checks:
            c(value)
        return value
    return decode_checked


def _check(mark: Any) -> Callable[[Any], None] | None:
    """The check of a value that ``mark`` asks for (``None``: none)."""
    if isinstance(mark, Bounds):
        return _bounds_check(mark)
    if isinstance(mark, Pattern):
        search, regex = re.compile(mark.regex).search, mark.regex

        def check_pattern(value: Any) -> None:
            if not search(value):
                raise _Fault(f"{value!r} does not match {regex}")
        return check_pattern
    if isinstance(mark, MinLength):
        length = mark.length

        def check_min_length(value: Any) -> None:
            if len(value) < length:
                raise _Fault(f"shorter than {length}")
        return check_min_length
    if isinstance(mark, MaxItems):
        count = mark.count

        def check_max_items(value: Any) -> None:
            if len(value) > count:
                raise _Fault(f"more than {count} items")
        return check_max_items
    if isinstance(mark, Unique):
        def check_unique(value: Any) -> None:
            if len(set(value)) != len(value):
                raise _Fault("has repeated items")
        return check_unique
    if isinstance(mark, OneOf):
        values = mark.values
        expected = f"expected one of {', '.join(map(repr, values))}, got "

        def check_one_of(value: Any) -> None:
            if value not in values:
                raise _Fault(expected + _shown(value))
        return check_one_of
    return None


def _bounds_check(bounds: Bounds) -> Callable[[Any], None]:
    low, high = bounds.minimum, bounds.maximum

    def check_bounds(value: Any) -> None:
        if value is None:
            return
        if low is not None and value < low:
            raise _Fault(f"{value!r} is below {low}")
        if high is not None and value > high:
            raise _Fault(f"{value!r} is above {high}")
    return check_bounds


def _shown(value: Any) -> str:
    kind = {list: "an array", dict: "an object", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")
    text = repr(value)
    return f"{kind} {text if len(text) <= 40 else text[:39] + '…'}"
