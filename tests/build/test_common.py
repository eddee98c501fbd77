"""build/common.py: instruction records, verified references, the isomorphism invariant and the
L5 edge listing."""

from __future__ import annotations

import json
import random
from typing import Any

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.build import common
from pytest_graphinstruct.build.common import (
    BuildError,
    TooFewDistinct,
    as_instruction,
    check_reference,
    edge_list_text,
    find_references,
    invariant,
    isomorphic,
    make_record,
)
from pytest_graphinstruct.errors import GraphInstructError, SuiteError
from pytest_graphinstruct.graphs.parse import parse_graph

seeds = st.integers(0, 2**32)


def _record(explicit: list[str], iid: str = "L9-001") -> dict[str, Any]:
    return make_record(iid, 1, "text", explicit, size="small", template="t")


# ----------------------------------------------------------------------------- make_record


def test_a_record_has_the_schemas_fields_in_a_fixed_order() -> None:
    rec = make_record("L2-007", 2, "Make a tree.", ["graph_type=tree"], ["acyclic=true"],
                      size="medium", feasible=False, domain="social", template="tree",
                      extra={"infeasibility_proof": "p", "base_graph": "b"})
    assert list(rec) == ["id", "level", "instruction", "explicit_constraints",
                         "implicit_constraints", "graph_sizes", "reference_solutions",
                         "feasible", "domain", "template", "infeasibility_proof", "base_graph"]
    assert rec == {"id": "L2-007", "level": 2, "instruction": "Make a tree.",
                   "explicit_constraints": ["graph_type=tree"],
                   "implicit_constraints": ["acyclic=true"], "graph_sizes": ["medium"],
                   "reference_solutions": [], "feasible": False, "domain": "social",
                   "template": "tree", "infeasibility_proof": "p", "base_graph": "b"}


def test_a_record_without_domain_or_extra_has_neither() -> None:
    rec = make_record("L1-001", 1, "t", ("num_nodes=3",), size="small", template="x")
    assert list(rec) == ["id", "level", "instruction", "explicit_constraints",
                         "implicit_constraints", "graph_sizes", "reference_solutions",
                         "feasible", "template"]
    assert rec["feasible"] is True and rec["implicit_constraints"] == []


def test_equal_arguments_give_byte_equal_json_and_the_lists_are_the_records_own() -> None:
    explicit = ["num_nodes=3"]
    a = make_record("L1-001", 1, "t", explicit, size="small", template="x")
    b = make_record("L1-001", 1, "t", ["num_nodes=3"], size="small", template="x")
    assert json.dumps(a) == json.dumps(b)
    explicit.append("connected=true")
    assert a["explicit_constraints"] == ["num_nodes=3"]


def test_as_instruction_reads_a_record_and_rejects_a_malformed_one() -> None:
    inst = as_instruction(_record(["num_nodes=4", "graph_type=path"]))
    assert inst.id == "L9-001" and inst.num_nodes == 4 and inst.graph_type == "path"
    bad = _record(["num_nodes=4"])
    del bad["instruction"]
    with pytest.raises(SuiteError):
        as_instruction(bad)


# ----------------------------------------------------------------------------- check_reference


def test_check_reference_accepts_a_valid_graph_and_names_a_violation() -> None:
    inst = as_instruction(_record(["num_nodes=4", "graph_type=path"]))
    text, why = check_reference(inst, nx.path_graph(4), "x-ref1")
    assert text is not None and why == "" and "x-ref1" in text
    text, why = check_reference(inst, nx.star_graph(3), "x-ref1")
    assert text is None and "graph_type=path" in why


def test_a_reference_is_the_graph_with_string_ids_and_its_attributes() -> None:
    inst = as_instruction(_record(["num_nodes=3"]))
    g = nx.Graph()
    g.add_node(0, role="hub")
    g.add_edge(0, 1, weight=2.5)
    g.add_edge(1, 2)
    text, why = check_reference(inst, g, "r")
    assert text is not None and why == ""
    back = parse_graph(text)
    assert back.name == "r" and set(back.graph) == {"0", "1", "2"}
    assert back.graph.nodes["0"]["role"] == "hub" and back.graph.edges["0", "1"]["weight"] == 2.5


