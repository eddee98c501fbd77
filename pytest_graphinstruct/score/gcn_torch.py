"""D3's GCN training in torch: the model of :mod:`.gcn` on ``GCNConv``'s operations, for a GPU.

The CPU trains with :mod:`.gcn_cpu` (NumPy, no torch import); this trainer runs where the user
asks for a device (``--gi-d3-device=cuda``), and the tests hold the two to the same numbers.
Every model owns its own weights (stacked tensors), the graphs are concatenated
block-diagonally, and each model's loss is its own mean, so a model's gradients — and Adam's
element-wise updates — are exactly those of training it alone.  ``Â·X`` is constant and computed
once (layer 1 is ``(Â·X)·W1``, equal to ``GCNConv``'s ``Â·(X·W1)`` up to float rounding).

On a GPU the scatter sums use atomics: not bit-reproducible, and may differ from the CPU in the
last digits.  Threads: the tiny tensors make torch's intra-op threading pure overhead, so
training runs under :func:`single_thread`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_graphinstruct.score import gcn_cpu

if TYPE_CHECKING:
    from pytest_graphinstruct.score.gcn import GcnConfig, GcnGraph, GcnTask


def backend() -> tuple[Any, Any]:
    """``torch`` and ``gcn_norm`` (imported on first use, without ``torch._dynamo``)."""
    from pytest_graphinstruct.score import gcn_backend

    backend = gcn_backend.load()
    return backend.torch, backend.gcn_norm


@contextlib.contextmanager
def single_thread(torch: Any) -> Iterator[None]:
    """Run torch with one intra-op (and, when still settable, one inter-op) thread."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    with contextlib.suppress(RuntimeError):  # inter-op threads can only be set before first use
        torch.set_num_interop_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


class _Adam:
    """``torch.optim.Adam(params, lr, weight_decay=…, foreach=True)``, step for step.

    The same state (a float step counter on the CPU, zeroed moments) goes to the same function,
    torch's functional ``torch.optim.adam.adam``, under ``no_grad`` as ``Adam.step`` does, so
    the parameters are bit-identical (tested).  ``torch.optim.Optimizer`` itself is not used:
    its methods (constructor, ``zero_grad``, ``step``) import ``torch._dynamo`` on first use,
    for their compile guards — 1.5–3 s that a process scoring D3 would pay for nothing
    (:mod:`pytest_graphinstruct.score.gcn_backend`).
    """

    BETAS = (0.9, 0.999)  # torch.optim.Adam's defaults
    EPS = 1e-8

    def __init__(self, torch: Any, params: list[Any], config: GcnConfig) -> None:
        from torch.optim.adam import adam

        self._torch = torch
        self._adam = adam
        self._params = params
        self._lr = config.lr
        self._weight_decay = config.weight_decay
        self._exp_avgs = [torch.zeros_like(p, memory_format=torch.preserve_format)
                          for p in params]
        self._exp_avg_sqs = [torch.zeros_like(p, memory_format=torch.preserve_format)
                             for p in params]
        step_dtype = torch.float64 if torch.get_default_dtype() == torch.float64 \
            else torch.float32
        self._steps = [torch.tensor(0.0, dtype=step_dtype, device="cpu") for _ in params]

    def zero_grad(self) -> None:
        """Drop the gradients (``Optimizer.zero_grad``'s default, ``set_to_none=True``)."""
        for p in self._params:
            p.grad = None

    def step(self) -> None:
        """One Adam update of every parameter from its gradient."""
        torch = self._torch
        with torch.no_grad():
            self._adam(
                self._params, [p.grad for p in self._params], self._exp_avgs,
                self._exp_avg_sqs, [], self._steps, foreach=True, has_complex=False,
                amsgrad=False, beta1=self.BETAS[0], beta2=self.BETAS[1], lr=self._lr,
                weight_decay=self._weight_decay, eps=self.EPS, maximize=False)


def _block(torch: Any, gcn_norm: Any, graphs: Sequence[GcnGraph], models: np.ndarray,
           device: str) -> tuple[Any, ...]:
    """Concatenate graphs: features, owner (model index) and position of each node, Â."""
    sizes = [g.n for g in graphs]
    offsets = np.concatenate([[0], np.cumsum(sizes)])[:-1]
    x = torch.from_numpy(np.concatenate([g.features for g in graphs]))
    owner = np.repeat(models, sizes)
    position = np.concatenate([np.arange(s) for s in sizes])
    edges = np.concatenate([g.edges + o for g, o in zip(graphs, offsets, strict=True)], axis=1)
    total = int(sum(sizes))
    edge_index, weight = gcn_norm(torch.from_numpy(edges), None, total, add_self_loops=True)
    return (x.to(device), torch.from_numpy(owner).to(device), position, offsets,
            edge_index.to(device), weight.to(device))


