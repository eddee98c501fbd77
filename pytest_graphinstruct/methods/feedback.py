"""Verifier feedback for iterative methods (VGIG): what a refinement round tells the model.

Built from the verifier's own verdicts, so the refinement target is exactly what is scored
(the reference release refines against one constraint set and scores against another; this
module has no constraint logic of its own).  Granularities (paper Tab. 11, release §4.3):

* ``none`` — one sentence that some constraint failed (the binary signal);
* ``coarse`` — the violated constraint categories, each with its keys;
* ``fine`` — one bullet per violation: the constraint, expected and observed, for numeric
  constraints the signed gap and which way to move, and where (offending nodes, a cycle, the
  components), ordered structural → direction → count → degree → numeric → domain → task, at
  most :data:`MAX_BULLETS` bullets, then a joint-incompatibility flag when the violations
  pull the edge count in opposite directions.  Level-specific additions (Tab. 11): at L4 the
  domain-baseline comparison; at L5 the step-wise partial credit (which of the edit task's
  checks already hold) and the intermediate state diff (what the answer changed in the base
  graph so far).

A passing answer gets ``""`` at every granularity (an iterative method stops on it).  Node names
come from the model's own answer: each is cut to :data:`MAX_NAME` characters and at most
:data:`MAX_LOCUS` are listed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx

from pytest_graphinstruct.methods.priors import prior
from pytest_graphinstruct.prompts.texts import PACKAGED, TemplateSet
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.tasks.diff import EditDiff, edit_distance
from pytest_graphinstruct.verify.verdict import CATEGORIES, Source, Verdict, Verification
from pytest_graphinstruct.vocab import FEEDBACK_LEVELS

MAX_BULLETS = 8
MAX_LOCUS = 5
MAX_NAME = 40

# which way to move a numeric property, and how (release §4.3's directional hints)
_HINTS: Mapping[tuple[str, str], str] = {
    ("density", "high"): "remove edges", ("density", "low"): "add edges",
    ("clustering_coefficient", "high"): "break triangles",
    ("clustering_coefficient", "low"): "add edges that close triangles",
    ("average_path_length", "high"): "add shortcut edges between distant nodes",
    ("average_path_length", "low"): "remove shortcut edges",
    ("diameter", "high"): "add shortcut edges between the farthest nodes",
    ("diameter", "low"): "lengthen the longest shortest path",
    ("modularity", "high"): "add edges between the groups",
    ("modularity", "low"): "put more edges inside groups and fewer between them",
    ("edge_connectivity", "high"): "remove redundant edges",
    ("edge_connectivity", "low"): "add edges so no small cut disconnects the graph",
}

def feedback(verification: Verification, level: str, *,
             instruction: Instruction | None = None,
             templates: TemplateSet = PACKAGED) -> str:
    """The feedback text for one verified answer at granularity ``level`` (``""`` when it
    passes), worded by ``templates`` (the run's prompt texts).  With the ``instruction`` of an
    L4 item whose domain has a prior (:mod:`.priors`), fine feedback adds the domain-baseline
    comparison: each of the answer's average degree, clustering and density that lies outside
    the prior's band (a hint, not a scored constraint, so it never keeps a passing answer
    iterating).

    Raises:
        ValueError: ``level`` is not one of :data:`FEEDBACK_LEVELS`.
    """
    if level not in FEEDBACK_LEVELS:
        raise ValueError(f"feedback level must be one of {', '.join(FEEDBACK_LEVELS)}, "
                         f"got {level!r}")
    violations = verification.violations
    if not violations:
        return ""
    if level == "none":
        return templates.render_section("feedback", "none")
    if not verification.parse.parsed:
        why = verification.parse.reason or "no graph found"
        return templates.render_section("feedback", "unreadable", why=_cut(why, 200))
    ordered = sorted(violations, key=lambda v: _rank(v.category))
    if level == "coarse":
        groups: dict[str, list[str]] = {}
        for v in ordered:
            keys = groups.setdefault(v.category, [])
            if v.key not in keys:
                keys.append(v.key)
        listed = "; ".join(f"{cat} ({', '.join(keys)})" for cat, keys in groups.items())
        return templates.render_section("feedback", "coarse", listed=listed)
    lines = [_bullet(v) for v in ordered]
    graph = verification.parse.graph
    if instruction is not None and instruction.level == 4 and graph:
        lines += _domain_lines(graph.graph, instruction.domain)
    bullets = [f"- {line}" for line in lines[:MAX_BULLETS]]
    if len(lines) > MAX_BULLETS:
        bullets.append(f"- ... and {len(lines) - MAX_BULLETS} more")
    conflict = _conflict(ordered)
    if conflict:
        bullets.append(conflict)
    state: list[str] = []
    if instruction is not None and instruction.base is not None and graph is not None:
        state = _edit_state(verification, edit_distance(instruction.base, graph))
    return "\n".join([*state, templates.render_section("feedback", "fine_header"), *bullets,
                      templates.render_section("feedback", "fine_closing")])


def _edit_state(verification: Verification, diff: EditDiff) -> list[str]:
    """L5's two fine additions (Tab. 11): the step-wise partial credit — which of the edit
    task's checks already hold — and the intermediate state diff, what the answer changed in
    the base graph (bounded like every locus)."""
    task = verification.of(Source.TASK)
    out = []
    if task:
        held = [_step(v) for v in task if v.satisfied]
        failing = [_step(v) for v in task if not v.satisfied]
        out.append(f"Progress on the edit: {len(held)} of {len(task)} task checks hold"
                   + (f" ({', '.join(held)})" if held else "")
                   + (f"; still failing: {', '.join(failing)}." if failing else "."))
    changes = [
        _listed("added", "edge", [_edge(e) for e in diff.added_edges]),
        _listed("removed", "edge", [_edge(e) for e in diff.removed_edges]),
        _listed("added", "node", [_cut(n, MAX_NAME) for n in diff.added_nodes]),
        _listed("removed", "node", [_cut(n, MAX_NAME) for n in diff.removed_nodes]),
    ]
    done = [c for c in changes if c]
    out.append("Your graph compared with the base graph: "
               + ("; ".join(done) if done else "no change at all") + ".")
    return out


def _step(v: Verdict) -> str:
    """A task verdict's step name: ``task:break_cycles:triangle_free`` -> ``triangle_free``."""
    return _cut(v.constraint.rsplit(":", 1)[-1], MAX_NAME)


