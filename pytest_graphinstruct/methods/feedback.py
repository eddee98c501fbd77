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

Every sentence is a section of ``prompts/templates/feedback.txt`` (the directional hints of
numeric constraints: ``feedback_hints.txt``, one section per ``<key>_<high|low>``), rendered
through the run's :class:`~pytest_graphinstruct.prompts.texts.TemplateSet`; code only picks the
sections, fills them and joins them with punctuation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx

from pytest_graphinstruct.methods.priors import prior
from pytest_graphinstruct.prompts.texts import PACKAGED, TemplateSet
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.locus import Locus
from pytest_graphinstruct.verify.tasks.diff import EditDiff, edit_distance
from pytest_graphinstruct.verify.verdict import CATEGORIES, Source, Verdict, Verification
from pytest_graphinstruct.vocab import FEEDBACK_LEVELS, FeedbackLevel

MAX_BULLETS = 8
MAX_LOCUS = 5
MAX_NAME = 40

_FILE = "feedback"
_HINTS = "feedback_hints"  # which way to move a numeric property, and how (release §4.3)


def feedback(verification: Verification, level: FeedbackLevel, *,
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
        return templates.render_section(_FILE, "none")
    if not verification.parse.parsed:
        why = verification.parse.reason or "no graph found"
        return templates.render_section(_FILE, "unreadable", why=_cut(why, 200))
    ordered = sorted(violations, key=lambda v: _rank(v.category))
    if level == "coarse":
        groups: dict[str, list[str]] = {}
        for v in ordered:
            keys = groups.setdefault(v.category, [])
            if v.key not in keys:
                keys.append(v.key)
        listed = "; ".join(f"{cat} ({', '.join(keys)})" for cat, keys in groups.items())
        return templates.render_section(_FILE, "coarse", listed=listed)
    lines = [_bullet(v, templates) for v in ordered]
    graph = verification.parse.graph
    if instruction is not None and instruction.level == 4 and graph:
        lines += _domain_lines(graph.graph, instruction.domain, templates)
    bullets = [f"- {line}" for line in lines[:MAX_BULLETS]]
    if len(lines) > MAX_BULLETS:
        more = templates.render_section(_FILE, "more_bullets", count=len(lines) - MAX_BULLETS)
        bullets.append(f"- {more}")
    conflict = _conflict(ordered, templates)
    if conflict:
        bullets.append(conflict)
    state: list[str] = []
    if instruction is not None and instruction.base is not None and graph is not None:
        state = _edit_state(verification, edit_distance(instruction.base, graph), templates)
    return "\n".join([*state, templates.render_section(_FILE, "fine_header"), *bullets,
                      templates.render_section(_FILE, "fine_closing")])


def _edit_state(verification: Verification, diff: EditDiff,
                templates: TemplateSet) -> list[str]:
    """L5's two fine additions (Tab. 11): the step-wise partial credit — which of the edit
    task's checks already hold — and the intermediate state diff, what the answer changed in
    the base graph (bounded like every locus)."""
    task = verification.of(Source.TASK)
    out = []
    if task:
        held = [_step(v) for v in task if v.satisfied]
        failing = [_step(v) for v in task if not v.satisfied]
        section = ("edit_progress" if held and failing else
                   "edit_progress_all" if held else "edit_progress_none")
        values = {"holding": ", ".join(held)} if held else {}
        values |= {"failing": ", ".join(failing)} if failing else {}
        out.append(templates.render_section(_FILE, section, held=len(held), total=len(task),
                                            **values))
    changes = [
        _listed("added_edge", [_edge(e) for e in diff.added_edges], templates),
        _listed("removed_edge", [_edge(e) for e in diff.removed_edges], templates),
        _listed("added_node", [_cut(n, MAX_NAME) for n in diff.added_nodes], templates),
        _listed("removed_node", [_cut(n, MAX_NAME) for n in diff.removed_nodes], templates),
    ]
    done = [c for c in changes if c]
    out.append(templates.render_section(_FILE, "edit_diff", changes="; ".join(done)) if done
               else templates.render_section(_FILE, "edit_no_change"))
    return out


def _step(v: Verdict) -> str:
    """A task verdict's step name: ``task:break_cycles:triangle_free`` -> ``triangle_free``."""
    return _cut(v.constraint.rsplit(":", 1)[-1], MAX_NAME)


def _listed(change: str, items: Sequence[str], templates: TemplateSet) -> str:
    """One change of the state diff (``added_edge`` …: its section, plural ``s`` added for
    several), its first :data:`MAX_LOCUS` items shown; ``""`` for none."""
    if not items:
        return ""
    shown = ", ".join(items[:MAX_LOCUS]) + (", ..." if len(items) > MAX_LOCUS else "")
    section = change + ("s" if len(items) != 1 else "")
    return templates.render_section(_FILE, section, count=len(items), shown=shown)


def _edge(e: Sequence[Any]) -> str:
    return f"({_cut(str(e[0]), MAX_NAME)}, {_cut(str(e[1]), MAX_NAME)})"


def _domain_lines(graph: nx.Graph, domain: str | None, templates: TemplateSet) -> list[str]:
    """The answer's structure against its domain's prior: one line per statistic outside the
    prior's band (none when the domain has no prior or the graph has < 2 nodes)."""
    p = prior(domain)
    n = graph.number_of_nodes()
    if p is None or n < 2:
        return []
    simple = nx.Graph(graph.to_undirected(as_view=True))
    stats = (("average_degree", 2 * simple.number_of_edges() / n, p.avg_degree),
             ("clustering", nx.average_clustering(simple), p.clustering),
             ("density", nx.density(simple), p.density))
    out = []
    for name, value, band in stats:
        if not band.low <= value <= band.high:
            side = "below" if value < band.low else "above"
            out.append(templates.render_section(
                _FILE, f"domain_{side}", label=p.label,
                statistic=templates.render_section(_FILE, f"statistic_{name}"),
                value=f"{value:.3g}", low=f"{band.low:g}", high=f"{band.high:g}"))
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


def _conflict(violations: Sequence[Verdict], templates: TemplateSet) -> str:
    """Tab. 11's joint-incompatibility flag: a line when the violated constraints pull the edge
    count in opposite directions (``""`` otherwise) — adding or removing edges alone cannot fix
    them together."""
    more = [_cut(v.constraint, MAX_NAME) for v in violations if _pull(v) > 0]
    fewer = [_cut(v.constraint, MAX_NAME) for v in violations if _pull(v) < 0]
    if not (more and fewer):
        return ""
    return templates.render_section(_FILE, "conflict", more=", ".join(_names(more)),
                                    fewer=", ".join(_names(fewer)))


def _rank(cat: str) -> int:
    return CATEGORIES.index(cat) if cat in CATEGORIES else len(CATEGORIES)


def _bullet(v: Verdict, templates: TemplateSet) -> str:
    values: dict[str, object] = {"constraint": v.constraint, "expected": v.expected,
                                 "observed": v.observed}
    section = "bullet"
    gap = v.gap
    if gap is not None:
        section = "bullet_gap"
        values["gap"] = f"{gap.gap:+.4g}"
        hint_key = f"{v.key}_{gap.direction}"
        hint = (templates.render_section(_HINTS, hint_key)
                if hint_key in templates.sections(_HINTS) else None)
        if v.category == "count" and abs(gap.gap) >= 1:
            hint = templates.render_section(_FILE, f"hint_count_{gap.direction}",
                                            amount=f"{abs(gap.gap):g}")
        elif v.category == "degree":
            hint = templates.render_section(_FILE, f"hint_degree_{gap.direction}")
        if hint:
            section, values["hint"] = "bullet_gap_hint", hint
    text = templates.render_section(_FILE, section, **values)
    where = _where(v.where, templates)
    if not where:
        return text
    return templates.render_section(_FILE, "bullet_where", bullet=text, where=where)


def _where(found: Locus, templates: TemplateSet) -> str:
    """A short, bounded description of a verdict's locus."""
    where = found.to_json()
    parts = []

    def locus(section: str, **values: object) -> None:
        parts.append(templates.render_section(_FILE, f"locus_{section}", **values))

    if where.get("cycle"):
        cycle = list(where["cycle"])
        if cycle and all(isinstance(e, (list, tuple)) and len(e) == 2 for e in cycle):
            cycle = [e[0] for e in cycle] + [cycle[-1][1]]  # edges -> the node sequence
        locus("cycle", nodes=" -> ".join(_names(cycle)))
    if where.get("components"):
        comps = where["components"]
        shown = ", ".join("{" + ", ".join(_names(c)) + "}" for c in comps[:3])
        locus("components", count=len(comps), shown=shown)
    elif where.get("nodes"):
        nodes = where["nodes"]
        more = (" " + _of_total(where.get("count", len(nodes)), templates)
                if len(nodes) > MAX_LOCUS else "")
        locus("nodes", nodes=", ".join(_names(nodes)) + more)
    for key in _EDGE_LOCI:
        if where.get(key):
            edges = list(where[key])
            locus(key, edges=", ".join(_edge(e) for e in edges[:MAX_LOCUS])
                  + _more(where, key, len(edges), templates))
    for key in _NODE_LOCI:
        if where.get(key):
            nodes = list(where[key])
            locus(key, nodes=", ".join(_names(nodes))
                  + _more(where, key, len(nodes), templates, shown=False))
    if where.get("triangles"):
        tri = list(where["triangles"])
        locus("triangles", triangles=", ".join("{" + ", ".join(_names(t)) + "}"
                                               for t in tri[:3])
              + _more(where, "triangles", len(tri), templates, shown_count=3))
    if where.get("odd_cycle"):
        locus("odd_cycle", nodes=" -> ".join(_names(list(where["odd_cycle"]))))
    return "; ".join(parts)


# the verifier's locus keys, each with its ``locus_<key>`` section in feedback.txt
_EDGE_LOCI = ("edges", "missing_edges", "extra_edges")
_NODE_LOCI = ("missing_nodes", "extra_nodes", "unreached_nodes")


def _of_total(total: object, templates: TemplateSet) -> str:
    return templates.render_section(_FILE, "of_total", total=total)


def _more(where: Mapping[str, Any], key: str, listed: int, templates: TemplateSet, *,
          shown: bool = True, shown_count: int = MAX_LOCUS) -> str:
    """`` ... (of N)`` when the locus holds more than is shown (the verifier's ``<key>_count``
    is the full number; the listed items may themselves be capped)."""
    total = where.get(f"{key}_count", listed)
    if not isinstance(total, int) or total <= min(listed, shown_count):
        return ""
    return (" " if not shown else ", ... ") + _of_total(total, templates)


def _names(items: Sequence[Any]) -> list[str]:
    names = [_cut(str(x), MAX_NAME) for x in list(items)[:MAX_LOCUS]]
    return names + (["..."] if len(items) > MAX_LOCUS else [])


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())  # one line: no newlines from the model's names
    return text if len(text) <= limit else text[:limit - 1] + "…"
