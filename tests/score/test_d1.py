from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.pools import Pool, PoolGraph, ReferencePools
from pytest_graphinstruct.score.d1 import instruction_d1, uniqueness
from pytest_graphinstruct.verify.verdict import Verification
from tests.score._d1graphs import (
    failure,
    instruction,
    k33,
    prism,
    refusal,
    sample,
    shuffled,
    synthetic_pool_graphs,
)
from tests.verify._graphgen import gnp_graphs

TREE = instruction(id="L1-001", level=1, explicit_constraints=["graph_type=tree", "num_nodes=4"])


# -- valid rate and uniqueness --------------------------------------------------------------------

def test_vr_and_uniqueness_hand_computed() -> None:
    path, star = nx.path_graph(4), nx.star_graph(3)
    not_tree = nx.cycle_graph(4)
    samples = [sample(TREE, path), sample(TREE, star), sample(TREE, shuffled(path, 1)),
               sample(TREE, not_tree), failure(TREE)]
    r = instruction_d1(TREE, samples)
    # valid: path, star, path -> 3/5; parsed 4 in 3 classes (path, star, cycle) -> 3/4
    assert (r.samples, r.parsed, r.valid) == (5, 4, 3)
    assert r.valid_rate == pytest.approx(0.6)
    assert r.uniqueness is not None and r.uniqueness.value == pytest.approx(0.75)
    assert r.score == pytest.approx(0.7 * 0.6 + 0.3 * 0.75)
    assert r.formula == "constraint" and r.reason is None and r.pool_matches is None


def test_two_regular_graphs_that_wl_merges_are_two_classes() -> None:
    inst = instruction(explicit_constraints=["num_nodes=6", "num_edges=9", "degree=3"],
                       level=2, id="L2-001")
    r = instruction_d1(inst, [sample(inst, k33()), sample(inst, prism())])
    assert r.uniqueness is not None and r.uniqueness.classes == 2 and r.uniqueness.exact
    assert r.score == pytest.approx(1.0)
    same = instruction_d1(inst, [sample(inst, k33()), sample(inst, shuffled(k33(), 3))])
    assert same.score == pytest.approx(0.7 + 0.3 * 0.5)


def test_single_sample_has_zero_uniqueness() -> None:
    r = instruction_d1(TREE, [sample(TREE, nx.path_graph(4))])
    assert r.uniqueness is not None and r.uniqueness.value == 0.0
    assert r.score == pytest.approx(0.7)


def test_single_answer_types_use_vr_only() -> None:
    inst = instruction(id="L1-002", level=1, explicit_constraints=["graph_type=cycle",
                                                                   "num_nodes=5"])
    r = instruction_d1(inst, [sample(inst, nx.cycle_graph(5))] * 2
                       + [sample(inst, nx.path_graph(5)), failure(inst)])
    assert r.uniqueness is None
    assert r.score == pytest.approx(0.5)


def test_no_samples_scores_zero() -> None:
    r = instruction_d1(TREE, [])
    assert r.score == 0.0 and r.valid_rate == 0.0


def test_uniqueness_counts_parsed_graphs_even_if_invalid() -> None:
    u = uniqueness([nx.path_graph(3), nx.cycle_graph(3), nx.path_graph(3)])
    assert (u.classes, u.parsed) == (2, 3) and u.value == pytest.approx(2 / 3)


def test_directed_and_undirected_samples_are_different_classes() -> None:
    inst = instruction(explicit_constraints=["num_nodes=3"])
    und = nx.path_graph(3)
    r = instruction_d1(inst, [sample(inst, und), sample(inst, nx.DiGraph([(0, 1), (1, 2)]))])
    assert r.uniqueness is not None and r.uniqueness.classes == 2


# -- infeasible -----------------------------------------------------------------------------------

def test_infeasible_scores_refusal_share() -> None:
    inst = instruction(id="L2-173", level=2, feasible=False, reference_solutions=[],
                       explicit_constraints=["degree=3", "num_nodes=5"])
    r = instruction_d1(inst, [refusal(inst), refusal(inst), failure(inst),
                              sample(inst, nx.complete_graph(5))])
    assert r.formula == "refusal" and r.score == pytest.approx(0.5)
    assert r.uniqueness is None


# -- distribution levels --------------------------------------------------------------------------

L3 = instruction(id="L3-001", level=3,
                 explicit_constraints=["num_nodes>=12", "directed=false"])


@pytest.fixture(scope="module")
def pools() -> ReferencePools:
    return ReferencePools({3: Pool.from_graphs(synthetic_pool_graphs(40))})


def ba_samples(inst: object, k: int = 5) -> list[Verification]:
    return [sample(inst, nx.barabasi_albert_graph(16, 2, seed=100 + i))  # type: ignore[arg-type]
            for i in range(k)]


