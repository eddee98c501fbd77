"""check_constraint: every key and operator, tolerances, loci, breakage, and networkx agreement."""

from __future__ import annotations

import json
import math
from typing import Any

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.suite.constraints import KEYS, TOLERANCE, Constraint, Op
from pytest_graphinstruct.verify import distances
from pytest_graphinstruct.verify.checks import (
    FLOAT_EQ_TOL,
    check_constraint,
    fmt_number,
    is_checkable,
    minimum_edge_cut,
)
from pytest_graphinstruct.verify.locus import Locus
from pytest_graphinstruct.verify.properties import GraphFacts
from pytest_graphinstruct.verify.verdict import Source, Verdict
from tests.verify._graphgen import C, gnp_graphs


def check(text: str, g: nx.Graph | GraphFacts, source: Source = Source.EXPLICIT) -> Verdict:
    facts = g if isinstance(g, GraphFacts) else GraphFacts(g)
    return check_constraint(C(text), facts, source)


def holds(text: str, g: nx.Graph | GraphFacts) -> bool:
    return check(text, g).satisfied


def facts_with(**values: Any) -> GraphFacts:
    """Facts of a small graph with some cached properties overridden (for exact boundaries)."""
    f = GraphFacts(nx.path_graph(4))
    for name, value in values.items():
        f.__dict__[name] = value  # cached_property reads the instance dict first
    return f


# -- metadata -------------------------------------------------------------------------------------

def test_metadata_keys_are_not_checkable() -> None:
    assert not is_checkable(C("task_type=spanning_tree"))
    assert not is_checkable(C("domain=social"))
    assert all(is_checkable(C(t)) for t in ("num_nodes=3", "graph_type=tree", "density<=0.5"))
    with pytest.raises(ValueError, match="metadata"):
        check("domain=social", nx.Graph())


def test_every_graph_key_has_a_check() -> None:
    samples = {
        "num_nodes": "num_nodes=1", "num_edges": "num_edges=1", "directed": "directed=true",
        "connected": "connected=true", "acyclic": "acyclic=true", "planar": "planar=true",
        "bipartite": "bipartite=true", "bipartite_sides": "bipartite_sides=1,1",
        "graph_type": "graph_type=tree", "degree": "degree=1", "min_degree": "min_degree=1",
        "max_degree": "max_degree=1", "diameter": "diameter<=1", "density": "density<=0.5",
        "modularity": "modularity>=0.1", "clustering_coefficient": "clustering_coefficient>=0.1",
        "average_path_length": "average_path_length<=2.0", "num_components": "num_components=1",
        "edge_connectivity": "edge_connectivity>=1",
    }
    assert set(samples) == {k for k, s in KEYS.items() if not s.metadata}
    for g in (nx.Graph(), nx.path_graph(2), nx.DiGraph([(0, 1)])):
        for text in samples.values():
            v = check(text, g)
            assert v.constraint == text and v.key == C(text).key
            json.dumps(v.to_json())


# -- verdict shape --------------------------------------------------------------------------------

def test_verdict_fields_and_where_only_on_failure() -> None:
    g = nx.Graph([(0, 1), (2, 3)])
    ok = check("num_nodes==4", g, Source.INFERRED)
    assert ok.satisfied and ok.where == Locus() and ok.source is Source.INFERRED
    assert ok.constraint == "num_nodes==4" and ok.expected == "= 4" and ok.observed == "4"
    bad = check("connected=true", g)
    assert not bad.satisfied and bad.observed == "disconnected: 2 components"
    where = bad.where.to_json()
    assert where["components"] == [[0, 1], [2, 3]] and where["count"] == 2
    good_neg = check("connected=false", g)
    assert good_neg.satisfied and good_neg.where == Locus()


def test_components_listing_is_capped() -> None:
    g = nx.empty_graph(25)
    v = check("connected=true", g)
    where = v.where.to_json()
    assert len(where["components"]) == 10 and where["count"] == 25


