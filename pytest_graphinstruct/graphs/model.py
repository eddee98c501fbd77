"""The data objects of answer parsing: a parsed graph, a graph edit, a parse result, limits.

Node ids are always ``str``: the integer ``0`` and the string ``'0'`` name the same node.  A
:class:`ParsedGraph` owns a networkx graph (``nx.Graph`` or ``nx.DiGraph``, never a multigraph);
facts the networkx graph cannot hold (edges listed twice, a header that disagrees with the body)
are kept beside it so the no-contradiction checks can see them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the records name the graph type; only the parser needs networkx
    import networkx as nx

Edge = tuple[str, str]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class Outcome(enum.Enum):
    """What a raw answer turned out to be."""

    GRAPH = "graph"  #: a graph was recovered
    REFUSAL = "refusal"  #: no graph, and the text states the task is impossible/infeasible
    FAILURE = "failure"  #: no graph and no refusal: garbage, truncation, error text, abbreviations


@dataclass(frozen=True)
class Limits:
    """Size limits of the answer parser; exceeding one is a parse failure naming the limit.

    ``max_chars`` bounds the raw answer length, ``max_nodes``/``max_edges`` the recovered graph
    (and any single list while it is being read, so a 200k-node list is rejected early), and
    ``max_depth`` the bracket nesting inside one value.
    """

    max_chars: int = 2_000_000
    max_nodes: int = 20_000
    max_edges: int = 200_000
    max_depth: int = 64

    def __post_init__(self) -> None:
        for name in ("max_chars", "max_nodes", "max_edges", "max_depth"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Limits.{name} must be a positive integer, got {value!r}")


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class GraphEdit:
    """A ``GraphEdit[...] { add_edges = [...]; remove_edges = [...]; }`` answer (L5).

    ``add_edges``/``remove_edges`` keep the order and multiplicity of the answer; endpoints are
    ``str``.  ``header`` holds the header key/values, ``properties`` every other statement.
    ``add_nodes``/``remove_nodes`` hold the optional ``add_nodes = [...]`` /
    ``remove_nodes = [...]`` statements some models write (ids as ``str``).
    """

    add_edges: tuple[Edge, ...] = ()
    remove_edges: tuple[Edge, ...] = ()
    header: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    properties: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    reasoning: str | None = None
    add_nodes: tuple[str, ...] = ()
    remove_nodes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ParsedGraph:
    """One graph recovered from text.

    Attributes:
        graph: the graph, node ids ``str``; node/edge/graph attributes attached.  Treat as
            read-only (it is shared by the verifier's cached facts).
        fmt: the syntax it was read from: ``code``, ``edit`` (a GraphEdit applied to a base),
            ``json``, ``edgelist``, ``adjacency`` or ``python``.
        name: the header ``name`` if any.
        header: header key/values as written (values literal-parsed).
        declared_nodes: the header's ``nodes=`` value when it is an integer, else ``None``.
        duplicate_edges: edges listed more than once (parallel edges), in first-repeat order; for
            undirected graphs ``(u, v)`` and ``(v, u)`` are the same edge.
        blank_nodes: node ids that are empty or whitespace-only (null ids become the node
            ``''``; other blank strings are kept as written).
        edit: the edit, when ``fmt == 'edit'``.
    """

    graph: nx.Graph
    fmt: str = "code"
    name: str | None = None
    header: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    declared_nodes: int | None = None
    duplicate_edges: tuple[Edge, ...] = ()
    blank_nodes: tuple[str, ...] = ()
    edit: GraphEdit | None = None

    @property
    def directed(self) -> bool:
        return self.graph.is_directed()

    @property
    def num_nodes(self) -> int:
        return self.graph.number_of_nodes()

    @property
    def num_edges(self) -> int:
        return self.graph.number_of_edges()

    def same_graph(self, other: ParsedGraph) -> bool:
        """True when both have the same directedness, node set, edge set and attributes."""
        a, b = self.graph, other.graph
        if a.is_directed() != b.is_directed():
            return False
        if dict(a.nodes(data=True)) != dict(b.nodes(data=True)):
            return False
        if a.graph != b.graph:
            return False
        ea = {_edge_key(a, u, v): d for u, v, d in a.edges(data=True)}
        eb = {_edge_key(b, u, v): d for u, v, d in b.edges(data=True)}
        return ea == eb


def _edge_key(g: nx.Graph, u: str, v: str) -> tuple[str, str] | frozenset[str]:
    return (u, v) if g.is_directed() else frozenset((u, v))


@dataclass(frozen=True)
class ParseResult:
    """The verdict of the answer parser on one raw answer.

    ``outcome`` says what the answer is; ``graph`` is set exactly when ``outcome`` is
    :attr:`Outcome.GRAPH`; ``reason`` explains a failure (which limit, which abbreviation, what
    was missing) or quotes the refusal statement.
    """

    outcome: Outcome
    graph: ParsedGraph | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        if (self.outcome is Outcome.GRAPH) != (self.graph is not None):
            raise ValueError("ParseResult.graph must be set exactly when outcome is GRAPH")

    @property
    def parsed(self) -> bool:
        return self.outcome is Outcome.GRAPH

    @property
    def refusal(self) -> bool:
        return self.outcome is Outcome.REFUSAL
