"""The L5 task registry: one :class:`TaskSpec` per task type, looked up in one place.

A task type's spec holds everything task-specific that the project does with an L5 answer:

* ``check``: the checker that produces its task verdicts (:mod:`.semantics`);
* ``minimum``: how its minimal edit is determined (a :class:`~.minimal.MinimumRule`:
  determined by the base, by an edit count in one unit, or not computable);
* ``removes_nodes``: whether a ``GraphEdit`` answer drops the base nodes that the edit leaves
  isolated (the verifier's parser applies this, :meth:`.Verifier.parse`);
* ``renames_nodes``: whether the result names its nodes freely (D4 edit quality).

:func:`task_spec` is the only lookup.  :func:`check_task`, :func:`minimal_edit`,
:func:`removes_nodes` and :func:`resolve_task` all go through it, and :data:`CHECKED_TASKS` and
:data:`NODE_REMOVING_TASKS` are derived from :data:`TASKS`.  A new task type is one more
:class:`TaskSpec` entry in :data:`TASKS` (and a section in docs/L5_TASKS.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from pytest_graphinstruct.graphs.model import ParsedGraph
from pytest_graphinstruct.suite.constraints import Constraint
from pytest_graphinstruct.verify.tasks import minimal as mn
from pytest_graphinstruct.verify.tasks import semantics as sem
from pytest_graphinstruct.verify.verdict import Verdict


@dataclass(frozen=True)
class TaskSpec:
    """One L5 task type.

    Attributes:
        name: the canonical task type (``task_type=`` value, lower case).
        check: appends the task verdicts of one result to ``ctx.out`` (docs/L5_TASKS.md).
        minimum: how the size of the minimal edit is determined.
        removes_nodes: a ``GraphEdit`` answer drops the base nodes it leaves isolated.  True for
            tasks whose answer keeps only some base nodes (k-core, pruned tree, extracted
            subgraph), retires the merged endpoints (contraction) or replaces every base node
            (line graph, relabelling).  False where an isolated node is a legitimate part of the
            answer (complement, split_graph, ...).
        renames_nodes: the result names (some of) its nodes freely (line graph, relabelling,
            the merged node of a contraction), so an edit size between base and result says
            nothing unless the minimum is computed (D4 then takes no reference edit size).
    """

    name: str
    check: Callable[[sem.TaskContext], None]
    minimum: mn.MinimumRule
    removes_nodes: bool = False
    renames_nodes: bool = False


def _table(*specs: TaskSpec) -> Mapping[str, TaskSpec]:
    table = {s.name: s for s in specs}
    if len(table) != len(specs):
        raise ValueError("duplicate task type in the L5 task registry")
    return MappingProxyType(table)


_ADD, _REMOVE = "add", "remove"

#: Every L5 task type with task semantics, by canonical name.
TASKS: Mapping[str, TaskSpec] = _table(
    # answers determined by the base graph
    TaskSpec("spanning_tree", sem.check_spanning_tree, mn.Determined(mn.spanning_removals)),
    TaskSpec("mst", sem.check_mst, mn.Determined(mn.spanning_removals)),
    TaskSpec("complement", sem.check_complement, mn.Determined(mn.complement_size)),
    TaskSpec("line_graph", sem.check_line_graph, mn.NOT_COMPUTABLE, removes_nodes=True,
             renames_nodes=True),
    TaskSpec("transpose", sem.check_transpose, mn.Determined(mn.transpose_size)),
    TaskSpec("graph_power", sem.check_graph_power, mn.Determined(mn.power_size)),
    TaskSpec("relabel", sem.check_relabel, mn.Determined(mn.relabel_size), removes_nodes=True,
             renames_nodes=True),
    TaskSpec("k_core", sem.check_k_core, mn.Determined(mn.k_core_removals), removes_nodes=True),
    TaskSpec("extract_subgraph", sem.check_extract_subgraph,
             mn.Determined(mn.extract_removals), removes_nodes=True),
    TaskSpec("prune_tree", sem.check_prune_tree, mn.Determined(mn.prune_removals),
             removes_nodes=True),
    TaskSpec("edge_contraction", sem.check_edge_contraction,
             mn.Determined(mn.contraction_size), removes_nodes=True, renames_nodes=True),
    # edits toward a property
    TaskSpec("make_connected", sem.check_make_connected, mn.ByCount(_ADD, sem.min_make_connected)),
    TaskSpec("make_acyclic", sem.check_make_acyclic,
             mn.ByCount(mn.acyclic_unit, mn.min_acyclic_edit)),
    TaskSpec("add_edges_dag", sem.check_add_edges_dag, mn.ByCount(_ADD)),
    TaskSpec("break_cycles", sem.check_break_cycles, mn.ByCount(_REMOVE, mn.min_cycle_breaking)),
    TaskSpec("make_bipartite", sem.check_make_bipartite,
             mn.ByCount(_REMOVE, sem.min_bipartite_removals)),
    TaskSpec("make_planar", sem.check_make_planar, mn.ByCount(_REMOVE, sem.min_planar_removals)),
    TaskSpec("maximize_planar", sem.check_maximize_planar,
             mn.Determined(mn.maximal_planar_additions)),
    TaskSpec("add_edges_planar", sem.check_add_edges_planar, mn.ByCount(_ADD)),
    TaskSpec("make_eulerian", sem.check_make_eulerian,
             mn.ByCount(_ADD, sem.min_eulerian_additions)),
    TaskSpec("make_hamiltonian", sem.check_make_hamiltonian,
             mn.ByCount(_ADD, sem.min_hamiltonian_additions)),
    TaskSpec("make_regular", sem.check_make_regular, mn.Determined(sem.min_regular_additions)),
    TaskSpec("increase_connectivity", sem.check_increase_connectivity,
             mn.ByCount(_ADD, sem.min_connectivity_additions)),
    TaskSpec("reduce_diameter", sem.check_reduce_diameter, mn.ByCount(_ADD)),
    TaskSpec("add_edges", sem.check_add_edges, mn.ByCount(_ADD)),
    TaskSpec("remove_edges", sem.check_remove_edges, mn.ByCount(_REMOVE)),
    TaskSpec("split_graph", sem.check_split_graph, mn.ByCount(_REMOVE, sem.min_split_removals)),
    TaskSpec("modify_bipartite", sem.check_modify_bipartite, mn.ByCount(_ADD)),
    TaskSpec("complete_bipartite", sem.check_complete_bipartite,
             mn.Determined(sem.min_complete_bipartite_additions)),
    TaskSpec("graph_transform", sem.check_graph_transform,
             mn.ByCount(_ADD, mn.min_transform_additions)),
)

#: Prefixes whose variants (``add_edges_<x>``, ``remove_edges_<x>``) without an entry of their
#: own fall back to the prefix's spec.
_FALLBACK_PREFIXES: tuple[str, ...] = ("add_edges", "remove_edges")


def task_spec(task_type: str | None) -> TaskSpec | None:
    """The spec of a task type: case and surrounding spaces ignored; an ``add_edges_<x>`` /
    ``remove_edges_<x>`` variant without its own entry gets ``add_edges`` / ``remove_edges``.
    ``None`` for an unknown type (or ``None``)."""
    if not isinstance(task_type, str):  # also guards callers that promise never to raise
        return None
    t = task_type.strip().lower()
    spec = TASKS.get(t)
    if spec is not None:
        return spec
    for prefix in _FALLBACK_PREFIXES:
        if t.startswith(prefix + "_"):
            return TASKS[prefix]
    return None


#: Task types with task verdicts (``add_edges_<x>``/``remove_edges_<x>`` variants without an
#: entry of their own fall back to ``add_edges``/``remove_edges``).
CHECKED_TASKS: frozenset[str] = frozenset(TASKS)

#: Task types whose GraphEdit answers drop the base nodes they leave isolated
#: (:attr:`TaskSpec.removes_nodes`).
NODE_REMOVING_TASKS: frozenset[str] = frozenset(n for n, s in TASKS.items() if s.removes_nodes)


def resolve_task(task_type: str) -> str | None:
    """The canonical name of a task type's spec (:func:`task_spec`), or ``None`` when unknown."""
    spec = task_spec(task_type)
    return None if spec is None else spec.name