# -- counts and booleans --------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("num_nodes=5", True), ("num_nodes!=5", False), ("num_nodes<=4", False),
    ("num_nodes<6", True), ("num_nodes>=5", True), ("num_nodes>5", False),
    ("num_edges=4", True), ("num_edges>4", False), ("num_edges!=3", True),
    ("num_components=1", True), ("num_components>=2", False),
    ("diameter<=4", True), ("diameter<4", False), ("diameter=4", True), ("diameter>=5", False),
])
def test_counts_on_a_path(text: str, expected: bool) -> None:
    assert holds(text, nx.path_graph(5)) is expected


def test_num_edges_counts_arcs_and_self_loops() -> None:
    d = nx.DiGraph([(0, 1), (1, 0), (1, 1)])
    v = check("num_edges=3", d)
    assert v.satisfied and v.observed == "3 arcs"


@pytest.mark.parametrize(("text", "graph", "expected"), [
    ("directed=true", nx.DiGraph(), True), ("directed=false", nx.DiGraph(), False),
    ("directed!=true", nx.Graph(), True), ("directed=false", nx.Graph(), True),
    ("connected=true", nx.Graph(), False), ("connected=false", nx.Graph(), True),
    ("connected=true", nx.DiGraph([(0, 1), (2, 1)]), True),
    ("connected!=false", nx.path_graph(3), True),
    ("acyclic=true", nx.Graph(), True), ("acyclic=true", nx.path_graph(3), True),
    ("acyclic=true", nx.cycle_graph(3), False), ("acyclic=false", nx.cycle_graph(3), True),
    ("acyclic=true", nx.DiGraph([(0, 1), (1, 2), (0, 2)]), True),
    ("acyclic=true", nx.DiGraph([(0, 1), (1, 0)]), False),
    ("planar=true", nx.complete_graph(4), True), ("planar=true", nx.complete_graph(5), False),
    ("planar=false", nx.complete_graph(5), True),
    ("bipartite=true", nx.cycle_graph(4), True), ("bipartite=true", nx.cycle_graph(3), False),
    ("bipartite=false", nx.cycle_graph(3), True), ("bipartite=true", nx.Graph(), True),
])
def test_booleans(text: str, graph: nx.Graph, expected: bool) -> None:
    assert holds(text, graph) is expected


def test_boolean_loci() -> None:
    v = check("acyclic=true", nx.cycle_graph(4))
    assert len(v.where.to_json()["cycle"]) == 4
    v = check("planar=true", nx.complete_bipartite_graph(3, 3))
    where = v.where.to_json()
    assert where["count"] == 9 and len(where["kuratowski_edges"]) == 9
    v = check("bipartite=true", nx.cycle_graph(7))
    assert len(v.where.to_json()["odd_cycle"]) == 7
    assert check("planar=false", nx.path_graph(3)).where == Locus()


# -- bipartite_sides ------------------------------------------------------------------------------

def test_bipartite_sides_connected() -> None:
    g = nx.complete_bipartite_graph(3, 4)
    assert holds("bipartite_sides=3,4", g) and holds("bipartite_sides=4,3", g)
    v = check("bipartite_sides=2,5", g)
    assert not v.satisfied and v.observed == "sides 3,4"


def test_bipartite_sides_disconnected_uses_some_colouring() -> None:
    # three disjoint edges plus an isolated node: side sizes 3..4 -> {3,4} only
    g = nx.Graph([(0, 1), (2, 3), (4, 5)])
    g.add_node(6)
    assert holds("bipartite_sides=3,4", g)
    # a star K1,2 and an edge: side sizes (1|2) + (1) -> 2 or 3 of 5
    h = nx.Graph([(0, 1), (0, 2), (3, 4)])
    assert holds("bipartite_sides=2,3", h)
    assert not holds("bipartite_sides=1,4", h)
    # a colouring that puts both centres on one side gives 2,3; flipping gives 2,3 as well, but
    # isolated nodes can always move: 2 isolated + K1,3 -> 1..3 on the small side
    k = nx.star_graph(3)
    k.add_nodes_from([10, 11])
    for p in (1, 2, 3):
        assert holds(f"bipartite_sides={p},{6 - p}", k), p
    assert not holds("bipartite_sides=0,6", k)


