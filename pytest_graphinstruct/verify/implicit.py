"""Implicit constraints inferred from the explicit ones (graph type, degree, sizes).

:func:`infer_implicit` turns an instruction's explicit constraints into the constraints that
follow from them (``graph_type=tree`` with ``num_nodes=10`` ⇒ ``num_edges=9``, …).  Only ``=``
constraints feed the rules.  Every rule is sound for the graph-type semantics of
:mod:`pytest_graphinstruct.verify.graph_types` — an answer that satisfies the explicit
constraints satisfies every inferred one — for undirected and directed graphs alike; where the
directed and undirected consequences differ (``complete``, ``bipartite``) the instruction's
``directed=`` constraint picks the formula, and a missing ``directed=`` means undirected (the
code-style default).

:func:`merge_implicit` combines the inferred list with the dataset's own
``implicit_constraints`` field.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pytest_graphinstruct.suite.constraints import Constraint, Op, ValueKind, derived

#: Keys whose ``=`` means another operator (reference semantics, see verify/checks.py).
_EQ_MEANS = {"min_degree": Op.GE, "max_degree": Op.LE}


def semantic_key(c: Constraint) -> tuple[object, ...]:
    """A key under which equivalent constraints coincide: the canonical form, with boolean
    ``!=`` rewritten as ``=`` of the negation (``connected!=false`` ≡ ``connected=true``) and
    ``min_degree=k``/``max_degree=k`` read as ``>=``/``<=``."""
    if c.spec.kind is ValueKind.BOOL and c.op is Op.NE:
        return (c.key, Op.EQ, not c.value)
    if c.op is Op.EQ and c.key in _EQ_MEANS:
        return (c.key, _EQ_MEANS[c.key], c.value)
    if c.spec.kind is ValueKind.FLOAT:
        return (c.key, c.op, float(c.value))  # type: ignore[arg-type]
    return (c.key, c.op, c.value)


def _first_eq(explicit: Sequence[Constraint], key: str) -> object | None:
    for c in explicit:
        if c.key == key and c.op is Op.EQ:
            return c.value
    return None


def _directed(explicit: Sequence[Constraint]) -> bool:
    for c in explicit:
        if c.key == "directed":
            return bool(c.value) if c.op is Op.EQ else not c.value
    return False


def _rules(explicit: Sequence[Constraint]) -> Iterable[Constraint]:
    n = _first_eq(explicit, "num_nodes")
    gtype = _first_eq(explicit, "graph_type")
    k = _first_eq(explicit, "degree")
    sides = _first_eq(explicit, "bipartite_sides")
    directed = _directed(explicit)
    has_n = isinstance(n, int) and n >= 1
    true = True

    def eq(key: str, value: object) -> Constraint:
        return derived(key, Op.EQ, value)  # type: ignore[arg-type]

    if gtype == "tree":
        if has_n:
            yield eq("num_edges", n - 1)  # type: ignore[operator]
        yield eq("connected", true)
        yield eq("acyclic", true)
    elif gtype == "forest":
        yield eq("acyclic", true)
    elif gtype == "path":
        yield eq("connected", true)
        yield eq("acyclic", true)
        if has_n:
            yield eq("num_edges", n - 1)  # type: ignore[operator]
        yield eq("max_degree", 2)  # max_degree=k means max degree <= k
    elif gtype == "cycle":
        yield eq("connected", true)
        yield eq("degree", 2)
        if has_n:
            yield eq("num_edges", n)
    elif gtype == "complete":
        if has_n:
            assert isinstance(n, int)
            if directed:
                yield eq("num_edges", n * (n - 1))
                yield eq("degree", 2 * (n - 1))
            else:
                yield eq("num_edges", n * (n - 1) // 2)
                yield eq("degree", n - 1)
    elif gtype == "star":
        yield eq("connected", true)
        if has_n:
            yield eq("num_edges", n - 1)  # type: ignore[operator]
        yield eq("acyclic", true)
    elif gtype == "wheel":
        if has_n:
            yield eq("num_edges", 2 * (n - 1))  # type: ignore[operator]
        yield eq("connected", true)
        yield eq("planar", true)
    elif gtype == "grid":
        yield eq("connected", true)
        yield eq("planar", true)
        yield eq("bipartite", true)
    elif gtype == "bipartite":
        yield eq("bipartite", true)
        if isinstance(sides, tuple):
            p, q = sides
            # a directed bipartite graph may join a pair in both directions
            yield derived("num_edges", Op.LE, (2 if directed else 1) * p * q)
    elif gtype == "complete_bipartite":
        yield eq("bipartite", true)
        if isinstance(sides, tuple):
            p, q = sides
            yield eq("num_nodes", p + q)
            yield eq("num_edges", p * q)
    elif gtype == "dag":
        yield eq("directed", true)
        yield eq("acyclic", true)
    elif gtype in ("connected", "planar", "acyclic"):
        yield eq(str(gtype), true)
    # regular or not: every node of degree k (in+out for directed graphs) gives n·k/2 edges
    if isinstance(k, int) and has_n and (n * k) % 2 == 0:  # type: ignore[operator]
        yield eq("num_edges", n * k // 2)  # type: ignore[operator]


def infer_implicit(explicit: Sequence[Constraint]) -> tuple[Constraint, ...]:
    """The constraints that follow from ``explicit``, minus those it already states.

    Args:
        explicit: an instruction's explicit constraints (any order; only ``=`` constraints on
            ``graph_type``, ``num_nodes``, ``degree``, ``bipartite_sides`` and ``directed`` feed
            the rules).

    Returns:
        Derived constraints (``text`` = canonical form), in rule order, without duplicates and
        without any constraint equivalent (:func:`semantic_key`) to an explicit one.  Empty
        when nothing follows (no graph type, no degree).  An inferred constraint may contradict
        an explicit one when the instruction itself is infeasible; both are kept.

    Rules (``n`` from ``num_nodes=``, ``k`` from ``degree=``, ``p,q`` from
    ``bipartite_sides=``): tree ⇒ num_edges=n−1, connected, acyclic; forest ⇒ acyclic;
    path ⇒ connected, acyclic, num_edges=n−1, max_degree=2 (i.e. ≤ 2); cycle ⇒ connected, degree=2,
    num_edges=n; complete ⇒ num_edges=n(n−1)/2, degree=n−1 (directed: n(n−1), 2(n−1));
    star ⇒ connected, num_edges=n−1, acyclic; wheel ⇒ num_edges=2(n−1), connected, planar;
    grid ⇒ connected, planar, bipartite; bipartite ⇒ bipartite, num_edges<=p·q (directed
    2·p·q); complete_bipartite ⇒ bipartite, num_nodes=p+q, num_edges=p·q; dag ⇒ directed,
    acyclic; connected/planar/acyclic ⇒ the same key =true; degree=k with num_nodes=n ⇒
    num_edges=n·k/2 (when n·k is even).
    """
    seen = {semantic_key(c) for c in explicit}
    out: list[Constraint] = []
    for c in _rules(explicit):
        key = semantic_key(c)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return tuple(out)


def merge_implicit(
    explicit: Sequence[Constraint], dataset_implicit: Sequence[Constraint]
) -> tuple[tuple[Constraint, ...], tuple[Constraint, ...]]:
    """Split an instruction's implicit constraints into the two verdict sources.

    Args:
        explicit: the explicit constraints.
        dataset_implicit: the dataset's ``implicit_constraints`` field.

    Returns:
        ``(dataset, inferred)``: ``dataset`` is ``dataset_implicit`` unchanged (as a tuple; it
        may repeat explicit constraints, as the official data does — it is the dataset's own
        list and is reported as such); ``inferred`` is :func:`infer_implicit` of ``explicit``
        minus anything equivalent to a constraint in ``explicit`` or ``dataset_implicit``.
    """
    dataset = tuple(dataset_implicit)
    taken = {semantic_key(c) for c in dataset}
    inferred = tuple(c for c in infer_implicit(explicit) if semantic_key(c) not in taken)
    return dataset, inferred