def _propagate(torch: Any, h: Any, edge_index: Any, weight: Any) -> Any:
    out = torch.zeros_like(h)
    return out.index_add_(0, edge_index[1], h.index_select(0, edge_index[0]) * weight[:, None])


def _forward(torch: Any, params: list[Any], ax: Any, owner: Any, edge_index: Any, weight: Any,
             keep: Any | None) -> Any:
    """Both layers; ``ax`` = ``Â·X`` (layer 1 is ``Â·X·W1 + b1`` = ``(Â·X)·W1 + b1``);
    ``keep`` = the dropout mask already scaled by ``1/(1 − p)`` (``None``: evaluation)."""
    w1, b1, w2, b2 = params
    h = (ax.unsqueeze(2) * w1.index_select(0, owner)).sum(1) + b1.index_select(0, owner)
    h = torch.relu(h)
    if keep is not None:
        h = h * keep
    h = (h.unsqueeze(2) * w2.index_select(0, owner)).sum(1)
    return _propagate(torch, h, edge_index, weight) + b2.index_select(0, owner)


def run_group(models: list[list[GcnTask]], width: int, config: GcnConfig,
              mask_bank: np.ndarray, initial: list[tuple[np.ndarray, np.ndarray]]
              ) -> list[list[float]]:
    """Train one model per entry of ``models`` (its tasks share the training data) on
    ``config.device`` and evaluate every task; returns the soft accuracies per model, per task
    (arguments as :func:`.gcn_cpu.run_group`'s)."""
    torch, gcn_norm = backend()
    device = config.device
    count = len(models)
    trains = [m[0] for m in models]
    class_mask_t = torch.from_numpy(
        gcn_cpu.class_mask([t.num_classes for t in trains], width)).to(device)

    def stack(arrays: list[np.ndarray]) -> Any:
        t = torch.from_numpy(np.stack(arrays).astype(np.float32))
        return t.to(device).requires_grad_(True)

    params = [stack([w1 for w1, _ in initial]), stack([np.zeros(config.hidden)] * count),
              stack([w2 for _, w2 in initial]), stack([np.zeros(width)] * count)]
    x, owner, position, offsets, edge_index, weight = _block(
        torch, gcn_norm, [t.train_graph for t in trains], np.arange(count), device)
    ax = _propagate(torch, x, edge_index, weight)  # constant: computed once
    train_idx = np.concatenate([t.train_nodes + o for t, o in zip(trains, offsets, strict=True)])
    labels = np.concatenate([t.train_labels[t.train_nodes] for t in trains])
    per_node = np.concatenate([np.full(len(t.train_nodes), 1.0 / len(t.train_nodes))
                               for t in trains])
    train_idx_t = torch.from_numpy(train_idx).to(device)
    labels_t = torch.from_numpy(labels.astype(np.int64)).to(device)
    per_node_t = torch.from_numpy(per_node.astype(np.float32)).to(device)
    scale = 1.0 / (1.0 - config.dropout)
    node_mask = class_mask_t.index_select(0, owner)  # constant: −∞ on padding classes
    optimizer = _Adam(torch, params, config)
    for epoch in range(config.epochs):
        optimizer.zero_grad()
        keep = torch.from_numpy(mask_bank[position, epoch] * np.float32(scale)).to(device)
        out = _forward(torch, params, ax, owner, edge_index, weight, keep)
        out = out + node_mask
        logp = torch.log_softmax(out, dim=1)
        picked = logp.index_select(0, train_idx_t).gather(1, labels_t[:, None]).squeeze(1)
        loss = -(picked * per_node_t).sum()
        loss.backward()
        optimizer.step()

    evals = [t for m in models for t in m]
    eval_owner = np.repeat(np.arange(count), [len(m) for m in models])
    with torch.no_grad():
        ex, eowner, _, eoffsets, eedge, eweight = _block(
            torch, gcn_norm, [t.eval_graph for t in evals], eval_owner, device)
        eax = _propagate(torch, ex, eedge, eweight)
        out = _forward(torch, params, eax, eowner, eedge, eweight, None)
        prob = torch.softmax(out + class_mask_t.index_select(0, eowner), dim=1)
        prob_np = prob.cpu().numpy().astype(np.float64)
    flat = []
    for t, o in zip(evals, eoffsets, strict=True):
        nodes = np.sort(t.eval_nodes)
        p = prob_np[nodes + o, t.eval_labels[nodes]]
        flat.append(float(np.mean(p)) if len(p) else 0.0)
    out_scores: list[list[float]] = []
    pos = 0
    for m in models:
        out_scores.append(flat[pos:pos + len(m)])
        pos += len(m)
    return out_scores