def test_bipartite_sides_not_bipartite() -> None:
    v = check("bipartite_sides=1,2", nx.cycle_graph(3))
    assert not v.satisfied and v.observed.startswith("not bipartite")
    assert len(v.where.to_json()["odd_cycle"]) == 3


# -- graph_type -----------------------------------------------------------------------------------

def test_graph_type_eq_and_ne() -> None:
    t = nx.balanced_tree(2, 2)
    assert holds("graph_type=tree", t)
    assert not holds("graph_type!=tree", t)
    assert holds("graph_type!=cycle", t)
    v = check("graph_type=cycle", t)
    assert not v.satisfied and v.expected == "cycle" and v.where


# -- degree ---------------------------------------------------------------------------------------

def test_degree_semantics() -> None:
    pet = nx.petersen_graph()  # 3-regular
    assert holds("degree=3", pet) and not holds("degree=2", pet)
    assert holds("degree<=3", pet) and holds("degree>2", pet) and not holds("degree<3", pet)
    assert not holds("degree!=3", pet) and holds("degree!=4", pet)
    path = nx.path_graph(4)  # not regular: every degree-OP-k fails except !=
    for op in ("=", "<=", ">=", "<", ">"):
        assert not holds(f"degree{op}2", path)
    assert holds("degree!=2", path)
    assert not holds("degree=0", nx.Graph())  # the empty graph is not regular
    assert holds("degree!=0", nx.Graph())
    assert holds("degree=2", nx.cycle_graph(5, create_using=nx.DiGraph))  # in + out


def test_degree_where_names_offending_nodes() -> None:
    v = check("degree=2", nx.path_graph(4))
    where = v.where.to_json()
    assert where["nodes"] == [0, 3] and where["degrees"] == [1, 1]
    # every degree <= 3 but they differ: the nodes off the most common degree are named
    v = check("degree<=3", nx.path_graph(5))
    assert v.where.to_json()["nodes"] == [0, 4]


@pytest.mark.parametrize(("text", "expected"), [
    ("min_degree=1", True), ("min_degree=2", False), ("min_degree=0", True),
    ("min_degree>=1", True), ("min_degree<=1", True), ("min_degree<1", False),
    ("min_degree!=1", False), ("min_degree>1", False),
    ("max_degree=2", True), ("max_degree=3", True), ("max_degree=1", False),
    ("max_degree>=2", True), ("max_degree<2", False), ("max_degree!=2", False),
    ("max_degree>2", False),
])
def test_min_max_degree_semantics(text: str, expected: bool) -> None:
    assert holds(text, nx.path_graph(4)) is expected


def test_min_max_degree_expected_text_and_where() -> None:
    v = check("min_degree=2", nx.path_graph(4))
    assert v.expected == ">= 2 (min_degree=2 means at least 2)"
    assert v.where.to_json()["nodes"] == [0, 3]
    v = check("max_degree=1", nx.star_graph(3))
    assert v.expected == "<= 1 (max_degree=1 means at most 1)" and v.where.to_json()["nodes"] == [0]
    v = check("min_degree<=0", nx.path_graph(3))  # min is 1: the nodes attaining it
    assert v.where.to_json()["nodes"] == [0, 2]
    assert holds("min_degree=0", nx.Graph()) and holds("max_degree=0", nx.Graph())


# -- floats and tolerances ------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["density", "modularity", "clustering_coefficient"])
def test_tolerance_le_ge(key: str) -> None:
    attr = {"clustering_coefficient": "clustering"}.get(key, key)
    bound = 0.451
    le_edge = bound + TOLERANCE * bound
    assert holds(f"{key}<={bound}", facts_with(**{attr: le_edge}))
    assert not holds(f"{key}<={bound}", facts_with(**{attr: math.nextafter(le_edge, 1)}))
    ge_edge = bound - TOLERANCE * bound
    assert holds(f"{key}>={bound}", facts_with(**{attr: ge_edge}))
    assert not holds(f"{key}>={bound}", facts_with(**{attr: math.nextafter(ge_edge, 0)}))
    # < and > are exact
    assert not holds(f"{key}<{bound}", facts_with(**{attr: bound}))
    assert not holds(f"{key}>{bound}", facts_with(**{attr: bound}))
    assert holds(f"{key}<{bound}", facts_with(**{attr: math.nextafter(bound, 0)}))


