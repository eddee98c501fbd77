"""Shared machinery of the suite builder: records and verified references.

Every level module of :mod:`pytest_graphinstruct.build` produces instruction *records*
in the GraphInstruct JSON schema (:func:`make_record`) and attaches references found by
:func:`find_references`.  Promises:

* **Deterministic.**  Every random choice comes from a stream of
  :mod:`~pytest_graphinstruct.build.streams` (``rng_for(seed, "L2", 17, "ref")``) passed in by
  the caller; nothing reads global random state, so a record is a pure function of
  ``(seed, level, index)``.
* **Verified.**  A reference is accepted only if the whole verifier passes it against its own
  instruction and its serialized text parses back to the same graph (node set, edge set and
  attributes).  The two references of an instruction are non-isomorphic unless the caller says
  the instruction admits a single answer up to isomorphism (``unique=True``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import networkx as nx

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.graphs.parse import parse_graph
from pytest_graphinstruct.graphs.serialize import serialize
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import instruction_from_record
from pytest_graphinstruct.verify.verifier import DEFAULT_VERIFIER, Verifier
from pytest_graphinstruct.vocab import natural_key

#: Draws a generator may take to find one verified reference before the build fails.
REFERENCE_TRIES = 400
_ISOMORPHIC = "isomorphic to an earlier reference"


class BuildError(GraphInstructError):
    """A template could not produce a valid instruction or reference (a builder bug, never
    silently skipped: the build stops naming the instruction and template)."""


class TooFewDistinct(BuildError):
    """Every further draw was isomorphic to a reference already found: the drafted instruction
    (e.g. a 5-node connected graph with 9 edges) admits fewer distinct answers than asked for.
    The level builder then drafts that instruction again from the same seeded stream."""


def make_record(
    iid: str,
    level: int,
    text: str,
    explicit: Sequence[str],
    implicit: Sequence[str] = (),
    *,
    size: str,
    feasible: bool = True,
    domain: str | None = None,
    template: str,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One instruction record in the GraphInstruct schema (field order fixed, so JSON output is
    byte-stable).  ``template`` names the builder template (our own extra field); ``extra`` adds
    level-specific fields (``base_graph``, ``infeasibility_proof``, …) after the standard ones.
    ``reference_solutions`` starts empty; :func:`attach_references` fills it."""
    rec: dict[str, Any] = {
        "id": iid,
        "level": level,
        "instruction": text,
        "explicit_constraints": list(explicit),
        "implicit_constraints": list(implicit),
        "graph_sizes": [size],
        "reference_solutions": [],
        "feasible": feasible,
    }
    if domain is not None:
        rec["domain"] = domain
    rec["template"] = template
    if extra:
        rec.update(extra)
    return rec


def as_instruction(record: Mapping[str, Any]) -> Instruction:
    """The loader's view of a record (raises :class:`SuiteError` on a malformed one)."""
    inst = instruction_from_record(dict(record), source="<builder>")
    assert inst is not None  # without an ``errors`` list a malformed record raises
    return inst


def _same_graph(a: nx.Graph, b: nx.Graph) -> bool:
    """Equal as data (nodes, edges, every attribute), not merely isomorphic."""
    return a.is_directed() == b.is_directed() and nx.utils.graphs_equal(a, b)


def _stringify(g: nx.Graph) -> nx.Graph:
    """``g`` with ``str`` node ids (attributes kept)."""
    if all(isinstance(n, str) for n in g):
        return g
    return nx.relabel_nodes(g, str)


def check_reference(inst: Instruction, graph: nx.Graph, name: str,
                    verifier: Verifier = DEFAULT_VERIFIER) -> tuple[str | None, str]:
    """Serialize ``graph`` as reference ``name`` and verify it.

    Returns ``(text, "")`` when the text round-trips through the parser to the same graph and
    passes every verdict of ``inst``; otherwise ``(None, why)``.
    """
    g = _stringify(graph)
    if g.number_of_nodes() != graph.number_of_nodes():
        return None, "node ids collide as strings (e.g. 0 and '0')"
    text = serialize(g, name=name)
    try:
        back = parse_graph(text).graph
    except GraphInstructError as exc:
        return None, f"does not parse back: {exc}"
    if not _same_graph(_stringify(back), g):
        return None, "serializer round trip changed the graph"
    v = verifier.verify(inst, text)
    if not v.passed:
        failed = [f"{x.constraint}: expected {x.expected}, observed {x.observed}"
                  for x in v.verdicts if not x.satisfied]
        return None, "; ".join(failed) or "not passed"
    return text, ""


