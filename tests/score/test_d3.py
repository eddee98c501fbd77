"""D3: invariance under relabelling/reordering, hand cases, absences, determinism, GCN path."""

from __future__ import annotations

import fcntl
import itertools
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

from pytest_graphinstruct.kernels import blas
from pytest_graphinstruct.score import d3, gcn
from pytest_graphinstruct.score.canon import canonical_form, canonical_graph, undirected_adjacency
from pytest_graphinstruct.score.d3 import D3Config, graph_sets_d3, graphs_d3, instruction_d3
from pytest_graphinstruct.score.embedding import (
    embedding_mmd,
    grassmann_coherence,
    greedy_modularity,
    spectral_features,
)
from pytest_graphinstruct.score.gpu_lock import gpu_lock
from pytest_graphinstruct.suite.loader import instruction_from_record
from pytest_graphinstruct.verify.verifier import Verifier

ROOT = Path(__file__).resolve().parents[2]
OFFICIAL = ROOT.parent / "shared" / "official-suite" / "instructions"
NO_GCN = D3Config(gcn=False)


# -- helpers --------------------------------------------------------------------------------------

def relabelled(g: nx.Graph, rng: random.Random, *, directed: bool | None = None) -> nx.Graph:
    """A copy with fresh string ids, shuffled node and edge insertion order, shuffled endpoints."""
    nodes = list(g.nodes())
    rng.shuffle(nodes)
    names = {v: f"{rng.choice('abcxyz')}{rng.randrange(10**9)}_{i}" for i, v in enumerate(nodes)}
    is_directed = g.is_directed() if directed is None else directed
    out = nx.DiGraph() if is_directed else nx.Graph()
    out.graph.update(g.graph)
    out.add_nodes_from((names[v], dict(g.nodes[v])) for v in nodes)
    edges = list(g.edges())
    rng.shuffle(edges)
    for u, v in edges:
        if not g.is_directed() and rng.random() < 0.5:
            u, v = v, u
        out.add_edge(names[u], names[v])
    return out


@st.composite
def graphs(draw: Any, min_nodes: int = 2, max_nodes: int = 13) -> nx.Graph:
    n = draw(st.integers(min_nodes, max_nodes))
    pairs = list(itertools.combinations(range(n), 2))
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))
                  if pairs else st.just([]))
    g = nx.Graph()
    g.add_nodes_from(str(i) for i in range(n))
    g.add_edges_from((str(u), str(v)) for u, v in chosen)
    return g


def sbm(sizes: list[int], seed: int) -> nx.Graph:
    k = len(sizes)
    p = [[0.7 if i == j else 0.05 for j in range(k)] for i in range(k)]
    g = nx.stochastic_block_model(sizes, p, seed=seed)
    return nx.relabel_nodes(nx.Graph(g), {v: str(v) for v in g})


REFERENCES = [sbm([7, 7, 6], 1), nx.relabel_nodes(nx.barabasi_albert_graph(16, 2, seed=3), str)]


def parts(s: d3.D3Sample) -> tuple[Any, ...]:
    return (s.value, s.renormalized, s.grassmann, s.mmd, s.mmd_distance, s.gcn, s.reference)


# -- canonical form -------------------------------------------------------------------------------

