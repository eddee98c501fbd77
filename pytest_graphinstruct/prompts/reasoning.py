"""Templated reasoning for few-cot exemplars, and explanations for refusal exemplars.

Everything here is computed from an instruction's *constraints* (explicit, then the dataset's
implicit ones) and from the exemplar's answer graph — never from keywords in the instruction
text.  The sentences come from ``templates/exemplar_reasoning.txt`` and
``templates/refusal_reasons.txt``.

- :func:`shape_of` names the structure the constraints ask for (``tree``, ``cycle``, ``regular``,
  …, or ``None``).
- :func:`exemplar_reasoning` is a short paragraph: one structural sentence (its numbers
  computed: a tree on n nodes has n − 1 edges, a d-regular one d·n/2, …; the requirements list
  when nothing specific applies), for an L5 exemplar a sentence on what the edit changes, then
  a closing sentence with the answer's node and edge counts; the generic case adds the edge
  budget a ``density<=x`` constraint implies.
- :func:`infeasibility_reason` finds a simple, checkable reason why the constraints cannot hold
  together (degree above n − 1, odd degree sum, more edges than a simple graph has, a tree with
  the wrong edge count, too few edges to connect, bipartite sides that do not add up), or
  ``None``.
- :func:`refusal_answer` and :func:`refusal_reasoning` wrap that reason for a refusal exemplar.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Final

import networkx as nx

from pytest_graphinstruct.graphs.model import ParsedGraph
from pytest_graphinstruct.prompts.texts import PACKAGED, TemplateSet
from pytest_graphinstruct.suite.constraints import Constraint, Op, format_value
from pytest_graphinstruct.suite.instruction import Instruction

_REASONING: Final = "exemplar_reasoning"
_REASONS: Final = "refusal_reasons"
_METADATA_KEYS: Final = frozenset({"task_type", "domain"})


def _constraints(instruction: Instruction) -> Iterator[Constraint]:
    yield from instruction.explicit
    yield from instruction.implicit


def _eq(instruction: Instruction, key: str) -> object | None:
    """The value of the first ``key=value`` constraint (explicit first), else ``None``."""
    for c in _constraints(instruction):
        if c.key == key and c.op is Op.EQ:
            return c.value
    return None


def _int(instruction: Instruction, key: str) -> int | None:
    v = _eq(instruction, key)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def shape_of(instruction: Instruction) -> str | None:
    """The structure the constraints ask for, or ``None``.

    The first ``graph_type=`` value (explicit, then implicit); without one, ``regular`` for a
    ``degree=d`` constraint, ``bipartite`` for ``bipartite=true`` or ``bipartite_sides``, ``dag``
    for ``directed=true`` with ``acyclic=true``.
    """
    gt = _eq(instruction, "graph_type")
    if isinstance(gt, str):
        return gt
    if _int(instruction, "degree") is not None:
        return "regular"
    if _eq(instruction, "bipartite") is True or _eq(instruction, "bipartite_sides") is not None:
        return "bipartite"
    if _eq(instruction, "directed") is True and _eq(instruction, "acyclic") is True:
        return "dag"
    return None


def _requirements(instruction: Instruction) -> str:
    return ", ".join(c.text.strip() for c in instruction.explicit
                     if c.key not in _METADATA_KEYS)


def _shape_sentence(instruction: Instruction, graph: ParsedGraph,
                    templates: TemplateSet) -> str | None:
    """The structural sentence for the shape the constraints ask for, or ``None``."""
    shape = shape_of(instruction)
    g = graph.graph
    n = g.number_of_nodes()
    if shape == "tree":
        return templates.render_section(_REASONING, "tree", n=n, edges=max(n - 1, 0))
    if shape == "path":
        return templates.render_section(_REASONING, "path", n=n, edges=max(n - 1, 0))
    if shape == "forest" and n:
        comps = (nx.number_weakly_connected_components(g) if g.is_directed()
                 else nx.number_connected_components(g))
        return templates.render_section(_REASONING, "forest", n=n, components=comps,
                                        edges=n - comps)
    if shape == "cycle":
        return templates.render_section(_REASONING, "cycle", n=n, edges=n)
    if shape == "star" and n >= 2:
        return templates.render_section(_REASONING, "star", n=n, leaves=n - 1, edges=n - 1)
    if shape == "wheel" and n >= 4:
        return templates.render_section(_REASONING, "wheel", n=n, rim=n - 1, edges=2 * (n - 1))
    if shape == "complete":
        if g.is_directed():
            return templates.render_section(_REASONING, "complete_directed", n=n, edges=n * (n - 1))
        return templates.render_section(_REASONING, "complete", n=n, edges=n * (n - 1) // 2)
    sides = _eq(instruction, "bipartite_sides")
    if shape == "complete_bipartite" and isinstance(sides, tuple):
        p, q = sides
        return templates.render_section(_REASONING, "complete_bipartite", p=p, q=q, edges=p * q)
    if shape in ("bipartite", "complete_bipartite"):
        if isinstance(sides, tuple):
            p, q = sides
            return templates.render_section(_REASONING, "bipartite_sides", n=p + q, p=p, q=q)
        return templates.render_section(_REASONING, "bipartite")
    if shape == "regular":
        d = _int(instruction, "degree")
        if d is None:
            degrees = {deg for _, deg in g.degree()}
            d = degrees.pop() if len(degrees) == 1 else None
        if d is not None and (d * n) % 2 == 0:
            return templates.render_section(_REASONING, "regular", n=n, d=d, edges=d * n // 2)
        return None
    if shape == "connected" and n >= 1:
        return templates.render_section(_REASONING, "connected", n=n, edges=n - 1)
    if shape == "dag":
        return templates.render_section(_REASONING, "dag")
    return None


def _edge_set(g: nx.Graph) -> set[tuple[str, str]] | set[frozenset[str]]:
    if g.is_directed():
        return {(str(u), str(v)) for u, v in g.edges()}
    return {frozenset((str(u), str(v))) for u, v in g.edges()}


def _edit_sentence(base: ParsedGraph, graph: ParsedGraph, *, as_edit: bool,
                   templates: TemplateSet) -> str:
    b, g = base.graph, graph.graph
    common = {"base_nodes": b.number_of_nodes(), "base_edges": b.number_of_edges()}
    if not as_edit:
        return templates.render_section(_REASONING, "edit_full", **common)
    before, after = _edge_set(b), _edge_set(g)
    return templates.render_section(
        _REASONING, "edit", **common, removed=len(before - after), added=len(after - before),
        n=g.number_of_nodes(), edges=g.number_of_edges(),
    )


def exemplar_reasoning(
    instruction: Instruction, graph: ParsedGraph | None, *, as_edit: bool = False,
    templates: TemplateSet = PACKAGED,
) -> str:
    """The reasoning paragraph of a feasible exemplar (see module doc).

    Args:
        instruction: the exemplar's instruction (its constraints drive the text).
        graph: the exemplar's answer graph (the edited result for L5), or ``None`` when the
            reference could not be parsed (then only generic sentences are used).
        as_edit: the answer is a GraphEdit of ``instruction.base`` (else a full graph).
        templates: the run's prompt texts (default: the packaged ones).
    """
    sentences: list[str] = []
    if graph is not None and instruction.base is not None:
        sentences.append(_edit_sentence(instruction.base, graph, as_edit=as_edit,
                                        templates=templates))
    shape = _shape_sentence(instruction, graph, templates) if graph is not None else None
    if shape is not None:
        sentences.append(shape)
    elif instruction.base is None or graph is None:
        reqs = _requirements(instruction)
        sentences.append(templates.render_section(_REASONING, "generic", requirements=reqs)
                         if reqs else templates.render_section(_REASONING, "generic_plain"))
        cap = _density_cap(instruction, graph, templates)
        if cap is not None:
            sentences.append(cap)
    if graph is None:
        sentences.append(templates.render_section(_REASONING, "steps_plain"))
    elif instruction.base is not None:
        sentences.append(templates.render_section(_REASONING, "steps_edit"))
    else:
        sentences.append(templates.render_section(_REASONING, "steps", n=graph.num_nodes,
                                                  edges=graph.num_edges))
    return " ".join(sentences)


def _density_cap(instruction: Instruction, graph: ParsedGraph | None,
                 templates: TemplateSet) -> str | None:
    """The edge budget implied by a ``density<=x`` constraint on the answer's node count."""
    if graph is None or graph.num_nodes < 2:
        return None
    for c in instruction.explicit:
        if c.key == "density" and c.op is Op.LE and isinstance(c.value, float):
            n = graph.num_nodes
            pairs = n * (n - 1) if graph.directed else n * (n - 1) // 2
            return templates.render_section(_REASONING, "density_cap",
                                            density=format_value(c.value), n=n,
                                            max=math.floor(c.value * pairs + 1e-9))
    return None


