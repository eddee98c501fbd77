"""Line-based graphs: edge lists (one edge per line) and adjacency lists.

Only lines outside the other formats' blocks are read.  The text is cut into *sections*: runs
of lines that are each structural (an edge line, an adjacency line, a header such as
``Nodes:``/``Edges:``/``Adjacency list:``/``Directed: true``, an abbreviation line, a blank
line or a code fence).  Any other line is prose and ends a section.  The LAST graph-like
section is this format's candidate.

Edge line styles (a trailing ``,`` ``;`` or ``.`` and a bullet ``-``/``*``/``•`` are ignored)::

    0 1      0, 1      0 - 1 / 0 -- 1 / 0–1      0 -> 1 / 0 → 1 / 0 => 1      (0, 1) / [0, 1]
    (0, 1), (1, 2), (2, 3)                       # a line of tuples: several edges

Adjacency lines: ``0: 1, 2``, ``0: 1 2``, ``0: [1, 2]``, ``Node 0: 1, 2``, ``0:`` (isolated).
Ids are taken as written (quotes removed): ``007`` stays ``007``.

Headers: ``Nodes: a, b, c`` lists nodes (``Nodes: 10`` is the node ``10``; ``Nodes: 10 nodes``,
a number followed by words, is a count kept as ``declared_nodes``); ``Edges:`` may carry edges on
its line (``Edges: (0, 1), (1, 2)`` / ``Edges: 0-1, 1-2``), be empty or ``none``, or give a count
(``Edges: 15``, which makes a nodes-only section a summary, not a graph).

Guards against reading prose as a graph:

- a section uses ONE edge-line style (or is all adjacency lines);
- without an ``Edges:`` header it needs two edge lines, a line of tuples, or a ``Nodes:`` line;
  without an ``Adjacency`` header, two adjacency lines of which one lists two or more neighbours;
- without the matching header, every id of the ``u v``, ``u, v``, ``u - v`` and adjacency styles
  must look like an id: a number, a quoted string, a word that contains a digit, is one letter,
  or is an upper-case abbreviation of at most 3 letters, or an id listed on the ``Nodes:`` line.
  ``Summary:``/``Note: ...`` lines are therefore prose, not adjacency entries.  Arrow and tuple
  styles allow word ids (``Alice -> Bob``).

Directedness: a ``Directed: true/false/yes/no`` line (or ``Edges (directed):``/``Directed
edges:``/``Undirected edges:``) decides; otherwise arrow-style edges are directed and everything
else (adjacency lists included) is undirected.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from pytest_graphinstruct.graphs.build import GraphBuilder
from pytest_graphinstruct.graphs.literals import INVISIBLE, unescape
from pytest_graphinstruct.graphs.model import Limits, ParsedGraph
from pytest_graphinstruct.graphs.parse_errors import AbbreviationError, LimitExceeded, ParseError

_QUOTED = r"'[^'\n]{0,200}+'|\"[^\"\n]{0,200}+\"|‘[^‘’\n]{0,200}+’|“[^“”\n]{0,200}+”"
_ID = rf"(?:{_QUOTED}|-?\d++(?:\.\d++)?+(?!\w)|\w{{1,64}}+)"
_MAX_LINE: Final = 200_000

_CLEAN_RE: Final = re.compile(rf"[\x00{INVISIBLE}]+")
_BULLET_RE: Final = re.compile(r"^(?:[-*•+]\s++)")
# One pattern for the single-edge styles: u, separator, v.  Groups: 1 u, 2 arrow, 3 dash,
# 4 comma, 5 whitespace, 6 v.
_EDGE_LINE_RE: Final = re.compile(
    rf"({_ID})(?:\s*+(-{{1,2}}>|→|=>|⟶)|\s*+(--?|–|—)|\s*+(,)|(\s++))\s*+({_ID})"
)
_PAREN_RE: Final = re.compile(rf"[(\[]\s*+({_ID})\s*+,\s*+({_ID})\s*+[)\]]")
_TUPLE = rf"[(\[]\s*+{_ID}\s*+,\s*+{_ID}\s*+[)\]]"
_TUPLES_RE: Final = re.compile(rf"\[?\s*+{_TUPLE}(?:\s*+,?\s*+{_TUPLE})*+\s*+,?\s*+\]?")
_ADJ_RE: Final = re.compile(rf"((?:node|vertex)\s++)?({_ID})\s*+:\s*+(.*)", re.IGNORECASE)
_ID_RE: Final = re.compile(_ID)
_LIST_SPLIT_RE: Final = re.compile(r"\s*+,\s*+|\s++")
_ABBREV_RE: Final = re.compile(r"(?:\.\.\.|…|etc\.?|and so on\.?|\(\s*+\.\.\.\s*+\))", re.I)
_HEAD = r"(?:#++\s*+)?"
_NODES_HDR_RE: Final = re.compile(
    rf"{_HEAD}(?:nodes|vertices|node[ _]list|vertex[ _]set)(?:\s*+[:=]\s*+(.*)|\s*+)", re.I
)
_EDGES_HDR_RE: Final = re.compile(
    r"(?:#++\s*+)?(?:(un)?(directed)\s++)?(?:edges|edge[ _]list|arcs|links)"
    r"(?:\s*+\(((?:un)?directed)\))?(?:\s*+[:=]\s*+(.*)|\s*+)",
    re.I,
)
_ADJ_HDR_RE: Final = re.compile(
    rf"{_HEAD}(?:adjacency(?:[ _]list)?|adj[ _]list|neighbou?rs)\s*+[:=]?\s*+", re.I
)
_DIRECTED_RE: Final = re.compile(rf"{_HEAD}directed\s*+[:=]\s*+(\w+)\.?", re.I)
_TRUTH: Final = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
# "no items": symbols in any list; the words only after "Edges:" (one word cannot be an edge,
# while "Nodes: none" may name a node called "none")
_EMPTY_LIST: Final = frozenset({"", "[]", "{}", "()", "-", "∅"})
_EMPTY_WORDS: Final = frozenset({"none", "(none)", "nothing", "n/a"})
_RANGE_RE: Final = re.compile(r"\d\s*+(?:\.\.|-|–|\bto\b|\bthrough\b|\bthru\b)\s*+\d")
_COUNT_RE: Final = re.compile(r"(\d++)(?:\s++[^\d\s].*)?")
_TRAIL_RE: Final = re.compile(r"(?<!\.)[,;.]$")
_LOOSE_STYLES: Final = frozenset({"dash", "comma", "space"})


@dataclass
class _Section:
    limits: Limits
    nodes: list[str] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)
    adjacency: list[tuple[str, list[str]]] = field(default_factory=list)
    styles: set[str] = field(default_factory=set)
    edge_lines: int = 0
    multi_neighbour: bool = False
    adj_header: bool = False  # an "Adjacency list:" line
    edges_header: bool = False  # an "Edges:" line (possibly empty)
    edge_count: int | None = None  # "Edges: 15"
    directed: bool | None = None
    declared: int | None = None
    abbreviation: str | None = None
    loose_ids: list[str] = field(default_factory=list)  # edge ids that must look like ids
    loose_adj_ids: list[str] = field(default_factory=list)  # neighbour ids, likewise
    ids: set[str] = field(default_factory=set)  # for the early max_nodes check

    def _count(self, new_ids: Iterable[str]) -> None:
        self.ids.update(new_ids)
        if len(self.ids) > self.limits.max_nodes:
            raise LimitExceeded("the edge list's node count", "max_nodes", self.limits.max_nodes)

    def add_edges(self, edges: Iterable[tuple[str, str]]) -> None:
        for u, v in edges:
            self.edges.append((u, v))
            self._count((u, v))
        if len(self.edges) > self.limits.max_edges:
            raise LimitExceeded("the edge list's edge count", "max_edges", self.limits.max_edges)

    def add_adjacency(self, u: str, vs: list[str]) -> None:
        self.adjacency.append((u, vs))
        self._count([u, *vs])

    def fmt(self) -> str:
        return "adjacency" if self.adjacency else "edgelist"

    def known(self, token: str) -> bool:
        """Looks like an id, or is listed on the section's ``Nodes:`` line."""
        return _id_like(token) or _unquote(token) in self.nodes

    def graph_like(self) -> bool:
        styles = self.styles - {"tuples"}  # a line of tuples goes with any one style
        if len(styles) > 1 or ("adjacency" in styles and self.edges):
            return False  # inconsistent lines: not a list a model meant as the graph
        if self.adjacency:
            if self.adj_header:
                return True
            return (
                all(self.known(i) for i in self.loose_adj_ids)
                and len(self.adjacency) >= 2
                and self.multi_neighbour
            )
        if self.edges:
            if self.edges_header:
                return True
            if not all(self.known(i) for i in self.loose_ids):
                return False
            return self.edge_lines >= 2 or "tuples" in self.styles or bool(self.nodes)
        # nodes without edges: only with an explicit, empty "Edges:" line ("Nodes: 10\nEdges:
        # 15" is a summary of a graph given elsewhere, not a 1-node graph)
        return bool(self.nodes) and self.edges_header and self.edge_count is None


