"""The D3 node-classification models: tiny 2-layer GCNs, many trained at once.

Model (Kipf & Welling, as ``torch_geometric.nn.GCNConv``): ``GCNConv(F→16) → ReLU →
dropout 0.5 → GCNConv(16→C)``, i.e. ``Â·X·W1 + b1`` and ``Â·(H·W2) + b2`` with
``Â = D̂^-1/2 (A + I) D̂^-1/2`` (``torch_geometric``'s ``gcn_norm``; ``Â·X`` is constant, so it
is computed once and layer 1 is evaluated as ``(Â·X)·W1`` — equal to ``GCNConv``'s ``Â·(X·W1)``
up to float rounding, ~1e-7); Glorot-uniform weights and
zero biases; Adam (lr 0.01, weight decay 5e-4); full-batch cross-entropy over the training nodes;
:data:`EPOCHS` = 100 epochs.  The metric is the *soft accuracy*: the mean softmax probability of
the true class over the evaluation nodes.

Many models are trained in one loop: every model owns its own weights (stacked tensors), the
graphs are concatenated block-diagonally, and each model's loss is its own mean, so a model's
gradients — and Adam's element-wise updates — are exactly those of training it alone.  All
randomness comes from NumPy generators seeded from the configuration: the initial weights are
identical for every model with the same class count, and the dropout mask of a node depends only
on (epoch, its position in its own graph).  Hence a model's result does not depend on which other
models share the batch, and the same inputs give bit-identical outputs (CPU).

Threads: the tiny tensors make torch's default intra-op threading pure overhead (the reference
release spent ≈8 s per 100-epoch training on a 2-core machine); training runs with
``torch.set_num_threads(1)`` and the previous setting is restored afterwards.

The GPU path (``device='cuda'``, or ``'auto'`` when CUDA is available) holds the machine-wide lock
of :mod:`pytest_graphinstruct.score.gpu_lock` for the whole batch; its scatter sums use atomics,
so it is not bit-reproducible and may differ from the CPU in the last digits.  The CPU is the
default.

``torch`` and ``torch_geometric`` are imported lazily, on the first training, and without
``torch._dynamo`` (:mod:`pytest_graphinstruct.score.gcn_backend`); :func:`unavailable_reason`
says why they cannot be used (then callers report the GCN part absent — there is no fallback
model).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

HIDDEN = 16
EPOCHS = 100
LR = 0.01
WEIGHT_DECAY = 5e-4
DROPOUT = 0.5
SEED = 0
MAX_BATCH_NODES = 8_000
"""Models train together in batches of about this many nodes (training and evaluation graphs).
The per-node tensors of a batch (up to nodes × hidden × classes floats) should stay near the
CPU's cache: 1,415 D3 trainings of the official references took 1.22× as long in batches of
20,000 as in batches of 8,000 (4,000 and 10,000 were within 5 % of 8,000; 1,000 was 1.8×
slower, Python's per-operation cost).  A model's numbers never depend on its batch."""


@dataclass(frozen=True, eq=False)
class GcnGraph:
    """A graph prepared for the GCN: node features and both directions of every edge."""

    features: np.ndarray  # (n, F) float32
    edges: np.ndarray  # (2, E) int64, both directions, no self-loops

    @property
    def n(self) -> int:
        return int(self.features.shape[0])


@dataclass(frozen=True, eq=False)
class GcnTask:
    """Train a model on ``train_graph``'s ``train_nodes``; report its soft accuracy on
    ``eval_graph``'s ``eval_nodes``."""

    train_graph: GcnGraph
    train_labels: np.ndarray  # (train_graph.n,) int64, in [0, num_classes)
    train_nodes: np.ndarray  # int64 indices into train_graph
    eval_graph: GcnGraph
    eval_labels: np.ndarray  # (eval_graph.n,) int64
    eval_nodes: np.ndarray  # int64 indices into eval_graph
    num_classes: int
    train_key: Hashable | None = None  # tasks with the same key share one trained model


@dataclass(frozen=True)
class GcnConfig:
    """Training hyper-parameters (defaults: the reference release's)."""

    epochs: int = EPOCHS
    hidden: int = HIDDEN
    lr: float = LR
    weight_decay: float = WEIGHT_DECAY
    dropout: float = DROPOUT
    seed: int = SEED
    device: str = "cpu"  #: "cpu" (default, bit-reproducible), "cuda", or "auto" (cuda if present)


@dataclass(frozen=True)
class GcnRun:
    """The soft accuracy of each task, and how the training ran."""

    scores: tuple[float, ...]
    threads: int  # torch intra-op threads while training (1 on the CPU)
    device: str


def gcn_graph(adjacency: np.ndarray, features: np.ndarray) -> GcnGraph:
    """A :class:`GcnGraph` from a symmetric boolean adjacency matrix (edges in row-major order)."""
    src, dst = np.nonzero(np.asarray(adjacency, dtype=bool))
    edges = np.stack([src, dst]).astype(np.int64)
    return GcnGraph(np.ascontiguousarray(features, dtype=np.float32), edges)


def unavailable_reason() -> str | None:
    """``None`` when torch and torch_geometric import, else why not."""
    try:
        _backend()
    except ImportError as exc:
        return f"torch/torch_geometric not importable: {exc}"
    return None


def _backend() -> tuple[Any, Any]:
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


def soft_accuracies(tasks: Sequence[GcnTask], config: GcnConfig = GcnConfig()) -> GcnRun:
    """Train one model per distinct training (batched) and return each task's soft accuracy.

    Tasks with the same ``train_key`` (and class count) share one trained model; the result of a
    task never depends on the other tasks in the call.

    Raises:
        ImportError: torch or torch_geometric is missing (see :func:`unavailable_reason`).
    """
    torch, gcn_norm = _backend()
    scores = [0.0] * len(tasks)
    models: dict[tuple[int, Hashable], list[int]] = {}
    for i, t in enumerate(tasks):
        key = (t.num_classes, t.train_key if t.train_key is not None else ("task", i))
        models.setdefault(key, []).append(i)
    groups: dict[int, list[list[int]]] = {}
    for (num_classes, _), members in models.items():
        groups.setdefault(class_width(num_classes), []).append(members)
    device = config.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device != config.device:
        config = dataclasses.replace(config, device=device)
    lock: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
    if device != "cpu":
        from pytest_graphinstruct.score.gpu_lock import gpu_lock

        lock = gpu_lock()
    with single_thread(torch), lock:
        threads = torch.get_num_threads()
        for width in sorted(groups):
            for chunk in _chunks(groups[width], tasks):
                values = _run_group(torch, gcn_norm, [[tasks[i] for i in m] for m in chunk],
                                    width, config)
                for members, vals in zip(chunk, values, strict=True):
                    for i, v in zip(members, vals, strict=True):
                        scores[i] = v
    return GcnRun(tuple(scores), threads, device)


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


def _chunks(models: list[list[int]], tasks: Sequence[GcnTask]) -> Iterator[list[list[int]]]:
    """Split the models into batches of at most about :data:`MAX_BATCH_NODES` nodes."""
    batch: list[list[int]] = []
    nodes = 0
    for members in models:
        size = tasks[members[0]].train_graph.n + sum(tasks[i].eval_graph.n for i in members)
        if batch and nodes + size > MAX_BATCH_NODES:
            yield batch
            batch, nodes = [], 0
        batch.append(members)
        nodes += size
    if batch:
        yield batch


def _glorot(rng: np.random.Generator, fan_in: int, fan_out: int) -> np.ndarray:
    bound = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-bound, bound, size=(fan_in, fan_out))