def _listed(verb: str, noun: str, items: Sequence[str]) -> str:
    if not items:
        return ""
    shown = ", ".join(items[:MAX_LOCUS]) + (", ..." if len(items) > MAX_LOCUS else "")
    return f"{verb} {len(items)} {noun}{'s' if len(items) != 1 else ''} ({shown})"


def _edge(e: Sequence[Any]) -> str:
    return f"({_cut(str(e[0]), MAX_NAME)}, {_cut(str(e[1]), MAX_NAME)})"


def _domain_lines(graph: nx.Graph, domain: str | None) -> list[str]:
    """The answer's structure against its domain's prior: one line per statistic outside the
    prior's band (none when the domain has no prior or the graph has < 2 nodes)."""
    p = prior(domain)
    n = graph.number_of_nodes()
    if p is None or n < 2:
        return []
    simple = nx.Graph(graph.to_undirected(as_view=True))
    stats = (("average degree", 2 * simple.number_of_edges() / n, p.avg_degree),
             ("clustering", nx.average_clustering(simple), p.clustering),
             ("density", nx.density(simple), p.density))
    out = []
    for name, value, band in stats:
        if not band.low <= value <= band.high:
            side = "below" if value < band.low else "above"
            out.append(f"domain ({p.label}): {name} {value:.3g} is {side} the usual "
                       f"{band.low:g}–{band.high:g} of such networks")
    return out


# Which way the edge count must move to fix a violation, by (key, gap direction) for measured
# constraints and by (key, wanted value) for structural ones: +1 more edges, -1 fewer.
_EDGE_PULL: Mapping[tuple[str, str], int] = {
    ("num_edges", "low"): 1, ("num_edges", "high"): -1,
    ("density", "low"): 1, ("density", "high"): -1,
    ("min_degree", "low"): 1, ("min_degree", "high"): -1,
    ("max_degree", "low"): 1, ("max_degree", "high"): -1,
    ("diameter", "high"): 1, ("diameter", "low"): -1,
    ("average_path_length", "high"): 1, ("average_path_length", "low"): -1,
    ("clustering_coefficient", "low"): 1, ("clustering_coefficient", "high"): -1,
    ("edge_connectivity", "low"): 1, ("edge_connectivity", "high"): -1,
    ("connected", "true"): 1, ("connected", "false"): -1,
    ("acyclic", "true"): -1, ("acyclic", "false"): 1,
}


def _pull(v: Verdict) -> int:
    gap = v.gap
    if gap is not None:
        return _EDGE_PULL.get((v.key, gap.direction), 0)
    value = v.constraint.partition("=")[2].strip().lower()
    return _EDGE_PULL.get((v.key, value), 0) if v.category == "structural" else 0