def infeasibility_reason(instruction: Instruction,
                         templates: TemplateSet = PACKAGED) -> str | None:
    """A one-sentence, checkable reason why the constraints cannot all hold, else ``None``.

    Only ``=`` constraints are used (explicit first, then implicit), and only these rules, in
    order: a node degree ``d >= n`` (simple graph); ``d·n`` odd (handshake lemma; undirected
    only); ``num_edges`` above the simple-graph maximum; a tree or path whose ``num_edges`` is
    not ``n − 1``; ``connected=true`` with fewer than ``n − 1`` edges; ``bipartite_sides`` not
    adding up to ``num_nodes``.
    """
    n = _int(instruction, "num_nodes")
    d = _int(instruction, "degree")
    m = _int(instruction, "num_edges")
    directed = _eq(instruction, "directed") is True
    if n is not None and n > 0 and d is not None and not directed:
        if d >= n:
            return templates.render_section(_REASONS, "degree_too_high", n=n, max=n - 1, d=d)
        if (d * n) % 2 == 1:
            return templates.render_section(_REASONS, "odd_degree", n=n, d=d, total=d * n)
    if n is not None and m is not None:
        most = n * (n - 1) if directed else n * (n - 1) // 2
        if m > most:
            kind = "directed" if directed else "undirected"
            return templates.render_section(_REASONS, "too_many_edges", kind=kind, n=n, max=most,
                                            m=m)
        shape = shape_of(instruction)
        if shape in ("tree", "path") and n > 0 and m != n - 1:
            return templates.render_section(_REASONS, "tree_edges", kind=shape, n=n,
                                            expected=n - 1, m=m)
        if _eq(instruction, "connected") is True and n > 0 and m < n - 1:
            return templates.render_section(_REASONS, "too_few_to_connect", n=n, min=n - 1, m=m)
    sides = _eq(instruction, "bipartite_sides")
    if n is not None and isinstance(sides, tuple) and sum(sides) != n:
        p, q = sides
        return templates.render_section(_REASONS, "sides_mismatch", p=p, q=q, sum=p + q, n=n)
    return None


def refusal_answer(instruction: Instruction, templates: TemplateSet = PACKAGED) -> str:
    """The answer of a refusal exemplar: the specific reason (when one is found), then the
    generic statement that no such graph exists (recognised by the refusal detector)."""
    generic = templates.render("refusal_answer")
    reason = infeasibility_reason(instruction, templates)
    return f"{reason} {generic}" if reason else generic


def refusal_reasoning(instruction: Instruction, templates: TemplateSet = PACKAGED) -> str:
    """The few-cot reasoning of a refusal exemplar: check feasibility, state the reason."""
    reason = infeasibility_reason(instruction, templates)
    if reason is None:
        return templates.render_section(_REASONING, "refusal_plain")
    return templates.render_section(_REASONING, "refusal", reason=reason)