def test_tolerance_expected_text() -> None:
    v = check("density<=0.451", facts_with(density=0.5012))
    assert v.expected == "<= 0.451 (+5% tolerance: <= 0.4736)"
    assert v.observed == "0.5012" and not v.satisfied
    v = check("modularity>=0.3", facts_with(modularity=0.2))
    assert v.expected == ">= 0.3 (-5% tolerance: >= 0.285)"


def test_tolerance_on_average_path_length_and_negative_bounds() -> None:
    f = facts_with(_distance_stats=(3, 2.1))
    assert holds("average_path_length<=2.0", f)  # 2.1 <= 2.0 * 1.05
    assert not holds("average_path_length<=1.99", f)
    # modularity can be negative: the slack is 5 % of |bound|
    assert holds("modularity>=-0.1", facts_with(modularity=-0.105))
    assert not holds("modularity>=-0.1", facts_with(modularity=-0.1051))
    assert holds("modularity<=-0.1", facts_with(modularity=-0.095))


def test_no_tolerance_on_integer_keys() -> None:
    f = facts_with(_distance_stats=(5, 2.0))
    assert not holds("diameter<=4", f)  # 4 * 1.05 would admit nothing anyway; no slack at all
    assert holds("diameter<=5", f)


def test_float_equality_uses_a_tiny_absolute_tolerance() -> None:
    assert holds("density=0.5", facts_with(density=0.5 + FLOAT_EQ_TOL / 2))
    assert not holds("density=0.5", facts_with(density=0.5 + 10 * FLOAT_EQ_TOL))
    assert holds("density!=0.5", facts_with(density=0.5001))
    assert not holds("density!=0.5", facts_with(density=0.5))
    v = check("density=0.5", facts_with(density=0.5))
    assert v.expected == "= 0.5 (within 1e-09)"


def test_distances_on_disconnected_and_empty_graphs() -> None:
    g = nx.Graph([(0, 1), (2, 3)])
    v = check("average_path_length<=3.0", g)
    assert not v.satisfied and v.observed == "inf (disconnected: 2 components)"
    assert v.where.to_json()["count"] == 2
    assert not holds("diameter<=10", g) and holds("diameter>=10", g)
    e = check("diameter<=1", nx.Graph())
    assert not e.satisfied and e.observed == "inf (empty graph)" and e.where == Locus()


@pytest.mark.parametrize("text", ["diameter<=39", "diameter>=1", "diameter=39", "diameter!=5",
                                  "average_path_length<=100.0", "average_path_length>0.0",
                                  "average_path_length!=2.5"])
