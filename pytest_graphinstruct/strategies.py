"""Hypothesis strategies for fuzzing graph-answer code (public API).

Use them to fuzz your own parsers, checks or prompt pipelines the way this project fuzzes its
verifier::

    from hypothesis import given
    from pytest_graphinstruct import strategies as gis

    @given(gis.answers())
    def test_my_pipeline_recovers_the_graph(case):
        text, expected = case          # an LLM-like answer and the graph it spells out
        assert my_parse(text).edges == expected.edges

Strategies:

* :func:`node_ids` — node names; ``hostile=True`` mixes in quotes, dots, semicolons, brackets,
  braces, comment markers, backslashes, newlines and non-ASCII text.
* :func:`graphs` — simple ``nx.Graph``/``nx.DiGraph`` with ``str`` node ids (optionally
  labelled).
* :func:`constraint_texts` — syntactically valid constraint strings over every key.
* :func:`true_constraints` — constraint strings that hold on a given graph (computed here with
  networkx, independently of the verifier).
* :func:`answers` — ``(text, graph)``: an LLM-like answer spelling ``graph`` out in one of the
  formats (code-style with ASCII or typographic quotes, comments and trailing commas; JSON; edge
  list; adjacency list; networkx snippet), optionally inside code fences, after prose or after
  discarded drafts.
* :func:`hostile_texts` — text meant to break parsers (deep nesting, NUL, bidi marks, braces in
  prose, unterminated blocks, abbreviations).

Everything is deterministic given Hypothesis' draws and never touches the network.

Hypothesis (the ``[test]`` extra) is imported only when a strategy is built, so importing this
module works without it.
"""

from __future__ import annotations

import inspect
import json
import string
from collections.abc import Callable
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

import networkx as nx

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy

__all__ = [
    "FORMATS",
    "answers",
    "constraint_texts",
    "graphs",
    "hostile_texts",
    "node_ids",
    "true_constraints",
]

FORMATS: tuple[str, ...] = ("code", "code_typographic", "json", "edgelist", "adjacency", "networkx")
_SIMPLE_FORMATS = ("edgelist", "adjacency")

_HOSTILE_CHARS = "'\"’‘“”.;,:[](){}#/\\=-> \n\tαβ中é"
_TOKEN_ALPHABET = string.ascii_letters + string.digits + "_"
# Words that answer formats give a meaning of their own (literals, section headers).
_RESERVED = frozenset({"true", "false", "none", "null", "nan", "inf", "nodes", "edges", "edge",
                       "node", "directed", "adjacency", "graph", "digraph", "list"})

_P = ParamSpec("_P")
_T = TypeVar("_T")


def _composite(draw_fn: Callable[Concatenate[DrawFn, _P], _T]
               ) -> Callable[_P, SearchStrategy[_T]]:
    """``hypothesis.strategies.composite``, applied on first use (Hypothesis is imported then,
    not when this module is)."""
    built: Callable[_P, SearchStrategy[_T]] | None = None

    def strategy(*args: _P.args, **kwargs: _P.kwargs) -> SearchStrategy[_T]:
        nonlocal built
        if built is None:
            from hypothesis import strategies as st

            built = st.composite(draw_fn)
        return built(*args, **kwargs)

    signature = inspect.signature(draw_fn)
    strategy.__name__ = draw_fn.__name__
    strategy.__qualname__ = draw_fn.__qualname__
    strategy.__doc__ = draw_fn.__doc__
    strategy.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=list(signature.parameters.values())[1:])  # as composite shows it: no draw
    return strategy


def node_ids(*, hostile: bool = True, max_size: int = 8) -> SearchStrategy[str]:
    """Node names.

    With ``hostile=False`` only short identifiers and integers (valid in every answer format);
    with ``hostile=True`` also arbitrary text including quote characters, dots, semicolons,
    brackets, comment markers and newlines (valid in code-style and JSON answers) — never a
    blank one (empty or whitespace only), which an answer may not use.
    """
    from hypothesis import strategies as st

    words = st.text(_TOKEN_ALPHABET, min_size=1, max_size=max_size)
    simple = st.one_of(
        st.integers(0, 999).map(str),
        words.filter(lambda s: not s[0].isdigit() and s.lower() not in _RESERVED),
    )
    if not hostile:
        return simple
    nasty = st.text(st.sampled_from(_HOSTILE_CHARS) | st.characters(codec="utf-8",
                                                                        exclude_categories=["Cs"]),
                    min_size=1, max_size=max_size)
    # a blank id (empty, or only whitespace) is an answer's fault, which the verifier reports
    # (no_blank_ids): a strategy that draws valid graphs never draws one
    return st.one_of(simple, nasty.filter(lambda s: s.strip() != ""))


