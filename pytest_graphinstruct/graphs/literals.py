"""A lexer and a bounded, non-recursive reader for the python-like literals of graph answers.

The reader understands what models write inside graph blocks, JSON and python snippets:
strings (``'..'``, ``".."``, triple-quoted, and typographic ``‘..’``/``’..’``/``“..”`` used as
delimiters; adjacent strings concatenate), ints, floats, ``true/True/false/False/null/None``,
lists, tuples, sets, dicts, bare identifiers, and the conversions ``set()``, ``list([...])``,
``tuple(...)``, ``frozenset(...)``, ``dict(...)``, ``float('inf')``.

Outside string literals, whitespace, NUL, zero-width and bidi control characters, ``#`` and
``//`` comments are skipped.  Inside strings everything is kept; backslash escapes follow Python
(unknown escapes keep their backslash).  A single-quoted string cannot span lines, so a stray
apostrophe can never swallow the rest of an answer.

Abbreviations (``...``, ``…``, ``etc.``, ``range(...)``) are read as :class:`Abbreviation`
markers and also recorded on the lexer, so a caller can first learn whether a block is complete
and then fail it with a precise reason; comprehensions and ``0-9``-style ranges raise
:class:`~.parse_errors.AbbreviationError` at once.  Nesting depth and the length of every container
are bounded while reading, so hostile input is rejected early and in linear time.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from pytest_graphinstruct.graphs.parse_errors import (
    AbbreviationError,
    LimitExceeded,
    ParseError,
    TruncatedError,
)

#: Invisible formatting characters (soft hyphen, zero-width, bidi controls, BOM): skipped like
#: whitespace outside string literals.
INVISIBLE: Final = "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"

# Token kinds are the group numbers of _TOKEN_RE.
STR: Final = 1
NUM: Final = 2
NAME: Final = 3
ELLIPSIS: Final = 4
PUNCT: Final = 5
OTHER: Final = 6
EOF: Final = 7

_STRING = (
    r"'''(?:[^'\\]|\\.|'(?!''))*+'''"
    r'|"""(?:[^"\\]|\\.|"(?!""))*+"""'
    r"|'(?:[^'\\\n]|\\.)*+'"
    r'|"(?:[^"\\\n]|\\.)*+"'
    r"|[‘’](?:[^‘’\\\n]|\\.)*+[‘’]"
    r"|[“”](?:[^“”\\\n]|\\.)*+[“”]"
)
_NUMBER = r"[-+]?\d++(?:\.\d++)?+(?:[eE][-+]?\d++)?+"
_IDENT = r"[^\W\d]\w*+(?:-\w++)*+"
_SKIP = rf"(?:[\s\x00{INVISIBLE}]++|\#[^\n]*+|//[^\n]*+)*+"
_TOKEN_RE: Final = re.compile(
    _SKIP + rf"(?:({_STRING})|({_NUMBER})|({_IDENT})|(\.\.\.|…)|([\[\](){{}},;:=.])|(.)|(\Z))",
    re.DOTALL,
)
SKIP_RE: Final = re.compile(_SKIP)

_ESCAPE_RE = re.compile(
    r"\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[0-7]{1,3}|N\{[^}\n]{1,80}\}|.)",
    re.DOTALL,
)
_SIMPLE_ESCAPES: Final = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "\n": "",
    "‘": "‘",
    "’": "’",
    "“": "“",
    "”": "”",
}
_MAX_NUMBER_LEN: Final = 4000  # int() refuses longer digit strings (CPython's conversion limit)

_TRUE: Final = frozenset({"true", "True", "TRUE"})
_FALSE: Final = frozenset({"false", "False", "FALSE"})
_NULL: Final = frozenset({"null", "None", "NULL"})


class Token(NamedTuple):
    kind: int
    text: str
    start: int
    end: int


_new_tuple = tuple.__new__


@dataclass(frozen=True, slots=True)
class Abbreviation:
    """An ellipsis / ``etc.`` / ``range(...)`` read where items should have been listed."""

    text: str
    pos: int


class Name(str):
    """A bare identifier read where names are variables (python snippets), not strings."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Call:
    """A call the reader cannot evaluate (python snippets only): ``name(*args, **kwargs)``."""

    name: str
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]
    pos: int


def unescape(body: str) -> str:
    """Resolve Python-style backslash escapes in a string literal's body."""
    if "\\" not in body:
        return body
    return _ESCAPE_RE.sub(_unescape_one, body)