def test_distances_too_large_to_compute_are_not_satisfied(text: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # every operator, even ones any finite value would meet: the answer was not shown to meet it
    monkeypatch.setattr(distances, "_DENSE_MAX_NODES", 0)
    monkeypatch.setattr(distances, "DISTANCE_WORK_LIMIT", 40 * 79 - 1)
    v = check(text, nx.path_graph(40))
    assert not v.satisfied
    assert v.observed == "not computed: answer too large (40 nodes × (40 + 39 edges) = 3160 > 3159)"
    assert v.observed in v.describe() and v.gap is None and v.where == Locus()


def test_failing_value_is_never_printed_equal_to_its_bound() -> None:
    v = check("density<=0.4", facts_with(density=0.42000001))
    assert not v.satisfied and v.observed != "0.42"


def test_fmt_number() -> None:
    assert fmt_number(3) == "3" and fmt_number(3.0) == "3" and fmt_number(0.47355) == "0.4736"
    assert fmt_number(math.inf) == "inf" and fmt_number(0.00001234) == "1.23e-05"


# -- edge connectivity ----------------------------------------------------------------------------

def test_edge_connectivity() -> None:
    assert holds("edge_connectivity>=2", nx.cycle_graph(6))
    v = check("edge_connectivity>=2", nx.path_graph(5))
    assert not v.satisfied and v.observed == "1" and len(v.where.to_json()["cut_edges"]) == 1
    v = check("edge_connectivity>=1", nx.Graph([(0, 1), (2, 3)]))
    assert v.observed == "0 (disconnected: 2 components)" and v.where.to_json()["count"] == 2
    v = check("edge_connectivity>=1", nx.DiGraph([(0, 1), (1, 2)]))
    assert not v.satisfied and "not strongly connected" in v.observed
    assert holds("edge_connectivity=0", nx.path_graph(1))


def test_the_cut_shown_is_a_node_of_least_degree_or_the_first_smaller_cut() -> None:
    ring = nx.relabel_nodes(nx.cycle_graph(8), str)  # λ = δ = 2: every node's edges are a cut
    v = check("edge_connectivity>=3", ring)
    assert v.where.to_json() == {"cut_edges": [["0", "1"], ["0", "7"]], "count": 2}
    barbell = nx.relabel_nodes(nx.barbell_graph(4, 0), str)  # λ = 1 < δ = 3: the bridge
    assert check("edge_connectivity>=2", barbell).where.to_json()["cut_edges"] == [["3", "4"]]


def test_the_cut_of_a_graph_with_self_loops_leaves_them_out() -> None:
    g = nx.Graph([("0", "0"), ("0", "1"), ("1", "1")])
    assert minimum_edge_cut(g, GraphFacts(g).edge_connectivity) == {("0", "1")}
    verdict = check("edge_connectivity>=2", g)
    assert not verdict.satisfied and verdict.where.to_json()["cut_edges"] == [["0", "1"]]


@given(gnp_graphs(max_nodes=12))
def test_minimum_edge_cut_is_a_cut_of_the_edge_connectivity(g: nx.Graph) -> None:
    f = GraphFacts(g)
    if f.n < 2 or not f.connected or (f.directed and f.edge_connectivity == 0):
        return
    cut = minimum_edge_cut(g, f.edge_connectivity)
    assert len(cut) == f.edge_connectivity
    h = g.copy()
    h.remove_edges_from(cut)
    assert not (nx.is_strongly_connected(h) if f.directed else nx.is_connected(h))


# -- targeted breakage: each change flips exactly the verdicts it should --------------------------

TREE_CONSTRAINTS = ["num_nodes=15", "num_edges=14", "connected=true", "acyclic=true",
                    "graph_type=tree", "bipartite=true", "planar=true", "directed=false",
                    "num_components=1", "max_degree=3"]


def failing(texts: list[str], g: nx.Graph) -> set[str]:
    f = GraphFacts(g)
    return {t for t in texts if not check_constraint(C(t), f, Source.EXPLICIT).satisfied}


def test_breakage_on_a_tree() -> None:
    t = nx.balanced_tree(2, 3)  # 15 nodes, root 0 with children 1, 2
    assert failing(TREE_CONSTRAINTS, t) == set()

    added = t.copy()
    added.add_node(99)
    assert failing(TREE_CONSTRAINTS, added) == {"num_nodes=15", "connected=true",
                                                "graph_type=tree", "num_components=1"}

    cut = t.copy()
    cut.remove_edge(0, 1)
    assert failing(TREE_CONSTRAINTS, cut) == {"num_edges=14", "connected=true",
                                              "graph_type=tree", "num_components=1"}
    v = check("connected=true", cut)
    where = v.where.to_json()
    assert where["count"] == 2 and sorted(where["component_sizes"]) == [7, 8]

    chord = t.copy()
    chord.add_edge(7, 8)  # sibling leaves: a triangle 3-7-8 -> odd cycle as well
    assert failing(TREE_CONSTRAINTS, chord) == {"num_edges=14", "acyclic=true",
                                                "graph_type=tree", "bipartite=true"}
    even = t.copy()
    even.add_edge(7, 0)  # leaf to root (degree 2): 7-3-1-0 closes a 4-cycle, still bipartite
    assert failing(TREE_CONSTRAINTS, even) == {"num_edges=14", "acyclic=true",
                                               "graph_type=tree"}
    cyc = check("acyclic=true", even).where.to_json()["cycle"]
    assert {frozenset(e) for e in cyc} == {frozenset(e) for e in ((7, 3), (3, 1), (1, 0), (0, 7))}


def test_breakage_odd_cycle_in_bipartite_graph() -> None:
    g = nx.complete_bipartite_graph(3, 3)
    texts = ["bipartite=true", "bipartite_sides=3,3", "graph_type=complete_bipartite",
             "num_edges=9", "connected=true"]
    assert failing(texts, g) == set()
    g.add_edge(0, 1)  # same side: triangle 0-1-3
    assert failing(texts, g) == {"bipartite=true", "bipartite_sides=3,3",
                                 "graph_type=complete_bipartite", "num_edges=9"}
    odd = check("bipartite=true", g).where.to_json()["odd_cycle"]
    assert len(odd) % 2 == 1 and {0, 1} <= set(odd)


def test_breakage_k5_in_planar_graph() -> None:
    g = nx.convert_node_labels_to_integers(nx.grid_2d_graph(4, 4))
    texts = ["planar=true", "connected=true", "bipartite=true"]
    assert failing(texts, g) == set()
    k5 = [(100 + a, 100 + b) for a in range(5) for b in range(a + 1, 5)]
    g.add_edges_from(k5)
    g.add_edge(0, 100)
    assert failing(texts, g) == {"planar=true", "bipartite=true"}
    where = check("planar=true", g).where.to_json()
    assert {frozenset(e) for e in where["kuratowski_edges"]} == {frozenset(e) for e in k5}


def test_breakage_one_node_of_degree_four_in_a_cubic_graph() -> None:
    g = nx.circulant_graph(10, [1, 5])  # 3-regular on 10 nodes (Möbius ladder)
    texts = ["degree=3", "num_nodes=10", "num_edges=15", "min_degree=3"]
    assert failing(texts, g) == set()
    g.add_edge(7, "x")  # node 7 gets degree 4; the new node has degree 1
    assert failing(texts, g) == {"degree=3", "num_nodes=10", "num_edges=15", "min_degree=3"}
    v = check("degree=3", g)
    where = v.where.to_json()
    assert 7 in where["nodes"] and where["degrees"][where["nodes"].index(7)] == 4
    h = nx.circulant_graph(10, [1, 5])
    h.remove_edge(0, 5)
    h.add_edge(0, 2)  # node 0 stays 3, node 5 drops to 2, node 2 rises to 4
    v = check("degree=3", h)
    where = v.where.to_json()
    assert where["nodes"] == [2, 5] and where["degrees"] == [4, 2]


# -- agreement with networkx on random graphs -----------------------------------------------------

def _nx_value(key: str, g: nx.Graph) -> Any:
    """The key's value computed independently with networkx (None: undefined)."""
    u = nx.Graph(g.to_undirected())
    n = g.number_of_nodes()
    connected = n > 0 and (nx.is_weakly_connected(g) if g.is_directed() else nx.is_connected(g))
    degrees = [d for _, d in g.degree()]
    if key == "num_nodes":
        return n
    if key == "num_edges":
        return g.number_of_edges()
    if key == "directed":
        return g.is_directed()
    if key == "connected":
        return connected
    if key == "acyclic":
        if g.is_directed():
            return nx.is_directed_acyclic_graph(g)
        return n == 0 or nx.is_forest(g)
    if key == "planar":
        return nx.is_planar(u)
    if key == "bipartite":
        return nx.is_bipartite(u)
    if key == "degree":
        return degrees[0] if n and len(set(degrees)) == 1 else None
    if key == "min_degree":
        return min(degrees, default=0)
    if key == "max_degree":
        return max(degrees, default=0)
    if key == "diameter":
        return nx.diameter(u) if connected else math.inf
    if key == "average_path_length":
        return nx.average_shortest_path_length(u) if connected else math.inf
    if key == "density":
        return nx.density(g)
    if key == "modularity":
        if n < 2 or u.number_of_edges() == 0:
            return 0.0
        parts = nx.community.greedy_modularity_communities(u, weight=None)
        return nx.community.modularity(u, parts, weight=None)
    if key == "clustering_coefficient":
        return nx.average_clustering(u) if n else 0.0
    if key == "num_components":
        return nx.number_connected_components(u)
    if key == "edge_connectivity":
        return nx.edge_connectivity(g) if connected and n >= 2 else 0
    raise AssertionError(key)


_PY = {Op.EQ: lambda a, b: a == b, Op.NE: lambda a, b: a != b, Op.LE: lambda a, b: a <= b,
       Op.GE: lambda a, b: a >= b, Op.LT: lambda a, b: a < b, Op.GT: lambda a, b: a > b}


def _expected(c: Constraint, actual: Any) -> bool:
    key, op, bound = c.key, c.op, c.value
    if isinstance(bound, bool):
        return actual == (bound if op is Op.EQ else not bound)
    if key == "degree":
        if op is Op.NE:
            return actual != bound
        return actual is not None and _PY[op](actual, bound)
    if key == "min_degree" and op is Op.EQ:
        return actual >= bound
    if key == "max_degree" and op is Op.EQ:
        return actual <= bound
    if isinstance(bound, float):
        if op is Op.LE:  # the bound relaxed by 5 % of its magnitude
            return actual <= bound + TOLERANCE * abs(bound)
        if op is Op.GE:
            return actual >= bound - TOLERANCE * abs(bound)
        if op is Op.EQ:
            return abs(actual - bound) <= FLOAT_EQ_TOL
        if op is Op.NE:
            return not abs(actual - bound) <= FLOAT_EQ_TOL
    return _PY[op](actual, bound)


INT_KEYS = ["num_nodes", "num_edges", "degree", "min_degree", "max_degree", "diameter",
            "num_components", "edge_connectivity"]
FLOAT_KEYS = ["density", "modularity", "clustering_coefficient", "average_path_length"]
BOOL_KEYS = ["directed", "connected", "acyclic", "planar", "bipartite"]


@given(gnp_graphs(max_nodes=14), st.data())
@pytest.mark.slow
def test_every_key_agrees_with_networkx(g: nx.Graph, data: st.DataObject) -> None:
    f = GraphFacts(g)
    for key in INT_KEYS + FLOAT_KEYS + BOOL_KEYS:
        actual = _nx_value(key, g)
        op = data.draw(st.sampled_from(sorted(KEYS[key].ops, key=lambda o: o.value)))
        if key in BOOL_KEYS:
            text = f"{key}{op.value}{data.draw(st.sampled_from(['true', 'false']))}"
        elif key in INT_KEYS:
            base = actual if isinstance(actual, int) else 2
            text = f"{key}{op.value}{max(0, base + data.draw(st.integers(-2, 2)))}"
        else:
            base = actual if actual is not None and math.isfinite(actual) else 1.5
            factor = data.draw(st.sampled_from([0.9, 0.95, 0.96, 1.0, 1.04, 1.05, 1.1]))
            text = f"{key}{op.value}{base * factor!r}"
        c = C(text)
        v = check_constraint(c, f, Source.EXPLICIT)
        assert v.satisfied == _expected(c, actual), (text, actual, v)
        assert (v.where == Locus()) or not v.satisfied
        json.dumps(v.to_json(), default=str)


@given(gnp_graphs(max_nodes=10), st.data())
def test_graph_type_verdict_matches_validator(g: nx.Graph, data: st.DataObject) -> None:
    from pytest_graphinstruct.verify.graph_types import check_graph_type

    name = data.draw(st.sampled_from(sorted(KEYS["graph_type"].vocabulary or ())))
    f = GraphFacts(g)
    tc = check_graph_type(name, f)
    assert check_constraint(C(f"graph_type={name}"), f, Source.EXPLICIT).satisfied == tc.ok
    assert check_constraint(C(f"graph_type!={name}"), f, Source.EXPLICIT).satisfied != tc.ok