@_composite
def graphs(
    draw: DrawFn,
    *,
    directed: bool | None = None,
    min_nodes: int = 0,
    max_nodes: int = 10,
    hostile: bool = False,
    labels: bool = False,
    self_loops: bool = False,
) -> nx.Graph:
    """A simple graph (no parallel edges) with ``str`` node ids.

    Args:
        directed: force directedness; ``None`` draws it.
        min_nodes, max_nodes: node count bounds.
        hostile: draw node names from :func:`node_ids` with ``hostile=True``.
        labels: attach a ``label`` attribute (drawn text) to some nodes and a ``type`` to some
            edges.
        self_loops: allow self-loops.
    """
    from hypothesis import strategies as st

    is_directed = draw(st.booleans()) if directed is None else directed
    names = draw(st.lists(node_ids(hostile=hostile), min_size=min_nodes, max_size=max_nodes,
                          unique=True))
    g: nx.Graph = nx.DiGraph() if is_directed else nx.Graph()
    g.add_nodes_from(names)
    if len(names) >= 1:
        pairs = st.tuples(st.sampled_from(names), st.sampled_from(names))
        if not self_loops:
            pairs = pairs.filter(lambda e: e[0] != e[1])
        if len(names) >= 2 or self_loops:
            for u, v in draw(st.lists(pairs, max_size=3 * len(names))):
                g.add_edge(u, v)
    if labels:
        text = st.text(min_size=0, max_size=12)
        for n in names:
            if draw(st.booleans()):
                g.nodes[n]["label"] = draw(text)
        for u, v in list(g.edges()):
            if draw(st.booleans()):
                g.edges[u, v]["type"] = draw(text)
    return g


_INT_KEYS = ("num_nodes", "num_edges", "degree", "min_degree", "max_degree", "diameter",
             "num_components", "edge_connectivity")
_FLOAT_KEYS = ("density", "modularity", "clustering_coefficient", "average_path_length")
_BOOL_KEYS = ("directed", "connected", "acyclic", "planar", "bipartite")
_TYPES = ("tree", "forest", "path", "cycle", "star", "wheel", "grid", "complete",
          "complete_bipartite", "bipartite", "dag", "connected", "regular", "planar", "acyclic")
_OPS = ("=", "!=", "<=", ">=", "<", ">")


def constraint_texts() -> SearchStrategy[str]:
    """Syntactically valid constraint strings over every graph key (values drawn at random)."""
    from hypothesis import strategies as st

    ints = st.builds(lambda k, o, v: f"{k}{o}{v}", st.sampled_from(_INT_KEYS),
                     st.sampled_from(_OPS), st.integers(0, 60))
    floats = st.builds(lambda k, o, v: f"{k}{o}{v:.4g}", st.sampled_from(_FLOAT_KEYS),
                       st.sampled_from(_OPS), st.floats(0, 10, allow_nan=False))
    bools = st.builds(lambda k, v: f"{k}={v}", st.sampled_from(_BOOL_KEYS),
                      st.sampled_from(("true", "false")))
    types = st.sampled_from(_TYPES).map(lambda t: f"graph_type={t}")
    sides = st.builds(lambda p, q: f"bipartite_sides={p},{q}", st.integers(0, 9),
                      st.integers(0, 9))
    return st.one_of(ints, floats, bools, types, sides)


