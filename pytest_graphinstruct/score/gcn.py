"""The D3 node-classification models: tiny 2-layer GCNs, many trained at once.

Model (Kipf & Welling, as ``torch_geometric.nn.GCNConv``): ``GCNConv(F→16) → ReLU →
dropout 0.5 → GCNConv(16→C)``, i.e. ``Â·X·W1 + b1`` and ``Â·(H·W2) + b2`` with
``Â = D̂^-1/2 (A + I) D̂^-1/2`` (``torch_geometric``'s ``gcn_norm``; ``Â·X`` is constant, so it
is computed once and layer 1 is evaluated as ``(Â·X)·W1`` — equal to ``GCNConv``'s ``Â·(X·W1)``
up to float rounding, ~1e-7); Glorot-uniform weights and
zero biases; Adam (lr 0.01, weight decay 5e-4); full-batch cross-entropy over the training nodes;
:data:`EPOCHS` = 100 epochs.  The metric is the *soft accuracy*: the mean softmax probability of
the true class over the evaluation nodes.

Many models are trained in one loop, each on its own weights and its own mean loss, so a model's
gradients — and Adam's element-wise updates — are exactly those of training it alone.  All
randomness comes from NumPy generators seeded from the configuration: the initial weights are
identical for every model with the same class count, and the dropout mask of a node depends only
on (epoch, its position in its own graph).  Hence a model's result does not depend on which other
models share the batch, and the same inputs give bit-identical outputs (CPU).

Where models train (:attr:`GcnConfig.device`):

* ``"cpu"`` (the default): :mod:`.gcn_cpu`, NumPy — no torch import, bit-reproducible on one
  machine;
* ``"cuda"``: :mod:`.gcn_torch` on the GPU, holding the machine-wide lock of
  :mod:`.gpu_lock` for the whole batch (every xdist worker takes its turn); its scatter sums
  use atomics, so it is not bit-reproducible and may differ from the CPU in the last digits.
  Without torch and torch_geometric (the ``[gpu]`` extra; not in the default install) or
  without CUDA it raises :class:`GcnDeviceError` — never a silent CPU run;
* ``"auto"``: ``"cuda"`` when torch imports and sees a GPU, else ``"cpu"``.

The two trainers agree to float32 rounding (tests/score/test_gcn_torch.py holds them within
1e-6 per task).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from pytest_graphinstruct.score import gcn_cpu
from pytest_graphinstruct.score.gcn_device import GcnDeviceError, resolve_device

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
    threads: int  # threads while training (1: NumPy on the CPU; torch's on a GPU)
    device: str


def gcn_graph(adjacency: np.ndarray, features: np.ndarray) -> GcnGraph:
    """A :class:`GcnGraph` from a symmetric boolean adjacency matrix (edges in row-major order)."""
    src, dst = np.nonzero(np.asarray(adjacency, dtype=bool))
    edges = np.stack([src, dst]).astype(np.int64)
    return GcnGraph(np.ascontiguousarray(features, dtype=np.float32), edges)


def unavailable_reason(device: str = "cpu") -> str | None:
    """``None`` when models can train on ``device``, else why not (the CPU trainer needs only
    NumPy: always ``None``)."""
    try:
        resolve_device(device)
    except GcnDeviceError as exc:
        return str(exc)
    return None


def soft_accuracies(tasks: Sequence[GcnTask], config: GcnConfig = GcnConfig()) -> GcnRun:
    """Train one model per distinct training (batched) and return each task's soft accuracy.

    Tasks with the same ``train_key`` (and class count) share one trained model; the result of a
    task never depends on the other tasks in the call.

    Raises:
        GcnDeviceError: ``config.device`` cannot train (see :func:`resolve_device`).
    """
    scores = [0.0] * len(tasks)
    models: dict[tuple[int, Hashable], list[int]] = {}
    for i, t in enumerate(tasks):
        key = (t.num_classes, t.train_key if t.train_key is not None else ("task", i))
        models.setdefault(key, []).append(i)
    groups: dict[int, list[list[int]]] = {}
    for (num_classes, _), members in models.items():
        groups.setdefault(class_width(num_classes), []).append(members)
    device = resolve_device(config.device)
    if device != config.device:
        config = dataclasses.replace(config, device=device)
    if not tasks:
        return GcnRun((), 1, device)
    bank = _mask_bank(max(gcn_cpu.padded_size(t.train_graph.n) for t in tasks), config)
    nfeat = tasks[0].train_graph.features.shape[1]
    threads = 1
    with contextlib.ExitStack() as stack:
        if device == "cpu":
            run_group = gcn_cpu.run_group
        else:
            from pytest_graphinstruct.score import gcn_torch
            from pytest_graphinstruct.score.gpu_lock import gpu_lock

            torch, _ = gcn_torch.backend()
            stack.enter_context(gcn_torch.single_thread(torch))
            stack.enter_context(gpu_lock())
            threads = torch.get_num_threads()
            run_group = gcn_torch.run_group
        for width in sorted(groups):
            for chunk in _chunks(groups[width], tasks):
                batch = [[tasks[i] for i in m] for m in chunk]
                initial = [_initial_weights(nfeat, m[0].num_classes, width, config)
                           for m in batch]
                values = run_group(batch, width, config, bank, initial)
                for members, vals in zip(chunk, values, strict=True):
                    for i, v in zip(members, vals, strict=True):
                        scores[i] = v
    return GcnRun(tuple(scores), threads, device)


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


