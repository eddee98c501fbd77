"""How big the minimal L5 edit is, for D4 edit quality: the *minimum rules* of the task registry.

Unit: edge additions plus edge removals, exactly as :attr:`EditDiff.edge_changes` counts them —
a reversed arc is one removal plus one addition (2), and node removals are not counted (they
show up as the removed edges of those nodes).

Every task's :class:`~.registry.TaskSpec` carries one :class:`MinimumRule`:

* :class:`Determined` — the answer is determined by the base (complement, k-core, G^k, spanning
  tree, ...): the minimal edit is that answer's size;
* :class:`ByCount` — an edit in one unit (add / remove / reverse): an explicit "exactly N edges"
  tied to that unit is the required edit size, otherwise the computed minimum for the task
  (bounded searches; ``None`` when a search gives up, or when the task has no computable
  minimum and only a stated count says anything);
* :data:`NOT_COMPUTABLE` — nothing is computable (line graph: node names are free).

The size functions below are the building blocks of those rules; each returns ``None`` when a
parameter is missing or a search gave up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeAlias

import networkx as nx

from pytest_graphinstruct.verify.tasks import algorithms as alg
from pytest_graphinstruct.verify.tasks import semantics as sem
from pytest_graphinstruct.verify.tasks import text as tx
from pytest_graphinstruct.verify.tasks.diff import edge_key, edge_set


def spanning_removals(ctx: sem.TaskContext) -> int | None:
    g = alg.undirected(ctx.base_graph)
    if g.number_of_nodes() == 0 or not nx.is_connected(g):
        return None
    return g.number_of_edges() - (g.number_of_nodes() - 1)


def complement_size(ctx: sem.TaskContext) -> int | None:
    n = ctx.base_graph.number_of_nodes()
    pairs = n * (n - 1) if ctx.base_graph.is_directed() else n * (n - 1) // 2
    return pairs + nx.number_of_selfloops(ctx.base_graph)


def transpose_size(ctx: sem.TaskContext) -> int | None:
    if not ctx.base_graph.is_directed():
        return 0
    b = ctx.base_graph
    return 2 * sum(1 for u, v in b.edges() if u != v and not b.has_edge(v, u))


def power_size(ctx: sem.TaskContext) -> int | None:
    k = tx.graph_power(ctx.text)
    if k is None or ctx.base_graph.number_of_nodes() > sem.MATERIALISE_MAX_NODES:
        return None
    d = ctx.base_graph.is_directed()
    return len(edge_set(alg.graph_power(ctx.base_graph, k), d) ^ edge_set(ctx.base_graph, d))


def k_core_removals(ctx: sem.TaskContext) -> int | None:
    k = sem.k_of_core(ctx)
    if k is None:
        return None
    b = ctx.base_graph.copy()
    loops = nx.number_of_selfloops(b)
    b.remove_edges_from(list(nx.selfloop_edges(b)))
    return b.number_of_edges() - nx.k_core(b, k).number_of_edges() + loops


def extract_removals(ctx: sem.TaskContext) -> int | None:
    ends = tx.path_endpoints(ctx.text)
    if ends is None or not tx.all_shortest_paths(ctx.text) or not set(ends) <= ctx.base_nodes:
        return None
    union = sem.shortest_path_union(ctx.base_graph, *ends)
    if union is None:
        return None
    return ctx.base_graph.number_of_edges() - union.number_of_edges()


def prune_removals(ctx: sem.TaskContext) -> int | None:
    r, d = tx.root(ctx.text), tx.depth_bound(ctx.text)
    g = alg.undirected(ctx.base_graph)
    if r is None or d is None or r not in ctx.base_nodes or not nx.is_tree(g):
        return None
    # In a tree, dropping every node deeper than d drops exactly one edge per node.
    return sum(1 for x in nx.single_source_shortest_path_length(g, r).values() if x > d)


def relabel_size(ctx: sem.TaskContext) -> int | None:
    mapping = tx.relabel_mapping(ctx.text)
    if not mapping or not ctx.base_nodes <= set(mapping):
        return None
    d = ctx.base_graph.is_directed()
    mapped = frozenset(edge_key(d, mapping[str(u)], mapping[str(v)])
                       for u, v in ctx.base_graph.edges())
    return len(mapped ^ edge_set(ctx.base_graph, d))


def contraction_size(ctx: sem.TaskContext) -> int | None:
    edge, name = tx.contracted_edge(ctx.text), tx.merged_name(ctx.text)
    if edge is None or name is None or not ctx.base_graph.has_edge(*edge):
        return None
    want = sem.contract(ctx.base_graph, *edge)
    if name != edge[0]:
        want = nx.relabel_nodes(want, {edge[0]: name}, copy=True)
    d = ctx.base_graph.is_directed()
    return len(edge_set(want, d) ^ edge_set(ctx.base_graph, d))


def maximal_planar_additions(ctx: sem.TaskContext) -> int | None:
    g = nx.Graph(alg.undirected(ctx.base_graph))
    g.remove_edges_from(list(nx.selfloop_edges(g)))
    if not alg.is_planar(g):
        return None
    return sem.maximal_planar_edges(g.number_of_nodes()) - g.number_of_edges()


def min_transform_additions(ctx: sem.TaskContext) -> int | None:
    target = sem.explicit_constraint(ctx, "graph_type")
    if (target is None or target.value != "complete_bipartite"
            or tx.verbs(ctx.text) != {"add"} or sem.base_partition(ctx) is None):
        return None
    return sem.min_complete_bipartite_additions(ctx)


def acyclic_unit(ctx: sem.TaskContext) -> str:
    if ctx.base_graph.is_directed() and sem.acyclic_mode(ctx.text) == "reverse":
        return "reverse"
    return "remove"  # also for "either": a removal is the cheaper of the two edits


def min_acyclic_edit(ctx: sem.TaskContext) -> int | None:
    if not ctx.base_graph.is_directed():
        return sem.min_forest_removals(ctx)
    return sem.min_fas(ctx)


def min_cycle_breaking(ctx: sem.TaskContext) -> int | None:
    if tx.mentions_triangles(ctx.text) and not ctx.base_graph.is_directed():
        return sem.min_triangle_removals(ctx)
    return sem.min_forest_removals(ctx)


# ----------------------------------------------------------------------------- rules

#: A size function: the context of one task → an edit size, or ``None``.
SizeFn: TypeAlias = Callable[[sem.TaskContext], int | None]


class MinimumRule(Protocol):
    """How a task's minimal edit is determined (one per :class:`~.registry.TaskSpec`)."""

    def size(self, ctx: sem.TaskContext) -> int | None:
        """Edge additions + removals of the smallest edit doing the task on ``ctx.base``, or
        ``None`` when that is not computable."""
        ...


