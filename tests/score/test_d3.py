"""D3: invariance under relabelling/reordering, hand cases, absences, determinism, batching."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.score import d3, gcn
from pytest_graphinstruct.score.canon import undirected_adjacency
from pytest_graphinstruct.score.d3 import D3Config, graph_sets_d3, graphs_d3, instruction_d3
from pytest_graphinstruct.score.embedding import (
    embedding_mmd,
    grassmann_coherence,
    greedy_modularity,
    spectral_features,
)
from pytest_graphinstruct.suite.loader import instruction_from_record
from pytest_graphinstruct.verify.verifier import Verifier
from tests.score._d3graphs import FAMILIES, REFERENCES, graphs, relabelled, sbm

ROOT = Path(__file__).resolve().parents[2]
OFFICIAL = ROOT.parent / "shared" / "official-suite" / "instructions"
NO_GCN = D3Config(gcn=False)


def parts(s: d3.D3Sample) -> tuple[Any, ...]:
    return (s.value, s.renormalized, s.grassmann, s.mmd, s.mmd_distance, s.gcn, s.reference)


# -- invariance of D3 -----------------------------------------------------------------------------

@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(g=graphs(), seed=st.integers(0, 2**32 - 1), directed=st.booleans())
def test_d3_is_invariant_under_relabelling_and_reordering(g: nx.Graph, seed: int,
                                                          directed: bool) -> None:
    rng = random.Random(seed)
    first = graphs_d3([g], REFERENCES)
    d3.clear_caches(experiments=False)  # recompute the features from scratch
    other = graphs_d3([relabelled(g, rng, directed=directed)], REFERENCES)
    assert parts(first.samples[0]) == parts(other.samples[0])  # bit-identical
    assert (first.value, first.renormalized) == (other.value, other.renormalized)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 12, 13, 14, 15])
def test_d3_invariance_on_structured_graphs_with_gcn(seed: int) -> None:
    rng = random.Random(seed)
    g = nx.relabel_nodes(nx.Graph(FAMILIES[rng.choice(sorted(FAMILIES))](rng)), str)
    if g.number_of_nodes() < 2:
        g = nx.relabel_nodes(nx.cycle_graph(12), str)
    refs = [relabelled(r, rng) for r in REFERENCES]
    a = graphs_d3([g, sbm([5, 5, 5], seed)], REFERENCES)
    d3.clear_caches()
    b = graphs_d3([relabelled(g, rng), relabelled(sbm([5, 5, 5], seed), rng)], refs)
    assert [parts(s) for s in a.samples] == [parts(s) for s in b.samples]
    assert a.samples[1].gcn is not None


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(g=graphs(), r=graphs(min_nodes=2, max_nodes=14))
def test_every_score_lies_in_unit_interval(g: nx.Graph, r: nx.Graph) -> None:
    res = graphs_d3([g], [r, REFERENCES[0]])
    for s in res.samples:
        for x in (s.value, s.renormalized, s.grassmann, s.mmd, s.gcn):
            assert x is None or 0.0 <= x <= 1.0
    assert res.value is not None and 0.0 <= res.value <= 1.0


# -- hand cases -----------------------------------------------------------------------------------

def test_identical_graph_scores_grassmann_and_mmd_one() -> None:
    for r in REFERENCES:
        res = graphs_d3([relabelled(r, random.Random(1))], [r])
        s = res.samples[0]
        assert s.grassmann == 1.0 and s.mmd == 1.0 and s.mmd_distance == 0.0
        assert s.gcn is not None and 0.0 <= s.gcn <= 1.0


def test_closest_reference_is_chosen() -> None:
    res = graphs_d3([REFERENCES[1]], REFERENCES)
    assert res.samples[0].reference == 1
    assert res.samples[0].grassmann == 1.0


def test_combination_weights() -> None:
    s = graphs_d3([sbm([6, 6, 6], 4)], REFERENCES[:1]).samples[0]
    assert s.gcn is not None and s.value is not None
    assert s.value == pytest.approx(0.5 * s.grassmann + 0.15 * s.gcn + 0.35 * s.mmd)
    assert s.mmd == pytest.approx(1 / (1 + s.mmd_distance))


def test_grassmann_of_vertex_transitive_graphs() -> None:
    c = spectral_features(nx.cycle_graph(10))
    k = spectral_features(nx.complete_graph(6))
    other = spectral_features(REFERENCES[0])
    assert grassmann_coherence(c, k) == 1.0  # both without an image in the descriptor frame
    assert grassmann_coherence(c, other) == 0.0
    assert grassmann_coherence(other, c) == 0.0


def test_grassmann_and_mmd_are_symmetric() -> None:
    a, b = spectral_features(REFERENCES[0]), spectral_features(REFERENCES[1])
    assert grassmann_coherence(a, b) == pytest.approx(grassmann_coherence(b, a), abs=1e-15)
    assert embedding_mmd(a, b) == pytest.approx(embedding_mmd(b, a), abs=1e-15)


def test_mmd_matches_the_formula_by_hand() -> None:
    a, b = spectral_features(nx.path_graph(3)), spectral_features(nx.star_graph(3))
    x, y, s2 = a.hks, b.hks, 2 * 0.1**2

    def k(p: np.ndarray, q: np.ndarray) -> float:
        return math.exp(-float(np.sum((p - q) ** 2)) / s2)

    def mean(ps: np.ndarray, qs: np.ndarray) -> float:
        return sum(k(p, q) for p in ps for q in qs) / (len(ps) * len(qs))

    expected = math.sqrt(max(0.0, mean(x, x) + mean(y, y) - 2 * mean(x, y)))
    assert embedding_mmd(a, b) == pytest.approx(expected, rel=1e-12)


def test_heat_kernel_signature_is_the_heat_kernel_diagonal() -> None:
    g = nx.relabel_nodes(nx.barabasi_albert_graph(12, 2, seed=2), str)
    f = spectral_features(g)
    lam, vec = np.linalg.eigh(nx.normalized_laplacian_matrix(
        nx.from_numpy_array(f.canonical.adjacency.astype(float))).toarray())
    for j, t in enumerate((0.5, 1.0, 2.0, 4.0)):
        full = (vec**2) @ np.exp(-t * lam)
        null = (vec[:, lam < 1e-9] ** 2).sum(axis=1)
        assert np.allclose(f.hks[:, j], full - null, atol=1e-12)


def test_greedy_modularity_finds_two_cliques_and_ranks_by_size() -> None:
    g = nx.disjoint_union(nx.complete_graph(6), nx.complete_graph(4))
    g.add_edge(0, 6)
    labels = greedy_modularity(undirected_adjacency(g)[1])
    assert list(labels) == [0] * 6 + [1] * 4
    assert list(greedy_modularity(np.zeros((3, 3), dtype=bool))) == [0, 1, 2]


def test_greedy_modularity_agrees_with_networkx_modularity() -> None:
    rng = random.Random(2)
    for _ in range(20):
        g = nx.gnp_random_graph(rng.randint(8, 40), 0.15, seed=rng.randrange(10**6))
        if g.number_of_edges() == 0:
            continue
        nodes, a = undirected_adjacency(g)
        lab = greedy_modularity(a)
        mine = [{nodes[i] for i in np.nonzero(lab == c)[0]} for c in range(lab.max() + 1)]
        theirs = nx.community.greedy_modularity_communities(g)
        q_mine = nx.community.modularity(g, mine)
        q_nx = nx.community.modularity(g, theirs)
        assert q_mine == pytest.approx(q_nx, abs=0.05)  # same algorithm, tie-breaking differs


# -- absences and degenerate inputs ----------------------------------------------------------------

def test_small_reference_makes_gcn_not_applicable_and_renormalizes() -> None:
    small = nx.relabel_nodes(nx.cycle_graph(6), str)
    s = graphs_d3([small], [nx.relabel_nodes(nx.path_graph(6), str)]).samples[0]
    assert s.gcn is None and "gcn" in s.not_applicable and not s.unavailable
    assert s.value == pytest.approx((0.5 * s.grassmann + 0.35 * s.mmd) / 0.85)


def test_without_torch_the_gcn_part_is_computed_on_the_cpu(
        monkeypatch: pytest.MonkeyPatch) -> None:
    expected = graphs_d3([sbm([6, 6, 6], 9)], REFERENCES[:1])
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "torch_geometric", None)
    res = graphs_d3([sbm([6, 6, 6], 9)], REFERENCES[:1])
    assert res.gcn is not None and not res.unavailable and res == expected


@pytest.mark.torch
def test_cuda_without_cuda_raises_instead_of_scoring() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    cuda = D3Config(gcn_config=gcn.GcnConfig(device="cuda"))
    with pytest.raises(gcn.GcnDeviceError, match="CUDA is not available"):
        graphs_d3([sbm([6, 6, 6], 9)], REFERENCES[:1], cuda)


def test_disabled_gcn_is_absent_not_replaced() -> None:
    res = graphs_d3([sbm([6, 6, 6], 9)], REFERENCES[:1], NO_GCN)
    assert res.value is None and res.gcn is None
    assert res.renormalized is not None and "disabled" in res.unavailable["gcn"]


def test_a_sample_above_the_gcn_edge_limit_gets_no_gcn_training(
        monkeypatch: pytest.MonkeyPatch) -> None:
    big, small = sbm([6, 6, 6], 9), sbm([5, 5], 3)
    limit = small.number_of_edges()
    assert big.number_of_edges() > limit
    trained: list[int] = []
    real = gcn.soft_accuracies

    def counting(tasks: Any, config: Any) -> Any:
        trained.extend(t.train_graph.n for t in tasks if t.train_key[0] == "B")
        return real(tasks, config)

    monkeypatch.setattr(d3.gcn_mod, "soft_accuracies", counting)
    res = graphs_d3([big, small], REFERENCES[:1], D3Config(gcn_max_edges=limit))
    over, under = res.samples
    assert trained == [small.number_of_nodes()]  # no model trained on the big sample
    assert over.value is None and over.gcn is None
    assert over.unavailable["gcn"] == (f"not computed: answer too large "
                                       f"({big.number_of_edges()} edges > {limit})")
    assert res.value is None
    assert res.reason == (f"a part could not be computed: gcn: not computed: answer too large "
                          f"({big.number_of_edges()} edges > {limit})")  # said once, part named
    assert under.value is not None and under.gcn is not None  # at the limit: computed
    alone = graphs_d3([small], REFERENCES[:1]).samples[0]
    assert under.value == alone.value  # the limit changes nothing below it


def test_degenerate_samples_score_zero() -> None:
    lone = nx.Graph()
    lone.add_node("a")
    edgeless = nx.Graph()
    edgeless.add_nodes_from("abc")
    res = graphs_d3([lone, edgeless], REFERENCES[:1])
    for s in res.samples:
        assert (s.value, s.grassmann, s.mmd, s.gcn) == (0.0, 0.0, 0.0, 0.0)
        assert s.note and "degenerate" in s.note


def test_no_usable_reference_is_absent() -> None:
    res = graphs_d3([REFERENCES[0]], [nx.Graph()])
    assert res.value is None and res.renormalized is None and "reference" in (res.reason or "")
    assert graphs_d3([REFERENCES[0]], []).reason == "no reference"


def test_no_valid_sample_scores_zero() -> None:
    res = graphs_d3([], REFERENCES)
    assert (res.value, res.n_valid, res.reason) == (0.0, 0, "no valid sample")


# -- determinism, batching, threads ---------------------------------------------------------------

def test_same_inputs_give_bit_identical_outputs() -> None:
    gens = [sbm([5, 6, 7], s) for s in range(3)]
    a = graphs_d3(gens, REFERENCES)
    d3.clear_caches()
    b = graphs_d3(gens, REFERENCES)
    assert a == b


def test_batched_and_single_calls_agree_bit_for_bit() -> None:
    sets = [([sbm([5, 6, 7], s)], REFERENCES) for s in range(3)] + [([REFERENCES[1]], REFERENCES)]
    batched = graph_sets_d3(sets)
    d3.clear_caches()
    assert batched == [graphs_d3(g, r) for g, r in sets]


_SUBPROCESS = """
import json, networkx as nx
from pytest_graphinstruct.score.d3 import graphs_d3
from tests.score._d3graphs import REFERENCES
gen = nx.relabel_nodes(nx.barabasi_albert_graph(15, 2, seed=4), str)
s = graphs_d3([gen], REFERENCES).samples[0]
print(json.dumps([s.value.hex(), s.grassmann.hex(), s.mmd.hex(), s.gcn.hex()]))
"""


@pytest.mark.slow
def test_outputs_are_identical_across_processes() -> None:
    out = subprocess.run([sys.executable, "-c", _SUBPROCESS], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    d3.clear_caches()
    gen = nx.relabel_nodes(nx.barabasi_albert_graph(15, 2, seed=4), str)
    s = graphs_d3([gen], REFERENCES).samples[0]
    assert s.value is not None and s.gcn is not None
    assert json.loads(out) == [s.value.hex(), s.grassmann.hex(), s.mmd.hex(), s.gcn.hex()]


# -- instruction level -----------------------------------------------------------------------------

V = Verifier()


def _code(g: nx.Graph, name: str) -> str:
    nodes = ", ".join(f"'{v}'" for v in g.nodes())
    edges = ", ".join(f"('{u}','{v}')" for u, v in g.edges())
    return (f"Graph[name='{name}', nodes={g.number_of_nodes()}] {{ node_list = [{nodes}]; "
            f"edge_list = [{edges}]; }}")


def _instruction(level: int, refs: list[nx.Graph], **over: Any) -> Any:
    rec: dict[str, Any] = {
        "id": f"L{level}-001", "level": level, "instruction": "Generate a graph.",
        "explicit_constraints": [f"num_nodes={refs[0].number_of_nodes()}"],
        "implicit_constraints": [],
        "reference_solutions": [_code(r, f"ref{i}") for i, r in enumerate(refs)],
    }
    rec.update(over)
    inst = instruction_from_record(rec)
    assert inst is not None
    return inst


def test_instruction_level_scores_valid_samples_only() -> None:
    inst = _instruction(3, REFERENCES[:1])
    good = V.verify(inst, _code(relabelled(REFERENCES[0], random.Random(3), directed=False), "a"))
    garbage = V.verify(inst, "no graph here")
    res = instruction_d3(inst, [good, garbage])
    assert res.n_valid == 1 and res.samples[0].grassmann == 1.0
    assert res.value == graphs_d3([REFERENCES[0]], REFERENCES[:1]).value


def test_instruction_level_absences() -> None:
    assert instruction_d3(_instruction(2, REFERENCES[:1]), []).reason == "D3 is not active at L2"
    inf = _instruction(3, REFERENCES[:1], feasible=False, reference_solutions=[])
    assert instruction_d3(inf, []).value is None


@pytest.mark.slow
@pytest.mark.official
def test_official_references_score_one_against_themselves() -> None:
    if not OFFICIAL.exists():
        pytest.skip("official suite not available")
    from pytest_graphinstruct.suite.loader import load_suite

    suite = load_suite(OFFICIAL, levels=[3, 4, 5])
    sets = [([r.graph for r in inst.reference_graphs], [r.graph for r in inst.reference_graphs])
            for inst in suite]
    for res in graph_sets_d3(sets, NO_GCN):
        for s in res.samples:
            assert s.exact and s.grassmann == 1.0 and s.mmd == 1.0