def true_constraints(g: nx.Graph) -> list[str]:
    """Constraint strings that hold on ``g``, computed directly with networkx.

    Covers counts, directedness, connectivity (weak for directed graphs), acyclicity (forest /
    DAG), planarity and bipartiteness, plus min/max degree.  Intended as the "should pass" side
    of property tests: every string returned here must be satisfied by a correct verifier.
    """
    n, m = g.number_of_nodes(), g.number_of_edges()
    out = [f"num_nodes={n}", f"num_edges={m}", f"directed={'true' if g.is_directed() else 'false'}"]
    if n:
        connected = nx.is_weakly_connected(g) if g.is_directed() else nx.is_connected(g)
        out.append(f"connected={'true' if connected else 'false'}")
        degrees = [d for _, d in g.degree()]
        out += [f"min_degree={min(degrees)}", f"max_degree={max(degrees)}"]
    acyclic = nx.is_directed_acyclic_graph(g) if g.is_directed() else nx.is_forest(g) if n else True
    out.append(f"acyclic={'true' if acyclic else 'false'}")
    out.append(f"planar={'true' if nx.check_planarity(g)[0] else 'false'}")
    out.append(f"bipartite={'true' if nx.is_bipartite(g) else 'false'}")
    return out


# --- answer rendering --------------------------------------------------------------------------

def _py_str(s: str, quote: str = "'") -> str:
    body = s.replace("\\", "\\\\").replace(quote, "\\" + quote).replace("\n", "\\n")
    body = body.replace("\r", "\\r").replace("\t", "\\t")
    return f"{quote}{body}{quote}"


def _id(s: str, style: str) -> str:
    if style == "int" and s.isdigit() and (s == "0" or not s.startswith("0")):
        return s
    if style == "typographic":
        return f"’{s}’" if all(c not in s for c in "’‘\\\n") else _py_str(s)
    if style == "double":
        return _py_str(s, '"')
    return _py_str(s)


def _render_code(g: nx.Graph, style: str, trailing: bool, comments: bool) -> str:
    header = "Graph[name='answer'"
    if g.is_directed():
        header += ", directed=true"
    header += f", nodes={g.number_of_nodes()}]"
    nodes = ", ".join(_id(n, style) for n in g.nodes())
    edges = ", ".join(f"({_id(u, style)}, {_id(v, style)})" for u, v in g.edges())
    t = ", " if trailing and g.number_of_nodes() else ""
    te = ", " if trailing and g.number_of_edges() else ""
    lines = [header + " {"]
    if comments:
        lines.append("    # all nodes first")
    lines.append(f"    node_list = [{nodes}{t}];")
    if comments:
        lines.append("    // then every edge")
    lines.append(f"    edge_list = [{edges}{te}];")
    lines.append("}")
    return "\n".join(lines)


def _render_json(g: nx.Graph) -> str:
    return json.dumps({"directed": g.is_directed(), "nodes": list(g.nodes()),
                       "edges": [[u, v] for u, v in g.edges()]}, ensure_ascii=False)


def _render_edgelist(g: nx.Graph, sep: str) -> str:
    arrow = " -> " if g.is_directed() else sep
    lines = [f"Directed: {'true' if g.is_directed() else 'false'}",
             "Nodes: " + ", ".join(g.nodes()), "Edges:"]
    lines += [f"{u}{arrow}{v}" for u, v in g.edges()]
    return "\n".join(lines)


def _render_adjacency(g: nx.Graph) -> str:
    lines = [f"Directed: {'true' if g.is_directed() else 'false'}", "Adjacency list:"]
    seen: set[frozenset[str]] = set()
    for u in g.nodes():
        nbrs = []
        for v in g.successors(u) if g.is_directed() else g.neighbors(u):
            key = frozenset((u, v))
            if not g.is_directed():
                if key in seen:
                    continue
                seen.add(key)
            nbrs.append(v)
        lines.append(f"{u}: {', '.join(nbrs)}")
    return "\n".join(lines)


def _render_networkx(g: nx.Graph) -> str:
    cls = "DiGraph" if g.is_directed() else "Graph"
    nodes = ", ".join(_py_str(n) for n in g.nodes())
    edges = ", ".join(f"({_py_str(u)}, {_py_str(v)})" for u, v in g.edges())
    return (f"import networkx as nx\n\nG = nx.{cls}()\nG.add_nodes_from([{nodes}])\n"
            f"G.add_edges_from([{edges}])\n")