def _id_like(token: str) -> bool:
    """Numbers, quoted strings, words with a digit, one letter, upper-case up to 3 letters."""
    if token[:1] in "'\"‘“" or any(c.isdigit() for c in token) or len(token) == 1:
        return True
    return len(token) <= 3 and token.isupper()


def _unquote(token: str) -> str:
    """The id a token names: quotes removed; bare tokens as written (``007`` stays ``007``)."""
    if token[:1] in "'\"‘“":
        return unescape(token[1:-1])
    return token


def _trim(text: str) -> str:
    """Strip spaces and one trailing ``,``/``;``/``.`` (but not the dots of an ellipsis)."""
    return _TRAIL_RE.sub("", text.strip())


def _id_list(rest: str, sec: _Section, *, strict: bool, neighbours: bool) -> list[str] | None:
    """Ids of ``a, b, c`` / ``a b c`` / ``[a, b]``; ``None`` when it is not such a list.

    ``strict``: several tokens without commas must all be id-like (prose guard).
    ``neighbours``: an adjacency line, where ``none``/``nothing`` also mean "no items".

    An abbreviating list (``0, 1, ..., 9``, ``0-9``, ``0 to 9``) is recorded on ``sec``.
    """
    body = _trim(rest)
    if body[:1] in "[{(" and body[-1:] in "]})":
        body = body[1:-1].strip()
    if body in _EMPTY_LIST or (neighbours and body.lower() in _EMPTY_WORDS):
        return []
    if _RANGE_RE.search(body):
        sec.abbreviation = sec.abbreviation or body
        return []
    parts = [p for p in _LIST_SPLIT_RE.split(body) if p]
    # a space-separated run of words is prose unless every word looks like an id
    strict = strict and "," not in body and len(parts) > 1
    out = []
    for p in parts:
        if _ABBREV_RE.fullmatch(p):
            sec.abbreviation = sec.abbreviation or p
            continue
        if not _ID_RE.fullmatch(p) or (strict and not _id_like(p)):
            return None
        out.append(p)
    return out


