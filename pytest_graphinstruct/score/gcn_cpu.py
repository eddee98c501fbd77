"""D3's GCN training on the CPU in NumPy: the model of :mod:`.gcn`, its gradients by hand.

The same model, loss and optimizer as the torch trainer (:mod:`.gcn_torch`) — two
``GCNConv`` layers (``Â·X·W1 + b1`` → ReLU → dropout → ``Â·(H·W2) + b2``), masked
cross-entropy averaged per model, Adam with weight decay as ``torch.optim.Adam`` — in float32,
with the backward pass written out::

    G    = (softmax(Z2) − onehot(y)) · w        (w = 1/|train| on training nodes, else 0)
    dW2  = Hᵀ·(Â·G)       db2 = Σ G
    dZ1  = (Â·G)·W2ᵀ ⊙ keep ⊙ [Z1 > 0]
    dW1  = (Â·X)ᵀ·dZ1     db1 = Σ dZ1

(``Â`` is symmetric, so ``Âᵀ = Â``.)  Why not torch: a process that scores D3 on the CPU then
never imports torch (2–3 s of every process's start, every xdist worker's included), and
an epoch is a few dozen array operations over all models of a batch, without autograd's
bookkeeping.

Layout: every model's graph is padded to :func:`padded_size` rows (the next power of two, at
least 16), and models of one padded size train as one ``(models, rows, ·)`` stack: the dense
products are per-model ``matmul`` slices of one shape, and ``Â`` is one block-diagonal sparse
matrix whose rows each sum their own graph's entries in column order.  A model's arithmetic
therefore depends on its own graph and padded size only, never on the other models of its
batch: results repeat bit for bit, alone or batched (tested).  Padding rows have no edges, no
loss weight and zero features, so they carry no gradient.

Against the torch trainer the soft accuracies agree to float32 rounding (the sums run in a
different order): the tests hold the two within 1e-6 per task, and on the official references
scored as answers an item's GCN part moved by at most 8.2e-8 (docs/SCORING.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from pytest_graphinstruct.score.gcn import GcnConfig, GcnGraph, GcnTask

BETAS = (0.9, 0.999)  # torch.optim.Adam's defaults
EPS = 1e-8
MIN_ROWS = 16


def padded_size(n: int) -> int:
    """The rows a graph of ``n`` nodes is padded to: the next power of two, at least 16."""
    return max(MIN_ROWS, 1 << max(0, n - 1).bit_length())


def normalized_adjacency(graph: GcnGraph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``Â = D̂^-1/2 (A + I) D̂^-1/2`` as (rows, cols, float32 weights), self-loops last —
    ``torch_geometric``'s ``gcn_norm`` with ``add_self_loops=True``."""
    n = graph.n
    src, dst = graph.edges
    rows = np.concatenate([src, np.arange(n)])
    cols = np.concatenate([dst, np.arange(n)])
    deg = np.bincount(cols, minlength=n).astype(np.float32)
    dis = deg ** np.float32(-0.5)
    return rows, cols, (dis[rows] * dis[cols]).astype(np.float32)


def _block(graphs: Sequence[GcnGraph], size: int) -> tuple[np.ndarray, sp.csr_matrix]:
    """Padded features ``(len(graphs), size, F)`` and the block-diagonal ``Â``."""
    count = len(graphs)
    nfeat = graphs[0].features.shape[1]
    x = np.zeros((count, size, nfeat), dtype=np.float32)
    rows, cols, vals = [], [], []
    for k, g in enumerate(graphs):
        x[k, :g.n] = g.features
        r, c, w = normalized_adjacency(g)
        rows.append(r + k * size)
        cols.append(c + k * size)
        vals.append(w)
    adj = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                        shape=(count * size, count * size), dtype=np.float32)
    adj.sort_indices()
    return x, adj


