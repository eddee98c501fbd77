"""The canonical code-style text of a graph; ``parse_graph(serialize(g))`` reproduces ``g``.

Canonical form::

    Graph[name='g1', directed=false, nodes=3, domain='social'] {
        node_list = ['0', '1', '2'];
        edge_list = [('0','1'), ('1','2', 2.5)];

        0.label = 'Alice';
        'a.b'.label = 'x';
        edge('0','1').type = 'cites';

        domain = 'social';
    }

- header: ``name`` (omitted when there is none), ``directed`` (always written, ``true``/``false``),
  ``nodes`` (the real node count), then the other scalar header entries of a
  :class:`ParsedGraph` in their order;
- nodes sorted by ``str``; every id in ``node_list`` is quoted; edges sorted (an undirected
  edge is written smaller id first); an edge whose only attribute is a non-dict ``weight`` is
  written as a 3-tuple;
- node attributes (sorted by node, then attribute), edge attributes, graph attributes (sorted by
  key), each ``... = <literal>;``.  Ids are bare in attribute statements only when they are
  canonical integers or plain ASCII identifiers; attribute names and graph keys are quoted when
  they are not plain identifiers or could be mistaken for statements (``node_list``,
  ``directed``, ...);
- strings use single quotes; ``\\``, ``'``, line breaks and every non-printable or invisible
  character are escaped (``\\n``, ``\\x00``, ``\\u200b``), so any text round-trips;
- values: ``None``, ``true``/``false``, ints, floats (``repr``; non-finite as ``float('inf')``),
  strings, lists, tuples, sets (sorted by their text; empty ``set()``), frozensets, dicts.
  Other objects are written as the string of their ``str()`` (the one lossy case, with non-str
  node ids and attribute names, which become their ``str()``);
- lists longer than the line width are wrapped, 8-space continuation indent.

Multigraphs are written as simple graphs (parallel edges collapse).
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable
from typing import Any, Final

import networkx as nx

from pytest_graphinstruct.graphs.model import ParsedGraph

_WIDTH: Final = 72
_PLAIN_STR_RE: Final = re.compile(r"[^'\\]*+")
_IDENT_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+")
_INT_RE: Final = re.compile(r"-?(?:0|[1-9][0-9]{0,3000})")
_RESERVED: Final = frozenset(
    {
        "edge",
        "node_list",
        "edge_list",
        "nodes",
        "edges",
        "directed",
        "add_edges",
        "remove_edges",
        "add_nodes",
        "remove_nodes",
        "reasoning",
        "true",
        "True",
        "TRUE",
        "false",
        "False",
        "FALSE",
        "null",
        "None",
        "NULL",
        "etc",
        "for",
    }
)
_SIMPLE_ESCAPES: Final = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def quote(s: str) -> str:
    """``s`` as a single-quoted literal that the parser reads back as exactly ``s``."""
    if s.isprintable() and _PLAIN_STR_RE.fullmatch(s):
        return f"'{s}'"
    out = []
    for ch in s:
        esc = _SIMPLE_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            if code < 0x100:
                out.append(f"\\x{code:02x}")
            elif code < 0x10000:
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
    return "'" + "".join(out) + "'"


def literal(value: Any) -> str:
    """The literal text of an attribute value (see module doc)."""
    if value is None:
        return "None"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if math.isfinite(value):
            return repr(float(value))
        return f"float('{value!r}')"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, tuple):
        if len(value) == 1:
            return f"({literal(value[0])},)"
        return "(" + ", ".join(literal(v) for v in value) + ")"
    if isinstance(value, frozenset):
        if not value:
            return "frozenset()"
        return "frozenset(" + _set_body(value) + ")"
    if isinstance(value, set):
        return _set_body(value) if value else "set()"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return literal(float(value))
    return quote(str(value))


def _set_body(value: set[Any] | frozenset[Any]) -> str:
    return "{" + ", ".join(sorted(literal(v) for v in value)) + "}"


def _id_ref(n: str) -> str:
    """A node id as written before ``.attr`` or inside ``edge(...)``: bare when safe."""
    if _INT_RE.fullmatch(n) and n != "-0":
        return n
    if _IDENT_RE.fullmatch(n) and n not in _RESERVED:
        return n
    return quote(n)


def _key(k: str) -> str:
    """An attribute name or graph key: bare when it is a plain identifier, else quoted."""
    if _IDENT_RE.fullmatch(k) and k not in _RESERVED:
        return k
    return quote(k)


def _wrapped(prefix: str, items: Iterable[str], suffix: str) -> list[str]:
    """``prefix [a, b, ...]suffix`` on one line, or wrapped with an 8-space indent."""
    items = list(items)
    one = f"{prefix}[{', '.join(items)}]{suffix}"
    if len(one) <= _WIDTH:
        return [one]
    lines = [f"{prefix}["]
    current = ""
    indent = " " * 8
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else f"]{suffix}")
        if current and len(indent) + len(current) + 1 + len(piece) > _WIDTH:
            lines.append(indent + current)
            current = piece
        else:
            current = f"{current} {piece}" if current else piece
    lines.append(indent + current)
    return lines


def _sorted_edges(g: nx.Graph, ids: dict[Any, str]) -> list[tuple[str, str, dict[Any, Any]]]:
    """Edges as ``str`` pairs, sorted; undirected edges written smaller id first."""
    out = []
    directed = g.is_directed()
    for u, v, data in g.edges(data=True):
        su, sv = ids[u], ids[v]
        if not directed and sv < su:
            su, sv = sv, su
        out.append((su, sv, data))
    out.sort(key=lambda e: (e[0], e[1]))
    return out


def serialize(pg: ParsedGraph | nx.Graph, *, name: str | None = None) -> str:
    """Canonical code-style text of ``pg`` (a :class:`ParsedGraph` or a networkx graph).

    ``name`` overrides the header name (a :class:`ParsedGraph`'s ``name`` otherwise; a bare
    networkx graph has none).  Deterministic: equal graphs give equal text.
    """
    header_extra: dict[str, Any] = {}
    if isinstance(pg, ParsedGraph):
        g = pg.graph
        if name is None:
            name = pg.name
        header_extra = {
            str(k): v
            for k, v in pg.header.items()
            if str(k) not in ("name", "directed", "nodes")
            and isinstance(v, str | int | float | bool | None)
        }
    else:
        g = pg
    directed = g.is_directed()
    ids = {n: str(n) for n in g}
    order = sorted(ids.values())

    head = []
    if name is not None:
        head.append(f"name={quote(str(name))}")
    head.append(f"directed={'true' if directed else 'false'}")
    head.append(f"nodes={len(set(order))}")
    head.extend(f"{_key(k)}={literal(v)}" for k, v in header_extra.items())
    lines = [f"Graph[{', '.join(head)}] {{"]

    lines += _wrapped("    node_list = ", (quote(n) for n in order), ";")
    edge_items = []
    edge_attr_lines = []
    for su, sv, data in _sorted_edges(g, ids):
        weight = data.get("weight")
        if len(data) == 1 and "weight" in data and not isinstance(weight, dict):
            edge_items.append(f"({quote(su)},{quote(sv)}, {literal(weight)})")
            continue
        edge_items.append(f"({quote(su)},{quote(sv)})")
        ref = f"edge({_id_ref(su)},{_id_ref(sv)})"
        for k in sorted(data, key=str):
            edge_attr_lines.append(f"    {ref}.{_key(str(k))} = {literal(data[k])};")
    lines += _wrapped("    edge_list = ", edge_items, ";")

    node_attr_lines = []
    for n, data in sorted(((ids[n], d) for n, d in g.nodes(data=True)), key=lambda x: x[0]):
        ref = _id_ref(n)
        for k in sorted(data, key=str):
            node_attr_lines.append(f"    {ref}.{_key(str(k))} = {literal(data[k])};")
    if node_attr_lines or edge_attr_lines:
        lines.append("")
        lines += node_attr_lines
        lines += edge_attr_lines
    graph_lines = [f"    {_key(str(k))} = {literal(g.graph[k])};" for k in sorted(g.graph, key=str)]
    if graph_lines:
        lines.append("")
        lines += graph_lines
    lines.append("}")
    return "\n".join(lines)