def removes_nodes(task_type: str | None) -> bool:
    """Whether a GraphEdit answer to this task type drops the base nodes it leaves isolated."""
    spec = task_spec(task_type)
    return spec is not None and spec.removes_nodes


def check_task(
    task_type: str,
    *,
    base: ParsedGraph,
    result: ParsedGraph,
    explicit: Sequence[Constraint],
    text: str,
) -> tuple[Verdict, ...]:
    """The task-semantic verdicts of one result graph against its base (docs/L5_TASKS.md).

    Promises: every verdict has ``source=Source.TASK``, ``key='task:<task_type>'`` and
    ``constraint='task:<task_type>:<aspect>'``; ``where`` is empty when satisfied, else a locus
    whose lists are capped at :data:`~.semantics.WHERE_CAP` items, each with its
    ``<name>_count``.  An unknown task type yields ``()``; an aspect whose parameter is not
    stated (explicit constraints first, then the text) or whose bounded search gave up is
    omitted.  Runs in bounded time (see the caps in :mod:`.algorithms`).
    """
    spec = task_spec(task_type)
    if spec is None:
        return ()
    ctx = sem.TaskContext(task=task_type.strip().lower(), base=base, result=result,
                          explicit=tuple(explicit), text=text)
    spec.check(ctx)
    return tuple(ctx.out)


def minimal_edit(
    task_type: str,
    *,
    base: ParsedGraph,
    explicit: Sequence[Constraint],
    text: str,
) -> int | None:
    """Edge additions + removals of the smallest edit that does the task (:mod:`.minimal`).

    Returns ``None`` for unknown task types, for tasks with no computable minimum and no stated
    count (line graph: node names are free), and when a bounded search gave up.
    """
    spec = task_spec(task_type)
    if spec is None:
        return None
    ctx = sem.TaskContext(task=spec.name, base=base, result=base, explicit=tuple(explicit),
                          text=text)
    return spec.minimum.size(ctx)


__all__ = [
    "CHECKED_TASKS",
    "NODE_REMOVING_TASKS",
    "TASKS",
    "TaskSpec",
    "check_task",
    "minimal_edit",
    "removes_nodes",
    "resolve_task",
    "task_spec",
]
