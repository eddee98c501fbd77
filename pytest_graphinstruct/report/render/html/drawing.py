"""Drawings of answers for the HTML report: the graph an answer parses to, laid out at build
time, with the nodes and edges the verdicts name (``where``) marked.

The raw answer is the one the report keeps (bounded), parsed by the project's parser
(:func:`~pytest_graphinstruct.graphs.parse.parse_answer`, L5 edits against the instruction's
base graph when the suite is known).  Only graphs up to :data:`MAX_NODES` nodes and
:data:`MAX_EDGES` edges are drawn; any other answer gets an :class:`Omitted` that says why.
The page draws the result with SVG elements from these coordinates, so no markup is built from
the answer's text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import networkx as nx

from pytest_graphinstruct.graphs.model import ParsedGraph
from pytest_graphinstruct.graphs.parse import parse_answer
from pytest_graphinstruct.run.records.results import RAW_ANSWER_LIMIT
from pytest_graphinstruct.verify.locus import Locus

MAX_NODES = 60
"""The largest graph (in nodes) the report draws."""

MAX_EDGES = 400
"""The largest graph (in edges) the report draws."""

LABEL_LIMIT = 24
"""Characters of a node id shown in a drawing (longer ids end with ``…``)."""

_CUT_MARK = "more characters cut]"  # the line run.results.bounded_answer ends a cut answer with


@dataclass(frozen=True)
class Drawing:
    """A laid-out graph: node labels and positions in ``[-1, 1]²``, edges as index pairs (self
    loops apart, as the nodes that have one), and the indexes of the marked nodes and edges."""

    directed: bool
    labels: tuple[str, ...]
    xy: tuple[tuple[float, float], ...]
    edges: tuple[tuple[int, int], ...]
    marked_nodes: tuple[int, ...]
    marked_edges: tuple[int, ...]
    loops: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"directed": self.directed, "labels": list(self.labels),
                "xy": [list(p) for p in self.xy], "edges": [list(e) for e in self.edges],
                "marked_nodes": list(self.marked_nodes),
                "marked_edges": list(self.marked_edges), "loops": list(self.loops)}


@dataclass(frozen=True)
class Omitted:
    """No drawing, and why (no answer, not a graph, too large)."""

    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"omitted": self.reason}


def loci(wheres: Iterable[Locus]) -> tuple[set[str], set[tuple[str, str]]]:
    """The node ids and edges ``(u, v)`` named by verdict loci (``where``); an edge's endpoints
    are marked too.  Counts, degrees and node groups (components) mark nothing."""
    nodes: set[str] = set()
    edges: set[tuple[str, str]] = set()
    for where in wheres:
        nodes.update(map(str, where.nodes))
        for u, v in where.edges:
            edges.add((str(u), str(v)))
            nodes.update((str(u), str(v)))
    return nodes, edges


def draw(raw_answer: str | None, wheres: Iterable[Locus] = (), *,
         base: ParsedGraph | None = None) -> Drawing | Omitted:
    """The drawing of ``raw_answer`` with the loci of ``wheres`` marked, or why there is none.

    The layout is networkx's spring layout with a fixed seed, so the same answer always gets
    the same drawing; coordinates are rounded to 3 decimals."""
    if raw_answer is None:
        return Omitted("the report keeps no answer text for this sample")
    if raw_answer.endswith(_CUT_MARK):
        return Omitted("not drawn: the report keeps only the start of this answer "
                       f"({RAW_ANSWER_LIMIT} characters)")
    result = parse_answer(raw_answer, base=base)
    if result.graph is None:
        return Omitted("the answer the report keeps does not parse to a graph"
                       + (f" ({result.reason})" if result.reason else ""))
    g = result.graph.graph
    n, m = g.number_of_nodes(), g.number_of_edges()
    if n == 0:
        return Omitted("the graph is empty")
    if n > MAX_NODES or m > MAX_EDGES:
        return Omitted(f"not drawn: {n} nodes, {m} edges (the report draws graphs up to "
                       f"{MAX_NODES} nodes and {MAX_EDGES} edges)")
    order = list(g.nodes)
    index = {v: k for k, v in enumerate(order)}
    pos = nx.spring_layout(g, seed=0, iterations=30) if n > 1 else {order[0]: (0.0, 0.0)}
    xy = tuple((round(float(pos[v][0]), 3), round(float(pos[v][1]), 3)) for v in order)
    edge_list = [(index[u], index[v]) for u, v in g.edges() if u != v]
    loops = [index[u] for u, v in g.edges() if u == v]
    marked_ids, marked_pairs = loci(wheres)
    if not g.is_directed():
        marked_pairs |= {(v, u) for u, v in marked_pairs}
    marked_edges = tuple(k for k, (i, j) in enumerate(edge_list)
                         if (str(order[i]), str(order[j])) in marked_pairs)
    marked_nodes = tuple(k for k, v in enumerate(order) if str(v) in marked_ids)
    return Drawing(g.is_directed(), tuple(_label(str(v)) for v in order), xy,
                   tuple(edge_list), marked_nodes, marked_edges, tuple(sorted(set(loops))))


def _label(text: str) -> str:
    return text if len(text) <= LABEL_LIMIT else text[: LABEL_LIMIT - 1] + "…"
