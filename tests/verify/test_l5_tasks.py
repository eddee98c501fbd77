"""Hand-made L5 task cases: a correct result passes, a targeted wrong one fails the right aspect."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import networkx as nx
import pytest

from pytest_graphinstruct.graphs.model import ParsedGraph
from pytest_graphinstruct.suite.constraints import parse_constraint
from pytest_graphinstruct.verify.tasks import (
    CHECKED_TASKS,
    NODE_REMOVING_TASKS,
    UNCHECKED_TASKS,
    check_task,
    edit_distance,
    minimal_edit,
)
from pytest_graphinstruct.verify.verdict import Source, Verdict

Pair = tuple[object, object]


def pg(edges: Iterable[Pair], nodes: Iterable[object] = (), directed: bool = False,
       ) -> ParsedGraph:
    g: nx.Graph = nx.DiGraph() if directed else nx.Graph()
    g.add_nodes_from(str(n) for n in nodes)
    g.add_edges_from((str(u), str(v)) for u, v in edges)
    return ParsedGraph(graph=g)


def from_nx(g: nx.Graph) -> ParsedGraph:
    return ParsedGraph(graph=nx.relabel_nodes(g, str))


def edited(base: ParsedGraph, add: Iterable[Pair] = (), remove: Iterable[Pair] = ()
           ) -> ParsedGraph:
    g = base.graph.copy()
    g.remove_edges_from((str(u), str(v)) for u, v in remove)
    g.add_edges_from((str(u), str(v)) for u, v in add)
    return ParsedGraph(graph=g)


def run(task: str, base: ParsedGraph, result: ParsedGraph, text: str,
        explicit: Iterable[str] = ()) -> dict[str, Verdict]:
    vs = check_task(task, base=base, result=result,
                    explicit=[parse_constraint(c) for c in explicit], text=text)
    out = {}
    for v in vs:
        assert v.source is Source.TASK
        assert v.key == f"task:{task}"
        prefix = f"task:{task}:"
        assert v.constraint.startswith(prefix)
        aspect = v.constraint[len(prefix):]
        assert aspect not in out, f"duplicate aspect {aspect}"
        assert (not v.where) if v.satisfied else True
        out[aspect] = v
    return out


def passes(vs: Mapping[str, Verdict], *aspects: str) -> None:
    failing = {a: v.describe() for a, v in vs.items() if not v.satisfied}
    assert not failing, failing
    assert set(aspects) <= set(vs), f"missing aspects {set(aspects) - set(vs)}; got {set(vs)}"


def fails(vs: Mapping[str, Verdict], *aspects: str) -> None:
    failing = {a for a, v in vs.items() if not v.satisfied}
    assert failing == set(aspects), {a: v.describe() for a, v in vs.items()}


def K(n: int) -> ParsedGraph:
    return from_nx(nx.complete_graph(n))


def P(n: int) -> ParsedGraph:
    return from_nx(nx.path_graph(n))


def C(n: int) -> ParsedGraph:
    return from_nx(nx.cycle_graph(n))


def star(leaves: int) -> ParsedGraph:
    return from_nx(nx.star_graph(leaves))


# ----------------------------------------------------------------------------- spanning trees

SPAN = "Remove the minimum number of edges to produce a spanning tree."
DIAMOND = pg([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)])


def test_spanning_tree() -> None:
    good = pg([(0, 1), (1, 2), (2, 3)])
    passes(run("spanning_tree", DIAMOND, good, SPAN), "nodes_preserved", "subgraph_of_base",
           "tree")
    fails(run("spanning_tree", DIAMOND, pg([(0, 1), (1, 2), (2, 3), (3, 0)]), SPAN), "tree")
    vs = run("spanning_tree", DIAMOND, pg([(0, 1), (1, 2), (1, 3)]), SPAN)
    fails(vs, "subgraph_of_base")
    assert vs["subgraph_of_base"].where.to_json() == {"extra_edges": [["1", "3"]],
                                                      "extra_edges_count": 1}
    fails(run("spanning_tree", DIAMOND, pg([(0, 1), (1, 2)]), SPAN), "nodes_preserved")


def test_mst_weighted_and_spt() -> None:
    base = pg([(0, 1), (1, 2), (0, 2)])
    mst_text = "Weighted edges (0,1,w=1), (1,2,w=2), (0,2,w=5). Find the minimum spanning tree."
    passes(run("mst", base, pg([(0, 1), (1, 2)]), mst_text), "minimum_weight", "tree")
    fails(run("mst", base, pg([(0, 1), (0, 2)]), mst_text), "minimum_weight")
    spt_text = ("Weighted edges (0,1,w=1), (1,2,w=3), (0,2,w=3). Compute the shortest path "
                "tree rooted at node 0.")
    passes(run("mst", base, pg([(0, 1), (0, 2)]), spt_text), "shortest_path_tree")
    vs = run("mst", base, pg([(0, 1), (1, 2)]), spt_text)  # an MST, not the SPT
    fails(vs, "shortest_path_tree")
    assert vs["shortest_path_tree"].where.to_json() == {"nodes": ["2"], "nodes_count": 1}
    # no weights, no tree kind: only the spanning-tree aspects
    assert set(run("mst", base, pg([(0, 1), (1, 2)]), "Find a spanning tree.")) == {
        "nodes_preserved", "subgraph_of_base", "tree"}


# ----------------------------------------------------------------------------- constructions


def test_complement() -> None:
    text = "Construct its complement graph."
    passes(run("complement", P(4), pg([(0, 2), (0, 3), (1, 3)]), text), "equals_complement")
    vs = run("complement", P(4), pg([(0, 2), (0, 3)], nodes=range(4)), text)
    fails(vs, "equals_complement")
    assert vs["equals_complement"].where.to_json()["missing_edges"] == [["1", "3"]]
    d = pg([(0, 1)], directed=True)
    passes(run("complement", d, pg([(1, 0)], directed=True), text), "equals_complement")
    # the complement of a star keeps the centre as an isolated node
    fails(run("complement", star(3), pg([(1, 2), (2, 3), (1, 3)]), text), "nodes_preserved")


def test_complement_with_lookalike_ids() -> None:
    base = pg([("1", "01")], nodes=["1", "01", "2"])
    good = pg([("1", "2"), ("01", "2")], nodes=["1", "01", "2"])
    passes(run("complement", base, good, "Construct its complement."), "equals_complement")
    vs = run("complement", base, pg([("1", "2")], nodes=["1", "01", "2"]), "complement")
    assert vs["equals_complement"].where.to_json()["missing_edges"] == [["01", "2"]]


def test_connected_where_is_capped_per_component() -> None:
    base = from_nx(nx.disjoint_union(nx.path_graph(30), nx.path_graph(3)))
    vs = run("make_connected", base, base, "Connect the graph.")
    where = vs["connected"].where.to_json()
    assert where["component_sizes"] == [3, 30]
    assert [len(c) for c in where["components"]] == [3, 10]


def test_line_graph() -> None:
    text = "Construct its line graph: one node per edge."
    triangle = pg([("e01", "e02"), ("e02", "e03"), ("e01", "e03")])
    passes(run("line_graph", star(3), triangle, text), "isomorphic_to_line_graph")
    vs = run("line_graph", star(3), pg([("a", "b"), ("b", "c")]), text)
    fails(vs, "isomorphic_to_line_graph")
    k6 = K(6)
    good = from_nx(nx.line_graph(nx.complete_graph(6)))
    passes(run("line_graph", k6, good, text))
    bad = from_nx(nx.random_regular_graph(8, 15, seed=1))  # same size and degrees
    fails(run("line_graph", k6, bad, text), "isomorphic_to_line_graph")


def test_transpose() -> None:
    base = pg([(0, 1), (1, 2)], directed=True)
    text = "Compute its transpose: reverse every edge."
    passes(run("transpose", base, pg([(1, 0), (2, 1)], directed=True), text),
           "directed", "equals_transpose")
    fails(run("transpose", base, pg([(1, 0), (1, 2)], directed=True), text), "equals_transpose")
    fails(run("transpose", base, pg([(1, 0), (2, 1)]), text), "directed")


def test_graph_power() -> None:
    sq = from_nx(nx.power(nx.path_graph(5), 2))
    passes(run("graph_power", P(5), sq, "Construct its square graph (G^2)."), "equals_power")
    fails(run("graph_power", P(5), P(5), "Construct its square graph (G^2)."), "equals_power")
    cube = from_nx(nx.power(nx.path_graph(6), 3))
    vs = run("graph_power", P(6), cube, "Construct a power of the graph.")
    passes(vs, "equals_some_power")
    assert vs["equals_some_power"].observed == "G^3"
    fails(run("graph_power", P(6), P(6), "Construct a power of the graph."),
          "equals_some_power")
    strays = pg([(0, 1), (1, 2), (12, 3), (2, 20), (10, 4)], nodes=range(21))
    v = run("graph_power", pg([(0, 1), (1, 2)], nodes=range(21)), strays,
            "Construct a power of the graph.")["equals_some_power"]
    assert not v.satisfied  # the first stray edge in natural order is named
    assert (v.observed, v.where.to_json()) == ("edge (2,20) joins nodes unconnected in the base",
                                     {"edges": [["2", "20"]], "edges_count": 1})


def test_relabel() -> None:
    base = pg([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)])
    text = "Relabel the nodes using the mapping 0→a, 1→b, 2→c, 3→d."
    mapped = pg([("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("a", "c")])
    passes(run("relabel", base, mapped, text), "isomorphic_to_base", "equals_mapped_base")
    other = pg([("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("b", "d")])
    fails(run("relabel", base, other, text), "equals_mapped_base")
    fails(run("relabel", base, C(4), text), "isomorphic_to_base", "equals_mapped_base")
    assert set(run("relabel", base, mapped, "Relabel the nodes with letters.")) == {
        "isomorphic_to_base"}


def test_k_core() -> None:
    g = nx.complete_graph(4)
    g.add_edges_from([(0, 4), (4, 5), (1, 5)])
    base = from_nx(g)
    core = from_nx(nx.complete_graph(4))
    passes(run("k_core", base, core, "Extract the core.", ["min_degree=3"]), "equals_k_core")
    passes(run("k_core", base, core, "Extract the 3-core subgraph."), "equals_k_core")
    vs = run("k_core", base, edited(core, add=[(0, 4)]), "Extract the 3-core subgraph.")
    fails(vs, "equals_k_core")
    assert vs["equals_k_core"].where.to_json()["extra_nodes"] == ["4"]
    assert run("k_core", base, core, "Extract the core.") == {}  # no k anywhere


def test_extract_subgraph() -> None:
    # two shortest 0–5 paths of length 3, a longer one through 6, 7, 8
    base = pg([(0, 1), (1, 2), (2, 5), (0, 3), (3, 4), (4, 5), (0, 6), (6, 7), (7, 8), (8, 5)])
    text = "Extract the subgraph on all shortest paths from node 0 to node 5."
    union = pg([(0, 1), (1, 2), (2, 5), (0, 3), (3, 4), (4, 5)])
    passes(run("extract_subgraph", base, union, text), "subgraph_of_base",
           "equals_shortest_path_union")
    vs = run("extract_subgraph", base, pg([(0, 1), (1, 2), (2, 5)]), text)
    fails(vs, "equals_shortest_path_union")
    one = "Extract a shortest path from node 0 to node 5."
    passes(run("extract_subgraph", base, pg([(0, 3), (3, 4), (4, 5)]), one), "is_shortest_path")
    fails(run("extract_subgraph", base, pg([(0, 6), (6, 7), (7, 8), (8, 5)]), one),
          "is_shortest_path")
    ind = "Extract the induced subgraph on nodes 0, 1, 2."
    passes(run("extract_subgraph", K(4), K(3), ind), "induced")
    fails(run("extract_subgraph", K(4), P(3), ind), "induced")
    fails(run("extract_subgraph", K(4), pg([(0, 9)]), ind), "subgraph_of_base")


def test_prune_tree() -> None:
    base = pg([(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (0, 6), (0, 7)])
    text = ("A tree rooted at node 0. Remove the minimum number of leaf nodes to reduce the "
            "tree's depth from 5 to at most 3.")
    good = pg([(0, 1), (1, 2), (2, 3), (0, 6), (0, 7)])
    passes(run("prune_tree", base, good, text), "subgraph_of_base", "removes_nodes_only",
           "tree", "depth", "minimal_removed_nodes")
    fails(run("prune_tree", base, pg([(0, 1), (1, 2), (2, 3), (3, 4), (0, 6), (0, 7)]), text),
          "depth", "minimal_removed_nodes")
    fails(run("prune_tree", base, pg([(0, 1), (1, 2), (2, 3), (0, 6)]), text),
          "minimal_removed_nodes")
    rewired = pg([(0, 1), (1, 2), (0, 3), (2, 6), (0, 7)])
    fails(run("prune_tree", base, rewired, text), "subgraph_of_base", "removes_nodes_only")


def test_edge_contraction() -> None:
    base = pg([(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (0, 2), (1, 3)])
    text = "Contract edge (0,1) by merging nodes 0 and 1 into a single node '01'."
    good = pg([("01", 2), ("01", 3), ("01", 4), (2, 3), (3, 4)])
    passes(run("edge_contraction", base, good, text), "isomorphic_to_contraction",
           "equals_contraction")
    swapped = pg([("01", 3), ("01", 4), (2, 3), (2, 4), (3, 4)])  # isomorphic, wrong edges
    vs = run("edge_contraction", base, swapped, text)
    fails(vs, "equals_contraction")
    assert vs["equals_contraction"].where.to_json()["missing_edges"] == [["01", "2"]]
    fails(run("edge_contraction", base, C(4), text), "isomorphic_to_contraction")
    some = "Contract one edge of the graph."
    passes(run("edge_contraction", C(5), C(4), some), "isomorphic_to_some_contraction")
    fails(run("edge_contraction", C(5), P(4), some), "isomorphic_to_some_contraction")


# ----------------------------------------------------------------------------- edits


def two_triangles() -> ParsedGraph:
    return pg([(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)])


def test_make_connected() -> None:
    text = "Add the minimum number of edges to connect the graph."
    base = two_triangles()
    passes(run("make_connected", base, edited(base, add=[(2, 3)]), text),
           "nodes_preserved", "supergraph_of_base", "connected", "minimal_added")
    fails(run("make_connected", base, edited(base, add=[(2, 3), (0, 5)]), text),
          "minimal_added")
    fails(run("make_connected", base, edited(base, add=[(2, 3)], remove=[(0, 1)]), text),
          "supergraph_of_base")
    vs = run("make_connected", base, base, "Add exactly 1 edge to connect them.")
    fails(vs, "connected", "added_count")
    assert vs["connected"].where.to_json()["components_count"] == 2


def test_make_acyclic_reverse_and_remove() -> None:
    base = pg([(0, 1), (1, 2), (2, 0), (2, 3)], directed=True)
    rev = "Reverse the minimum number of edges to make it a DAG."
    passes(run("make_acyclic", base, edited(base, add=[(0, 2)], remove=[(2, 0)]), rev),
           "directed", "reversals_only", "acyclic", "minimal_reversed")
    two = edited(base, add=[(1, 0), (2, 1)], remove=[(0, 1), (1, 2)])
    fails(run("make_acyclic", base, two, rev), "minimal_reversed")
    fails(run("make_acyclic", base, edited(base, remove=[(2, 0)]), rev), "reversals_only",
          "minimal_reversed")  # a removal is not a reversal: 0 reversed
    vs = run("make_acyclic", base, base, "Reverse exactly 1 edge to eliminate all cycles.")
    fails(vs, "acyclic", "reversed_count")
    assert vs["acyclic"].where.to_json()["cycle_length"] == 3
    rem = "Remove the minimum number of edges so that it becomes acyclic."
    passes(run("make_acyclic", base, edited(base, remove=[(2, 0)]), rem),
           "subgraph_of_base", "minimal_removed")


def test_add_edges_dag() -> None:
    base = pg([(0, 1), (0, 2), (1, 3), (2, 3)], directed=True)
    text = "Add exactly 1 directed edge to make the topological ordering unique."
    passes(run("add_edges_dag", base, edited(base, add=[(1, 2)]), text),
           "supergraph_of_base", "acyclic", "added_count", "unique_topological_order")
    fails(run("add_edges_dag", base, edited(base, add=[(0, 3)]), text),
          "unique_topological_order")
    fails(run("add_edges_dag", base, edited(base, add=[(3, 0)]), text),
          "acyclic", "unique_topological_order")


def test_break_cycles() -> None:
    base = pg([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 2), (0, 3)])
    text = ("Remove the minimum number of edges to eliminate all triangles while keeping the "
            "graph connected.")
    passes(run("break_cycles", base, edited(base, remove=[(0, 2), (2, 4)]), text),
           "subgraph_of_base", "triangle_free", "connected", "minimal_removed")
    fails(run("break_cycles", base, edited(base, remove=[(0, 2), (2, 4), (0, 1)]), text),
          "minimal_removed")
    vs = run("break_cycles", base, edited(base, remove=[(0, 2)]), text)
    fails(vs, "triangle_free", "minimal_removed")
    assert vs["triangle_free"].where.to_json()["triangles"] == [["2", "3", "4"]]
    forest = "Remove the minimum number of edges to break every cycle."
    passes(run("break_cycles", K(4), pg([(0, 1), (0, 2), (0, 3)]), forest),
           "acyclic", "minimal_removed")
    fails(run("break_cycles", K(4), pg([(0, 1), (0, 2)], nodes=range(4)), forest),
          "minimal_removed")


def test_make_bipartite() -> None:
    text = "Remove the minimum number of edges to make it bipartite."
    passes(run("make_bipartite", K(4), edited(K(4), remove=[(0, 1), (2, 3)]), text),
           "subgraph_of_base", "bipartite", "minimal_removed")
    vs = run("make_bipartite", K(4), edited(K(4), remove=[(0, 1)]), text)
    fails(vs, "bipartite", "minimal_removed")
    assert vs["bipartite"].where.to_json()["odd_cycle_length"] == 3
    part = ("Remove exactly 3 edges so that the graph is bipartite with partition {0,2,4} and "
            "{1,3,5}, keeping each node with at least one edge.")
    good = pg([(0, 1), (2, 3), (4, 5)])
    passes(run("make_bipartite", C(6), good, part), "edges_cross_partition",
           "no_isolated_nodes", "removed_count")
    bad = pg([(4, 5), (0, 2), (1, 3)])
    fails(run("make_bipartite", C(6), bad, part), "subgraph_of_base", "edges_cross_partition",
          "removed_count")
    fails(run("make_bipartite", C(6), pg([(0, 1), (2, 3)], nodes=range(6)), part),
          "no_isolated_nodes", "removed_count")


def test_make_planar_family() -> None:
    text = "Remove the minimum number of edges to make it planar while keeping it connected."
    passes(run("make_planar", K(5), edited(K(5), remove=[(0, 1)]), text),
           "subgraph_of_base", "planar", "connected", "minimal_removed")
    fails(run("make_planar", K(5), edited(K(5), remove=[(0, 1), (2, 3)]), text),
          "minimal_removed")
    fails(run("make_planar", K(5), K(5), text), "planar", "minimal_removed")
    mx = "Add the maximum number of edges while keeping the graph planar."
    passes(run("maximize_planar", C(4), K(4), mx), "supergraph_of_base", "planar",
           "maximal_planar")
    fails(run("maximize_planar", C(4), edited(C(4), add=[(0, 2)]), mx), "maximal_planar")
    ap = "Add exactly 2 edges while keeping the graph planar."
    passes(run("add_edges_planar", C(5), edited(C(5), add=[(0, 2), (0, 3)]), ap),
           "planar", "added_count")
    fails(run("add_edges_planar", C(5), K(5), ap), "planar", "added_count")


def test_make_eulerian() -> None:
    base = pg([(0, 1), (1, 2), (2, 3), (3, 0), (0, 4), (2, 4)])
    text = "Add the minimum number of edges to make the graph Eulerian."
    passes(run("make_eulerian", base, edited(base, add=[(0, 2)]), text),
           "supergraph_of_base", "eulerian", "minimal_added")
    vs = run("make_eulerian", base, edited(base, add=[(1, 4)]), text)
    fails(vs, "eulerian")
    assert vs["eulerian"].where.to_json()["nodes"] == ["0", "1", "2", "4"]


def test_make_hamiltonian() -> None:
    text = "Add the minimum number of edges to create a Hamiltonian cycle."
    base = star(4)
    passes(run("make_hamiltonian", base, edited(base, add=[(1, 2), (2, 3), (3, 4)]), text),
           "hamiltonian", "minimal_added")
    fails(run("make_hamiltonian", base,
              edited(base, add=[(1, 2), (2, 3), (3, 4), (4, 1)]), text), "minimal_added")
    fails(run("make_hamiltonian", base, edited(base, add=[(1, 2), (3, 4)]), text),
          "hamiltonian", "minimal_added")


def test_make_regular() -> None:
    base = pg([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)])
    text = "Add the minimum number of edges to make the graph 3-regular."
    passes(run("make_regular", base, K(4), text, ["degree=3"]), "regular", "minimal_added")
    vs = run("make_regular", base, base, text, ["degree=3"])
    fails(vs, "regular", "minimal_added")
    assert vs["regular"].where.to_json()["nodes"] == ["1", "3"]


def test_increase_connectivity() -> None:
    text = "Add exactly 1 edge to make the graph 2-edge-connected."
    passes(run("increase_connectivity", P(5), C(5), text, ["edge_connectivity>=2"]),
           "supergraph_of_base", "edge_connectivity", "added_count")
    vs = run("increase_connectivity", P(5), edited(P(5), add=[(0, 3)]), text)
    fails(vs, "edge_connectivity")
    assert vs["edge_connectivity"].where.to_json()["bridges"] == [["3", "4"]]
    mini = "Add the minimum number of edges to make it 2-edge-connected."
    passes(run("increase_connectivity", star(4), edited(star(4), add=[(1, 2), (3, 4)]), mini),
           "minimal_added")


def test_reduce_diameter_and_add_edges() -> None:
    text = "Add exactly 1 edge to reduce the diameter to at most 3."
    passes(run("reduce_diameter", P(7), C(7), text), "diameter", "added_count")
    fails(run("reduce_diameter", P(7), edited(P(7), add=[(0, 2)]), text), "diameter")
    passes(run("reduce_diameter", P(7), C(7), "Add exactly 1 edge.", ["diameter<=3"]),
           "diameter")
    add = "Add exactly 2 edges between leaf nodes."
    passes(run("add_edges", star(4), edited(star(4), add=[(1, 2), (3, 4)]), add),
           "supergraph_of_base", "added_count")
    fails(run("add_edges", star(4), edited(star(4), add=[(1, 2)]), add), "added_count")
    # add_edges_<x> variants fall back to the generic add_edges checks
    vs = run("add_edges_tree", star(4), edited(star(4), add=[(1, 2)]), add)
    fails(vs, "added_count")


def test_reduce_diameter_above_the_distance_work_limit_is_not_computed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the same bounded, exact distances as the diameter constraint (not networkx's Python BFS)
    from pytest_graphinstruct.verify import distances

    text = "Add exactly 1 edge so that the diameter is at most 3."
    monkeypatch.setattr(distances, "_DENSE_MAX_NODES", 0)
    monkeypatch.setattr(distances, "DISTANCE_WORK_LIMIT", 7 * (7 + 7))
    passes(run("reduce_diameter", P(7), C(7), text), "diameter", "added_count")
    monkeypatch.setattr(distances, "DISTANCE_WORK_LIMIT", 7 * (7 + 7) - 1)
    vs = run("reduce_diameter", P(7), C(7), text)
    fails(vs, "diameter")
    assert vs["diameter"].observed == ("not computed: answer too large "
                                       "(7 nodes × (7 + 7 edges) = 98 > 97)")


def test_split_graph() -> None:
    ladder = from_nx(nx.ladder_graph(4))  # rails 0-1-2-3 and 4-5-6-7
    text = "Remove exactly 2 edges to split the graph into 2 components of equal size."
    good = edited(ladder, remove=[(1, 2), (5, 6)])
    passes(run("split_graph", ladder, good, text, ["num_components=2"]),
           "subgraph_of_base", "num_components", "equal_component_sizes", "removed_count")
    bad = edited(ladder, remove=[(0, 1), (4, 5)])
    fails(run("split_graph", ladder, bad, text, ["num_components=2"]), "equal_component_sizes")
    mini = "Remove the minimum number of edges to split it into 2 components."
    passes(run("split_graph", ladder, edited(ladder, remove=[(0, 1), (0, 4)]), mini),
           "minimal_removed")


def test_modify_and_complete_bipartite() -> None:
    k22 = pg([(0, 2), (0, 3), (1, 2), (1, 3)])
    text = "Add exactly 1 edge within the same partition so it is no longer bipartite."
    passes(run("modify_bipartite", k22, edited(k22, add=[(0, 1)]), text),
           "supergraph_of_base", "not_bipartite", "added_count")
    fails(run("modify_bipartite", k22, k22, text), "not_bipartite", "added_count")
    base = pg([(0, 3), (0, 4), (1, 3), (2, 3), (2, 5)])
    cb = ("A bipartite graph with partitions {0,1,2} and {3,4,5}. Add the minimum number of "
          "edges to make it complete bipartite.")
    k33 = edited(base, add=[(0, 5), (1, 4), (1, 5), (2, 4)])
    passes(run("complete_bipartite", base, k33, cb, ["bipartite_sides=3,3"]),
           "equals_complete_bipartite", "minimal_added")
    vs = run("complete_bipartite", base, edited(base, add=[(0, 5), (1, 4), (1, 5)]), cb)
    fails(vs, "equals_complete_bipartite", "minimal_added")
    assert vs["equals_complete_bipartite"].where.to_json()["missing_edges"] == [["2", "4"]]


def test_graph_transform() -> None:
    text = ("Given a cycle C6. Add edges to transform it into K_{3,3} by partitioning nodes "
            "into sets {0,2,4} and {1,3,5}.")
    ex = ["graph_type=complete_bipartite"]
    good = edited(C(6), add=[(0, 3), (1, 4), (2, 5)])
    passes(run("graph_transform", C(6), good, text, ex), "nodes_preserved",
           "supergraph_of_base", "equals_complete_bipartite")
    other = from_nx(nx.complete_bipartite_graph(3, 3))  # K3,3 on {0,1,2} / {3,4,5}
    fails(run("graph_transform", C(6), other, text, ex), "supergraph_of_base",
          "equals_complete_bipartite")
    # without a complete-bipartite target only the partition is checked
    fails(run("graph_transform", C(6), edited(C(6), add=[(0, 2)]), text),
          "edges_cross_partition")
    cyc = "Transform the star into a cycle: remove star edges and add edges 0-1, 1-2, 2-0."
    passes(run("graph_transform", star(2), C(3), cyc), "stated_edges_present")
    fails(run("graph_transform", star(2), pg([(0, 1), (0, 2)]), cyc), "stated_edges_present")


def test_unknown_and_unchecked_tasks() -> None:
    assert run("rewire_randomly", K(3), K(3), "Do something.") == {}
    assert not (UNCHECKED_TASKS & CHECKED_TASKS)
    assert {"spanning_tree", "complement", "graph_transform"} <= CHECKED_TASKS
    assert NODE_REMOVING_TASKS <= CHECKED_TASKS
    assert "complement" not in NODE_REMOVING_TASKS  # a complement may isolate nodes


def test_where_is_capped() -> None:
    vs = run("complement", P(30), P(30), "Construct its complement graph.")
    where = vs["equals_complement"].where.to_json()
    assert len(where["missing_edges"]) == 10
    assert where["missing_edges_count"] == 435 - 29
    assert where["extra_edges_count"] == 29


# ----------------------------------------------------------------------------- minimal_edit


def me(task: str, base: ParsedGraph, text: str, explicit: Iterable[str] = ()) -> int | None:
    return minimal_edit(task, base=base, explicit=[parse_constraint(c) for c in explicit],
                        text=text)


@pytest.mark.parametrize(
    ("task", "base", "text", "explicit", "want"),
    [
        ("make_planar", K(5), "Remove the minimum number of edges to make it planar.", (), 1),
        ("make_planar", from_nx(nx.complete_bipartite_graph(3, 3)),
         "Remove the minimum number of edges to make it planar.", (), 1),
        ("increase_connectivity", P(28), "Make it 2-edge-connected.",
         ("edge_connectivity>=2",), 1),
        ("increase_connectivity", star(6), "Make it 2-edge-connected.", (), 3),
        ("spanning_tree", K(6), "Remove edges to get a spanning tree.", (), 10),
        ("mst", K(6), "Find the minimum spanning tree.", (), 10),
        ("make_hamiltonian", star(15), "Add the minimum number of edges.", (), 14),
        ("make_connected", from_nx(nx.disjoint_union_all([nx.path_graph(3)] * 4)),
         "Connect it.", (), 3),
        ("complement", P(4), "Construct its complement.", (), 6),
        ("transpose", pg([(0, 1), (1, 0), (1, 2)], directed=True), "Transpose it.", (), 2),
        ("make_acyclic", pg([(0, 1), (1, 2), (2, 0)], directed=True),
         "Reverse the minimum number of edges.", (), 2),
        ("make_acyclic", pg([(0, 1), (1, 2), (2, 0)], directed=True),
         "Remove the minimum number of edges.", (), 1),
        ("make_bipartite", K(4), "Remove edges to make it bipartite.", (), 2),
        ("make_bipartite", C(6), "Remove exactly 3 edges to keep it bipartite.", (), 3),
        ("make_eulerian", pg([(0, 1), (1, 2), (2, 3), (3, 0), (0, 4), (2, 4)]),
         "Make it Eulerian.", (), 1),
        ("make_regular", pg([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]), "Make it regular.",
         ("degree=3",), 1),
        ("maximize_planar", C(16), "Add the maximum number of edges.", (), 26),
        ("graph_power", C(15), "Construct its square graph.", (), 15),
        ("k_core", from_nx(nx.lollipop_graph(4, 2)), "Extract the 3-core.", (), 2),
        ("break_cycles", K(4), "Remove edges to make it a forest.", (), 3),
        ("split_graph", from_nx(nx.ladder_graph(4)), "Split into 2 components.",
         ("num_components=2",), 2),
        ("reduce_diameter", C(40), "Add exactly 2 shortcut edges.", (), 2),
        ("reduce_diameter", C(40), "Add shortcut edges.", (), None),
        ("line_graph", K(4), "Construct its line graph.", (), None),
        ("relabel", P(3), "Relabel with mapping 0→a, 1→b, 2→c.", (), 4),
        ("relabel", P(3), "Relabel the nodes.", (), None),
        ("no_such_task", K(3), "Whatever.", (), None),
    ],
)
def test_minimal_edit(task: str, base: ParsedGraph, text: str, explicit: tuple[str, ...],
                      want: int | None) -> None:
    assert me(task, base, text, explicit) == want


def test_edit_distance() -> None:
    base = pg([(0, 1), (1, 2)], nodes=[0, 1, 2, 3])
    res = pg([(2, 1), (0, 4)], nodes=[0, 1, 2, 4])
    d = edit_distance(base, res)
    assert d.added_edges == (("0", "4"),)
    assert d.removed_edges == (("0", "1"),)
    assert d.added_nodes == ("4",)
    assert d.removed_nodes == ("3",)
    assert d.edge_changes == 2
    assert d.reversed_edges == ()
    db = pg([(0, 1), (1, 2)], directed=True)
    dr = edit_distance(db, pg([(1, 0), (1, 2)], directed=True))
    assert dr.directed
    assert dr.reversed_edges == (("0", "1"),)
    assert dr.edge_changes == 2
    # mixed directedness: compared as unordered pairs
    assert edit_distance(db, pg([(1, 0), (2, 1)])).edge_changes == 0
    assert d.to_json()["added_edges"] == [["0", "4"]]
    # numeric ids sort numerically
    assert edit_distance(pg([]), pg([(10, 2), (9, 1)])).added_edges == (("1", "9"), ("2", "10"))
