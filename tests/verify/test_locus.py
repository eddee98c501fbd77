"""A verdict's locus: built by kind, read from JSON, validated where built; its order, and the
nodes and edges it names."""

from __future__ import annotations

from collections.abc import Callable
from typing import get_args

import pytest

from pytest_graphinstruct.verify.locus import (
    LOCUS_KEYS,
    CountName,
    EdgesName,
    GroupsName,
    Locus,
    NodesName,
    NumbersName,
    SidesName,
    locus_kind,
)
from pytest_graphinstruct.verify.verdict import Source, Verdict


def test_a_locus_keeps_the_order_and_values_it_was_built_with() -> None:
    where = {"nodes": ["a", 3], "count": 2, "degrees": [1, 4]}
    locus = Locus.of(where)
    assert locus.to_json() == where and list(locus.to_json()) == ["nodes", "count", "degrees"]
    assert locus.nodes == ("a", 3) and locus.edges == ()


def test_edges_name_their_pairs_and_groups_name_nothing() -> None:
    locus = Locus.of({"missing_edges": [["a", "b"]], "missing_edges_count": 1,
                      "components": [["a"], ["b", "c"]], "component_sides": [[1, 2]]})
    assert locus.edges == (("a", "b"),) and locus.nodes == ()
    assert Locus.of({}) == Locus() and not Locus()


@pytest.mark.parametrize(("where", "fragment"), [
    ({"places": [1]}, "places: not a locus name"),
    ({"count_count": 1}, "count_count: not a locus name"),
    ({"edges": [["a", "b", "c"]]}, "edges[0]: an edge is [u, v]"),
    ({"nodes": [True]}, "nodes[0]: a node id is a string or an integer"),
    ({"count": -1}, "count: expected a count"),
    ({"component_sides": [[1]]}, "component_sides[0]: expected [p, q]"),
])
def test_a_locus_of_the_wrong_shape_is_refused(where: dict[str, object], fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        Locus.of(where)
    assert fragment in str(info.value)


def test_every_list_has_its_count() -> None:
    for name, kind in LOCUS_KEYS.items():
        assert locus_kind(f"{name}_count") == (None if kind == "count" else "count")


def test_the_builders_give_the_json_a_check_writes() -> None:
    locus = (Locus().with_nodes("nodes", ["a", 3]).with_count("count", 5)
             .with_numbers("degrees", [1, 4]).with_edges("cycle", [("a", "b")])
             .with_groups("components", [["a"], ("b", "c")])
             .with_sides("component_sides", [(1, 2)]).with_total("cycle", 7))
    assert list(locus.to_json().items()) == [
        ("nodes", ["a", 3]), ("count", 5), ("degrees", [1, 4]), ("cycle", [["a", "b"]]),
        ("components", [["a"], ["b", "c"]]), ("component_sides", [[1, 2]]), ("cycle_count", 7)]
    assert Locus.of(locus.to_json()) == locus
    assert locus.nodes == ("a", 3) and locus.edges == (("a", "b"),)


def test_a_capped_list_is_its_first_items_and_its_length_and_nothing_when_empty() -> None:
    locus = (Locus().with_nodes("missing_nodes", [], cap=2)
             .with_edges("extra_edges", [("a", "b"), ("b", "c"), ("c", "d")], cap=2))
    assert locus.to_json() == {"extra_edges": [["a", "b"], ["b", "c"]], "extra_edges_count": 3}
    assert Locus().with_nodes("nodes", []).to_json() == {"nodes": []}  # uncapped: kept


@pytest.mark.parametrize(("build", "fragment"), [
    (lambda: Locus().with_nodes("nodes", [True]), "nodes[0]: a node id is a string or an integer"),
    (lambda: Locus().with_nodes("nodes", [(0, 1)]), "nodes[0]: a node id is a string or an"),
    (lambda: Locus().with_edges("cut_edges", [["a", "b", "c"]]), "cut_edges[0]: an edge is [u, v]"),
    (lambda: Locus().with_count("count", -1), "count: expected a count"),
    (lambda: Locus().with_numbers("degrees", [1.5]), "degrees[0]: expected a count"),
    (lambda: Locus().with_sides("component_sides", [[1]]), "component_sides[0]: expected [p, q]"),
    (lambda: Locus().with_count("count", 1).with_count("count", 2), "count: named twice"),
    (lambda: Locus().with_nodes("cycle", ["a"]),  # type: ignore[arg-type]
     "cycle: not a locus name of kind nodes"),
    (lambda: Locus((("nodes", ["a"]),)), "nodes: expected the typed form"),  # type: ignore[arg-type]
    (lambda: Locus((("places", 1),)), "places: not a locus name"),
])
def test_a_malformed_locus_fails_where_it_is_built(build: Callable[[], Locus],
                                                   fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        build()
    assert fragment in str(info.value)


def test_the_names_of_each_kind_make_the_table_in_the_reports_order() -> None:
    kinds = {"nodes": NodesName, "edges": EdgesName, "groups": GroupsName, "sides": SidesName,
             "numbers": NumbersName, "count": CountName}
    assert {name: kind for kind, names in kinds.items() for name in get_args(names)} == LOCUS_KEYS
    assert list(LOCUS_KEYS) == [  # the report schema lists them in this order
        "nodes", "self_loops", "odd_cycle", "missing_nodes", "extra_nodes", "unreached_nodes",
        "edges", "cycle", "kuratowski_edges", "antiparallel", "cut_edges", "missing_edges",
        "extra_edges", "bridges", "components", "triangles", "component_sides", "degrees",
        "component_sizes", "count", "cycle_length", "odd_cycle_length"]


def test_a_verdict_carries_its_locus_and_writes_it_as_json() -> None:
    where = Locus().with_nodes("nodes", ["a", 7]).with_count("count", 2)
    v = Verdict("min_degree=1", "min_degree", Source.EXPLICIT, False, ">= 1", "0", where)
    assert v.where is where and v.to_json()["where"] == {"nodes": ["a", 7], "count": 2}
    assert v.describe().endswith("(where: nodes=['a', 7]; count=2)")
    held = Verdict("min_degree=0", "min_degree", Source.EXPLICIT, True, ">= 0", "0")
    assert held.where == Locus() and held.to_json()["where"] == {}


@pytest.mark.parametrize("where", [[], "nodes", None, 3])
def test_a_locus_read_from_json_that_is_not_an_object_is_a_value_error(where: object) -> None:
    with pytest.raises(ValueError, match="a locus is an object of named lists"):
        Locus.of(where)
