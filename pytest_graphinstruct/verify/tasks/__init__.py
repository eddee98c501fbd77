"""L5 task semantics: what an edited graph must satisfy relative to its base graph.

Public API:

* :func:`check_task` — the task verdicts (``Source.TASK``) of one result graph;
* :func:`minimal_edit` — size of the minimal edit (edge additions + removals);
* :func:`edit_distance` / :class:`EditDiff` — what changed from base to result;
* :data:`NODE_REMOVING_TASKS` — tasks whose GraphEdit answers drop nodes left isolated;
* :data:`CHECKED_TASKS` / :data:`UNCHECKED_TASKS` — which task types get verdicts.

Semantics, parameters and caps: docs/L5_TASKS.md.
"""

from __future__ import annotations

from pytest_graphinstruct.verify.tasks.diff import EditDiff, edit_distance
from pytest_graphinstruct.verify.tasks.minimal import minimal_edit
from pytest_graphinstruct.verify.tasks.semantics import CHECKED_TASKS, check_task, resolve_task

#: Tasks whose answer drops base nodes.  When such an answer is a GraphEdit, base nodes that the
#: edit leaves isolated (they lost all their edges) are removed: the k-core, pruned tree and
#: extracted subgraph keep only some nodes; a contraction retires the two merged endpoints; a
#: line graph or relabelling replaces every base node by new ones.  (complement, split_graph &
#: co. are *not* here: an isolated node is a legitimate part of their answers.)
NODE_REMOVING_TASKS: frozenset[str] = frozenset(
    {"k_core", "prune_tree", "extract_subgraph", "edge_contraction", "line_graph", "relabel"}
)

#: Task types known from the GraphInstruct vocabulary that get no task verdicts.  Currently
#: empty: all 29 official types are checked (graph_transform only on the parts its text makes
#: precise).  Any type not in :data:`CHECKED_TASKS` (and not an ``add_edges_*``/
#: ``remove_edges_*`` variant) is unknown and also yields no verdicts.
UNCHECKED_TASKS: frozenset[str] = frozenset()

__all__ = [
    "CHECKED_TASKS",
    "NODE_REMOVING_TASKS",
    "UNCHECKED_TASKS",
    "EditDiff",
    "check_task",
    "edit_distance",
    "minimal_edit",
    "resolve_task",
]
