"""verify.node_order: the natural order of node ids."""

from __future__ import annotations

from pytest_graphinstruct.verify.node_order import node_sort_key, sorted_nodes


def test_node_sort_key_is_natural_and_total() -> None:
    assert sorted_nodes(["10", "2", "1", "a", "b2", "b10", 3]) == ["1", "2", 3, "10", "a", "b2",
                                                                    "b10"]
    assert node_sort_key("x") != node_sort_key("y")