def _unescape_one(m: re.Match[str]) -> str:
    esc = m.group(1)
    simple = _SIMPLE_ESCAPES.get(esc)
    if simple is not None:
        return simple
    head = esc[0]
    if head in "xuU" and len(esc) > 1:
        code = int(esc[1:], 16)
        return chr(code) if code <= 0x10FFFF else m.group(0)
    if head in "01234567":
        return chr(int(esc, 8))
    if head == "N" and len(esc) > 1:
        try:
            return unicodedata.lookup(esc[2:-1])
        except KeyError:
            return m.group(0)
    return m.group(0)


def decode_string(raw: str) -> str:
    """The value of one string token (delimiters removed, escapes resolved)."""
    if len(raw) >= 6 and raw[:3] in ("'''", '"""'):
        return unescape(raw[3:-3])
    return unescape(raw[1:-1])


def parse_number(text: str, src: str | None = None, pos: int | None = None) -> int | float:
    """``int`` for digit strings, ``float`` when there is a point or exponent."""
    if len(text) > _MAX_NUMBER_LEN:
        raise ParseError("number literal is too long", src, pos)
    if "." in text or "e" in text or "E" in text:
        return float(text)
    return int(text)


class Lexer:
    """Tokens of ``text`` from ``pos`` on, one at a time, with one token of lookahead.

    ``abbreviations`` collects every :class:`Abbreviation` the reader met;
    ``last_end`` is the end offset of the last token returned by :meth:`next`.
    """

    __slots__ = ("_peeked", "abbreviations", "last_end", "pos", "text")

    def __init__(self, text: str, pos: int = 0) -> None:
        self.text = text
        self.pos = pos
        self.last_end = pos
        self._peeked: Token | None = None
        self.abbreviations: list[Abbreviation] = []

    def _scan(self) -> Token:
        m = _TOKEN_RE.match(self.text, self.pos)
        assert m is not None  # the pattern always matches (its last branch is \Z)
        kind = m.lastindex or EOF
        self.pos = end = m.end()
        # tuple.__new__ directly: NamedTuple's __new__ is a Python-level function (slow here)
        return _new_tuple(Token, (kind, m.group(kind), m.start(kind), end))

    def next(self) -> Token:
        tok = self._peeked
        if tok is None:
            tok = self._scan()
        else:
            self._peeked = None
        self.last_end = tok.end
        return tok

    def peek(self) -> Token:
        if self._peeked is None:
            self._peeked = self._scan()
        return self._peeked

    def at_token_boundary(self) -> bool:
        """True when no token is buffered, i.e. ``pos`` is where the next token's scan starts."""
        return self._peeked is None

    def seek(self, pos: int) -> None:
        """Continue lexing at ``pos`` (drops the lookahead)."""
        self._peeked = None
        self.pos = pos
        self.last_end = pos

    def value_start(self) -> int:
        """Offset of the next token's first character (skipping whitespace and comments)."""
        if self._peeked is not None:
            return self._peeked.start
        m = SKIP_RE.match(self.text, self.pos)
        return m.end() if m else self.pos

    def error(self, message: str, tok: Token) -> ParseError:
        """A :class:`ParseError` (or :class:`TruncatedError` at the end of text) at ``tok``."""
        if tok.kind == EOF:
            return TruncatedError(f"text ends {message}", self.text, tok.start)
        if tok.kind == OTHER and tok.text in "'\"‘’“”":
            return ParseError("unterminated string literal", self.text, tok.start)
        return ParseError(f"unexpected {describe(tok)} {message}", self.text, tok.start)


def describe(tok: Token) -> str:
    """A short human description of a token for error messages."""
    if tok.kind == EOF:
        return "end of text"
    text = tok.text if len(tok.text) <= 30 else tok.text[:27] + "..."
    return repr(text)


@dataclass(frozen=True)
class ReadOptions:
    """How :func:`read_value` reads.

    ``max_items``/``items_limit`` bound the length of each container (the limit name is used in
    the error); ``key_limits`` overrides that bound for containers that are the value of a dict
    key (lower-cased), e.g. ``{"nodes": (20000, "max_nodes")}``.  ``bare_names`` makes bare
    identifiers strings (graph blocks, JSON) instead of :class:`Name` references (python), and
    allows unknown calls as :class:`Call` only when it is false.  ``on_dict`` is called with
    every dict completed while reading and its ``(start, end)`` offsets.
    """

    max_depth: int = 64
    max_items: int = 200_000
    items_limit: str = "max_edges"
    key_limits: Mapping[str, tuple[int, str]] = field(default_factory=dict)
    bare_names: bool = True
    on_dict: Callable[[dict[Any, Any], int, int], None] | None = None


_NO_KEY: Final = object()  # no dict key is waiting for its value