def test_a_graph_the_text_cannot_carry_is_refused() -> None:
    inst = as_instruction(_record(["num_nodes=2"]))
    g = nx.Graph([("0", "1")])
    g.nodes["0"]["x"] = float("nan")  # nan != nan: the parsed graph is not the same data
    assert check_reference(inst, g, "r") == (None, "serializer round trip changed the graph")


def test_text_that_does_not_parse_back_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(text: str) -> Any:
        raise GraphInstructError("unreadable")

    monkeypatch.setattr(common, "parse_graph", broken)
    inst = as_instruction(_record(["num_nodes=2"]))
    assert check_reference(inst, nx.path_graph(2), "r") == (None,
                                                            "does not parse back: unreadable")


def test_node_ids_that_collide_as_strings_are_refused() -> None:
    """``0`` and ``'0'`` are one node in the text: the reference would not be the graph."""
    inst = as_instruction(_record(["num_nodes=3"]))
    g = nx.Graph([(0, 1), ("0", "2")])
    text, why = check_reference(inst, g, "r")
    assert text is None and "collide" in why


def test_a_directed_graph_keeps_its_arcs() -> None:
    inst = as_instruction(_record(["num_nodes=3", "directed=true"]))
    text, _ = check_reference(inst, nx.DiGraph([(1, 0), (1, 2)]), "d")
    assert text is not None
    back = parse_graph(text).graph
    assert back.is_directed() and set(back.edges()) == {("1", "0"), ("1", "2")}


# ----------------------------------------------------------------------------- find_references


def _trees(r: random.Random) -> nx.Graph:
    return nx.random_labeled_tree(6, seed=r.randrange(1000))


def test_find_references_returns_two_non_isomorphic_or_fails_loudly() -> None:
    rec = _record(["num_nodes=6", "graph_type=tree"])
    refs = find_references(rec, _trees, random.Random(1))
    assert len(refs) == 2 and rec["reference_solutions"] == refs
    assert [parse_graph(r).name for r in refs] == ["L9-001-ref1", "L9-001-ref2"]
    a, b = (parse_graph(r).graph for r in refs)
    assert not nx.is_isomorphic(a, b)
    with pytest.raises(BuildError, match="isomorphic"):
        find_references(_record(["num_nodes=4", "graph_type=path"]),
                        lambda r: nx.path_graph(4), random.Random(1), tries=5)
    refs = find_references(_record(["num_nodes=4", "graph_type=path"]),
                           lambda r: nx.path_graph(4), random.Random(1), unique=True)
    assert len(refs) == 2


def test_the_same_stream_gives_the_same_references() -> None:
    a = find_references(_record(["num_nodes=6", "graph_type=tree"]), _trees, random.Random(5),
                        count=3)
    b = find_references(_record(["num_nodes=6", "graph_type=tree"]), _trees, random.Random(5),
                        count=3)
    assert a == b and len(a) == 3


def test_one_answer_up_to_isomorphism_raises_too_few_distinct() -> None:
    rec = _record(["num_nodes=4", "graph_type=path"], iid="L1-009")
    rec["template"] = "paths"
    with pytest.raises(TooFewDistinct) as err:
        find_references(rec, lambda r: nx.path_graph(4), random.Random(0), tries=4)
    assert str(err.value) == ("L1-009 (paths): only 1 of 2 references after 4 draws; last "
                              "problem: isomorphic to an earlier reference")
    assert rec["reference_solutions"] == []  # a failed search stores nothing


def test_a_generator_that_draws_nothing_is_a_build_error_not_too_few_distinct() -> None:
    rec = _record(["num_nodes=4"])
    with pytest.raises(BuildError) as err:
        find_references(rec, lambda r: None, random.Random(0), tries=3)
    assert type(err.value) is BuildError
    assert str(err.value).endswith("only 0 of 2 references after 3 draws; last problem: "
                                   "generator returned nothing")


def test_the_error_names_the_last_verifier_complaint() -> None:
    rec = _record(["num_nodes=4", "graph_type=path"])
    with pytest.raises(BuildError) as err:
        find_references(rec, lambda r: nx.star_graph(3), random.Random(0), tries=2)
    assert type(err.value) is BuildError and "graph_type=path" in str(err.value)