def _classify(line: str, sec: _Section) -> bool:
    """Add a structural line to ``sec``; ``False`` when the line is prose (``sec`` unchanged
    except possibly for a recorded abbreviation)."""
    m = _DIRECTED_RE.fullmatch(line)
    if m:
        flag = _TRUTH.get(m.group(1).lower())
        if flag is None:
            return False
        sec.directed = flag
        return True
    m = _NODES_HDR_RE.fullmatch(line)
    if m:
        rest = (m.group(1) or "").strip()
        ids = _id_list(rest, sec, strict=True, neighbours=False)
        if ids is not None:
            unquoted = [_unquote(i) for i in ids]
            sec.nodes.extend(unquoted)
            sec._count(unquoted)
        else:
            count = re.fullmatch(r"(\d++)\s.*", rest)  # "Nodes: 10 nodes" is a count
            if count is None:
                return False
            sec.declared = int(count.group(1))
        return True
    m = _EDGES_HDR_RE.fullmatch(line)
    if m:
        rest = _trim(m.group(4) or "")
        count = _COUNT_RE.fullmatch(rest)
        if count is not None:
            sec.edge_count = int(count.group(1))  # "Edges: 15": a summary, not a list
        elif not (
            rest in _EMPTY_LIST
            or rest.lower() in _EMPTY_WORDS
            or _edges_line(rest, sec, header=True)
        ):
            return False
        sec.edges_header = True
        if m.group(2):
            sec.directed = not m.group(1)
        elif m.group(3):
            sec.directed = m.group(3).lower() == "directed"
        return True
    if _ADJ_HDR_RE.fullmatch(line):
        sec.adj_header = True
        return True
    if _ABBREV_RE.fullmatch(line):
        sec.abbreviation = sec.abbreviation or line
        return True
    return _edges_line(line, sec, header=False)


def _edge_style(m: re.Match[str]) -> str:
    arrow, dash, comma, _space = m.group(2, 3, 4, 5)
    if arrow is not None:
        return "arrow"
    if dash is not None:
        return "dash"
    return "comma" if comma is not None else "space"


