"""No-contradiction checks: is the answer a well-formed simple graph that agrees with its header?

:func:`check_contradictions` always returns the same five verdicts, in the same order, with
:attr:`Source.CONTRADICTION`, so no-contradiction rates are comparable across answers:

1. ``no_self_loops`` — no edge joins a node to itself (``where``: the loop nodes);
2. ``no_blank_ids`` — no node id is blank (empty/whitespace) or null (``where``: the ids);
3. ``no_parallel_edges`` — no edge is listed twice (``where``: the repeated edges);
4. ``header_node_count`` — a header ``nodes=`` integer equals the number of nodes; holds when
   the header declares no integer node count;
5. ``header_edge_count`` — a header ``edges=`` integer equals the number of edges (arcs for a
   directed graph, each distinct edge once); holds when the header declares none.
"""

from __future__ import annotations

from pytest_graphinstruct.graphs.model import ParsedGraph
from pytest_graphinstruct.verify.graph_types import EDGE_LIMIT, WHERE_LIMIT, capped
from pytest_graphinstruct.verify.locus import Locus
from pytest_graphinstruct.verify.node_order import sorted_nodes
from pytest_graphinstruct.verify.verdict import Source, Verdict

#: The check names, in the order :func:`check_contradictions` returns them.
CONTRADICTION_CHECKS: tuple[str, ...] = (
    "no_self_loops",
    "no_blank_ids",
    "no_parallel_edges",
    "header_node_count",
    "header_edge_count",
)


def _verdict(key: str, ok: bool, expected: str, observed: str, where: Locus) -> Verdict:
    return Verdict(constraint=key, key=key, source=Source.CONTRADICTION, satisfied=ok,
                   expected=expected, observed=observed, where=Locus() if ok else where)


def _is_blank(node: object) -> bool:
    return node is None or (isinstance(node, str) and node.strip() == "")


def _declared_int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def check_contradictions(pg: ParsedGraph) -> tuple[Verdict, ...]:
    """The five no-contradiction verdicts of one parsed graph, in :data:`CONTRADICTION_CHECKS`
    order.

    Args:
        pg: a parsed answer (any size, directed or not, possibly empty).

    Returns:
        Exactly five verdicts (``constraint`` and ``key`` are the check name); ``where`` is set
        only on failure.
    """
    g = pg.graph
    loops = sorted_nodes({u for u, v in g.edges() if u == v})
    v_loops = _verdict(
        "no_self_loops", not loops, "no self-loops",
        f"{len(loops)} self-loop(s)" if loops else "none",
        Locus().with_nodes("nodes", capped(loops)).with_count("count", len(loops)),
    )

    blank = list(pg.blank_nodes)
    blank += [v for v in g if _is_blank(v) and v not in blank]
    v_blank = _verdict(
        "no_blank_ids", not blank, "no blank or null node ids",
        f"{len(blank)} blank id(s)" if blank else "none",
        Locus().with_nodes("nodes", capped(blank, WHERE_LIMIT)).with_count("count", len(blank)),
    )

    dups = [[u, v] for u, v in pg.duplicate_edges]
    v_dups = _verdict(
        "no_parallel_edges", not dups, "no edge listed twice",
        f"{len(dups)} repeated edge(s)" if dups else "none",
        Locus().with_edges("edges", capped(dups, EDGE_LIMIT)).with_count("count", len(dups)),
    )

    v_nodes = _header_count("nodes", "node", pg.declared_nodes, g.number_of_nodes())
    v_edges = _header_count("edges", "edge", _declared_int(pg.header.get("edges")),
                            g.number_of_edges())
    return (v_loops, v_blank, v_dups, v_nodes, v_edges)


def _header_count(key: str, noun: str, declared: int | None, actual: int) -> Verdict:
    """``header_<noun>_count``: the header's integer ``<key>=`` equals ``actual`` (holds when the
    header declares none)."""
    name = f"header_{noun}_count"
    if declared is None:
        return _verdict(name, True, f"header {key}= equals the {noun} count",
                        f"no {key}= in header ({actual} {key})", Locus())
    return _verdict(name, declared == actual, f"= {declared} (header {key}=)", f"{actual} {key}",
                    Locus())
