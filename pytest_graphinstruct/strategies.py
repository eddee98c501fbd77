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
  labelled; with ``self_loops=True`` possibly with self-loops, which the default verifier
  rejects).
* :func:`constraint_texts` — syntactically valid constraint strings over every key.
* :func:`true_constraints` — constraint strings that hold on a given graph (computed here with
  networkx, independently of the verifier).
* :func:`render` — ``graph`` spelled out in one answer format (a strategy); :func:`formats_for`
  — the formats that can spell a given graph.
* :func:`answers` — ``(text, graph)``: an LLM-like answer spelling ``graph`` out in one of the
  formats (code-style with ASCII or typographic quotes, comments and trailing commas; JSON; edge
  list; adjacency list; networkx snippet), optionally inside code fences, after prose or after
  discarded drafts.
* :func:`hostile_texts` — text meant to break parsers (deep nesting, NUL, bidi marks, braces in
  prose, unterminated blocks, abbreviations).

Everything is deterministic given Hypothesis' draws and never touches the network.  What a
strategy draws, the package's own parser and default verifier accept (the answer
:func:`render` spells parses back to the graph it was given, for every graph :func:`graphs`
draws), unless its docstring says otherwise (``graphs(self_loops=True)``).

Hypothesis (the ``[test]`` extra) is imported only when a strategy is built, so importing this
module works without it — unless ``$HYPOTHESIS_PROFILE`` is set, which asks for a profile
(:func:`register_profiles`: the module registers :data:`PROFILES` with Hypothesis, and loads
the one the variable names, when it is imported after Hypothesis, or with the variable set, or
when a strategy is first built).
"""

from __future__ import annotations

import inspect
import json
import os
import string
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Concatenate, Final, ParamSpec, TypeVar

import networkx as nx

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy

__all__ = [
    "FORMATS",
    "PROFILES",
    "PROFILE_ENV",
    "answers",
    "constraint_texts",
    "formats_for",
    "graphs",
    "hostile_texts",
    "node_ids",
    "register_profiles",
    "render",
    "true_constraints",
]

FORMATS: tuple[str, ...] = ("code", "code_typographic", "json", "edgelist", "adjacency", "networkx")
_SIMPLE_FORMATS = ("edgelist", "adjacency")
_EMPTY_FORMATS = ("code", "code_typographic", "json")  # those that can say "no nodes"

_HOSTILE_CHARS = "'\"’‘“”.;,:[](){}#/\\=-> \n\tαβ中é"
_TOKEN_ALPHABET = string.ascii_letters + string.digits + "_"
# Words that answer formats give a meaning of their own: literals, the line formats' headers
# (graphs/linefmt.py: "Vertices:", "Links:", "Neighbours:", "node_list ="), their abbreviation
# and empty-list words ("etc", "nothing") and a directedness line's values.
_RESERVED = frozenset({"true", "false", "none", "null", "nan", "inf", "nodes", "edges", "edge",
                       "node", "directed", "adjacency", "graph", "digraph", "list", "etc",
                       "vertex", "vertices", "arcs", "links", "neighbours", "neighbors", "adj",
                       "adj_list", "adjacency_list", "node_list", "edge_list", "vertex_list",
                       "vertex_set", "nothing", "yes", "no", "undirected"})

PROFILE_ENV: Final = "HYPOTHESIS_PROFILE"
"""The environment variable naming the Hypothesis profile to load (:func:`register_profiles`)."""

PROFILES: Final[Mapping[str, Mapping[str, Any]]] = MappingProxyType({
    "thorough": MappingProxyType({"max_examples": 2000, "deadline": None}),
})
"""The Hypothesis profiles this module registers, by name: each is Hypothesis' own ``default``
profile with these settings (``thorough``: 2000 examples a test, no deadline)."""

_profiles_registered = False

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
        _on_first_build()
        return built(*args, **kwargs)

    signature = inspect.signature(draw_fn)
    strategy.__name__ = draw_fn.__name__
    strategy.__qualname__ = draw_fn.__qualname__
    strategy.__doc__ = draw_fn.__doc__
    strategy.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=list(signature.parameters.values())[1:])  # as composite shows it: no draw
    return strategy


def register_profiles() -> str | None:
    """Register :data:`PROFILES` with Hypothesis, then load the profile ``$HYPOTHESIS_PROFILE``
    names; returns the name of the profile loaded (``None``: none was).

    It changes the settings of your tests only when you ask, by setting the variable:

    - a profile is registered only under a name no profile has yet: one you registered first
      (any name of :data:`PROFILES`) is kept as it is, and so, always, is the active one;
    - ``$HYPOTHESIS_PROFILE`` is loaded only when it names a registered profile and the active
      profile is still one Hypothesis chose by itself — ``default``, or ``ci`` on a CI machine,
      where Hypothesis loads it.  A profile your code or ``--hypothesis-profile`` loaded stays,
      and a variable naming no registered profile loads nothing (Hypothesis' own pytest plugin
      does not read the variable);
    - inside a running test or a ``settings`` block (the settings in force are not the active
      profile's) nothing is registered or loaded: it is tried again at the next call.

    This module calls it when it is imported after Hypothesis, when it is imported with the
    variable set (it imports Hypothesis then, so that the tests it decorates next get the
    profile), and when one of its strategies is first built.  A ``@given`` test takes the
    settings in force when it is decorated, so a test decorated before any of these gets the
    profile only if you call this first (e.g. in a ``conftest.py``).  Without Hypothesis it
    does nothing.
    """
    global _profiles_registered
    try:
        from hypothesis import settings
    except ImportError:
        return None
    active = _active_profile(settings)
    if active is not None and settings.default is not settings.get_profile(active):
        return None  # a running test's or a settings block's own settings are in force
    if not _profiles_registered:
        known = _registered(settings)
        base = settings.get_profile("default")
        for name, values in PROFILES.items():
            if name not in known:
                settings.register_profile(name, parent=base, **values)
        _profiles_registered = True
    wanted = os.environ.get(PROFILE_ENV, "").strip()
    if not wanted or wanted == active or not _chosen_by_hypothesis(active):
        return None
    if wanted not in _registered(settings):
        return None
    settings.load_profile(wanted)
    return wanted


def _on_first_build() -> None:
    """Register the profiles when a strategy is built (until they are)."""
    if not _profiles_registered:
        register_profiles()


def _active_profile(settings: Any) -> str | None:
    """The name of the active profile (older Hypothesis: the private attribute it reads)."""
    current = getattr(settings, "get_current_profile_name", None)
    name = current() if current is not None else getattr(settings, "_current_profile", None)
    return name if isinstance(name, str) else None


def _registered(settings: Any) -> set[str]:
    """The names of the profiles registered with Hypothesis now."""
    names = set()
    for name in (*PROFILES, os.environ.get(PROFILE_ENV, "").strip()):
        if not name:
            continue
        try:
            settings.get_profile(name)
        except Exception:  # InvalidArgument: not registered
            continue
        names.add(name)
    return names


def _chosen_by_hypothesis(profile: str | None) -> bool:
    """Whether ``profile`` is one Hypothesis made active by itself: ``default``, or ``ci`` on a
    machine its CI detection recognises (where it loads ``ci`` when imported)."""
    if profile == "default":
        return True
    if profile != "ci":
        return False
    try:
        from hypothesis._settings import is_in_ci
    except ImportError:  # a Hypothesis that loads no profile by itself
        return False
    return bool(is_in_ci())


def node_ids(*, hostile: bool = True, max_size: int = 8) -> SearchStrategy[str]:
    """Node names.

    With ``hostile=False`` only short identifiers and integers (valid in every answer format);
    with ``hostile=True`` also arbitrary text including quote characters, dots, semicolons,
    brackets, comment markers and newlines (valid in code-style and JSON answers) — never a
    blank one (empty or whitespace only), which an answer may not use.
    """
    from hypothesis import strategies as st

    _on_first_build()
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

    Every graph drawn with ``self_loops=False`` (the default) is one the default
    :class:`~pytest_graphinstruct.verify.verifier.Verifier` can accept: rendered
    (:func:`render`) with the constraints that hold on it (:func:`true_constraints`), it passes.

    Args:
        directed: force directedness; ``None`` draws it.
        min_nodes, max_nodes: node count bounds.
        hostile: draw node names from :func:`node_ids` with ``hostile=True``.
        labels: attach a ``label`` attribute (drawn text) to some nodes and a ``type`` to some
            edges (:func:`render` does not spell them).
        self_loops: allow self-loops.  **The default verifier rejects every graph with a
            self-loop** (its ``no_self_loops`` check, whatever the instruction asks): such a
            graph is for fuzzing a parser or a check of your own, not an answer that should
            pass.  It still parses back to itself from every format.
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

    _on_first_build()
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


def _line_id(node: str) -> bool:
    """Whether an edge or adjacency list can carry ``node``: an ``[A-Za-z0-9_]`` token that is
    no word those formats reserve."""
    return bool(node) and all(c in _TOKEN_ALPHABET for c in node) \
        and node.lower() not in _RESERVED


def formats_for(g: nx.Graph) -> tuple[str, ...]:
    """The formats of :data:`FORMATS` that can spell ``g`` so that the package's parser reads
    ``g`` back: all of them, except that edge and adjacency lists take only node ids that are
    ``[A-Za-z0-9_]`` tokens and no word the formats reserve (``nodes``, ``edges``, ``etc``,
    ``true`` …), and the empty graph only code-style or JSON (an empty edge list or networkx
    snippet says nothing)."""
    if g.number_of_nodes() == 0:
        return _EMPTY_FORMATS
    if all(_line_id(n) for n in g.nodes()):
        return FORMATS
    return tuple(f for f in FORMATS if f not in _SIMPLE_FORMATS)


def render(g: nx.Graph, fmt: str | None = None) -> SearchStrategy[str]:
    """A strategy: ``g`` spelled out in one answer format, ``fmt`` or (``None``) one drawn from
    :func:`formats_for`.  Nodes, edges and directedness are spelled (not ``label``/``type``
    attributes); the package's parser reads exactly ``g``'s back, from any format that can
    spell it.

    Raises:
        ValueError: ``fmt`` is no format of :data:`FORMATS`, or one that cannot spell ``g``
            (a node id an edge or adjacency list cannot carry; the empty graph in a line format
            or a networkx snippet): the message names the id and the formats that can.
    """
    if fmt is not None:
        if fmt not in FORMATS:
            raise ValueError(f"render: unknown format {fmt!r}; the formats are "
                             f"{', '.join(FORMATS)}")
        usable = formats_for(g)
        if fmt not in usable:
            if g.number_of_nodes() == 0:
                why = "it cannot spell the empty graph (it has no node list to leave empty)"
            else:
                node = next(n for n in g.nodes() if not _line_id(n))
                why = (f"it cannot carry the node id {node!r} (it takes [A-Za-z0-9_] tokens "
                       "that are no word it reserves, such as 'nodes' or 'etc')")
            raise ValueError(f"render(g, {fmt!r}): {why}; formats that can spell this graph: "
                             f"{', '.join(usable)} (formats_for(g))")
    return _render(g, fmt)


@_composite
def _render(draw: DrawFn, g: nx.Graph, fmt: str | None = None) -> str:
    """:func:`render`'s drawing, ``fmt`` checked."""
    from hypothesis import strategies as st

    fmt = fmt or draw(st.sampled_from(formats_for(g)))
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

    _on_first_build()
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


# Imported after Hypothesis, or asked for a profile: register (and load) now, before the tests
# of the importing module are decorated (register_profiles).
if sys.modules.get("hypothesis") is not None or os.environ.get(PROFILE_ENV, "").strip():
    register_profiles()