def _spmm(adj: sp.csr_matrix, h: np.ndarray) -> np.ndarray:
    """``Â·h`` for a stack ``h`` of shape ``(models, rows, k)``."""
    m, s, k = h.shape
    return np.asarray(adj @ h.reshape(m * s, k), dtype=np.float32).reshape(m, s, k)


def _softmax(z: np.ndarray) -> np.ndarray:
    # the row maximum column by column: the same values as z.max(axis=2), 2× faster for the
    # few (≥ 8) classes — a reduction over a short last axis loops row by row
    top = z[..., 0].copy()
    for c in range(1, z.shape[2]):
        np.maximum(top, z[..., c], out=top)
    e = np.exp(z - top[..., None])
    out: np.ndarray = e / e.sum(axis=2, keepdims=True)
    return out


class _Adam:
    """``torch.optim.Adam(lr, weight_decay)`` (foreach form) on one flat float32 array holding
    every parameter (element-wise, so one update of the whole array is each parameter's)."""

    def __init__(self, params: np.ndarray, config: GcnConfig) -> None:
        self.params = params
        self.m = np.zeros_like(params)
        self.v = np.zeros_like(params)
        self.lr = config.lr
        self.wd = np.float32(config.weight_decay)
        self.t = 0

    def step(self, grad: np.ndarray) -> None:
        """One update from ``grad`` (the flat gradient; overwritten)."""
        self.t += 1
        b1, b2 = BETAS
        step_size = np.float32(self.lr / (1 - b1 ** self.t))
        bc2_sqrt = np.float32((1 - b2 ** self.t) ** 0.5)
        p, m, v = self.params, self.m, self.v
        g = grad
        g += self.wd * p
        m += (g - m) * np.float32(1 - b1)
        v *= np.float32(b2)
        v += np.float32(1 - b2) * g * g
        denom = np.sqrt(v)
        denom /= bc2_sqrt
        denom += np.float32(EPS)
        p -= step_size * (m / denom)


