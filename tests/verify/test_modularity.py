"""verify/modularity.py: the same communities, in the same order, and the same float as networkx.

Every comparison is exact: the parts as networkx lists them (order included) and the modularity
with ``==`` (and the same ``float.hex``), on hand-made edge cases, on Hypothesis graphs (random,
sparse, dense, disconnected, with isolated nodes and self-loops, and tie-heavy families: cycles,
complete bipartite graphs, stars, cliques, copies of one graph, relabelled at random so that
ties are broken by different ids), and on every reference graph of the official suite, our own
suite and the committed pools (the sweep is slow).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.graphs.model import ParsedGraph
from pytest_graphinstruct.graphs.parse import parse_answer
from pytest_graphinstruct.pools.format import read_pool
from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.verify.modularity import Communities, greedy_modularity
from pytest_graphinstruct.verify.properties import GraphFacts
from pytest_graphinstruct.verify.tasks import NODE_REMOVING_TASKS
from tests.verify._graphgen import gnp_graphs, relabel_randomly

ROOT = Path(__file__).resolve().parents[2]


def _networkx(g: nx.Graph) -> tuple[list[frozenset[object]], float]:
    parts = nx.community.greedy_modularity_communities(g, weight=None)
    return [frozenset(p) for p in parts], nx.community.modularity(g, parts, weight=None)


def assert_same_as_networkx(g: nx.Graph) -> Communities:
    """Our result for ``g`` (at least one edge) is networkx's, parts in order and float bits."""
    ours = greedy_modularity(g)
    parts, q = _networkx(g)
    assert list(ours.parts) == parts
    assert type(ours.modularity) is float
    assert ours.modularity == q and ours.modularity.hex() == float(q).hex()
    return ours


# -- edge cases ------------------------------------------------------------------------------------

def test_one_edge() -> None:
    ours = assert_same_as_networkx(nx.Graph([("a", "b")]))
    assert ours.parts == (frozenset({"a", "b"}),) and ours.modularity == 0.0


def test_isolated_nodes_stay_alone_and_keep_graph_order() -> None:
    g = nx.Graph()
    g.add_nodes_from(["z", "y"])
    g.add_edges_from([("a", "b"), ("b", "c"), ("c", "a")])
    g.add_node("x")
    ours = assert_same_as_networkx(g)
    assert ours.parts[1:] == (frozenset({"z"}), frozenset({"y"}), frozenset({"x"}))


def test_self_loops_count_in_degrees_and_inside_edges() -> None:
    g = nx.Graph([("a", "a"), ("a", "b"), ("b", "c"), ("c", "c"), ("c", "d"), ("d", "e")])
    assert_same_as_networkx(g)
    only_loops = nx.Graph([("a", "a"), ("b", "b")])  # no pair to merge: every node alone
    assert assert_same_as_networkx(only_loops).parts == (frozenset("a"), frozenset("b"))


def test_zero_gain_still_merges_and_negative_gain_stops() -> None:
    # a perfect matching of two edges: merging a matched pair gains 1/4 each; afterwards no
    # pair is joined; on a path of three, the second merge gains exactly 0 and is taken
    assert_same_as_networkx(nx.Graph([("a", "b"), ("c", "d")]))
    ours = assert_same_as_networkx(nx.Graph([("a", "b"), ("b", "c")]))
    assert ours.parts == (frozenset("abc"),)


def test_ties_go_to_the_smallest_ids_as_strings_not_as_numbers() -> None:
    # '10' < '9' as strings: relabelling a cycle changes which tied pair merges first
    for names in (["1", "2", "9", "10", "11", "12"], ["a", "b", "c", "d", "e", "f"]):
        assert_same_as_networkx(nx.relabel_nodes(nx.cycle_graph(6), dict(enumerate(names))))


def test_integer_ids_take_the_fast_path_exactly() -> None:
    assert_same_as_networkx(nx.karate_club_graph())
    assert_same_as_networkx(nx.les_miserables_graph())


def test_other_ids_are_left_to_networkx() -> None:
    assert_same_as_networkx(nx.grid_2d_graph(4, 5))  # tuple ids
    mixed = nx.relabel_nodes(nx.path_graph(5), {0: "a"})  # a tie compares "a" with an int
    with pytest.raises(TypeError):
        nx.community.greedy_modularity_communities(mixed)
    with pytest.raises(TypeError):
        greedy_modularity(mixed)


