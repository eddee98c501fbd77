"""prompts.reasoning: few-cot reasoning and refusal explanations computed from constraints."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.graphs.parse import parse_graph
from pytest_graphinstruct.graphs.refusal import find_refusal
from pytest_graphinstruct.prompts.reasoning import (
    exemplar_reasoning,
    infeasibility_reason,
    refusal_answer,
    refusal_reasoning,
    shape_of,
)
from pytest_graphinstruct.prompts.texts import PACKAGED
from tests.prompts._factory import graph_text, make


def test_refusal_without_a_computable_reason() -> None:
    inst = make("L2-010", constraints=("num_nodes=5", "planar=true"), feasible=False)
    assert infeasibility_reason(inst) is None
    assert refusal_answer(inst) == PACKAGED.render("refusal_answer")
    assert PACKAGED.render("refusal_answer").endswith("no such graph exists.")
    assert find_refusal(refusal_answer(inst))
    assert "contradict" in refusal_reasoning(inst)


@pytest.mark.parametrize(("constraints", "graph", "expected"), [
    (("graph_type=tree", "num_nodes=7"), nx.balanced_tree(2, 2), "7 − 1 = 6 edges"),
    (("graph_type=cycle", "num_nodes=6"), nx.cycle_graph(6), "exactly 6 edges"),
    (("graph_type=complete", "num_nodes=5"), nx.complete_graph(5), "5 × (5 − 1) / 2 = 10"),
    (("graph_type=star", "num_nodes=5"), nx.star_graph(4), "other 4 nodes"),
    (("graph_type=wheel", "num_nodes=6"), nx.wheel_graph(6), "make 10 edges"),
    (("graph_type=path", "num_nodes=5"), nx.path_graph(5), "which makes 4 edges"),
    (("degree=3", "num_nodes=8"), nx.cubical_graph(), "3 × 8 / 2 = 12 edges"),
    (("graph_type=regular", "num_nodes=6"), nx.cycle_graph(6), "2 × 6 / 2 = 6 edges"),
    (("graph_type=complete_bipartite", "bipartite_sides=2,3"),
     nx.complete_bipartite_graph(2, 3), "2 × 3 = 6 edges"),
    (("bipartite=true", "num_nodes=4"), nx.path_graph(4), "two sides"),
    (("graph_type=bipartite", "bipartite_sides=3,1"), nx.star_graph(3), "split 1 + 3"),
    (("graph_type=forest", "num_nodes=6"), nx.Graph([(0, 1), (1, 2), (3, 4), (4, 5)]),
     "2 trees need 6 − 2 = 4 edges"),
    (("graph_type=connected", "num_nodes=4"), nx.cycle_graph(4), "at least 4 − 1 = 3"),
    (("directed=true", "acyclic=true"), nx.DiGraph([(0, 1), (1, 2)]), "earlier node"),
    (("num_nodes=4", "density<=0.5"), nx.path_graph(4),
     "Take the requirements one at a time: num_nodes=4, density<=0.5. A density of at most "
     "0.5 on 4 nodes allows at most 3 edges."),
])
def test_reasoning_is_computed_from_constraints(
    constraints: tuple[str, ...], graph: nx.Graph, expected: str
) -> None:
    inst = make("L1-001", constraints=constraints, ref=graph)
    text = exemplar_reasoning(inst, parse_graph(inst.references[0]))
    assert expected in text
    n, m = graph.number_of_nodes(), graph.number_of_edges()
    assert text.endswith(f"settle on {n} nodes and {m} edges, write every edge out, and check "
                         "each requirement against the finished graph before giving the answer.")


def test_reasoning_ignores_keywords_in_the_text() -> None:
    inst = make("L1-001", text="Generate a tree (actually a cycle) with 5 nodes.",
                constraints=("graph_type=cycle", "num_nodes=5"), ref=nx.cycle_graph(5))
    assert shape_of(inst) == "cycle"
    text = exemplar_reasoning(inst, parse_graph(inst.references[0]))
    assert "cycle on 5 nodes" in text and "tree" not in text
    plain = make("L1-002", text="Generate a tree with 5 nodes.", constraints=("num_nodes=5",))
    assert shape_of(plain) is None


def test_implicit_graph_type_counts() -> None:
    inst = make("L1-001", constraints=("num_nodes=4",), implicit=("graph_type=tree",))
    assert shape_of(inst) == "tree"


@pytest.mark.parametrize(("constraints", "needle"), [
    (("degree=3", "num_nodes=5"), "3 × 5 = 15, which is odd"),
    (("degree=5", "num_nodes=4"), "at most 3 neighbours, so degree 5"),
    (("num_nodes=4", "num_edges=7"), "at most 6 edges, but 7"),
    (("num_nodes=3", "num_edges=7", "directed=true"), "directed graph on 3 nodes has at most 6"),
    (("graph_type=tree", "num_nodes=5", "num_edges=5"), "tree on 5 nodes has exactly 4 edges"),
    (("connected=true", "num_nodes=6", "num_edges=3"), "at least 5 edges, but only 3"),
    (("bipartite_sides=2,3", "num_nodes=6"), "add up to 5 nodes, but the graph must have 6"),
])
def test_infeasibility_reasons(constraints: tuple[str, ...], needle: str) -> None:
    inst = make("L2-001", constraints=constraints, feasible=False)
    reason = infeasibility_reason(inst)
    assert reason is not None and needle in reason
    assert find_refusal(refusal_answer(inst))


def test_feasible_constraints_have_no_reason() -> None:
    inst = make("L2-001", constraints=("degree=3", "num_nodes=6", "num_edges=9",
                                       "connected=true"))
    assert infeasibility_reason(inst) is None




@pytest.mark.parametrize(("constraints", "implicit", "shape"), [
    (("graph_type=tree",), ("graph_type=cycle",), "tree"),  # explicit first
    (("degree=3", "num_nodes=6"), (), "regular"),
    (("bipartite=true",), (), "bipartite"),
    (("bipartite_sides=2,3",), (), "bipartite"),
    (("directed=true", "acyclic=true"), (), "dag"),
    (("directed=true",), (), None),
    (("acyclic=true",), (), None),
    (("bipartite=false",), (), None),
])
def test_shape_of(constraints: tuple[str, ...], implicit: tuple[str, ...],
                  shape: str | None) -> None:
    assert shape_of(make("L1-001", constraints=constraints, implicit=implicit)) == shape


def test_without_a_graph_only_generic_sentences_are_used() -> None:
    inst = make("L1-001", constraints=("graph_type=tree", "num_nodes=7"))
    text = exemplar_reasoning(inst, None)
    assert text.startswith("Take the requirements one at a time: graph_type=tree, num_nodes=7")
    assert not any(ch.isdigit() for ch in text.split("num_nodes=7", 1)[1])


def test_metadata_constraints_are_not_requirements() -> None:
    inst = make("L4-001", constraints=("task_type=foo", "domain=social"))
    text = exemplar_reasoning(inst, None)
    assert "task_type" not in text and "domain" not in text
    assert text.startswith(PACKAGED.render_section("exemplar_reasoning", "generic_plain"))


def test_density_cap_counts_ordered_pairs_when_directed() -> None:
    inst = make("L1-001", constraints=("num_nodes=4", "density<=0.5"),
                ref=nx.DiGraph([(0, 1), (1, 2), (2, 3)]))
    graph = parse_graph(inst.references[0])
    assert graph.directed
    text = exemplar_reasoning(inst, graph)
    assert "allows at most 6 edges" in text  # floor(0.5 * 4 * 3)


def test_no_density_cap_below_two_nodes() -> None:
    g = nx.Graph()
    g.add_node(0)
    inst = make("L1-001", constraints=("num_nodes=1", "density<=0.5"), ref=g)
    assert "allows at most" not in exemplar_reasoning(inst, parse_graph(inst.references[0]))


@pytest.mark.parametrize(("as_edit", "needle"), [(True, "removing 0 and adding 1 edges"),
                                                 (False, "written out in full")])
def test_an_l5_exemplar_says_what_the_edit_changes(as_edit: bool, needle: str) -> None:
    inst = make("L5-001", base=nx.Graph([(0, 1), (2, 3)]), ref=nx.path_graph(4),
                constraints=("num_nodes=4", "connected=true", "task_type=make_connected"))
    text = exemplar_reasoning(inst, parse_graph(graph_text(nx.path_graph(4))), as_edit=as_edit)
    assert needle in text
    assert text.endswith(PACKAGED.render_section("exemplar_reasoning", "steps_edit"))


def test_the_degree_rule_comes_before_the_handshake_rule() -> None:
    reason = infeasibility_reason(make("L2-001", constraints=("degree=5", "num_nodes=3")))
    assert reason is not None and "degree 5" in reason and "odd" not in reason


def test_degree_rules_do_not_apply_to_directed_graphs() -> None:
    inst = make("L2-001", constraints=("degree=3", "num_nodes=5", "directed=true"))
    assert infeasibility_reason(inst) is None


@given(n=st.integers(1, 30), d=st.integers(0, 35))
def test_degree_reason_exactly_when_no_regular_graph_exists(n: int, d: int) -> None:
    """A d-regular simple graph on n nodes exists iff d < n and d·n is even."""
    inst = make("L2-001", constraints=(f"degree={d}", f"num_nodes={n}"))
    assert (infeasibility_reason(inst) is None) == (d < n and d * n % 2 == 0)


@given(n=st.integers(1, 30), m=st.integers(0, 500), directed=st.booleans())
def test_edge_count_reason_exactly_above_the_simple_graph_maximum(n: int, m: int,
                                                                  directed: bool) -> None:
    constraints = (f"num_nodes={n}", f"num_edges={m}") + (("directed=true",) if directed else ())
    most = n * (n - 1) // (1 if directed else 2)
    assert (infeasibility_reason(make("L2-001", constraints=constraints)) is None) == (m <= most)


def test_refusal_texts_carry_the_reason() -> None:
    inst = make("L2-001", constraints=("degree=3", "num_nodes=5"), feasible=False)
    reason = infeasibility_reason(inst)
    assert reason is not None
    assert refusal_answer(inst) == f"{reason} {PACKAGED.render('refusal_answer')}"
    assert reason in refusal_reasoning(inst)
    assert find_refusal(refusal_answer(inst))
