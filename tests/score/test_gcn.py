"""score.gcn: the batched 2-layer GCNs (CPU, tiny graphs, fixed seeds)."""

from __future__ import annotations

import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from pytest_graphinstruct.score import gcn
from pytest_graphinstruct.score.embedding import spectral_features
from tests.score._d3graphs import REFERENCES, sbm

FAST = gcn.GcnConfig(epochs=5)


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




def _tiny(labels: list[int], edges: list[tuple[int, int]], *, key: object = None,
          num_classes: int = 2, eval_nodes: list[int] | None = None) -> gcn.GcnTask:
    """A task whose features are the one-hot labels (9 columns: every task of a batch has the
    same feature width): train and evaluate on the same graph."""
    n = len(labels)
    a = nx.to_numpy_array(nx.Graph(edges) if edges else nx.empty_graph(n),
                          nodelist=range(n), dtype=bool)
    feats = np.eye(9, dtype=np.float32)[labels]
    g = gcn.gcn_graph(a, feats)
    y = np.array(labels, dtype=np.int64)
    ev = np.arange(n) if eval_nodes is None else np.array(eval_nodes, dtype=np.int64)
    return gcn.GcnTask(g, y, np.arange(n), g, y, ev, num_classes, train_key=key)


TWO_TRIANGLES = ([0, 0, 0, 1, 1, 1], [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)])


def test_gcn_graph_lists_both_directions_in_row_major_order() -> None:
    a = nx.to_numpy_array(nx.path_graph(3), dtype=bool)
    g = gcn.gcn_graph(a, np.ones((3, 2)))
    assert g.edges.dtype == np.int64 and g.edges.tolist() == [[0, 1, 1, 2], [1, 0, 2, 1]]
    assert g.features.dtype == np.float32 and g.features.flags["C_CONTIGUOUS"]
    assert g.n == 3


@pytest.mark.parametrize(("classes", "width"), [(1, 8), (2, 8), (8, 8), (9, 16), (16, 16),
                                                (17, 32)])
def test_class_width_is_the_next_power_of_two_at_least_eight(classes: int, width: int) -> None:
    assert gcn.class_width(classes) == width


def test_chunks_split_at_the_node_budget_and_keep_every_model(
        monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = [_tiny(*TWO_TRIANGLES) for _ in range(5)]  # 6 + 6 nodes per model
    monkeypatch.setattr(gcn, "MAX_BATCH_NODES", 25)
    chunks = list(gcn._chunks([[0], [1], [2], [3], [4]], tasks))
    assert chunks == [[[0], [1]], [[2], [3]], [[4]]]
    monkeypatch.setattr(gcn, "MAX_BATCH_NODES", 5)  # one model over the budget still runs
    assert list(gcn._chunks([[0], [1]], tasks)) == [[[0]], [[1]]]


def test_no_tasks_give_no_scores() -> None:
    assert gcn.soft_accuracies([], FAST).scores == ()


def test_a_separable_task_is_learned() -> None:
    """Features that equal the labels: the soft accuracy rises well above chance."""
    run = gcn.soft_accuracies([_tiny(*TWO_TRIANGLES)])
    assert run.scores[0] > 0.8


def test_scores_are_probabilities_and_repeat_bit_for_bit() -> None:
    tasks = [_tiny(*TWO_TRIANGLES), _tiny([0, 1, 2, 0], [(0, 1), (1, 2), (2, 3)],
                                          num_classes=3)]
    first = gcn.soft_accuracies(tasks, FAST).scores
    assert all(0.0 <= s <= 1.0 for s in first)
    assert gcn.soft_accuracies(tasks, FAST).scores == first


def test_a_task_scores_the_same_alone_and_beside_other_widths() -> None:
    wide = _tiny(list(range(9)), [(i, i + 1) for i in range(8)], num_classes=9)
    narrow = _tiny(*TWO_TRIANGLES)
    together = gcn.soft_accuracies([narrow, wide], FAST).scores
    assert together == (gcn.soft_accuracies([narrow], FAST).scores[0],
                        gcn.soft_accuracies([wide], FAST).scores[0])


def test_no_evaluation_nodes_score_zero() -> None:
    assert gcn.soft_accuracies([_tiny(*TWO_TRIANGLES, eval_nodes=[])], FAST).scores == (0.0,)


def test_single_thread_restores_the_setting_after_an_error() -> None:
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    with pytest.raises(KeyError), gcn.single_thread(torch):
        assert torch.get_num_threads() == 1
        raise KeyError("boom")
    assert torch.get_num_threads() == before


def test_unavailable_reason_names_the_missing_package(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch_geometric")
    assert gcn.unavailable_reason() is None
    monkeypatch.setitem(sys.modules, "torch_geometric", None)
    reason = gcn.unavailable_reason()
    assert reason is not None and reason.startswith("torch/torch_geometric not importable")
    with pytest.raises(ImportError):
        gcn.soft_accuracies([_tiny(*TWO_TRIANGLES)], FAST)


class _TorchOptimAdam:
    """torch.optim.Adam as the GCN configured it before its own Adam: the reference."""

    def __init__(self, torch: object, params: list[object], config: gcn.GcnConfig) -> None:
        import torch as t

        self._opt = t.optim.Adam(params, lr=config.lr, weight_decay=config.weight_decay,
                                 foreach=True)

    def zero_grad(self) -> None:
        self._opt.zero_grad()

    def step(self) -> None:
        self._opt.step()


def test_adam_updates_are_torch_optim_adams_bit_for_bit() -> None:
    torch = pytest.importorskip("torch")
    gen = torch.Generator().manual_seed(0)
    shapes = [(3, 5, 16), (3, 16), (3, 16, 8), (3, 8)]
    ours = [torch.randn(s, generator=gen).requires_grad_(True) for s in shapes]
    theirs = [p.detach().clone().requires_grad_(True) for p in ours]
    initial = [p.detach().clone() for p in ours]
    config = gcn.GcnConfig()
    mine, reference = gcn._Adam(torch, ours, config), _TorchOptimAdam(torch, theirs, config)
    for _ in range(7):
        grads = [torch.randn(s, generator=gen) for s in shapes]
        for opt, params in ((mine, ours), (reference, theirs)):
            opt.zero_grad()
            sum((p * g).sum() for p, g in zip(params, grads, strict=True)).backward()
            opt.step()
    assert not any(torch.equal(a, b) for a, b in zip(ours, initial, strict=True))
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs, strict=True))


def test_scores_are_those_of_torch_optim_adam_bit_for_bit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch_geometric")
    tasks = [_task(1), _task(2), _task(3)]
    ours = gcn.soft_accuracies(tasks, FAST).scores
    monkeypatch.setattr(gcn, "_Adam", _TorchOptimAdam)
    assert gcn.soft_accuracies(tasks, FAST).scores == ours