FAMILIES = {
    "cycle": lambda r: nx.cycle_graph(r.randint(3, 30)),
    "complete": lambda r: nx.complete_graph(r.randint(1, 25)),
    "star": lambda r: nx.star_graph(r.randint(1, 40)),
    "grid": lambda r: nx.grid_2d_graph(r.randint(1, 6), r.randint(1, 6)),
    "petersen": lambda r: nx.petersen_graph(),
    "hypercube": lambda r: nx.hypercube_graph(r.randint(1, 4)),
    "matching": lambda r: nx.disjoint_union_all([nx.path_graph(2)] * r.randint(1, 20)),
    "c6+2c3": lambda r: nx.disjoint_union_all([nx.cycle_graph(6), nx.cycle_graph(3),
                                              nx.cycle_graph(3)]),
    "3-regular": lambda r: nx.random_regular_graph(3, 2 * r.randint(2, 15),
                                                   seed=r.randrange(10**6)),
    "k_mn": lambda r: nx.complete_bipartite_graph(r.randint(1, 8), r.randint(1, 8)),
    "tree": lambda r: nx.random_labeled_tree(r.randint(1, 40), seed=r.randrange(10**6)),
    "rook4x4": lambda r: nx.cartesian_product(nx.complete_graph(4), nx.complete_graph(4)),
    "paley13": lambda r: nx.Graph(nx.paley_graph(13)),
    "ws": lambda r: nx.watts_strogatz_graph(r.randint(8, 40), 4, 0.1, seed=r.randrange(10**6)),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_canonical_form_is_invariant_on_symmetric_families(family: str, seed: int) -> None:
    rng = random.Random(seed)
    g = nx.Graph(FAMILIES[family](rng))
    base = canonical_graph(g)
    assert base.exact
    for _ in range(3):
        other = canonical_graph(relabelled(g, rng))
        assert other.certificate == base.certificate
        assert np.array_equal(other.adjacency, base.adjacency)


@pytest.mark.slow
def test_canonical_certificate_decides_isomorphism_on_small_graphs() -> None:
    rng = random.Random(5)
    for _ in range(800):
        n = rng.randint(1, 7)
        a = nx.gnp_random_graph(n, rng.random(), seed=rng.randrange(10**6))
        b = nx.gnp_random_graph(n, rng.random(), seed=rng.randrange(10**6))
        same = canonical_graph(a).certificate == canonical_graph(b).certificate
        assert same == nx.is_isomorphic(a, b)


def test_canonical_form_uses_the_undirected_simple_view() -> None:
    d = nx.DiGraph([("a", "b"), ("b", "a"), ("b", "c"), ("c", "c")])
    u = nx.Graph([("x", "y"), ("y", "z")])
    assert canonical_graph(d).certificate == canonical_graph(u).certificate
    with pytest.raises(ValueError):
        canonical_form(np.array([[0, 1], [0, 0]], dtype=bool))


def test_canonical_budget_is_reported() -> None:
    g = nx.random_regular_graph(3, 40, seed=1)
    tight = canonical_graph(g, max_leaves=2)
    assert not tight.exact and tight.leaves <= 2
    assert canonical_graph(g).exact


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


def test_missing_torch_makes_gcn_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch_geometric", None)
    assert gcn.unavailable_reason() is not None
    res = graphs_d3([sbm([6, 6, 6], 9)], REFERENCES[:1])
    s = res.samples[0]
    assert s.value is None and s.gcn is None and "gcn" in s.unavailable
    assert s.renormalized == pytest.approx((0.5 * s.grassmann + 0.35 * s.mmd) / 0.85)
    assert res.value is None and res.renormalized == s.renormalized
    assert "torch" in (res.reason or "")


def test_missing_torch_entirely(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    res = graphs_d3([sbm([6, 6, 6], 9)], REFERENCES[:1])
    assert res.value is None and "gcn" in res.unavailable


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
from tests.score.test_d3 import REFERENCES
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


def _task(seed: int) -> gcn.GcnTask:
    g = spectral_features(sbm([6, 6, 6], seed))
    r = spectral_features(REFERENCES[0])
    c = int(r.communities.max()) + 1
    return gcn.GcnTask(gcn.gcn_graph(g.canonical.adjacency, g.node_features),
                       np.minimum(g.communities, c - 1), np.arange(g.n),
                       gcn.gcn_graph(r.canonical.adjacency, r.node_features), r.communities,
                       np.arange(0, r.n, 5), c)


def test_gcn_runs_on_one_thread_and_restores_the_setting() -> None:
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    run = gcn.soft_accuracies([_task(1), _task(2)])
    assert run.threads == 1 and run.device == "cpu"
    assert torch.get_num_threads() == before
    assert all(0.0 <= s <= 1.0 for s in run.scores)


@pytest.mark.slow
def test_gcn_is_deterministic_and_batch_independent() -> None:
    tasks = [_task(s) for s in range(4)]
    together = gcn.soft_accuracies(tasks).scores
    assert together == gcn.soft_accuracies(tasks).scores
    assert [gcn.soft_accuracies([t]).scores[0] for t in tasks] == list(together)


def test_auto_device_falls_back_to_cpu_without_cuda() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    run = gcn.soft_accuracies([_task(1)], gcn.GcnConfig(device="auto"))
    assert run.device == "cpu" and run.scores == gcn.soft_accuracies([_task(1)]).scores


def test_cuda_batch_agrees_with_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    monkeypatch.setenv("GRAPHINSTRUCT_GPU_LOCK", str(tmp_path / "gpu.lock"))
    tasks = [_task(s) for s in range(3)]
    gpu = gcn.soft_accuracies(tasks, gcn.GcnConfig(device="cuda"))
    assert gpu.device == "cuda"
    assert np.allclose(gpu.scores, gcn.soft_accuracies(tasks).scores, atol=1e-3)


def test_shared_training_key_trains_once_with_same_result() -> None:
    t = _task(3)
    keyed = gcn.GcnTask(t.train_graph, t.train_labels, t.train_nodes, t.eval_graph,
                        t.eval_labels, t.eval_nodes, t.num_classes, train_key="same")
    assert gcn.soft_accuracies([keyed, keyed]).scores == (gcn.soft_accuracies([t]).scores * 2)


def test_gcn_layers_match_torch_geometric_gcnconv() -> None:
    torch = pytest.importorskip("torch")
    pyg = pytest.importorskip("torch_geometric.nn")
    from torch_geometric.nn.conv.gcn_conv import gcn_norm

    f = spectral_features(REFERENCES[1])
    gg = gcn.gcn_graph(f.canonical.adjacency, f.node_features)
    torch.manual_seed(0)
    c1, c2 = pyg.GCNConv(4, 16), pyg.GCNConv(16, 3)
    with torch.no_grad():
        c1.bias.normal_()
        c2.bias.normal_()
    x, ei = torch.from_numpy(gg.features.copy()), torch.from_numpy(gg.edges.copy())
    expected = c2(torch.relu(c1(x, ei)), ei)
    params = [c1.lin.weight.detach().T[None].contiguous(), c1.bias.detach()[None],
              c2.lin.weight.detach().T[None].contiguous(), c2.bias.detach()[None]]
    edge_index, weight = gcn_norm(ei, None, gg.n, add_self_loops=True)
    owner = torch.zeros(gg.n, dtype=torch.long)
    ax = gcn._propagate(torch, x, edge_index, weight)
    got = gcn._forward(torch, params, ax, owner, edge_index, weight, None)
    assert torch.allclose(got, expected, atol=1e-5)


def test_blas_single_thread_is_restored() -> None:
    before = blas.blas_threads()
    with blas.single_blas_thread():
        if before is not None:
            assert blas.blas_threads() == 1
        with blas.single_blas_thread():
            pass
    assert blas.blas_threads() == before


def test_gpu_lock_excludes_other_processes(tmp_path: Path) -> None:
    path = tmp_path / "gpu.lock"
    probe = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR)\n"
             "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB); print('free')\n"
             "except BlockingIOError:\n    print('held')\n")
    with gpu_lock(path):
        held = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True,
                              text=True, check=True).stdout.strip()
    free = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True,
                          text=True, check=True).stdout.strip()
    assert (held, free) == ("held", "free")
    assert fcntl is not None


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
