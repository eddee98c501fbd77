"""Constraint checks: decide one parsed :class:`Constraint` on one graph, as a :class:`Verdict`.

:func:`check_constraint` covers every non-metadata key of
:data:`~pytest_graphinstruct.suite.constraints.KEYS`; :func:`is_checkable` says which keys those
are (``task_type`` and ``domain`` describe the task, not the graph, and are skipped by the
verifier).  Semantics per key, with tolerances and directed/empty-graph behaviour, are listed in
docs/CONSTRAINTS.md; the short version:

* counts (``num_nodes``, ``num_edges``, ``num_components``, ``edge_connectivity``,
  ``diameter``) compare exactly with the constraint's operator;
* ``min_degree=k`` means min degree ≥ k and ``max_degree=k`` means max degree ≤ k (reference
  semantics); their other operators compare literally;
* ``degree OP k`` requires a regular graph whose common degree satisfies ``OP k``; ``degree!=k``
  holds for every graph that is not k-regular;
* float keys (density, modularity, clustering_coefficient, average_path_length) relax ``<=``/``>=``
  by 5 % of the bound's magnitude; ``=``/``!=`` on floats compare within :data:`FLOAT_EQ_TOL`;
  ``<``/``>`` are exact;
* booleans with ``!=`` mean the negated value;
* ``diameter``/``average_path_length`` on an answer above
  :data:`~pytest_graphinstruct.verify.distances.DISTANCE_WORK_LIMIT` (and not dense enough for the
  product route) are not satisfied, observed ``not computed: answer too large (…)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import cast

import networkx as nx
from networkx.algorithms.connectivity import build_auxiliary_edge_connectivity, minimum_st_edge_cut
from networkx.algorithms.flow import build_residual_network

from pytest_graphinstruct.suite.constraints import (
    KEYS,
    TOLERANCE,
    TOLERANT_KEYS,
    Constraint,
    Op,
    format_value,
)
from pytest_graphinstruct.verify.components import without_self_loops
from pytest_graphinstruct.verify.graph_types import (
    EDGE_LIMIT,
    WHERE_LIMIT,
    capped,
    check_graph_type,
    components_text,
    where_components,
    where_cycle,
    where_kuratowski,
    where_nodes,
    where_odd_cycle,
)
from pytest_graphinstruct.verify.locus import Locus
from pytest_graphinstruct.verify.node_order import Node, node_sort_key, sorted_nodes
from pytest_graphinstruct.verify.properties import GraphFacts
from pytest_graphinstruct.verify.verdict import Source, Verdict

#: Absolute tolerance of ``=`` and ``!=`` on float keys: floats computed by different code paths
#: (or printed and re-read) differ in the last bits; anything larger is a real difference.
FLOAT_EQ_TOL = 1e-9


def is_checkable(c: Constraint) -> bool:
    """Whether ``c`` is about the graph (``False`` for metadata keys ``task_type``/``domain``)."""
    return not KEYS[c.key].metadata


@dataclass(frozen=True)
class _Outcome:
    satisfied: bool
    expected: str
    observed: str
    where: Locus = field(default_factory=Locus)


def check_constraint(c: Constraint, facts: GraphFacts, source: Source) -> Verdict:
    """Decide constraint ``c`` on the graph behind ``facts``.

    Args:
        c: a parsed constraint whose key is checkable (see :func:`is_checkable`).
        facts: the graph's facts (shared across all constraints of one answer).
        source: recorded on the verdict.

    Returns:
        A :class:`Verdict` with ``constraint=c.text``, ``key=c.key``; ``where`` is non-empty
        only on failure, and then locates it when a locus exists.  Never raises for any graph
        (directed, empty, with self-loops).

    Raises:
        ValueError: ``c`` is a metadata constraint (``task_type``, ``domain``): those describe
            the task and are not verdicts on the graph; filter them with :func:`is_checkable`.
    """
    if not is_checkable(c):
        raise ValueError(f"{c.text!r} is task metadata, not a graph constraint "
                         "(filter with is_checkable)")
    outcome = _HANDLERS[c.key](c, facts)
    return Verdict(
        constraint=c.text,
        key=c.key,
        source=source,
        satisfied=outcome.satisfied,
        expected=outcome.expected,
        observed=outcome.observed,
        where=Locus() if outcome.satisfied else outcome.where,
    )


# -- formatting -----------------------------------------------------------------------------------

def fmt_number(x: float) -> str:
    """Ints as written, floats with up to 4 decimals (``0.4736``, ``3.675``), ``inf``."""
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        return str(int(x))
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if math.isnan(x):
        return "nan"
    text = f"{x:.4f}".rstrip("0").rstrip(".")
    if text in ("0", "-0"):
        return f"{x:.3g}"
    return text


def _expected_plain(c: Constraint) -> str:
    return f"{c.op.value} {format_value(c.value)}"


# -- comparisons ----------------------------------------------------------------------------------

def _compare(c: Constraint, observed: float) -> tuple[bool, str, float]:
    """``(satisfied, expected text, effective bound)`` of ``observed OP bound`` for ``c``."""
    bound = c.value
    assert isinstance(bound, int | float) and not isinstance(bound, bool)
    op = c.op
    if c.key in TOLERANT_KEYS and op in (Op.LE, Op.GE):
        slack = TOLERANCE * abs(bound)
        eff = bound + slack if op is Op.LE else bound - slack
        sign = "+" if op is Op.LE else "-"
        expected = (f"{op.value} {fmt_number(bound)} ({sign}{TOLERANCE:.0%} tolerance: "
                    f"{op.value} {fmt_number(eff)})")
        return op.compare(observed, eff), expected, eff
    if isinstance(bound, float) and op in (Op.EQ, Op.NE):
        close = math.isfinite(observed) and abs(observed - bound) <= FLOAT_EQ_TOL
        expected = f"{op.value} {fmt_number(bound)} (within {FLOAT_EQ_TOL:g})"
        return (close if op is Op.EQ else not close), expected, bound
    return op.compare(observed, bound), _expected_plain(c), bound


def _observed_number(observed: float, bound: float, satisfied: bool) -> str:
    text = fmt_number(observed)
    # never print a failing value so that it looks equal to the bound it fails
    if not satisfied and text == fmt_number(bound) and observed != bound:
        text = repr(float(observed))
    return text


def _numeric(c: Constraint, observed: float, where: Callable[[], Locus] = Locus,
             note: str = "") -> _Outcome:
    """The outcome of a numeric constraint; ``where`` makes its locus, asked only on failure
    (a satisfied verdict has none, and most checks hold)."""
    ok, expected, eff = _compare(c, observed)
    text = _observed_number(observed, eff, ok)
    return _Outcome(ok, expected, text + note, Locus() if ok else where())


def _wanted_bool(c: Constraint) -> bool:
    """The truth value a boolean constraint asks for (``x!=true`` asks for false)."""
    return bool(c.value) if c.op is Op.EQ else not c.value


# -- handlers -------------------------------------------------------------------------------------

def _num_nodes(c: Constraint, f: GraphFacts) -> _Outcome:
    return _numeric(c, f.n)


def _num_edges(c: Constraint, f: GraphFacts) -> _Outcome:
    return _numeric(c, f.m, note=" arcs" if f.directed else "")


def _directed(c: Constraint, f: GraphFacts) -> _Outcome:
    want = _wanted_bool(c)
    return _Outcome(f.directed == want, "directed" if want else "undirected",
                    "directed" if f.directed else "undirected")


def _connected(c: Constraint, f: GraphFacts) -> _Outcome:
    want = _wanted_bool(c)
    if f.connected:
        observed = "weakly connected" if f.directed else "connected"
    else:
        observed = components_text(f)
    ok = f.connected == want
    where = where_components(f) if not ok and want and f.n > 0 else Locus()
    return _Outcome(ok, "connected" if want else "not connected", observed, where)


def _acyclic(c: Constraint, f: GraphFacts) -> _Outcome:
    want = _wanted_bool(c)
    kind = "directed cycle" if f.directed else "cycle"
    observed = "acyclic" if f.acyclic else f"has a {kind}"
    ok = f.acyclic == want
    return _Outcome(ok, "acyclic" if want else f"has a {kind}", observed,
                    where_cycle(f) if want and not ok else Locus())


def _planar(c: Constraint, f: GraphFacts) -> _Outcome:
    want = _wanted_bool(c)
    ok = f.planar == want
    return _Outcome(ok, "planar" if want else "not planar",
                    "planar" if f.planar else "not planar",
                    where_kuratowski(f) if want and not ok else Locus())


def _bipartite(c: Constraint, f: GraphFacts) -> _Outcome:
    want = _wanted_bool(c)
    ok = f.bipartite == want
    return _Outcome(ok, "bipartite" if want else "not bipartite",
                    "bipartite" if f.bipartite else "not bipartite (odd cycle)",
                    where_odd_cycle(f) if want and not ok else Locus())


def _bipartite_sides(c: Constraint, f: GraphFacts) -> _Outcome:
    p, q = cast(tuple[int, int], c.value)  # the parser makes it a sorted (p, q) pair
    expected = f"bipartite with sides {p},{q}"
    if not f.bipartite:
        return _Outcome(False, expected, "not bipartite (odd cycle)", where_odd_cycle(f))
    ok = f.sides_achievable(p, q)
    pairs = f.side_pairs
    if len(pairs) == 1:
        observed = f"sides {pairs[0][0]},{pairs[0][1]}"
    else:
        shown = " | ".join(f"{a},{b}" for a, b in pairs[:5])
        more = f" (+{len(pairs) - 5} more)" if len(pairs) > 5 else ""
        observed = f"achievable sides: {shown}{more}"
    if ok:
        return _Outcome(ok, expected, f"sides {p},{q}" + (
            "" if len(pairs) == 1 else " (achievable by flipping components)"))
    sides = f.component_sides
    where = (Locus().with_sides("component_sides", sides[:WHERE_LIMIT])
             .with_count("count", len(sides)))
    return _Outcome(ok, expected, observed, where)


def _graph_type(c: Constraint, f: GraphFacts) -> _Outcome:
    name = str(c.value)
    tc = check_graph_type(name, f)
    if c.op is Op.EQ:
        return _Outcome(tc.ok, name, tc.observed, tc.where)
    return _Outcome(not tc.ok, f"not {name}", tc.observed)


def _degree_observed(f: GraphFacts) -> str:
    if f.n == 0:
        return "empty graph"
    if f.regular:
        return f"{f.regular_degree}-regular"
    return (f"not regular: degrees {f.min_degree}..{f.max_degree} "
            f"(most common {f.majority_degree})")


def _degree(c: Constraint, f: GraphFacts) -> _Outcome:
    k = c.value
    assert isinstance(k, int)
    d = f.regular_degree
    observed = _degree_observed(f)
    if c.op is Op.NE:
        return _Outcome(d != k, f"not {k}-regular", observed)
    ok = d is not None and c.op.compare(d, k)
    expected = f"{k}-regular" if c.op is Op.EQ else f"regular with degree {c.op.value} {k}"
    if ok or f.n == 0:
        return _Outcome(ok, expected, observed)
    bad = f.nodes_where(lambda x: not c.op.compare(x, k))
    if not bad:  # every degree satisfies OP k, but they differ
        major = f.majority_degree
        bad = f.nodes_where(lambda x: x != major)
    return _Outcome(ok, expected, observed, where_nodes(bad, f))


def _extreme_degree(c: Constraint, f: GraphFacts, *, minimum: bool) -> _Outcome:
    k = c.value
    assert isinstance(k, int)
    value = f.min_degree if minimum else f.max_degree
    if c.op is Op.EQ:
        op = Op.GE if minimum else Op.LE
        word = "at least" if minimum else "at most"
        expected = f"{op.value} {k} ({c.key}={k} means {word} {k})"
    else:
        op = c.op
        expected = _expected_plain(c)
    ok = op.compare(value, k)
    if ok or f.n == 0:
        return _Outcome(ok, expected, str(value))
    universal = (Op.GE, Op.GT) if minimum else (Op.LE, Op.LT)
    if op in universal:  # every node must satisfy OP k: list the ones that do not
        bad = f.nodes_where(lambda x: not op.compare(x, k))
    else:  # the extreme itself is wrong: list the nodes attaining it
        bad = f.nodes_where(lambda x: x == value)
    return _Outcome(ok, expected, str(value), where_nodes(bad, f))


def _min_degree(c: Constraint, f: GraphFacts) -> _Outcome:
    return _extreme_degree(c, f, minimum=True)


def _max_degree(c: Constraint, f: GraphFacts) -> _Outcome:
    return _extreme_degree(c, f, minimum=False)


def _distance_note(f: GraphFacts, value: float) -> tuple[str, Locus]:
    if math.isinf(value):
        return f" ({components_text(f)})", (where_components(f) if f.n else Locus())
    return "", Locus()


def _distance(c: Constraint, f: GraphFacts, value: float) -> _Outcome:
    """A distance constraint; one whose value is too costly to compute is not satisfied, whatever
    its operator (the answer could not be shown to meet it), and the observation says why."""
    reason = f.distances_not_computed
    if reason is not None:
        _, expected, _ = _compare(c, 0)
        return _Outcome(False, expected, reason)
    note, where = _distance_note(f, value)
    return _numeric(c, value, lambda: where, note)


def _diameter(c: Constraint, f: GraphFacts) -> _Outcome:
    return _distance(c, f, f.diameter)


def _average_path_length(c: Constraint, f: GraphFacts) -> _Outcome:
    return _distance(c, f, f.average_path_length)


def _density(c: Constraint, f: GraphFacts) -> _Outcome:
    return _numeric(c, f.density)


def _modularity(c: Constraint, f: GraphFacts) -> _Outcome:
    return _numeric(c, f.modularity)


def _clustering(c: Constraint, f: GraphFacts) -> _Outcome:
    return _numeric(c, f.clustering)


def _num_components(c: Constraint, f: GraphFacts) -> _Outcome:
    return _numeric(c, f.num_components, lambda: where_components(f) if f.n else Locus())


def _edge_connectivity(c: Constraint, f: GraphFacts) -> _Outcome:
    value = f.edge_connectivity
    ok, _, _ = _compare(c, value)
    where = Locus()
    note = ""
    if not ok:
        if f.n >= 2 and not f.connected:
            note = f" ({components_text(f)})"
            where = where_components(f)
        elif f.n >= 2 and f.directed and value == 0:
            note = " (not strongly connected)"
        elif f.n >= 2 and c.op in (Op.GE, Op.GT):
            cut = sorted((sorted_nodes(e) if not f.directed else list(e)
                          for e in minimum_edge_cut(f.graph, value)),
                         key=lambda e: tuple(map(node_sort_key, e)))
            where = (Locus().with_edges("cut_edges", capped(cut, EDGE_LIMIT))
                     .with_count("count", len(cut)))
    return _numeric(c, value, lambda: where, note)


def minimum_edge_cut(g: nx.Graph, size: int) -> set[tuple[Node, Node]]:
    """One minimum edge cut of the connected graph ``g`` (``n >= 2``), whose edge connectivity
    is ``size``: the same cut in every process.

    Directed: networkx's cut.  Undirected: networkx's algorithm (the edges of a node of least
    degree, else the smallest s–t cut from one node of a dominating set to each other one), but
    with the dominating set chosen greedily in node order (networkx pops it from a set, so its cut
    changes from one process to the next) and stopping at the first cut of ``size`` edges.
    A self-loop is in no cut (:func:`~.components.without_self_loops`).
    """
    g = without_self_loops(g)
    if g.is_directed():
        return set(nx.minimum_edge_cut(g))
    best = set(g.edges(min(g, key=g.degree)))
    if len(best) <= size:
        return best
    for start in g:  # a dominating set of at least two nodes (none in a complete graph)
        dominating = [start]
        covered = {start, *g[start]}
        for v in g:
            if v not in covered:
                dominating.append(v)
                covered.add(v)
                covered.update(g[v])
        if len(dominating) > 1:
            break
    else:
        return best
    aux = build_auxiliary_edge_connectivity(g)
    residual = build_residual_network(aux, "capacity")
    v = dominating[0]
    for w in dominating[1:]:
        cut = minimum_st_edge_cut(aux, v, w, auxiliary=aux, residual=residual)
        if len(cut) < len(best):
            best = cut
            if len(best) <= size:
                break
    return best


_HANDLERS: Mapping[str, Callable[[Constraint, GraphFacts], _Outcome]] = {
    "num_nodes": _num_nodes,
    "num_edges": _num_edges,
    "directed": _directed,
    "connected": _connected,
    "acyclic": _acyclic,
    "planar": _planar,
    "bipartite": _bipartite,
    "bipartite_sides": _bipartite_sides,
    "graph_type": _graph_type,
    "degree": _degree,
    "min_degree": _min_degree,
    "max_degree": _max_degree,
    "diameter": _diameter,
    "density": _density,
    "modularity": _modularity,
    "clustering_coefficient": _clustering,
    "average_path_length": _average_path_length,
    "num_components": _num_components,
    "edge_connectivity": _edge_connectivity,
}

_missing = {k for k, spec in KEYS.items() if not spec.metadata} - set(_HANDLERS)
assert not _missing, f"constraint keys without a check: {sorted(_missing)}"
