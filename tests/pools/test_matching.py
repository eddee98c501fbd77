"""Matching constraint sets to pool graphs (pools/matching.py)."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.pools import Pool, PoolGraph, match_key
from pytest_graphinstruct.suite.constraints import parse_constraint
from tests.pools._pools import brute_force
from tests.score._d1graphs import instruction, synthetic_pool_graphs

CONSTRAINT_MENU = [
    "num_nodes=14", "num_nodes=16", "num_nodes>=15", "num_edges<=30", "connected=true",
    "directed=false", "directed=true", "density<=0.2", "density>=0.3", "modularity>=0.3",
    "clustering_coefficient>=0.2", "average_path_length<=2.2", "diameter<=4", "min_degree=2",
    "max_degree=6", "planar=true", "acyclic=true", "bipartite=false", "edge_connectivity>=2",
    "graph_type=tree", "task_type=spanning_tree",
]


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(CONSTRAINT_MENU), min_size=0, max_size=4))
def test_matching_equals_brute_force(texts: list[str]) -> None:
    pool = _shared_pool()
    got = pool.match([parse_constraint(t) for t in texts])
    assert got.indices == brute_force(pool, texts)


_SHARED: list[Pool] = []


def _shared_pool() -> Pool:
    if not _SHARED:
        gs = synthetic_pool_graphs(40)
        gs.append(nx.gnp_random_graph(14, 0.3, seed=9, directed=True))
        _SHARED.append(Pool.from_graphs(gs))
    return _SHARED[0]


def test_match_is_cached_per_canonical_key() -> None:
    pool = Pool.from_graphs(synthetic_pool_graphs(20))
    a = pool.match([parse_constraint("connected=true"), parse_constraint("density<=0.3")])
    checks = pool.computed["checks"]
    b = pool.match([parse_constraint("density <= 0.3"), parse_constraint("connected=true"),
                    parse_constraint("task_type=mst")])  # same set: other order, metadata key
    assert a.key == b.key == match_key(a_cs := [parse_constraint("density<=0.3"),
                                               parse_constraint("connected=true")])
    assert a_cs and b.indices == a.indices
    assert pool.computed["checks"] == checks and pool.computed["matches"] == 1


def test_domain_filter() -> None:
    social = [nx.barabasi_albert_graph(12, 2, seed=i) for i in range(3)]
    molecular = [nx.path_graph(12) for _ in range(2)]
    items = [PoolGraph(f"s{i}", nx.relabel_nodes(g, str), "social") for i, g in enumerate(social)]
    items += [PoolGraph(f"m{i}", nx.relabel_nodes(g, str), "molecular")
              for i, g in enumerate(molecular)]
    pool = Pool.from_graphs(items)
    inst = instruction(id="L4-001", level=4, domain="social",
                       explicit_constraints=["num_nodes=12", "connected=true"])
    m = pool.match_instruction(inst)
    assert m.indices == (0, 1, 2)
    assert all(g.domain == "social" for g in m.graphs)
    assert m.key[-1] == "domain=social"