def find_references(
    record: dict[str, Any],
    generate: Callable[[random.Random], nx.Graph | None],
    rng: random.Random,
    *,
    count: int = 2,
    unique: bool = False,
    tries: int = REFERENCE_TRIES,
    verifier: Verifier = DEFAULT_VERIFIER,
) -> list[str]:
    """Draw graphs from ``generate(rng)`` until ``count`` verified, pairwise non-isomorphic
    references are found (isomorphic ones allowed when ``unique``), store them in
    ``record["reference_solutions"]`` and return them.

    ``generate`` may return ``None`` for a rejected draw.  References are named
    ``<id>-ref1``, ``<id>-ref2``, ….

    Raises:
        BuildError: fewer than ``count`` references after ``tries`` draws; the message names the
            instruction, its template and the last verifier complaint.
    """
    inst = as_instruction(record)
    found: list[str] = []
    graphs: list[nx.Graph] = []
    why = "generator returned nothing"
    for _ in range(tries):
        g = generate(rng)
        if g is None:
            continue
        if not unique and any(isomorphic(g, h) for h in graphs):
            why = _ISOMORPHIC
            continue
        text, why_not = check_reference(inst, g, f"{record['id']}-ref{len(found) + 1}", verifier)
        if text is None:
            why = why_not
            continue
        found.append(text)
        graphs.append(g)
        if len(found) == count:
            record["reference_solutions"] = found
            return found
    error = TooFewDistinct if found and why == _ISOMORPHIC else BuildError
    raise error(f"{record['id']} ({record.get('template')}): only {len(found)} of {count} "
                f"references after {tries} draws; last problem: {why}")


def invariant(g: nx.Graph) -> tuple[Any, ...]:
    """An isomorphism invariant: equal for isomorphic graphs, so *different* invariants prove
    two graphs non-isomorphic (equal ones prove nothing).

    Node count, edge count, sorted degrees, and a Weisfeiler–Lehman hash whose initial node
    labels are the node's triangle count (digraphs: its in- and out-degree) and its BFS distance
    profile (how many nodes at distance 1, 2, …, following arcs in digraphs), hashed on the
    undirected view: strong enough to separate most regular graphs, where plain colour
    refinement sees no difference.
    """
    labels: dict[Any, str] = {}
    directed = g.is_directed()
    tri = nx.triangles(g) if not directed else {}
    for v in g.nodes():
        prof: dict[int, int] = {}
        for d in nx.single_source_shortest_path_length(g, v).values():
            prof[d] = prof.get(d, 0) + 1
        local = f"{g.in_degree(v)},{g.out_degree(v)}" if directed else str(tri[v])
        labels[v] = f"{local}|{sorted(prof.items())}"
    h = nx.Graph(g)  # hashed undirected: the labels carry the directions
    nx.set_node_attributes(h, labels, "inv")
    degrees = sorted(d for _, d in g.degree())
    wl = nx.weisfeiler_lehman_graph_hash(h, node_attr="inv", iterations=3)
    return (g.number_of_nodes(), g.number_of_edges(), tuple(degrees), wl)


def isomorphic(a: nx.Graph, b: nx.Graph) -> bool:
    """Structural isomorphism (attributes ignored): :func:`invariant` first, which settles
    almost every non-isomorphic pair (regular graphs included) without a search, then VF2++."""
    if a.is_directed() != b.is_directed() or invariant(a) != invariant(b):
        return False
    # equal invariants with no nodes: both null graphs, which VF2++ calls non-isomorphic
    return a.number_of_nodes() == 0 or nx.vf2pp_is_isomorphic(a, b)


def edge_list_text(g: nx.Graph) -> str:
    """``(u,v), (u,v), …`` in sorted order (numeric ids sort numerically): how base graphs are
    listed inside L5 instruction texts."""
    key = natural_key
    edges = []
    for u, v in g.edges():
        if not g.is_directed() and key(v) < key(u):
            u, v = v, u
        edges.append((key(u), key(v), str(u), str(v)))
    edges.sort()
    return ", ".join(f"({u},{v})" for _, _, u, v in edges)
