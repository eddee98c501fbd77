"""score.gcn_torch: the torch trainer (the GPU's) — its layers are GCNConv's, its Adam is
torch.optim.Adam's, and on the CPU it gives the NumPy trainer's numbers to float32 rounding."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_graphinstruct.score import gcn, gcn_cpu, gcn_torch
from pytest_graphinstruct.score.embedding import spectral_features
from tests.gpu_extra import require_torch
from tests.score._d3graphs import REFERENCES
from tests.score.test_gcn import FAST, TWO_TRIANGLES, _task, _tiny

pytestmark = pytest.mark.torch
require_torch()  # the whole module: skips (or fails under GI_REQUIRE_TORCH=1) at collection

import torch  # noqa: E402


def _both(tasks: list[gcn.GcnTask], config: gcn.GcnConfig,
          adam: type | None = None, monkeypatch: pytest.MonkeyPatch | None = None
          ) -> tuple[list[float], list[float]]:
    """Each task's soft accuracy from the torch trainer (on the CPU) and the NumPy one."""
    width = max(gcn.class_width(t.num_classes) for t in tasks)
    bank = gcn._mask_bank(max(gcn_cpu.padded_size(t.train_graph.n) for t in tasks), config)
    nfeat = tasks[0].train_graph.features.shape[1]
    initial = [gcn._initial_weights(nfeat, t.num_classes, width, config) for t in tasks]
    if adam is not None and monkeypatch is not None:
        monkeypatch.setattr(gcn_torch, "_Adam", adam)
    with gcn_torch.single_thread(torch):
        t = gcn_torch.run_group([[x] for x in tasks], width, config, bank, initial)
    n = gcn_cpu.run_group([[x] for x in tasks], width, config, bank, initial)
    return [v[0] for v in t], [v[0] for v in n]


def test_torch_and_numpy_trainers_agree_to_float32_rounding() -> None:
    tasks = [_task(s) for s in range(4)] + [
        _tiny(*TWO_TRIANGLES), _tiny([0, 1, 2, 0], [(0, 1), (1, 2), (2, 3)], num_classes=3)]
    tasks = [t for t in tasks if t.train_graph.features.shape[1] == 4]
    via_torch, via_numpy = _both(tasks, gcn.GcnConfig())
    assert np.max(np.abs(np.subtract(via_torch, via_numpy))) < 1e-6
    assert via_numpy == list(gcn.soft_accuracies(tasks).scores)


def test_one_hot_tasks_agree_too() -> None:
    tasks = [_tiny(*TWO_TRIANGLES), _tiny([0, 1, 2, 0], [(0, 1), (1, 2), (2, 3)],
                                          num_classes=3)]
    via_torch, via_numpy = _both(tasks, gcn.GcnConfig())
    assert np.max(np.abs(np.subtract(via_torch, via_numpy))) < 1e-6


def test_gcn_norm_is_the_numpy_normalized_adjacency() -> None:
    from torch_geometric.nn.conv.gcn_conv import gcn_norm

    f = spectral_features(REFERENCES[1])
    gg = gcn.gcn_graph(f.canonical.adjacency, f.node_features)
    edge_index, weight = gcn_norm(torch.from_numpy(gg.edges.copy()), None, gg.n,
                                  add_self_loops=True)
    rows, cols, vals = gcn_cpu.normalized_adjacency(gg)
    theirs = {(int(r), int(c)): float(w) for (r, c), w in
              zip(edge_index.T.tolist(), weight.tolist(), strict=True)}
    ours = {(int(r), int(c)): float(w) for r, c, w in zip(rows, cols, vals, strict=True)}
    assert ours.keys() == theirs.keys()
    assert max(abs(ours[k] - theirs[k]) for k in ours) < 1e-7


def test_gcn_layers_match_torch_geometric_gcnconv() -> None:
    import torch_geometric.nn as pyg
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
    ax = gcn_torch._propagate(torch, x, edge_index, weight)
    got = gcn_torch._forward(torch, params, ax, owner, edge_index, weight, None)
    assert torch.allclose(got, expected, atol=1e-5)
    numpy_params = [p.numpy()[:, None] if p.dim() == 2 else p.numpy() for p in params]
    x3, adj = gcn_cpu._block([gg], gcn_cpu.padded_size(gg.n))
    z2, _, _ = gcn_cpu._forward(numpy_params, gcn_cpu._spmm(adj, x3), adj,
                                np.zeros((1, 1, 3), dtype=np.float32), None)
    assert np.allclose(z2[0, :gg.n], expected.detach().numpy(), atol=1e-5)




def test_single_thread_restores_the_setting_after_an_error() -> None:
    before = torch.get_num_threads()
    with pytest.raises(KeyError), gcn_torch.single_thread(torch):
        assert torch.get_num_threads() == 1
        raise KeyError("boom")
    assert torch.get_num_threads() == before


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
    gen = torch.Generator().manual_seed(0)
    shapes = [(3, 5, 16), (3, 16), (3, 16, 8), (3, 8)]
    ours = [torch.randn(s, generator=gen).requires_grad_(True) for s in shapes]
    theirs = [p.detach().clone().requires_grad_(True) for p in ours]
    initial = [p.detach().clone() for p in ours]
    config = gcn.GcnConfig()
    mine, reference = gcn_torch._Adam(torch, ours, config), _TorchOptimAdam(torch, theirs, config)
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
    tasks = [_task(1), _task(2), _task(3)]
    ours, _ = _both(tasks, FAST)
    theirs, _ = _both(tasks, FAST, _TorchOptimAdam, monkeypatch)
    assert theirs == ours