def _conflict(violations: Sequence[Verdict]) -> str:
    """Tab. 11's joint-incompatibility flag: a line when the violated constraints pull the edge
    count in opposite directions (``""`` otherwise) — adding or removing edges alone cannot fix
    them together."""
    more = [_cut(v.constraint, MAX_NAME) for v in violations if _pull(v) > 0]
    fewer = [_cut(v.constraint, MAX_NAME) for v in violations if _pull(v) < 0]
    if not (more and fewer):
        return ""
    return (f"Note: these pull in opposite directions — {', '.join(_names(more))} call for "
            f"more edges, {', '.join(_names(fewer))} for fewer; move edges (remove them where "
            "there are too many, add them where there are too few) instead of only adding or "
            "removing.")


def _rank(cat: str) -> int:
    return CATEGORIES.index(cat) if cat in CATEGORIES else len(CATEGORIES)


def _bullet(v: Verdict) -> str:
    text = f"{v.constraint}: expected {v.expected}, observed {v.observed}"
    gap = v.gap
    if gap is not None:
        text += f" (gap {gap.gap:+.4g}"
        hint = _HINTS.get((v.key, gap.direction))
        if v.category == "count" and abs(gap.gap) >= 1:
            hint = f"{'remove' if gap.direction == 'high' else 'add'} {abs(gap.gap):g}"
        elif v.category == "degree":
            hint = ("remove edges at the offending nodes" if gap.direction == "high"
                    else "add edges at the offending nodes")
        text += f": {hint})" if hint else ")"
    where = _where(v.where)
    return f"{text}{'; ' + where if where else ''}"


def _where(where: Mapping[str, Any]) -> str:
    """A short, bounded description of a verdict's locus."""
    parts = []
    if where.get("cycle"):
        cycle = list(where["cycle"])
        if cycle and all(isinstance(e, (list, tuple)) and len(e) == 2 for e in cycle):
            cycle = [e[0] for e in cycle] + [cycle[-1][1]]  # edges -> the node sequence
        parts.append("a cycle: " + " -> ".join(_names(cycle)))
    if where.get("components"):
        comps = where["components"]
        shown = ", ".join("{" + ", ".join(_names(c)) + "}" for c in comps[:3])
        parts.append(f"{len(comps)} components, e.g. {shown}")
    elif where.get("nodes"):
        nodes = where["nodes"]
        more = f" (of {where.get('count', len(nodes))})" if len(nodes) > MAX_LOCUS else ""
        parts.append(f"offending nodes: {', '.join(_names(nodes))}{more}")
    for key, label in _EDGE_LOCI:
        if where.get(key):
            edges = list(where[key])
            parts.append(f"{label}: " + ", ".join(_edge(e) for e in edges[:MAX_LOCUS])
                         + _more(where, key, len(edges)))
    for key, label in _NODE_LOCI:
        if where.get(key):
            nodes = list(where[key])
            parts.append(f"{label}: {', '.join(_names(nodes))}"
                         + _more(where, key, len(nodes), shown=False))
    if where.get("triangles"):
        tri = list(where["triangles"])
        parts.append("triangles: " + ", ".join("{" + ", ".join(_names(t)) + "}"
                                               for t in tri[:3])
                     + _more(where, "triangles", len(tri), shown_count=3))
    if where.get("odd_cycle"):
        parts.append("an odd cycle: " + " -> ".join(_names(list(where["odd_cycle"]))))
    return "; ".join(parts)


_EDGE_LOCI = (("edges", "edges"), ("missing_edges", "missing edges"),
              ("extra_edges", "edges that should not be there"))
_NODE_LOCI = (("missing_nodes", "missing nodes"), ("extra_nodes", "nodes that should not be there"),
              ("unreached_nodes", "unreached nodes"))


def _more(where: Mapping[str, Any], key: str, listed: int, *, shown: bool = True,
          shown_count: int = MAX_LOCUS) -> str:
    """`` ... (of N)`` when the locus holds more than is shown (the verifier's ``<key>_count``
    is the full number; the listed items may themselves be capped)."""
    total = where.get(f"{key}_count", listed)
    if not isinstance(total, int) or total <= min(listed, shown_count):
        return ""
    return f" (of {total})" if not shown else f", ... (of {total})"


def _names(items: Sequence[Any]) -> list[str]:
    names = [_cut(str(x), MAX_NAME) for x in list(items)[:MAX_LOCUS]]
    return names + (["..."] if len(items) > MAX_LOCUS else [])


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())  # one line: no newlines from the model's names
    return text if len(text) <= limit else text[:limit - 1] + "…"