def test_graph_facts_reads_it_and_keeps_its_conventions() -> None:
    assert GraphFacts(nx.Graph()).modularity == 0.0
    one = nx.Graph()
    one.add_edge("a", "a")
    assert GraphFacts(one).modularity == 0.0  # n < 2
    no_edges = nx.Graph()
    no_edges.add_nodes_from("abc")
    assert GraphFacts(no_edges).modularity == 0.0
    d = nx.DiGraph([("a", "b"), ("b", "a"), ("b", "c"), ("c", "d"), ("d", "c"), ("d", "d")])
    facts = GraphFacts(d)
    assert facts.modularity == _networkx(facts.undirected)[1]


# -- Hypothesis graphs -------------------------------------------------------------------------

def _family(kind: str, a: int, b: int) -> nx.Graph:
    if kind == "cycle":
        return nx.cycle_graph(a + 3)
    if kind == "bipartite":
        return nx.complete_bipartite_graph(a + 1, b + 1)
    if kind == "star":
        return nx.star_graph(a + 1)
    if kind == "clique":
        return nx.complete_graph(a + 2)
    if kind == "copies":  # disjoint copies of one small graph: every gain ties across them
        return nx.disjoint_union_all([nx.cycle_graph(3 + a % 4)] * (b + 2))
    if kind == "ladder":
        return nx.ladder_graph(a + 2)
    if kind == "hypercube":
        return nx.hypercube_graph(1 + a % 4)
    return nx.barbell_graph(a + 3, b)


@given(st.sampled_from(["cycle", "bipartite", "star", "clique", "copies", "ladder", "hypercube",
                        "barbell"]),
       st.integers(0, 12), st.integers(0, 6), st.integers(0, 2**32 - 1), st.booleans())
def test_tie_heavy_families(kind: str, a: int, b: int, seed: int, isolated: bool) -> None:
    g = relabel_randomly(_family(kind, a, b), seed)
    if isolated:
        g.add_node("isolated")
    assert_same_as_networkx(g)


@given(gnp_graphs(max_nodes=24, directed=False))
def test_random_graphs_with_loops_and_isolated_nodes(g: nx.Graph) -> None:
    if g.number_of_edges():
        assert_same_as_networkx(g)


@given(st.integers(2, 120), st.floats(0.0, 4.0), st.integers(0, 2**32 - 1))
def test_sparse_graphs_up_to_the_suites_sizes(n: int, mean_degree: float, seed: int) -> None:
    g = nx.gnm_random_graph(n, min(n * (n - 1) // 2, int(n * mean_degree / 2)) or 1, seed=seed)
    assert_same_as_networkx(relabel_randomly(g, seed))


@given(st.lists(st.integers(2, 12), min_size=1, max_size=5), st.floats(0.2, 0.9),
       st.integers(0, 2**32 - 1))
def test_planted_communities(sizes: list[int], p_in: float, seed: int) -> None:
    g = nx.random_partition_graph(sizes, p_in, 0.05, seed=seed)
    g.graph.clear()  # the partition the generator records is an attribute, not an edge
    if g.number_of_edges():
        assert_same_as_networkx(relabel_randomly(g, seed))


# -- the suites ----------------------------------------------------------------------------------

def _suite_graphs(directory: Path, step: int = 1) -> Iterator[nx.Graph]:
    """The undirected view of the reference graphs of every ``step``-th instruction."""
    for inst in list(load_suite(directory))[::step]:
        for ref in inst.references:
            parsed = parse_answer(ref, base=inst.base,
                                  drop_isolated=inst.task_type in NODE_REMOVING_TASKS).graph
            if isinstance(parsed, ParsedGraph):
                yield GraphFacts(parsed.graph).undirected


def _sweep(graphs: Iterator[nx.Graph]) -> int:
    n = 0
    for g in graphs:
        if g.number_of_nodes() >= 2 and g.number_of_edges():
            assert_same_as_networkx(g)
            n += 1
    return n


def test_a_sample_of_our_suite() -> None:
    assert _sweep(_suite_graphs(ROOT / "instructions", step=20)) > 30


@pytest.mark.slow
def test_every_reference_of_our_suite_and_pools() -> None:
    assert _sweep(_suite_graphs(ROOT / "instructions")) > 1500
    for level in ("l3", "l4"):
        pool = read_pool(ROOT / "references" / "pools" / level)
        assert _sweep(GraphFacts(pg.graph).undirected for pg in pool.graphs) > 900


@pytest.mark.slow
@pytest.mark.official
def test_every_reference_of_the_official_suite(official_suite_dir: Path) -> None:
    assert _sweep(_suite_graphs(official_suite_dir)) > 1500