def _edges_line(line: str, sec: _Section, *, header: bool) -> bool:
    body = _trim(_BULLET_RE.sub("", line))
    if body[:1] in ("(", "["):
        if body.count("(") + body.count("[") >= 2 and _TUPLES_RE.fullmatch(body):
            sec.add_edges((_unquote(u), _unquote(v)) for u, v in _PAREN_RE.findall(body))
            sec.styles.add("tuples")
            sec.edge_lines += 1
            return True
        m = _PAREN_RE.fullmatch(body)
        if m:
            sec.add_edges([(_unquote(m.group(1)), _unquote(m.group(2)))])
            sec.styles.add("paren")
            sec.edge_lines += 1
            return True
    m = _EDGE_LINE_RE.fullmatch(body)
    if m:
        style = _edge_style(m)
        u, v = m.group(1), m.group(6)
        if style in _LOOSE_STYLES:
            sec.loose_ids.extend((u, v))
        sec.add_edges([(_unquote(u), _unquote(v))])
        sec.styles.add(style)
        sec.edge_lines += 1
        return True
    if header:
        return _header_edges(body, sec)
    m = _ADJ_RE.fullmatch(body)
    if m:
        key = m.group(2)
        if not (sec.adj_header or m.group(1) or sec.known(key)):
            return False  # "Summary:", "Note: ..." are prose, not adjacency entries
        ids = _id_list(m.group(3), sec, strict=not sec.adj_header, neighbours=True)
        if ids is None:
            return False
        u = _unquote(key)
        vs = [_unquote(i) for i in ids]
        sec.add_adjacency(u, vs)
        sec.loose_adj_ids.extend(ids)
        sec.multi_neighbour = sec.multi_neighbour or len(ids) >= 2
        sec.styles.add("adjacency")
        return True
    return False


def _header_edges(body: str, sec: _Section) -> bool:
    """``Edges: 0-1, 1-2, 2->3``: several arrow/dash edges on the header line."""
    found: list[tuple[str, str]] = []
    styles: set[str] = set()
    abbreviation = None
    for item in re.split(r"\s*+[,;]\s*+", body):
        if not item:
            continue
        if _ABBREV_RE.fullmatch(item):
            abbreviation = abbreviation or item
            continue
        m = _EDGE_LINE_RE.fullmatch(item)
        if m is None or _edge_style(m) not in ("arrow", "dash"):
            return False
        found.append((_unquote(m.group(1)), _unquote(m.group(6))))
        styles.add(_edge_style(m))
    sec.add_edges(found)
    sec.styles |= styles
    sec.edge_lines += len(found)
    sec.abbreviation = sec.abbreviation or abbreviation
    return True


@dataclass(frozen=True)
class LineGraph:
    """The last graph-like section: where it starts and how to build its graph."""

    start: int
    end: int
    fmt: str  # "edgelist" or "adjacency"
    _section: _Section

    def build(self) -> ParsedGraph:
        """The section's graph; raises :class:`AbbreviationError` / :class:`ParseError`."""
        sec = self._section
        if sec.abbreviation is not None:
            raise AbbreviationError(
                f"abbreviation {sec.abbreviation!r} used instead of listing every edge"
            )
        return _build(sec, sec.limits)


def find_line_graph(
    text: str, limits: Limits, regions: Iterable[tuple[int, int]] | None = None
) -> LineGraph | None:
    """The last graph-like section of ``text`` (see module doc), or ``None``.

    Only the ``(start, end)`` ``regions`` are read (default: the whole text); a section never
    continues from one region into the next (what lies between belongs to another format).
    Raises ``LimitExceeded`` when a section grows past a limit.
    """
    best: LineGraph | None = None
    for lo, hi in [(0, len(text))] if regions is None else regions:
        sec = _Section(limits)
        sec_start = sec_end = offset = lo
        for raw in text[lo:hi].splitlines(keepends=True):
            line_start = offset
            offset += len(raw)
            line = "\x01" if len(raw) > _MAX_LINE else _CLEAN_RE.sub("", raw).replace("**", "")
            line = line.strip()
            if not line or line.startswith("```") or line.startswith("~~~"):
                continue
            if _classify(line, sec):
                if sec_end <= sec_start:
                    sec_start = line_start
                sec_end = offset
                continue
            if sec_end > sec_start and sec.graph_like():
                best = LineGraph(sec_start, sec_end, sec.fmt(), sec)
            sec = _Section(limits)
            sec_start = sec_end = offset
        if sec_end > sec_start and sec.graph_like():
            best = LineGraph(sec_start, sec_end, sec.fmt(), sec)
    return best


def _build(sec: _Section, limits: Limits) -> ParsedGraph:
    builder = GraphBuilder(limits)
    builder.add_node_ids(sec.nodes)
    if sec.adjacency:
        for u, vs in sec.adjacency:
            builder.add_node(u)
            for v in vs:
                builder.add_edge(u, v)
        directed = bool(sec.directed)
        return builder.build(
            directed, fmt="adjacency", declared_nodes=sec.declared, count_duplicates=directed
        )
    for u, v in sec.edges:
        builder.add_edge(u, v)
    directed = sec.directed if sec.directed is not None else "arrow" in sec.styles
    if not sec.edges and not sec.nodes:
        raise ParseError("the edge list section lists no nodes and no edges")
    return builder.build(directed, fmt="edgelist", declared_nodes=sec.declared)