def _forward(params: list[np.ndarray], ax: np.ndarray, adj: sp.csr_matrix,
             col_mask: np.ndarray, keep: np.ndarray | None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Logits (padding classes at −∞), the hidden layer and its ReLU mask."""
    w1, b1, w2, b2 = params
    z1 = ax @ w1 + b1
    active = z1 > 0
    h = np.where(active, z1, np.float32(0))
    if keep is not None:
        h *= keep
    z2 = _spmm(adj, h @ w2) + b2 + col_mask
    return z2, h, active


def run_group(models: list[list[GcnTask]], width: int, config: GcnConfig,
              mask_bank: np.ndarray, initial: list[tuple[np.ndarray, np.ndarray]]
              ) -> list[list[float]]:
    """Train one model per entry of ``models`` (its tasks share the training data; all have
    ``width`` padded classes) and return each task's soft accuracy, per model.

    ``mask_bank[i, epoch]`` is the dropout keep-mask of a graph's ``i``-th node;
    ``initial[k]`` the initial ``(W1, W2)`` of model ``k``.
    """
    out: list[list[float]] = [[0.0] * len(m) for m in models]
    by_size: dict[int, list[int]] = {}
    for k, m in enumerate(models):
        by_size.setdefault(padded_size(m[0].train_graph.n), []).append(k)
    trained: list[list[np.ndarray]] = [[] for _ in models]
    for size, members in sorted(by_size.items()):
        params = _train([models[k][0] for k in members], size, width, config, mask_bank,
                        [initial[k] for k in members])
        for j, k in enumerate(members):
            trained[k] = [p[j] for p in params]
    evals: dict[int, list[tuple[int, int]]] = {}  # padded size → (model, task)
    for k, m in enumerate(models):
        for i, t in enumerate(m):
            evals.setdefault(padded_size(t.eval_graph.n), []).append((k, i))
    for size, jobs in sorted(evals.items()):
        tasks = [models[k][i] for k, i in jobs]
        params = [np.stack([trained[k][n] for k, _ in jobs]) for n in range(4)]
        for (k, i), score in zip(jobs, _evaluate(tasks, params, size, width), strict=True):
            out[k][i] = score
    return out


def _flat(count: int, shapes: list[tuple[int, int]]) -> tuple[np.ndarray, list[np.ndarray]]:
    """One zeroed float32 array and views of it shaped ``(count, *shape)`` for each shape."""
    sizes = [count * a * b for a, b in shapes]
    flat = np.zeros(sum(sizes), dtype=np.float32)
    views, at = [], 0
    for (a, b), size in zip(shapes, sizes, strict=True):
        views.append(flat[at:at + size].reshape(count, a, b))
        at += size
    return flat, views


def _train(trains: list[GcnTask], size: int, width: int, config: GcnConfig,
           mask_bank: np.ndarray, initial: list[tuple[np.ndarray, np.ndarray]]
           ) -> list[np.ndarray]:
    count = len(trains)
    x, adj = _block([t.train_graph for t in trains], size)
    ax = _spmm(adj, x)
    ax_t = np.ascontiguousarray(ax.transpose(0, 2, 1))
    col_mask = class_mask([t.num_classes for t in trains], width)[:, None, :]
    target = np.zeros((count, size, width), dtype=np.float32)
    weight = np.zeros((count, size, 1), dtype=np.float32)
    for k, t in enumerate(trains):
        nodes = t.train_nodes
        target[k, nodes, t.train_labels[nodes]] = 1
        weight[k, nodes, 0] = np.float32(1.0 / len(nodes))
    shapes = [(x.shape[2], config.hidden), (1, config.hidden), (config.hidden, width), (1, width)]
    flat, params = _flat(count, shapes)
    grad, (gw1, gb1, gw2, gb2) = _flat(count, shapes)
    params[0][...] = np.stack([w1 for w1, _ in initial])
    params[2][...] = np.stack([w2 for _, w2 in initial])
    w2 = params[2]  # updated in place by Adam
    adam = _Adam(flat, config)
    keeps = mask_bank[:size].astype(np.float32) * np.float32(1.0 / (1.0 - config.dropout))
    for epoch in range(config.epochs):
        keep = keeps[:, epoch]
        z2, h, active = _forward(params, ax, adj, col_mask, keep)
        g = (_softmax(z2) - target) * weight
        ag = _spmm(adj, g)
        dz1 = (ag @ w2.transpose(0, 2, 1)) * keep * active
        np.matmul(ax_t, dz1, out=gw1)
        np.sum(dz1, axis=1, keepdims=True, out=gb1)
        np.matmul(h.transpose(0, 2, 1), ag, out=gw2)
        np.sum(g, axis=1, keepdims=True, out=gb2)
        adam.step(grad)
    return params


def class_mask(classes: Sequence[int], width: int) -> np.ndarray:
    """``(len(classes), width)`` float32: 0 on each model's own classes, −∞ on the padding
    columns past them (added to the logits, it gives the padding no probability)."""
    counts = np.asarray(classes, dtype=np.int64).reshape(-1, 1)
    return np.where(np.arange(width) >= counts, np.float32(-np.inf),
                    np.float32(0.0)).astype(np.float32)


def _evaluate(tasks: list[GcnTask], params: list[np.ndarray], size: int,
              width: int) -> list[float]:
    """The soft accuracy of each task's trained model (``params``: stacked, one per task) on
    its evaluation nodes; every evaluation graph is padded to ``size`` rows."""
    col_mask = class_mask([t.num_classes for t in tasks], width)[:, None, :]
    x, adj = _block([t.eval_graph for t in tasks], size)
    z2, _, _ = _forward(params, _spmm(adj, x), adj, col_mask, None)
    prob = _softmax(z2).astype(np.float64)
    scores = []
    for j, t in enumerate(tasks):
        nodes = np.sort(t.eval_nodes)
        p = prob[j, nodes, t.eval_labels[nodes]]
        scores.append(float(np.mean(p)) if len(p) else 0.0)
    return scores
