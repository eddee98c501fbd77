"""Drawings: the parsed graph laid out at build time, the verdicts' loci marked, size bounded."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.report.render.html.drawing import (
    LABEL_LIMIT,
    MAX_EDGES,
    MAX_NODES,
    Drawing,
    Omitted,
    draw,
    loci,
)
from pytest_graphinstruct.run.records.results import bounded_answer
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
    out = draw(text, [Locus.of({"nodes": [text[:5]], "edges": [[text[:1], text[1:2]]]})])
    assert isinstance(out, Drawing | Omitted)


def _graph(nodes: list[str], edges: list[tuple[str, str]], *, directed: bool = False) -> str:
    ids = ", ".join(f"'{v}'" for v in nodes)
    pairs = ", ".join(f"('{u}','{v}')" for u, v in edges)
    return (f"Graph[directed={str(directed).lower()}, nodes={len(nodes)}] "
            f"{{ node_list = [{ids}]; edge_list = [{pairs}]; }}")


def test_any_graph_text_with_loci_gives_a_drawing_or_a_reason() -> None:
    # parseable answers reach the loci (random text above rarely parses)
    text = _graph(["a", "b", "c"], [("a", "b"), ("b", "c")])
    out = draw(text, [Locus.of({"nodes": ["a", "zz"], "edges": [["c", "b"]]})])
    assert isinstance(out, Drawing)
    assert {out.labels[k] for k in out.marked_nodes} == {"a", "b", "c"}  # "zz" is not there
    assert _pairs(out, 1) == {frozenset(("b", "c"))}


def test_a_directed_edge_is_marked_only_in_the_direction_named() -> None:
    text = _graph(["a", "b"], [("a", "b")], directed=True)
    backwards = draw(text, [Locus.of({"edges": [["b", "a"]]})])
    forwards = draw(text, [Locus.of({"edges": [["a", "b"]]})])
    assert isinstance(backwards, Drawing) and isinstance(forwards, Drawing)
    assert backwards.directed and backwards.marked_edges == () and forwards.marked_edges == (0,)
    assert backwards.marked_nodes == (0, 1)  # an edge's endpoints are marked either way


def test_one_node_sits_in_the_middle_and_a_self_loop_is_not_an_edge() -> None:
    d = draw(_graph(["a", "b"], [("a", "a"), ("a", "b")]))
    assert isinstance(d, Drawing) and d.edges == ((0, 1),) and d.loops == (0,)
    one = draw(_graph(["a"], []))
    assert isinstance(one, Drawing) and one.xy == ((0.0, 0.0),) and one.edges == ()
    assert one.to_json() == {"directed": False, "labels": ["a"], "xy": [[0.0, 0.0]],
                             "edges": [], "marked_nodes": [], "marked_edges": [],
                             "loops": []}


def test_long_node_ids_are_cut_in_the_label() -> None:
    long = "x" * (LABEL_LIMIT + 6)
    d = draw(_graph([long, "y" * LABEL_LIMIT], []))
    assert isinstance(d, Drawing)
    assert d.labels == ("x" * (LABEL_LIMIT - 1) + "…", "y" * LABEL_LIMIT)


def test_an_empty_graph_and_too_many_edges_are_not_drawn() -> None:
    assert draw(_graph([], [])) == Omitted("the graph is empty")
    nodes = [str(k) for k in range(30)]
    dense = [(u, v) for i, u in enumerate(nodes) for v in nodes[i + 1:]]  # 435 edges
    assert len(dense) > MAX_EDGES
    out = draw(_graph(nodes, dense))
    assert isinstance(out, Omitted) and f"30 nodes, {len(dense)} edges" in out.reason