@_composite
def render(draw: DrawFn, g: nx.Graph, fmt: str | None = None) -> str:
    """Spell ``g`` out in one answer format (drawn when ``fmt`` is ``None``).

    Formats that only take simple ids (edge/adjacency lists) are used only when every node id is
    a simple token; the empty graph is rendered only in code-style or JSON (an empty networkx
    snippet or edge list says nothing).
    """
    from hypothesis import strategies as st

    simple = all(n and all(c in _TOKEN_ALPHABET for c in n) and n.lower() not in _RESERVED
                 for n in g.nodes())
    if g.number_of_nodes() == 0:  # only formats with an explicit (empty) node list can say it
        choices = ["code", "code_typographic", "json"]
    else:
        choices = [f for f in FORMATS if simple or f not in _SIMPLE_FORMATS]
    fmt = fmt or draw(st.sampled_from(choices))
    if fmt == "code":
        style = draw(st.sampled_from(("single", "double", "int")))
        return _render_code(g, style, draw(st.booleans()), draw(st.booleans()))
    if fmt == "code_typographic":
        return _render_code(g, "typographic", draw(st.booleans()), False)
    if fmt == "json":
        return _render_json(g)
    if fmt == "edgelist":
        return _render_edgelist(g, draw(st.sampled_from((" ", ", ", " - "))))
    if fmt == "adjacency":
        return _render_adjacency(g)
    return _render_networkx(g)


_PROSE = [
    "Here is the graph you asked for.",
    "Sure! Below is a graph that satisfies all of the constraints.",
    "Let's think step by step. We need the right number of nodes and edges.",
    "Note: {curly braces} in this sentence are not part of the graph.",
    "I checked every constraint; the result is valid.",
]


@_composite
def answers(
    draw: DrawFn, graph_strategy: SearchStrategy[nx.Graph] | None = None
) -> tuple[str, nx.Graph]:
    """``(text, graph)``: an LLM-like answer whose final, complete graph is ``graph``.

    The graph is rendered in a drawn format and optionally wrapped: a code fence, prose before
    and after (which may contain braces), and an earlier discarded draft graph.
    """
    from hypothesis import strategies as st

    g = draw(graph_strategy if graph_strategy is not None else graphs(hostile=True))
    body = draw(render(g))
    if draw(st.booleans()):
        lang = draw(st.sampled_from(("", "python", "json", "text")))
        body = f"```{lang}\n{body}\n```"
    parts = []
    if draw(st.booleans()):
        parts.append(draw(st.sampled_from(_PROSE)))
    if draw(st.booleans()):
        draft = draw(graphs(max_nodes=4))
        parts.append("First draft:\n" + draw(render(draft, "code")) + "\nThat draft is wrong; "
                     "final answer:")
    parts.append(body)
    if draw(st.booleans()):
        parts.append(draw(st.sampled_from(_PROSE)))
    return "\n\n".join(parts), g


def hostile_texts() -> SearchStrategy[str]:
    """Texts designed to break answer parsers; a robust parser returns a result for each."""
    from hypothesis import strategies as st

    depth = st.integers(1, 5000)
    return st.one_of(
        st.text(max_size=300),
        depth.map(lambda d: "Graph[name='x'] { node_list = " + "[" * d + "0" + "]" * (d // 2)),
        depth.map(lambda d: "{" * d),
        st.just("Graph[name='g'] { node_list = [0, 1, ..., 9]; edge_list = [(0,1)]; }"),
        st.just("Graph[name='g'] { node_list = list(range(10)); }"),
        st.just("Graph[name='g', nodes=3] { node_list = [0, 1, 2]; edge_list = [(0, 1), (1,"),
        st.just("\x00\u202e\u200fGraph[\x00] {\u202e node_list = ['\u202e0']; }"),
        st.text(st.sampled_from("{}[]()'\";=,#/\\\n"), max_size=400),
        st.builds(lambda a, b: f"{a} Graph[name='g'] {{ node_list=[0]; }} {b} }} }}",
                  st.text(max_size=50), st.text(max_size=50)),
    )