@dataclass(frozen=True)
class Determined:
    """The answer is determined by the base: the minimal edit is that answer's size."""

    answer_size: SizeFn

    def size(self, ctx: sem.TaskContext) -> int | None:
        return self.answer_size(ctx)


@dataclass(frozen=True)
class ByCount:
    """An edit in one ``unit`` (``'add'``, ``'remove'``, ``'reverse'``; or a function of the
    context choosing one).  An explicit "exactly N" tied to that unit is the required edit size;
    otherwise ``minimum`` (in that unit) when given, else ``None`` (the count is stated only).
    A reversal counts 2 (one removal plus one addition)."""

    unit: str | Callable[[sem.TaskContext], str]
    minimum: SizeFn | None = None

    def size(self, ctx: sem.TaskContext) -> int | None:
        unit = self.unit if isinstance(self.unit, str) else self.unit(ctx)
        factor = 2 if unit == "reverse" else 1
        stated = tx.stated_count(ctx.text)
        if stated is not None and stated[0] == unit:
            return stated[1] * factor
        if self.minimum is None:
            return None
        best = self.minimum(ctx)
        return None if best is None else best * factor


@dataclass(frozen=True)
class NotComputable:
    """No minimal edit can be computed (``why`` says so)."""

    why: str

    def size(self, ctx: sem.TaskContext) -> int | None:
        return None


#: The rule of the line graph: node names are free, so edge identity is too.
NOT_COMPUTABLE = NotComputable("the result names its nodes freely, so edge identity is free too")


__all__ = [
    "NOT_COMPUTABLE",
    "ByCount",
    "Determined",
    "MinimumRule",
    "NotComputable",
    "SizeFn",
]
