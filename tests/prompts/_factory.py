"""Small builders of :class:`Instruction` objects for the prompt tests (no suite files)."""

from __future__ import annotations

from collections.abc import Iterable

import networkx as nx

from pytest_graphinstruct.graphs.serialize import serialize
from pytest_graphinstruct.suite.constraints import parse_constraint
from pytest_graphinstruct.suite.instruction import Instruction


def graph_text(g: nx.Graph, name: str = "ref") -> str:
    """Code-style text of ``g`` with string node ids."""
    return serialize(nx.relabel_nodes(g, str), name=name)


def make(
    iid: str,
    *,
    level: int | None = None,
    text: str | None = None,
    constraints: Iterable[str] = ("num_nodes=4",),
    implicit: Iterable[str] = (),
    ref: nx.Graph | str | None = None,
    feasible: bool = True,
    domain: str | None = None,
    base: nx.Graph | str | None = None,
    edits: Iterable[str] = (),
) -> Instruction:
    """An instruction; ``level`` defaults to the digit after ``L`` in ``iid``; a feasible one
    gets a 4-node path reference unless ``ref`` is given."""
    lv = int(iid[1]) if level is None else level
    if feasible and ref is None:
        ref = nx.path_graph(4)
    refs: tuple[str, ...] = ()
    if ref is not None:
        refs = (ref if isinstance(ref, str) else graph_text(ref, f"{iid}-ref1"),)
    base_text = None
    if base is not None:
        base_text = base if isinstance(base, str) else graph_text(base, f"{iid}-base")
    return Instruction(
        id=iid,
        level=lv,
        text=text if text is not None else f"Instruction {iid}: build a graph.",
        explicit=tuple(parse_constraint(c) for c in constraints),
        implicit=tuple(parse_constraint(c) for c in implicit),
        references=refs,
        feasible=feasible,
        domain=domain,
        base_graph=base_text,
        graph_edits=tuple(edits),
    )


def level_suite(counts: dict[int, int], *, infeasible: dict[int, int] | None = None
                ) -> list[Instruction]:
    """``counts[level]`` feasible instructions per level (ids ``L<l>-001`` …), then
    ``infeasible[level]`` odd-degree infeasible ones (ids continue the numbering)."""
    out: list[Instruction] = []
    for lv, n in sorted(counts.items()):
        for i in range(1, n + 1):
            out.append(make(f"L{lv}-{i:03d}", constraints=(f"num_nodes={3 + i}",),
                            ref=nx.path_graph(3 + i)))
    for lv, n in sorted((infeasible or {}).items()):
        start = counts.get(lv, 0)
        for j in range(1, n + 1):
            iid = f"L{lv}-{start + j:03d}"
            nodes = 2 * j + 3  # odd
            out.append(make(iid, text=f"Generate a 3-regular graph with {nodes} nodes.",
                            constraints=("degree=3", f"num_nodes={nodes}"), feasible=False))
    return out
