"""L5 task semantics: what an edited graph must satisfy relative to its base graph.

Public API:

* :class:`TaskSpec` / :data:`TASKS` / :func:`task_spec` — the task registry: one spec per task
  type (its checker, how its minimal edit is determined, whether it removes nodes), looked up
  in one place (:mod:`.registry`);
* :func:`check_task` — the task verdicts (``Source.TASK``) of one result graph;
* :func:`minimal_edit` — size of the minimal edit (edge additions + removals);
* :func:`edit_distance` / :class:`EditDiff` — what changed from base to result;
* :func:`removes_nodes` / :data:`NODE_REMOVING_TASKS` — tasks whose GraphEdit answers drop
  nodes left isolated;
* :data:`CHECKED_TASKS` / :data:`UNCHECKED_TASKS` — which task types get verdicts.

Semantics, parameters and caps: docs/L5_TASKS.md.
"""

from __future__ import annotations

from pytest_graphinstruct.verify.tasks.diff import EditDiff, edit_distance
from pytest_graphinstruct.verify.tasks.registry import (
    CHECKED_TASKS,
    NODE_REMOVING_TASKS,
    TASKS,
    TaskSpec,
    check_task,
    minimal_edit,
    removes_nodes,
    resolve_task,
    task_spec,
)

#: Task types known from the GraphInstruct vocabulary that get no task verdicts.  Currently
#: empty: all 29 official types are checked (graph_transform only on the parts its text makes
#: precise).  Any type not in :data:`CHECKED_TASKS` (and not an ``add_edges_*``/
#: ``remove_edges_*`` variant) is unknown and also yields no verdicts.
UNCHECKED_TASKS: frozenset[str] = frozenset()

__all__ = [
    "CHECKED_TASKS",
    "NODE_REMOVING_TASKS",
    "TASKS",
    "UNCHECKED_TASKS",
    "EditDiff",
    "TaskSpec",
    "check_task",
    "edit_distance",
    "minimal_edit",
    "removes_nodes",
    "resolve_task",
    "task_spec",
]