def test_rejected_draws_are_skipped_until_enough_are_found() -> None:
    draws = iter([None, nx.star_graph(3), None, nx.path_graph(4), nx.path_graph(4)])
    rec = _record(["num_nodes=4", "graph_type=tree"])
    refs = find_references(rec, lambda r: next(draws), random.Random(0), count=2)
    assert [parse_graph(t).graph.number_of_edges() for t in refs] == [3, 3]
    assert not nx.is_isomorphic(*(parse_graph(t).graph for t in refs))


# ----------------------------------------------------------------------------- isomorphism


def test_invariant_is_an_invariant_and_separates_regular_graphs() -> None:
    g = nx.random_regular_graph(3, 12, seed=4)
    perm = list(range(12))
    random.Random(2).shuffle(perm)
    h = nx.relabel_nodes(g, dict(enumerate(perm)))
    assert invariant(g) == invariant(h)
    k33, prism = nx.complete_bipartite_graph(3, 3), nx.circular_ladder_graph(3)
    assert invariant(k33) != invariant(prism)
    d = nx.DiGraph([(0, 1), (1, 2)])
    assert invariant(d) != invariant(nx.DiGraph([(0, 1), (2, 1)]))


@st.composite
def graphs(draw: st.DrawFn, directed: bool | None = None) -> nx.Graph:
    n = draw(st.integers(0, 8))
    is_directed = draw(st.booleans()) if directed is None else directed
    pairs = [(u, v) for u in range(n) for v in range(n) if u != v and (is_directed or u < v)]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True) if pairs else st.just([]))
    g: nx.Graph = nx.DiGraph() if is_directed else nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    return g


@given(graphs(), seeds)
def test_a_relabelled_graph_has_the_same_invariant_and_is_isomorphic(g: nx.Graph,
                                                                     seed: int) -> None:
    ids = [f"v{i}" for i in range(g.number_of_nodes())]
    random.Random(seed).shuffle(ids)
    h = nx.relabel_nodes(g, dict(zip(list(g), ids, strict=True)))
    assert invariant(g) == invariant(h)
    assert isomorphic(g, h)


@given(graphs(), graphs())
def test_isomorphic_agrees_with_networkx(a: nx.Graph, b: nx.Graph) -> None:
    expected = a.is_directed() == b.is_directed() and nx.is_isomorphic(a, b)
    assert isomorphic(a, b) is expected
    if invariant(a) != invariant(b):  # different invariants prove non-isomorphism
        assert not expected


def test_a_graph_and_its_directed_twin_are_not_isomorphic() -> None:
    g = nx.path_graph(3)
    assert not isomorphic(g, nx.DiGraph(g)) and not isomorphic(nx.DiGraph(g), g)


def test_two_null_graphs_are_isomorphic() -> None:
    assert isomorphic(nx.Graph(), nx.Graph()) and isomorphic(nx.DiGraph(), nx.DiGraph())
    assert not isomorphic(nx.Graph(), nx.empty_graph(1))


def test_attributes_are_ignored() -> None:
    a, b = nx.path_graph(3), nx.path_graph(3)
    nx.set_edge_attributes(b, 7, "weight")
    assert isomorphic(a, b)


# ----------------------------------------------------------------------------- edge_list_text


def test_edge_list_text_sorts_numerically() -> None:
    g = nx.Graph([("10", "2"), ("0", "1")])
    assert edge_list_text(g) == "(0,1), (2,10)"


def test_a_digraph_is_listed_with_its_arcs_as_they_point() -> None:
    g = nx.DiGraph([("10", "2"), ("2", "10"), ("3", "1")])
    assert edge_list_text(g) == "(2,10), (3,1), (10,2)"


def test_an_edgeless_graph_lists_nothing_and_names_sort_after_numbers() -> None:
    assert edge_list_text(nx.Graph()) == ""
    assert edge_list_text(nx.Graph([("b", "a"), ("3", "a")])) == "(3,a), (a,b)"


@given(graphs(directed=False))
def test_the_listing_is_the_graphs_edge_set(g: nx.Graph) -> None:
    text = edge_list_text(g)
    items = [] if not text else [tuple(p.strip("()").split(",")) for p in text.split(", ")]
    assert {frozenset(map(int, p)) for p in items} == {frozenset(e) for e in g.edges()}
    assert len(items) == g.number_of_edges()
    assert all(int(u) < int(v) for u, v in items) and items == sorted(
        items, key=lambda p: (int(p[0]), int(p[1])))
