"""apply_edit: GraphEdit answers applied to a base graph."""

from __future__ import annotations

import networkx as nx
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.graphs import GraphEdit, ParsedGraph, apply_edit, parse_graph

BASE = parse_graph(
    "Graph[name='base', nodes=5] { node_list = ['0','1','2','3','4']; "
    "edge_list = [('0','1'), ('1','2'), ('2','3')]; 0.label = 'zero'; edge(1,2).w = 7; "
    "domain = 'x'; }"
)


def test_remove_then_add_either_orientation() -> None:
    edit = GraphEdit(add_edges=(("3", "0"), ("5", "6")), remove_edges=(("1", "0"), ("9", "8")))
    pg = apply_edit(BASE, edit)
    assert {frozenset(e) for e in pg.graph.edges} == {
        frozenset(e) for e in [("1", "2"), ("2", "3"), ("3", "0"), ("5", "6")]
    }
    assert pg.fmt == "edit" and pg.edit is edit and pg.declared_nodes is None
    assert {"5", "6"} <= set(pg.graph.nodes)


def test_base_is_not_modified_and_attributes_are_kept() -> None:
    before = BASE.graph.copy()
    pg = apply_edit(BASE, GraphEdit(remove_edges=(("0", "1"),), add_edges=(("0", "4"),)))
    assert nx.utils.graphs_equal(BASE.graph, before)
    assert pg.graph.nodes["0"] == {"label": "zero"}
    assert pg.graph.edges["1", "2"] == {"w": 7}
    assert pg.graph.graph == {"domain": "x"}


def test_directed_removal_respects_orientation() -> None:
    base = parse_graph("Graph[directed=true] { edge_list = [(0, 1), (1, 0)]; }")
    pg = apply_edit(base, GraphEdit(remove_edges=(("0", "1"),)))
    assert set(pg.graph.edges) == {("1", "0")}


def test_adding_an_existing_edge_is_a_duplicate() -> None:
    edit = GraphEdit(add_edges=(("1", "0"), ("0", "1"), ("0", "4"), ("0", "4")))
    pg = apply_edit(BASE, edit)
    assert pg.duplicate_edges == (("1", "0"), ("0", "4"))


def test_drop_isolated_only_removes_nodes_that_lost_all_edges() -> None:
    edit = GraphEdit(remove_edges=(("0", "1"), ("2", "3")), add_nodes=("7",))
    kept = apply_edit(BASE, edit)
    assert set(kept.graph.nodes) == {"0", "1", "2", "3", "4", "7"}
    dropped = apply_edit(BASE, edit, drop_isolated=True)
    # 0 and 3 lost their edges; 4 was isolated already; 7 is new
    assert set(dropped.graph.nodes) == {"1", "2", "4", "7"}


def test_node_removal_and_blank_nodes() -> None:
    pg = apply_edit(BASE, GraphEdit(remove_nodes=("2", "99"), add_edges=(("", "4"),)))
    assert "2" not in pg.graph and pg.blank_nodes == ("",)
    assert {frozenset(e) for e in pg.graph.edges} == {frozenset(("0", "1")), frozenset(("", "4"))}


def test_name_and_header_come_from_the_edit() -> None:
    edit = GraphEdit(header={"name": "e1", "operation": "remove_edges"})
    pg = apply_edit(BASE, edit)
    assert pg.name == "e1" and pg.header["operation"] == "remove_edges"


@given(
    st.lists(st.tuples(st.sampled_from("01234"), st.sampled_from("01234")), max_size=8),
    st.lists(st.tuples(st.sampled_from("0123456"), st.sampled_from("0123456")), max_size=8),
)
def test_edit_semantics_match_networkx(
    remove: list[tuple[str, str]], add: list[tuple[str, str]]
) -> None:
    pg = apply_edit(BASE, GraphEdit(add_edges=tuple(add), remove_edges=tuple(remove)))
    expected = BASE.graph.copy()
    expected.remove_edges_from(remove)
    expected.add_edges_from(add)
    assert pg.same_graph(ParsedGraph(graph=expected))
