"""Drawings: the parsed graph laid out at build time, the verdicts' loci marked, size bounded."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.report.render.html.drawing import MAX_NODES, Drawing, Omitted, draw, loci
from pytest_graphinstruct.run.results import bounded_answer
from pytest_graphinstruct.verify.locus import Locus
from tests.report.html_fixtures import CYCLE, TREE, two_cell_report


def _pairs(d: Drawing, k: int) -> set[frozenset[str]]:
    return {frozenset((d.labels[d.edges[e][0]], d.labels[d.edges[e][1]]))
            for e in (d.marked_edges if k else range(len(d.edges)))}


def test_marked_nodes_and_edges_come_from_the_verdicts_where() -> None:
    sample = two_cell_report().cells[0].per_instruction[0].samples[0]
    wheres = [v.where for v in sample.violation_details if v.where]
    assert wheres and all("cycle" in w.to_json() for w in wheres)
    d = draw(sample.raw_answer, wheres)
    assert isinstance(d, Drawing)
    assert {d.labels[k] for k in d.marked_nodes} == {"0", "1", "4"}
    # the cycle's edges, in whichever direction the locus names them (undirected graph)
    assert _pairs(d, 1) == {frozenset(p) for p in (("0", "1"), ("1", "4"), ("0", "4"))}
    assert len(d.edges) == 8 and len(d.labels) == 8


def test_no_locus_marks_nothing_and_the_layout_is_deterministic() -> None:
    a, b = draw(TREE), draw(TREE)
    assert isinstance(a, Drawing) and a == b
    assert a.marked_nodes == () and a.marked_edges == ()
    assert all(-1.01 <= c <= 1.01 for p in a.xy for c in p)


def test_loci_reads_node_lists_and_pairs_and_ignores_counts_and_components() -> None:
    nodes, edges = loci([Locus.of({"nodes": ["a", 3], "count": 2, "degrees": [1, 5]}),
                         Locus.of({"edges": [["x", "y"]], "components": [["p", "q"]],
                                   "component_sizes": [2]})])
    assert nodes == {"a", "3", "x", "y"} and edges == {("x", "y")}


def test_what_is_not_drawn_says_why() -> None:
    assert isinstance(draw(None), Omitted)
    assert "does not parse" in draw("hello").to_json()["omitted"]
    ids = ", ".join(f"'{k}'" for k in range(MAX_NODES + 1))
    big = f"Graph[nodes={MAX_NODES + 1}] {{ node_list = [{ids}]; edge_list = []; }}"
    assert f"{MAX_NODES + 1} nodes" in draw(big).to_json()["omitted"]
    cut = bounded_answer(CYCLE + " " * 3000)
    assert "only the start" in draw(cut).to_json()["omitted"]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_any_text_gives_a_drawing_or_a_reason(text: str) -> None:
    out = draw(text, [{"nodes": [text[:5]], "edges": [[text[:1], text[1:2]]]}])
    assert isinstance(out, Drawing | Omitted)