class _Frame:
    """An open container while reading: ``[``, ``(``, ``{`` or a call."""

    __slots__ = (
        "had_comma",
        "is_dict",
        "items",
        "key",
        "kind",
        "kwargs",
        "limit",
        "name",
        "pending_kw",
        "start",
        "want_value",
    )

    def __init__(self, kind: str, start: int, limit: tuple[int, str], name: str = "") -> None:
        self.kind = kind
        self.start = start
        self.limit = limit
        self.name = name
        self.items: list[Any] = []
        self.had_comma = False
        self.is_dict: bool | None = None  # for "{": unknown until the first item
        self.key: Any = _NO_KEY
        self.want_value = False  # dict: a key was read, its value comes next
        self.kwargs: dict[str, Any] = {}
        self.pending_kw: str | None = None

    def closer(self) -> str:
        return {"[": "]", "(": ")", "{": "}", "call": ")"}[self.kind]


def read_value(lx: Lexer, opts: ReadOptions, limit: tuple[int, str] | None = None) -> Any:
    """Read exactly one literal value from ``lx`` and return it.

    ``limit`` (count, limit name) bounds the outermost container (default ``opts.max_items``).
    Raises :class:`~.parse_errors.ParseError` on bad syntax, :class:`~.parse_errors.TruncatedError`
    when the text ends inside the value, :class:`~.parse_errors.LimitExceeded` past a limit,
    :class:`~.parse_errors.AbbreviationError` for comprehensions and ``a-b`` ranges.
    """
    text = lx.text
    default_limit = (opts.max_items, opts.items_limit)
    stack: list[_Frame] = []
    while True:
        # ---- read one value, or open a container and loop ----
        tok = lx.next()
        kind = tok.kind
        value: Any
        if kind == PUNCT:
            c = tok.text
            if c in "([{":
                if len(stack) >= opts.max_depth:
                    raise LimitExceeded("bracket nesting", "max_depth", opts.max_depth)
                if not stack:
                    lim = limit or default_limit
                else:
                    parent = stack[-1]
                    lim = default_limit
                    if parent.is_dict and parent.want_value and isinstance(parent.key, str):
                        lim = opts.key_limits.get(parent.key.lower(), default_limit)
                stack.append(_Frame(c, tok.start, lim))
                continue
            frame = stack[-1] if stack else None
            if (
                frame is not None
                and c == frame.closer()
                and not frame.want_value
                and frame.pending_kw is None
                and (not frame.items or frame.had_comma)
            ):
                stack.pop()
                value = _finish_at(frame, tok, lx, opts)
            else:
                raise lx.error("where a value was expected", tok)
        elif kind == STR:
            value = decode_string(tok.text)
            while lx.peek().kind == STR:
                value += decode_string(lx.next().text)
        elif kind == NUM:
            value = parse_number(tok.text, text, tok.start)
        elif kind == NAME:
            name = tok.text
            nxt = lx.peek()
            if nxt.kind == PUNCT and nxt.text == "(":
                lx.next()
                if len(stack) >= opts.max_depth:
                    raise LimitExceeded("bracket nesting", "max_depth", opts.max_depth)
                stack.append(_Frame("call", tok.start, default_limit, name))
                continue
            if (
                nxt.kind == PUNCT
                and nxt.text == "="
                and stack
                and stack[-1].kind == "call"
                and stack[-1].pending_kw is None
            ):
                lx.next()
                stack[-1].pending_kw = name
                continue
            value = _name_value(name, tok, lx, opts)
        elif kind == ELLIPSIS:
            value = Abbreviation(tok.text, tok.start)
            lx.abbreviations.append(value)
        else:
            raise lx.error("where a value was expected", tok)

        # ---- attach the value; close every container the next tokens close ----
        while True:
            if not stack:
                return value
            frame = stack[-1]
            _add(frame, value, lx, tok)
            tok = lx.next()
            kind = tok.kind
            if kind == PUNCT:
                c = tok.text
                if frame.key is not _NO_KEY:  # a dict key waits for its ':'
                    if c != ":":
                        raise lx.error("after a dict key (expected ':')", tok)
                    frame.is_dict = True
                    frame.want_value = True
                    break
                if c == ",":
                    frame.had_comma = True
                    break
                if c == frame.closer():
                    stack.pop()
                    value = _finish_at(frame, tok, lx, opts)
                    continue
            elif kind == NAME and tok.text == "for":
                raise AbbreviationError(
                    "a comprehension generates items instead of listing them", text, tok.start
                )
            elif kind == NUM and tok.text[0] == "-" and isinstance(value, int | float):
                raise AbbreviationError(
                    "a range like 'a-b' stands in for listed items", text, tok.start
                )
            raise lx.error(f"after an item of {_frame_name(frame)}", tok)


