"""A verdict's locus read against its vocabulary: kinds, order, the nodes and edges it names."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.verify.locus import LOCUS_KEYS, Locus, locus_kind


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
