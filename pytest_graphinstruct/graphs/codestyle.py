"""The code-style graph syntax: ``Graph[...] {...}`` and ``GraphEdit[...] {...}`` blocks.

Grammar (statements end with ``;``; a missing ``;`` is tolerated at a line end)::

    block   := ("Graph" | "DiGraph" | "GraphEdit") "[" [key "=" value ("," key "=" value)*] "]"
               "{" stmt* "}"
    stmt    := "node_list" "=" list          # ids, (id, {attrs}) pairs
             | "edge_list" "=" list          # (u, v) or (u, v, weight) or (u, v, {attrs})
             | id "." attr "=" value         # node attribute; id bare (0, a) or quoted ('a.b')
             | "edge" "(" id "," id ")" "." attr "=" value
             | key "=" value                 # graph attribute; a quoted key is always one
    GraphEdit statements: add_edges, remove_edges, add_nodes, remove_nodes, reasoning; others
    are kept in ``GraphEdit.properties``.

``nodes``/``edges`` are accepted as aliases of ``node_list``/``edge_list`` when their value is a
list.  Values are read by :mod:`.literals`.

Directedness (one deliberate decision, documented in docs/PARSING.md):

1. the header's ``directed=`` decides when present; it must be ``true``/``false``/``1``/``0``
   (any case, quoted or not), anything else is an error;
2. otherwise a body statement ``directed = true|false`` decides;
3. otherwise the ``DiGraph[`` prefix means directed (the model named a directed graph);
4. otherwise the graph is undirected.

The block ends at the ``}`` that closes its ``{``, found by the parser itself, so braces in
strings, comments or trailing prose never move it.  Text ending inside the block raises
:class:`~.parse_errors.TruncatedError`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from pytest_graphinstruct.graphs.build import GraphBuilder, edge_parts, node_id, ordered_items
from pytest_graphinstruct.graphs.literals import (
    EOF,
    NAME,
    NUM,
    PUNCT,
    STR,
    Lexer,
    ReadOptions,
    Token,
    decode_string,
    parse_number,
    read_value,
)
from pytest_graphinstruct.graphs.model import Edge, GraphEdit, Limits, ParsedGraph
from pytest_graphinstruct.graphs.parse_errors import (
    AbbreviationError,
    ParseError,
    TruncatedError,
)

#: A code-style header keyword and its "[" (matched at a known start).
HEADER_RE: Final = re.compile(r"(DiGraph|GraphEdit|Graph)\s*+\[")
_HEADER_SEARCH_RE: Final = re.compile(r"Graph(Edit)?\s*+\[")  # literal prefix: fast search
_WORD_RE: Final = re.compile(r"\w")

_TRUTH: Final = {"true": True, "false": False, "1": True, "0": False}

# Fast paths for the common lists of plain ids: quoted strings without escapes, or integers.
_ID = r"(?:'[^'\\\n]*+'|\"[^\"\\\n]*+\"|-?\d{1,4000}+)"
_PAIR = rf"\(\s*+{_ID}\s*+,\s*+{_ID}\s*+\)"
_FAST_IDS: Final = re.compile(rf"\[\s*+(?:{_ID}(?:\s*+,\s*+{_ID})*+\s*+,?\s*+)?\]")
_FAST_PAIRS: Final = re.compile(rf"\[\s*+(?:{_PAIR}(?:\s*+,\s*+{_PAIR})*+\s*+,?\s*+)?\]")
_ID_GROUPS = r"(?:'([^'\\\n]*)'|\"([^\"\\\n]*)\"|(-?\d+))"
_FIND_IDS: Final = re.compile(_ID_GROUPS)
_FIND_PAIRS: Final = re.compile(rf"\(\s*{_ID_GROUPS}\s*,\s*{_ID_GROUPS}\s*\)")

# Fast paths for the common one-line statements "0.label = 'Alice';" and "k = 2;".
_FAST_VALUE = r"(?:'([^'\\\n]*+)'|\"([^\"\\\n]*+)\"|(-?\d{1,4000}+)(?![\w.]))\s*+;"
_FAST_ATTR: Final = re.compile(
    r"\s*+(?:(\d{1,4000}+)|'([^'\\\n]*+)'|([A-Za-z_]\w*+))\.([A-Za-z_]\w*+)\s*+=\s*+" + _FAST_VALUE
)
_FAST_PROP: Final = re.compile(r"\s*+([A-Za-z_]\w*+)\s*+=\s*+" + _FAST_VALUE)

# Fast path for the common header "name='g', directed=true, nodes=3]" (ASCII quotes, ints,
# bare words); anything else goes through the lexer.
_FAST_HEADER_ITEM: Final = re.compile(
    r"\s*+([A-Za-z_]\w*+)\s*+=\s*+(?:'([^'\\\n]*+)'|\"([^\"\\\n]*+)\"|(-?\d{1,4000}+)(?![\w.(])"
    r"|([A-Za-z_]\w*+)(?![\w.(]))\s*+(,?)"
)
_FAST_HEADER_END: Final = re.compile(r"\s*+\]")
_BARE_WORDS: Final[dict[str, bool | None]] = {
    "true": True, "True": True, "TRUE": True, "false": False, "False": False}
_BARE_WORDS.update({"FALSE": False, "null": None, "None": None, "NULL": None})

_NODE_KEYS: Final = frozenset({"node_list", "nodes"})
_EDGE_KEYS: Final = frozenset({"edge_list", "edges"})
_EDIT_LISTS: Final = frozenset({"add_edges", "remove_edges", "add_nodes", "remove_nodes"})
_NO_FAST_PROP: Final = _NODE_KEYS | _EDGE_KEYS | _EDIT_LISTS


def iter_headers(text: str, pos: int = 0) -> Iterator[int]:
    """Start offsets of ``Graph[``, ``DiGraph[`` and ``GraphEdit[`` headers (at word starts)."""
    while True:
        m = _HEADER_SEARCH_RE.search(text, pos)
        if m is None:
            return
        i = m.start()
        start = i - 2 if i >= 2 and not m.group(1) and text.startswith("Di", i - 2) else i
        pos = m.end()
        if start > 0 and _WORD_RE.match(text, start - 1):
            continue
        yield start


def _int_id(t: str) -> str:
    # canonical decimal text: '007' -> '7', '-0' -> '0' (same as str(int(t)))
    if len(t) > 1 and t[0] in "0-":
        return str(int(t))
    return t


def _fast_ids(text: str, start: int, end: int) -> list[str]:
    return [a or b or (_int_id(c) if c else "") for a, b, c in _FIND_IDS.findall(text, start, end)]


def _fast_pairs(text: str, start: int, end: int) -> list[tuple[str, str]]:
    return [
        (a or b or (_int_id(c) if c else ""), d or e or (_int_id(f) if f else ""))
        for a, b, c, d, e, f in _FIND_PAIRS.findall(text, start, end)
    ]


@dataclass(frozen=True)
class Block:
    """One parsed block: ``graph`` for ``Graph[...]``, ``edit`` for ``GraphEdit[...]``."""

    start: int
    end: int
    graph: ParsedGraph | None = None
    edit: GraphEdit | None = None


def parse_block(text: str, start: int, limits: Limits) -> Block | None:
    """Parse the block whose header keyword starts at ``start``.

    Returns ``None`` when no block starts there (the header does not parse or no ``{`` follows
    it: e.g. ``Graph[...]`` mentioned in prose).  Raises :class:`~.parse_errors.TruncatedError` when
    the text ends inside the block, :class:`~.parse_errors.ParseError` (or a subclass:
    abbreviation, limit) when the block is complete but not a valid graph.
    """
    m = HEADER_RE.match(text, start)
    if m is None:
        return None
    keyword = m.group(1)
    lx = Lexer(text, m.end())
    opts = _read_options(limits)
    header = _fast_header(text, m.end(), lx)
    if header is None:
        header = _read_header(lx, opts)
        if header is None:
            return None
    brace = lx.next()
    if brace.kind != PUNCT or brace.text != "{":
        if brace.kind == EOF:
            raise TruncatedError(f"text ends after the {keyword}[...] header", text, brace.start)
        return None
    body = _Body(lx, opts, limits, is_edit=keyword == "GraphEdit")
    body.read()
    end = lx.last_end
    if lx.abbreviations:
        ab = lx.abbreviations[0]
        exc: ParseError = AbbreviationError(
            f"abbreviation {ab.text!r} used instead of listing every item", text, ab.pos
        )
        exc.pos = end
        raise exc
    try:
        if keyword == "GraphEdit":
            return Block(start, end, edit=body.edit(header))
        return Block(start, end, graph=body.graph(header, digraph_prefix=keyword == "DiGraph"))
    except ParseError as exc:
        exc.pos = end  # the block is complete: resume scanning after it
        raise


@functools.lru_cache(maxsize=16)
def _read_options(limits: Limits) -> ReadOptions:
    return ReadOptions(
        max_depth=limits.max_depth, max_items=max(limits.max_nodes, limits.max_edges)
    )


def _fast_header(text: str, pos: int, lx: Lexer) -> dict[str, Any] | None:
    """The header by regex when it is simple (then ``lx`` is moved past ``]``), else ``None``."""
    header: dict[str, Any] = {}
    comma = ","
    while comma:
        m = _FAST_HEADER_ITEM.match(text, pos)
        if m is None:
            break
        key, s1, s2, num, word, comma = m.groups()
        if word is not None:
            if word.lower() == "etc":
                return None
            header[key] = _BARE_WORDS.get(word, word)
        else:
            header[key] = s1 if s1 is not None else s2 if s2 is not None else int(num)
        pos = m.end()
    end = _FAST_HEADER_END.match(text, pos)
    if end is None:
        return None
    lx.seek(end.end())
    return header


def _read_header(lx: Lexer, opts: ReadOptions) -> dict[str, Any] | None:
    """``key=value`` pairs up to ``]``; ``None`` when this is not a header.

    Raises :class:`TruncatedError` if the text ends inside the header.
    """
    header: dict[str, Any] = {}
    while True:
        tok = lx.next()
        if tok.kind == PUNCT and tok.text == "]":
            return header
        if tok.kind == PUNCT and tok.text == ",":
            continue
        if tok.kind == EOF:
            raise TruncatedError("text ends inside a graph header", lx.text, tok.start)
        if tok.kind not in (NAME, STR):
            return None
        key = tok.text if tok.kind == NAME else decode_string(tok.text)
        eq = lx.next()
        if eq.kind == EOF:
            raise TruncatedError("text ends inside a graph header", lx.text, eq.start)
        if eq.kind != PUNCT or eq.text not in "=:":
            return None
        try:
            header[key] = read_value(lx, opts)
        except TruncatedError:
            raise
        except ParseError:
            return None


def parse_directed(value: Any) -> bool:
    """``True``/``False`` for ``true/false/1/0`` (bool, int or any-case string); else raises."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        found = _TRUTH.get(value.strip().lower())
        if found is not None:
            return found
    raise ParseError(f"directed must be true or false, got {value!r}")


class _Body:
    """Reads the statements of a block body up to its closing ``}``."""

    def __init__(self, lx: Lexer, opts: ReadOptions, limits: Limits, *, is_edit: bool) -> None:
        self.lx = lx
        self.opts = opts
        self.limits = limits
        self.is_edit = is_edit
        self.builder = GraphBuilder(limits)
        self.props: dict[str, Any] = {}
        self.edit_lists: dict[str, list[Any]] = {}

    # ---- statements ----
    def read(self) -> None:
        lx = self.lx
        text = lx.text
        while True:
            if lx.at_token_boundary() and self._fast_statement(text, lx.pos):
                continue
            tok = lx.next()
            kind = tok.kind
            if kind == PUNCT:
                if tok.text == "}":
                    return
                if tok.text == ";":
                    continue
            elif kind == NAME:
                nxt = lx.peek()
                if nxt.kind == PUNCT:
                    if nxt.text == "=":
                        lx.next()
                        self._keyword_statement(tok.text)
                        self._end_statement()
                        continue
                    if nxt.text == "." or (nxt.text == "(" and tok.text == "edge"):
                        self._attr_statement(tok)
                        self._end_statement()
                        continue
                raise _statement_error(lx, tok, nxt, "'=' or '.'")
            elif kind in (STR, NUM):
                nxt = lx.peek()
                if nxt.kind == PUNCT and nxt.text == "=" and kind == STR:
                    lx.next()  # a quoted key is always a graph attribute
                    key = decode_string(tok.text)
                    self._set_prop(key, read_value(lx, self.opts))
                    self._end_statement()
                    continue
                if nxt.kind == PUNCT and nxt.text == ".":
                    self._attr_statement(tok)
                    self._end_statement()
                    continue
                raise _statement_error(lx, tok, nxt, "'.' or '='")
            raise lx.error("where a statement was expected", tok)

    def _fast_statement(self, text: str, pos: int) -> bool:
        """Handle a simple one-line attribute statement by regex; ``False`` to fall back."""
        m = _FAST_ATTR.match(text, pos)
        if m is not None:
            digits, quoted, ident, attr, s1, s2, num = m.groups()
            if digits is not None:
                n = _int_id(digits)
            elif quoted is not None:
                n = quoted
            else:
                n = "" if ident in ("None", "null") else ident
            value: Any = s1 if s1 is not None else s2 if s2 is not None else int(num)
            self.builder.set_node_attr(n, attr, value)
            self.lx.seek(m.end())
            return True
        m = _FAST_PROP.match(text, pos)
        if m is not None and m.group(1) not in _NO_FAST_PROP:
            key, s1, s2, num = m.groups()
            self.props[key] = s1 if s1 is not None else s2 if s2 is not None else int(num)
            self.lx.seek(m.end())
            return True
        return False

    def _end_statement(self) -> None:
        lx = self.lx
        prev_end = lx.last_end
        nxt = lx.peek()
        if nxt.kind == PUNCT and nxt.text == ";":
            lx.next()
        elif (nxt.kind == PUNCT and nxt.text == "}") or "\n" in lx.text[prev_end : nxt.start]:
            return  # tolerated: no ';' before '}' or at a line end
        else:
            raise lx.error("after a statement (expected ';')", nxt)

    def _keyword_statement(self, key: str) -> None:
        lx, text = self.lx, self.lx.text
        if not self.is_edit and (key in _NODE_KEYS or key in _EDGE_KEYS):
            is_nodes = key in _NODE_KEYS
            pos = lx.value_start()
            fast = (_FAST_IDS if is_nodes else _FAST_PAIRS).match(text, pos)
            if fast is not None:
                end = fast.end()
                lx.seek(end)
                if is_nodes:
                    self.builder.add_node_ids(_fast_ids(text, pos, end))
                else:
                    self.builder.add_edge_pairs(_fast_pairs(text, pos, end))
                return
            limit = (
                (self.limits.max_nodes, "max_nodes")
                if is_nodes
                else (self.limits.max_edges, "max_edges")
            )
            value = read_value(lx, self.opts, limit)
            if isinstance(value, list | tuple | set | frozenset):
                if lx.abbreviations:
                    return  # reported once the block is known to be complete
                if is_nodes:
                    self.builder.add_node_items(value)
                else:
                    self.builder.add_edge_items(value)
                return
            if key in ("node_list", "edge_list"):
                if lx.abbreviations:
                    return
                raise ParseError(f"{key} must be a list", text, pos)
            self._set_prop(key, value)
            return
        if self.is_edit and key in _EDIT_LISTS:
            limit = (
                (self.limits.max_nodes, "max_nodes")
                if key.endswith("nodes")
                else (self.limits.max_edges, "max_edges")
            )
            pos = lx.value_start()
            value = read_value(lx, self.opts, limit)
            if not isinstance(value, list | tuple | set | frozenset):
                if lx.abbreviations:
                    return
                raise ParseError(f"{key} must be a list", text, pos)
            self.edit_lists.setdefault(key, []).extend(ordered_items(value))
            return
        self._set_prop(key, read_value(lx, self.opts))

    def _set_prop(self, key: str, value: Any) -> None:
        self.props[key] = value

    def _attr_statement(self, first: Token) -> None:
        """``id.attr = value`` or ``edge(u, v).attr = value`` (``first`` already consumed)."""
        lx = self.lx
        if first.kind == NAME and first.text == "edge" and lx.peek().text == "(":
            lx.next()
            u = self._id()
            self._expect(",")
            v = self._id()
            self._expect(")")
            self._expect(".")
            attr = self._attr_name()
            self._expect("=")
            value = read_value(lx, self.opts)
            self.builder.set_edge_attr(u, v, attr, value)
            return
        n = self._id_of(first)
        self._expect(".")
        attr = self._attr_name()
        self._expect("=")
        value = read_value(lx, self.opts)
        self.builder.set_node_attr(n, attr, value)

    def _id_of(self, tok: Token) -> str:
        if tok.kind == STR:
            return decode_string(tok.text)
        if tok.kind == NUM:
            return node_id(parse_number(tok.text, self.lx.text, tok.start))
        if tok.kind == NAME:
            return node_id(None) if tok.text in ("None", "null") else tok.text
        raise self.lx.error("where a node id was expected", tok)

    def _id(self) -> str:
        return self._id_of(self.lx.next())

    def _attr_name(self) -> str:
        tok = self.lx.next()
        if tok.kind == NAME:
            return tok.text
        if tok.kind == STR:
            return decode_string(tok.text)
        raise self.lx.error("where an attribute name was expected", tok)

    def _expect(self, punct: str) -> None:
        tok = self.lx.next()
        if tok.kind != PUNCT or tok.text != punct:
            raise self.lx.error(f"(expected {punct!r})", tok)

    # ---- results ----
    def graph(self, header: dict[str, Any], *, digraph_prefix: bool) -> ParsedGraph:
        props = self.props
        if "directed" in header:
            directed = parse_directed(header["directed"])
        elif "directed" in props and _is_truth(props["directed"]):
            directed = parse_directed(props["directed"])
        else:
            directed = digraph_prefix
        self.builder.graph_attrs.update(props)
        name = header.get("name")
        declared = header.get("nodes")
        return self.builder.build(
            directed,
            fmt="code",
            name=None if name is None else str(name),
            header=header,
            declared_nodes=declared
            if isinstance(declared, int) and not isinstance(declared, bool)
            else None,
        )

    def edit(self, header: dict[str, Any]) -> GraphEdit:
        lists = self.edit_lists
        props = dict(self.props)
        reasoning = props.pop("reasoning", None)
        if reasoning is not None and not isinstance(reasoning, str):
            props["reasoning"] = reasoning
            reasoning = None
        return GraphEdit(
            add_edges=_edges(lists.get("add_edges", ())),
            remove_edges=_edges(lists.get("remove_edges", ())),
            add_nodes=tuple(node_id(x) for x in lists.get("add_nodes", ())),
            remove_nodes=tuple(node_id(x) for x in lists.get("remove_nodes", ())),
            header=MappingProxyType(dict(header)),
            properties=MappingProxyType(props),
            reasoning=reasoning,
        )


def _statement_error(lx: Lexer, first: Token, nxt: Token, expected: str) -> ParseError:
    """The error for a statement that does not continue as one; scanning resumes at its first
    token, so a ``Graph[`` header written where a statement belongs still starts a block."""
    exc = lx.error(f"after {first.text!r} (expected {expected})", nxt)
    exc.pos = first.start
    return exc


def _is_truth(value: Any) -> bool:
    try:
        parse_directed(value)
    except ParseError:
        return False
    return True


def _edges(items: Any) -> tuple[Edge, ...]:
    out = []
    for item in items:
        u, v, _ = edge_parts(item)
        out.append((u, v))
    return tuple(out)