def test_no_pool_falls_back_with_reason() -> None:
    r = instruction_d1(L3, ba_samples(L3))
    assert r.formula == "constraint" and r.reason == "no pool"
    assert r.score == pytest.approx(0.7 + 0.3 * 1.0)
    assert r.pool_matches is None and r.mmd is None


def test_level_without_pool_falls_back(pools: ReferencePools) -> None:
    inst = instruction(id="L4-001", level=4, domain="social", explicit_constraints=["num_nodes=16"])
    r = instruction_d1(inst, ba_samples(inst))
    assert (r.formula, r.reason) == ("constraint", "no pool")


def test_distribution_formula(pools: ReferencePools) -> None:
    r = instruction_d1(L3, ba_samples(L3), pools)
    assert r.formula == "distribution" and r.reason is None
    assert r.pool_matches == 40
    assert r.mmd is not None and r.uniqueness is not None
    assert r.score == pytest.approx(0.3 * 1.0 + 0.5 * r.mmd.mean + 0.2 * r.uniqueness.value)
    assert set(r.to_json()["mmd"]) >= {"degree", "clustering", "spectral", "mean"}


def test_too_few_matches_falls_back(pools: ReferencePools) -> None:
    inst = instruction(id="L3-002", level=3, explicit_constraints=["num_nodes=16"])
    r = instruction_d1(inst, ba_samples(inst), pools)
    assert r.formula == "constraint"
    assert r.pool_matches is not None and r.pool_matches < 20
    assert r.reason == f"{r.pool_matches} pool graphs match (fewer than 20)"


def test_fewer_than_two_parsed_falls_back(pools: ReferencePools) -> None:
    r = instruction_d1(L3, ba_samples(L3, 1) + [failure(L3)] * 4, pools)
    assert (r.formula, r.reason) == ("constraint", "fewer than 2 parsed samples")
    assert r.pool_matches == 40
    assert r.score == pytest.approx(0.7 * 0.2)


def test_closer_distribution_scores_higher(pools: ReferencePools) -> None:
    near = instruction_d1(L3, ba_samples(L3), pools)
    far = instruction_d1(L3, [sample(L3, nx.complete_graph(16 + i)) for i in range(5)], pools)
    assert near.mmd is not None and far.mmd is not None
    assert near.mmd.mean > far.mmd.mean


def test_l4_uses_same_domain_graphs_only() -> None:
    items = [PoolGraph(f"s{i}", nx.relabel_nodes(g, str), "social")
             for i, g in enumerate(synthetic_pool_graphs(25, seed=1))]
    items += [PoolGraph(f"m{i}", nx.relabel_nodes(nx.path_graph(14), str), "molecular")
              for i in range(30)]
    pools = ReferencePools({4: Pool.from_graphs(items)})
    inst = instruction(id="L4-002", level=4, domain="social",
                       explicit_constraints=["num_nodes>=12"])
    r = instruction_d1(inst, ba_samples(inst), pools)
    assert r.formula == "distribution" and r.pool_matches == 25
    mol = instruction(id="L4-003", level=4, domain="molecular",
                      explicit_constraints=["num_nodes>=12"])
    assert instruction_d1(mol, ba_samples(mol), pools).pool_matches == 30


# -- properties -----------------------------------------------------------------------------------

LEVEL_INSTRUCTIONS = [
    instruction(explicit_constraints=["num_nodes=6"]),
    TREE,
    instruction(id="L1-003", level=1, explicit_constraints=["graph_type=path", "num_nodes=5"]),
    L3,
]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(LEVEL_INSTRUCTIONS), st.lists(gnp_graphs(max_nodes=16), min_size=0,
                                                      max_size=5),
       st.integers(0, 3), st.integers(0, 10**6))
@pytest.mark.slow
def test_d1_in_unit_interval_and_invariant_under_relabelling(
        inst: object, graphs: list[nx.Graph], failures: int, seed: int) -> None:
    pools = _pools()
    samples = [sample(inst, g) for g in graphs] + [failure(inst)] * failures  # type: ignore[arg-type]
    renamed = [sample(inst, shuffled(g, seed + i))  # type: ignore[arg-type]
               for i, g in enumerate(graphs)] + [failure(inst)] * failures  # type: ignore[arg-type]
    a = instruction_d1(inst, samples, pools)  # type: ignore[arg-type]
    b = instruction_d1(inst, renamed, pools)  # type: ignore[arg-type]
    assert 0.0 <= a.score <= 1.0
    assert a.formula == b.formula and a.valid == b.valid
    assert a.score == pytest.approx(b.score, abs=1e-12)
    if a.mmd is not None and b.mmd is not None:
        assert a.mmd.mean == pytest.approx(b.mmd.mean, abs=1e-12)


_POOLS: list[ReferencePools] = []


def _pools() -> ReferencePools:
    if not _POOLS:
        _POOLS.append(ReferencePools({3: Pool.from_graphs(synthetic_pool_graphs(40))}))
    return _POOLS[0]
