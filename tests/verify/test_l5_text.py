"""The L5 instruction-text readers (pytest_graphinstruct/verify/tasks/text.py)."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.verify.tasks import text as tx


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Add exactly 2 edges so the graph is connected.", ("add", 2)),
        ("Add exactly 1 edge to join the two cliques.", ("add", 1)),
        ("Add exactly 3 edges between leaf nodes.", ("add", 3)),
        ("Add exactly 2 shortcut edges to shrink the diameter.", ("add", 2)),
        ("Add exactly 1 directed edge.", ("add", 1)),
        ("Remove exactly 5 edges along a vertical line.", ("remove", 5)),
        ("Reverse exactly 2 edge(s) to remove all cycles.", ("reverse", 2)),
        ("Add the minimum number of edges (exactly 4) to make it a tree.", ("add", 4)),
        ("Delete three edges.", ("remove", 3)),
        ("Add two edges.", ("add", 2)),
        ("Add an edge between the hubs.", ("add", 1)),
        # counts that describe the result, not the edit, are ignored
        ("Remove edges. The result should be a spanning tree with exactly 5 edges.", None),
        ("Add the minimum number of edges to create a cycle.", None),
        ("Add at most 2 edges.", None),
        # contradictory counts → nothing
        ("Add exactly 2 edges. Then add exactly 3 edges.", None),
    ],
)
def test_stated_count(sentence: str, expected: tuple[str, int] | None) -> None:
    assert tx.stated_count(sentence) == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Remove the minimum number of edges to get a tree.", ("remove", "min", "edges")),
        ("Add the minimum number of edges to make it Eulerian.", ("add", "min", "edges")),
        ("Reverse the minimum number of edges.", ("reverse", "min", "edges")),
        ("Remove the minimum number of leaf nodes.", ("remove", "min", "nodes")),
        ("Remove the maximum number of edges while keeping it connected.",
         ("remove", "max", "edges")),
        ("Add the fewest edges possible.", ("add", "min", "edges")),
        ("Add some edges.", None),
    ],
)
def test_asks_extreme(sentence: str, expected: tuple[str, str, str] | None) -> None:
    assert tx.asks_extreme(sentence) == expected


def test_verbs() -> None:
    assert tx.verbs("Add edges and then remove the old ones.") == {"add", "remove"}
    assert tx.verbs("Reversing arcs; deleting nothing.") == {"reverse", "remove"}
    assert tx.verbs("Given a cycle graph. Compute its line graph.") == frozenset()


@pytest.mark.parametrize("text", [
    "Add the fewest edges so that the graph becomes connected; do not remove any edge.",
    "Add edges without removing any.", "Add two edges, but never delete an existing one.",
    "Add edges. You cannot remove edges.", "Add an edge; don't reverse arcs.",
])
def test_negated_verbs_forbid_rather_than_ask(text: str) -> None:
    assert tx.verbs(text) == {"add"}


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("while keeping it connected", True),
        ("the graph must remain connected", True),
        ("keeping the graph connected.", True),
        ("to make it connected", False),
    ],
)
def test_keeps_connected(sentence: str, expected: bool) -> None:
    assert tx.keeps_connected(sentence) is expected


def test_partition() -> None:
    assert tx.partition("with partition {0,2,4} and {1,3,5}") == (
        frozenset({"0", "2", "4"}), frozenset({"1", "3", "5"}))
    assert tx.partition("partitions {0,...,3} and {4,...,6}") == (
        frozenset({"0", "1", "2", "3"}), frozenset({"4", "5", "6"}))
    # not introduced as a partition / overlapping sides
    assert tx.partition("two triangles {0,1,2} and {2,3,4}") is None
    assert tx.partition("partition {0,1,2} and {2,3}") is None
    assert tx.partition("partition {a, b} and {c}") == (frozenset("ab"), frozenset("c"))


@pytest.mark.parametrize(
    ("sentence", "k"),
    [
        ("Construct its square graph.", 2),
        ("Build G^3 of the path.", 3),
        ("Build G² of the path.", 2),
        ("Compute the 4th power of the cycle.", 4),
        ("the cube of the graph", 3),
        ("power k=5", 5),
        ("Construct a power of the graph.", None),
    ],
)
def test_graph_power(sentence: str, k: int | None) -> None:
    assert tx.graph_power(sentence) == k


def test_small_parameters() -> None:
    assert tx.k_core("Extract the 3-core subgraph.") == 3
    assert tx.k_core("Extract the core.") is None
    assert tx.contracted_edge("Contract edge (0,1) by merging.") == ("0", "1")
    assert tx.contracted_edge("contract the edge 2-5") == ("2", "5")
    assert tx.merged_name("merging them into a single node '01'.") == "01"
    assert tx.merged_name("merging them") is None
    assert tx.path_endpoints("all shortest paths from node 0 to node 5") == ("0", "5")
    assert tx.path_endpoints("shortest paths between nodes a and b") == ("a", "b")
    assert tx.all_shortest_paths("on ALL shortest paths from") is True
    assert tx.single_shortest_path("keep a shortest path from node 1 to node 4") is True
    assert tx.single_shortest_path("the shortest path tree rooted at 0") is False
    assert tx.root("a tree rooted at node 0 with branches") == "0"
    assert tx.root("from the source node 3 run Dijkstra") == "3"
    assert tx.root("each node's path from root is the shortest") is None
    assert tx.depth_bound("reduce the tree's depth from 5 to at most 3") == 3
    assert tx.diameter_bound("reduce the diameter to at most 14.") == 14
    assert tx.edge_connectivity("make it 3-edge-connected") == 3
    assert tx.edge_connectivity("so that there are no bridges") == 2
    assert tx.regular_degree("make the graph 3-regular") == 3
    assert tx.component_count("split into exactly 2 connected components") == 2
    assert tx.equal_component_sizes("components of equal size") is True
    assert tx.no_isolated_nodes("keeping each node with at least one edge") is True
    assert tx.not_bipartite("making the graph no longer bipartite") is True
    assert tx.not_bipartite("making the graph bipartite") is False
    assert tx.unique_topological_order("make the topological ordering unique") is True
    assert tx.mentions_triangles("eliminate all triangles") is True
    assert tx.induced("the induced subgraph") is True


def test_weights_and_tree_kind() -> None:
    text = "edges (0,1,w=4), (1, 2, w=2.5), (0,2,weight=7). Compute the shortest path tree."
    assert tx.weights(text) == {frozenset({"0", "1"}): 4.0, frozenset({"1", "2"}): 2.5,
                                frozenset({"0", "2"}): 7.0}
    assert tx.weights("(0,1,w=1) (1,0,w=2)") == {}
    assert tx.tree_kind(text) == "spt"
    assert tx.tree_kind("using Dijkstra's algorithm") == "spt"
    assert tx.tree_kind("Find the minimum spanning tree.") == "mst"
    assert tx.tree_kind("Find a spanning tree.") is None


def test_relabel_mapping_and_stated_edges() -> None:
    assert tx.relabel_mapping("using the mapping 0→a, 1→b, 2->c") == {"0": "a", "1": "b",
                                                                     "2": "c"}
    assert tx.relabel_mapping("0→a, 0→b") is None
    assert tx.relabel_mapping("0→a, 1→a") is None
    assert tx.relabel_mapping("no mapping here") is None
    assert tx.stated_added_edges("Then add edges 0-1, 1-2, 2-3 and 3-0 to close it.") == (
        ("0", "1"), ("1", "2"), ("2", "3"), ("3", "0"))
    assert tx.stated_added_edges("by adding leaf-to-leaf edges") == ()
