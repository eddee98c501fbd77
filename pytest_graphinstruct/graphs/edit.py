"""Applying a :class:`GraphEdit` answer to its base graph (L5)."""

from __future__ import annotations

from types import MappingProxyType

from pytest_graphinstruct.graphs.build import blank_nodes
from pytest_graphinstruct.graphs.model import Edge, GraphEdit, ParsedGraph


def apply_edit(base: ParsedGraph, edit: GraphEdit, *, drop_isolated: bool = False) -> ParsedGraph:
    """The graph that results from applying ``edit`` to ``base``; ``base`` is not modified.

    In order: remove ``remove_edges`` (for undirected graphs either orientation matches; an
    absent edge is ignored), remove ``remove_nodes`` (absent ones ignored), add ``add_nodes``,
    add ``add_edges`` (creating missing endpoints).  An added edge that already exists at that
    point is recorded in ``duplicate_edges`` (once per edge).  With ``drop_isolated``, nodes
    that had edges in ``base`` but are isolated afterwards are removed (node-removing L5 tasks:
    k-core, tree pruning, subgraph extraction); nodes isolated in ``base`` or new ones stay.

    The result has ``fmt='edit'``, ``edit=edit``, the edit's header and name, and
    ``declared_nodes=None``; node, edge and graph attributes of ``base`` are kept.
    """
    g = base.graph.copy()
    base_degree = dict(base.graph.degree())
    for u, v in edit.remove_edges:
        if g.has_edge(u, v):
            g.remove_edge(u, v)
    for n in edit.remove_nodes:
        if n in g:
            g.remove_node(n)
    g.add_nodes_from(edit.add_nodes)
    duplicates: list[Edge] = []
    seen_duplicate: set[Edge] = set()
    for u, v in edit.add_edges:
        if g.has_edge(u, v):
            key = (u, v) if g.is_directed() or u <= v else (v, u)
            if key not in seen_duplicate:
                seen_duplicate.add(key)
                duplicates.append((u, v))
            continue
        g.add_edge(u, v)
    if drop_isolated:
        g.remove_nodes_from([n for n, d in g.degree() if d == 0 and base_degree.get(n, 0) > 0])
    name = edit.header.get("name")
    return ParsedGraph(
        graph=g,
        fmt="edit",
        name=None if name is None else str(name),
        header=MappingProxyType(dict(edit.header)),
        declared_nodes=None,
        duplicate_edges=tuple(duplicates),
        blank_nodes=blank_nodes(g),
        edit=edit,
    )
