"""Graphs written as JSON (or python dict) objects.

Accepted shapes (keys are matched case-insensitively)::

    {"directed": false, "nodes": [0, 1, 2], "edges": [[0, 1], [1, 2]]}
    {"nodes": [{"id": "a", "label": "Alice"}, ...], "links": [{"source": "a", "target": "b"}]}
    {"node_list": [...], "edge_list": [[u, v, w], ...]}         # w -> edge attr "weight"
    {"adjacency": {"0": [1, 2], "1": [2]}}                       # or "adjacency_list", "adj"

Node items: ids, ``{"id": .., <attrs>}`` objects, ``[id, {attrs}]`` pairs, or a dict
``{id: {attrs}}``.  Edge items: ``[u, v]``, ``[u, v, weight]``, ``[u, v, {attrs}]``, or objects
with ``source``/``target`` (``u``/``v``, ``from``/``to``, ``src``/``dst``) keys, the other keys
being edge attributes.  ``"graph": {...}`` holds graph attributes (networkx node-link style);
``directed`` must be a truth value (``true/false/1/0``, strings too); a top-level
``"nodes": <int>`` or ``"num_nodes"`` is recorded as ``declared_nodes``.  Other scalar top-level
keys go to ``header``.
"""

from __future__ import annotations

from typing import Any, Final

from pytest_graphinstruct.graphs.build import GraphBuilder, node_id, ordered_items
from pytest_graphinstruct.graphs.codestyle import parse_directed
from pytest_graphinstruct.graphs.literals import Abbreviation
from pytest_graphinstruct.graphs.model import Limits, ParsedGraph
from pytest_graphinstruct.graphs.parse_errors import AbbreviationError, ParseError

NODE_KEYS: Final = ("nodes", "node_list", "vertices")
EDGE_KEYS: Final = ("edges", "edge_list", "links", "arcs")
ADJ_KEYS: Final = ("adjacency", "adjacency_list", "adj")
GRAPH_KEYS: Final = frozenset(NODE_KEYS + EDGE_KEYS + ADJ_KEYS)


def key_limits(limits: Limits) -> dict[str, tuple[int, str]]:
    """Per-key container limits for the reader, so a huge ``"nodes"`` list fails early."""
    nodes = (limits.max_nodes, "max_nodes")
    edges = (limits.max_edges, "max_edges")
    out = dict.fromkeys(NODE_KEYS, nodes)
    out.update(dict.fromkeys(EDGE_KEYS + ADJ_KEYS, edges))
    return out


def _lower_keys(d: dict[Any, Any]) -> dict[str, Any]:
    return {k.lower(): k for k in d if isinstance(k, str)}


def is_graph_dict(d: dict[Any, Any]) -> bool:
    """True when ``d`` has a nodes/edges/adjacency key holding a list (or a dict)."""
    for lk, k in _lower_keys(d).items():
        if lk in GRAPH_KEYS and isinstance(d[k], list | tuple | dict):
            return True
    return False


def graph_from_dict(d: dict[Any, Any], limits: Limits) -> ParsedGraph:
    """The graph a JSON object describes (see module doc); raises :class:`ParseError`."""
    keys = _lower_keys(d)

    def get(*names: str) -> Any:
        for n in names:
            if n in keys:
                return d[keys[n]]
        return None

    directed_value = get("directed")
    directed = False if directed_value is None else parse_directed(directed_value)
    builder = GraphBuilder(limits)
    declared: int | None = None

    nodes = get(*NODE_KEYS)
    if isinstance(nodes, Abbreviation):
        raise AbbreviationError(f"abbreviation {nodes.text!r} used instead of listing nodes")
    if isinstance(nodes, dict):
        for n, attrs in nodes.items():
            builder.add_node(node_id(n), attrs if isinstance(attrs, dict) else None)
    elif isinstance(nodes, list | tuple):
        builder.add_node_items(nodes)
    elif isinstance(nodes, int) and not isinstance(nodes, bool):
        declared = nodes
    num_nodes = get("num_nodes", "number_of_nodes")
    if declared is None and isinstance(num_nodes, int) and not isinstance(num_nodes, bool):
        declared = num_nodes

    edges = get(*EDGE_KEYS)
    if isinstance(edges, Abbreviation):
        raise AbbreviationError(f"abbreviation {edges.text!r} used instead of listing edges")
    if isinstance(edges, list | tuple):
        builder.add_edge_items(edges)
    elif edges is not None and not isinstance(edges, int):
        raise ParseError(f"'edges' must be a list, got {type(edges).__name__}")

    adjacency = get(*ADJ_KEYS)
    count_duplicates = True
    if isinstance(adjacency, dict):
        count_duplicates = False
        for u, targets in adjacency.items():
            uid = node_id(u)
            builder.add_node(uid)
            if isinstance(targets, dict):
                for v, attrs in targets.items():
                    builder.add_edge(uid, node_id(v), attrs if isinstance(attrs, dict) else None)
            elif isinstance(targets, list | tuple | set):
                for v in ordered_items(targets):
                    builder.add_edge(uid, node_id(v))
            elif targets is not None:
                builder.add_edge(uid, node_id(targets))

    graph_attrs = get("graph")
    if isinstance(graph_attrs, dict):
        builder.graph_attrs.update({str(k): v for k, v in graph_attrs.items()})
    header = {
        str(k): v
        for k, v in d.items()
        if isinstance(k, str)
        and k.lower() not in GRAPH_KEYS
        and k.lower() != "graph"
        and isinstance(v, str | int | float | bool)
    }
    name = get("name")
    return builder.build(
        directed,
        fmt="json",
        name=name if isinstance(name, str) else None,
        header=header,
        declared_nodes=declared,
        count_duplicates=count_duplicates,
    )