_MASKS: dict[tuple[int, int, int, float], np.ndarray] = {}


def _mask_bank(rows: int, config: GcnConfig) -> np.ndarray:
    """Keep-masks ``(rows, epochs, hidden)``; row ``i`` is the same for every ``rows``."""
    key = (config.seed, config.epochs, config.hidden, config.dropout)
    bank = _MASKS.get(key)
    if bank is None or bank.shape[0] < rows:
        size = max(rows, 256, 0 if bank is None else 2 * bank.shape[0])
        rng = np.random.default_rng([config.seed, 1])
        bank = rng.random((size, config.epochs, config.hidden)) >= config.dropout
        _MASKS[key] = bank
    return bank[:rows]


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


def class_width(num_classes: int) -> int:
    """The padded class dimension of a model: the next power of two ≥ C, at least 8.

    Models of one width train in one loop; the padding columns get a −∞ logit, so they carry
    no probability and no gradient.  The width depends on the model's own C only, so a model's
    numbers never depend on its batch.
    """
    return max(8, 1 << (num_classes - 1).bit_length())


def _initial_weights(nfeat: int, num_classes: int, width: int,
                     config: GcnConfig) -> tuple[np.ndarray, np.ndarray]:
    """Glorot-uniform ``W1`` (F×hidden) and ``W2`` (hidden×C, zero-padded to ``width``);
    the same for every model with the same C."""
    rng = np.random.default_rng([config.seed, 0])
    w1 = _glorot(rng, nfeat, config.hidden)
    w2 = np.zeros((config.hidden, width))
    w2[:, :num_classes] = _glorot(rng, config.hidden, num_classes)
    return w1, w2


def _run_group(torch: Any, gcn_norm: Any, models: list[list[GcnTask]], width: int,
               config: GcnConfig) -> list[list[float]]:
    """Train one model per entry of ``models`` (its tasks share the training data) and evaluate
    every task; returns the soft accuracies per model, per task."""
    device = config.device
    count = len(models)
    trains = [m[0] for m in models]
    nfeat = trains[0].train_graph.features.shape[1]
    inits = [_initial_weights(nfeat, t.num_classes, width, config) for t in trains]
    class_mask = np.zeros((count, width), dtype=np.float32)
    for i, t in enumerate(trains):
        class_mask[i, t.num_classes:] = -np.inf
    class_mask_t = torch.from_numpy(class_mask).to(device)

    def stack(arrays: list[np.ndarray]) -> Any:
        t = torch.from_numpy(np.stack(arrays).astype(np.float32))
        return t.to(device).requires_grad_(True)

    params = [stack([w1 for w1, _ in inits]), stack([np.zeros(config.hidden)] * count),
              stack([w2 for _, w2 in inits]), stack([np.zeros(width)] * count)]
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
    bank = _mask_bank(int(position.max()) + 1, config)
    scale = 1.0 / (1.0 - config.dropout)
    node_mask = class_mask_t.index_select(0, owner)  # constant: −∞ on padding classes
    optimizer = _Adam(torch, params, config)
    for epoch in range(config.epochs):
        optimizer.zero_grad()
        keep = torch.from_numpy(bank[position, epoch] * np.float32(scale)).to(device)
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