def _frame_name(frame: _Frame) -> str:
    if frame.kind == "call":
        return f"call {frame.name}(...)"
    if frame.kind == "{":
        return "a dict" if frame.is_dict else "a set" if frame.is_dict is False else "a dict/set"
    return "a list" if frame.kind == "[" else "a tuple"


def _add(frame: _Frame, value: Any, lx: Lexer, tok: Token) -> None:
    """Put ``value`` into the open container (a dict key, a dict value, an item, an argument)."""
    if frame.kind == "call":
        if frame.pending_kw is not None:
            frame.kwargs[frame.pending_kw] = value
            frame.pending_kw = None
            return
    elif frame.kind == "{":
        if frame.want_value:
            frame.want_value = False
            frame.items.append((frame.key, value))
            frame.key = _NO_KEY
            _check_len(frame)
            return
        if frame.is_dict:
            frame.key = value  # the ':' must follow
            return
        if frame.is_dict is None:
            # first item: a dict if ':' follows
            nxt = lx.peek()
            if nxt.kind == PUNCT and nxt.text == ":":
                frame.key = value
                return
            frame.is_dict = False
    frame.items.append(value)
    _check_len(frame)


def _check_len(frame: _Frame) -> None:
    count, name = frame.limit
    if len(frame.items) > count:
        raise LimitExceeded("a list", name, count)


def _name_value(name: str, tok: Token, lx: Lexer, opts: ReadOptions) -> Any:
    if name in _TRUE:
        return True
    if name in _FALSE:
        return False
    if name in _NULL:
        return None
    if name.lower() == "etc":
        nxt = lx.peek()
        if nxt.kind == PUNCT and nxt.text == ".":
            lx.next()
        ab = Abbreviation("etc.", tok.start)
        lx.abbreviations.append(ab)
        return ab
    return name if opts.bare_names else Name(name)


def _hashable_set(items: list[Any], lx: Lexer, pos: int, kind: type = set) -> Any:
    try:
        return kind(items)
    except TypeError:
        raise ParseError("a set element is not hashable", lx.text, pos) from None


def _finish_at(frame: _Frame, tok: Token, lx: Lexer, opts: ReadOptions) -> Any:
    """:func:`_finish`; its errors resume scanning at the closing token, not inside the value."""
    try:
        return _finish(frame, tok, lx, opts)
    except ParseError as exc:
        exc.pos = tok.start
        raise


def _finish(frame: _Frame, tok: Token, lx: Lexer, opts: ReadOptions) -> Any:
    """The value of a container that just closed."""
    kind = frame.kind
    if kind == "[":
        return frame.items
    if kind == "(":
        if len(frame.items) == 1 and not frame.had_comma:
            return frame.items[0]  # parentheses around one value
        return tuple(frame.items)
    if kind == "{":
        if frame.is_dict:
            out: dict[Any, Any] = {}
            try:
                for k, v in frame.items:
                    out[k] = v
            except TypeError:
                raise ParseError("a dict key is not hashable", lx.text, frame.start) from None
            if opts.on_dict is not None:
                opts.on_dict(out, frame.start, tok.end)
            return out
        if not frame.items:
            return {}
        return _hashable_set(frame.items, lx, frame.start)
    return _finish_call(frame, lx, opts)


_CONTAINERS: Final = {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}


def _finish_call(frame: _Frame, lx: Lexer, opts: ReadOptions) -> Any:
    name, args, kwargs = frame.name, frame.items, frame.kwargs
    if name in ("range", "arange", "xrange"):
        ab = Abbreviation(f"{name}(...)", frame.start)
        lx.abbreviations.append(ab)
        return ab
    if any(isinstance(a, Abbreviation) for a in args):
        return next(a for a in args if isinstance(a, Abbreviation))
    conv = _CONTAINERS.get(name)
    if conv is not None and not kwargs and len(args) <= 1:
        if not args:
            return conv()
        arg = args[0]
        if isinstance(arg, list | tuple | set | frozenset | dict):
            if conv in (set, frozenset):
                return _hashable_set(list(arg), lx, frame.start, conv)
            return conv(arg)
    elif name == "dict" and len(args) <= 1:
        try:
            out = dict(args[0]) if args else {}
        except (TypeError, ValueError):
            raise ParseError("dict(...) of a non-mapping", lx.text, frame.start) from None
        out.update(kwargs)
        return out
    elif name == "float" and len(args) == 1 and not kwargs:
        arg = args[0]
        if isinstance(arg, str | int | float) and not isinstance(arg, bool):
            try:
                return float(arg)
            except (ValueError, OverflowError):
                pass
    if not opts.bare_names:
        return Call(name, tuple(args), dict(kwargs), frame.start)
    raise ParseError(f"function call {name}(...) is not a literal", lx.text, frame.start)
