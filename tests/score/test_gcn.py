"""score.gcn: the batched 2-layer GCNs — the device choice and the CPU trainer's promises
(tiny graphs, fixed seeds)."""

from __future__ import annotations

import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from pytest_graphinstruct.score import gcn
from pytest_graphinstruct.score.embedding import spectral_features
from pytest_graphinstruct.score.gcn_device import GcnDeviceError, resolve_device
from tests.fresh_python import fresh_python
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


@pytest.mark.slow
def test_gcn_is_deterministic_and_batch_independent() -> None:
    tasks = [_task(s) for s in range(4)]
    together = gcn.soft_accuracies(tasks).scores
    assert together == gcn.soft_accuracies(tasks).scores
    assert [gcn.soft_accuracies([t]).scores[0] for t in tasks] == list(together)


def test_the_cpu_trains_on_one_thread_without_torch() -> None:
    code = ("import sys\n"
            "from tests.score.test_gcn import _task\n"
            "from pytest_graphinstruct.score import gcn\n"
            "run = gcn.soft_accuracies([_task(1), _task(2)])\n"
            "assert run.threads == 1 and run.device == 'cpu', run\n"
            "assert all(0.0 <= s <= 1.0 for s in run.scores), run\n"
            "print('torch' in sys.modules)\n")
    out = fresh_python(code, cwd=Path(__file__).resolve().parents[2])
    assert out.split() == ["False"]


@pytest.mark.torch
def test_auto_device_falls_back_to_cpu_without_cuda() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    run = gcn.soft_accuracies([_task(1)], gcn.GcnConfig(device="auto"))
    assert run.device == "cpu" and run.scores == gcn.soft_accuracies([_task(1)]).scores


@pytest.mark.torch
def test_cuda_without_cuda_is_a_clear_error() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    with pytest.raises(GcnDeviceError, match=r"CUDA is not available.*--gi-d3-device=cpu"):
        gcn.soft_accuracies([_task(1)], gcn.GcnConfig(device="cuda"))
    reason = gcn.unavailable_reason("cuda")
    assert reason is not None and "CUDA is not available" in reason


def test_without_torch_the_cpu_trains_and_cuda_says_what_is_missing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # hidden whether or not they are installed: the default install has neither
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "torch_geometric", None)
    assert gcn.unavailable_reason() is None
    assert gcn.soft_accuracies([_tiny(*TWO_TRIANGLES)], FAST).device == "cpu"
    assert gcn.unavailable_reason("cuda") == (
        "D3 on cuda needs the [gpu] extra: pip install 'pytest-graphinstruct[gpu]' "
        "(torch is not installed)")
    with pytest.raises(GcnDeviceError, match=r"needs the \[gpu\] extra"):
        gcn.soft_accuracies([_tiny(*TWO_TRIANGLES)], gcn.GcnConfig(epochs=5, device="cuda"))
    assert gcn.soft_accuracies([_tiny(*TWO_TRIANGLES)], gcn.GcnConfig(
        epochs=5, device="auto")).device == "cpu"
    assert resolve_device("auto") == "cpu"


@pytest.mark.torch
def test_cuda_batch_agrees_with_cpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

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


