"""Exact distances of one graph's undirected view: diameter and average path length from one
all-pairs BFS, within a work budget (:func:`distance_stats`)."""

from __future__ import annotations

import math
from itertools import chain

import networkx as nx
import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import shortest_path

#: Distances are computed in blocks of rows so that the distance matrix of a large graph never
#: needs more than about this many entries at once.
_DISTANCE_BLOCK_ENTRIES = 4_000_000

#: The work budget of exact all-pairs distances by per-source BFS, in ``n × (n + m)`` steps of
#: the undirected view (each BFS touches every node and every edge once).  Above it, diameter and
#: average path length are not computed (:func:`not_computed_reason` says why) unless the
#: all-at-once product route (at most ``_DENSE_MAX_NODES`` nodes, its own level budget)
#: finishes.  Measured (bench/big_answer.py, docs/PARSING.md): a star just inside it, the
#: costliest shape per step, takes a few seconds.
DISTANCE_WORK_LIMIT = 50_000_000


def distance_work(n: int, m: int) -> int:
    """``n × (n + m)`` of an undirected graph with ``n`` nodes and ``m`` edges: the steps of an
    all-pairs per-source BFS, compared with :data:`DISTANCE_WORK_LIMIT`."""
    return n * (n + m)


def distance_stats(undirected: nx.Graph, *, connected: bool, work: int) -> tuple[float, float]:
    """``(diameter, average path length)`` of ``undirected`` from one all-pairs BFS;
    ``(inf, inf)`` when empty or disconnected (``connected`` false); ``(0, 0.0)`` for one node;
    ``(nan, nan)`` when they would cost more than :data:`DISTANCE_WORK_LIMIT` (never
    approximated; ``work``: its :func:`distance_work`).

    The sum of all distances is an exact integer, so the mean is the same float whichever
    way the BFS is run (see :func:`_all_pairs_distance_sum`)."""
    n = undirected.number_of_nodes()
    if not connected:
        return math.inf, math.inf
    if n == 1:
        return 0, 0.0
    found = _all_pairs_distance_sum(_Adjacency(undirected),
                                    bfs_allowed=work <= DISTANCE_WORK_LIMIT)
    if found is None:
        return math.nan, math.nan
    longest, total = found
    return longest, total / (n * (n - 1))


def not_computed_reason(n: int, m: int) -> str:
    """Why :func:`distance_stats` did not compute them for ``n`` nodes and ``m`` edges —
    ``'not computed: answer too large (N nodes × (N + M edges) = W > LIMIT)'``."""
    return (f"not computed: answer too large ({n} nodes × ({n} + {m} edges) = "
            f"{distance_work(n, m)} > {DISTANCE_WORK_LIMIT})")


class _Adjacency:
    """The symmetric 0/1 adjacency matrix of undirected ``u`` (rows in ``list(u)`` order), as
    CSR index arrays read straight off networkx's neighbour dicts (one C-level pass over the
    neighbour ids; an undirected graph's dicts already hold both directions of every edge),
    made into a dense or a sparse matrix by whichever route uses it."""

    def __init__(self, u: nx.Graph) -> None:
        rows = [nbrs for _, nbrs in u.adjacency()]
        index = {v: i for i, v in enumerate(u)}
        self.n = n = len(rows)
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=n)
        self.indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=self.indptr[1:])
        #: Number of stored entries: both directions of every edge, a self-loop once.
        self.nnz = nnz = int(self.indptr[-1])
        self.indices = np.fromiter(map(index.__getitem__, chain.from_iterable(rows)),
                                   dtype=np.int64, count=nnz)

    def dense(self) -> np.ndarray:
        """The matrix as an ``n × n`` float32 array."""
        a = np.zeros((self.n, self.n), dtype=np.float32)
        a[np.repeat(np.arange(self.n), np.diff(self.indptr)), self.indices] = 1
        return a

    def sparse(self) -> csr_array:
        """The matrix as a CSR array of int8 ones, column indices sorted."""
        data = np.ones(self.nnz, dtype=np.int8)
        adj = csr_array((data, self.indices, self.indptr), shape=(self.n, self.n))
        adj.sort_indices()
        return adj


def _all_pairs_distance_sum(adj: _Adjacency, *, bfs_allowed: bool) -> tuple[int, int] | None:
    """``(largest, sum)`` of the BFS distances between all ordered node pairs of the connected
    undirected graph ``adj``; ``None`` when only per-source BFS could find them and
    ``bfs_allowed`` is false.

    Dense enough graphs expand all BFS frontiers at once, one boolean matrix product per level
    (BLAS; as many products as the diameter).  The number of levels tried is capped so that
    the products never cost much more than the per-source BFS would; a graph that needs more
    levels (long and thin) is finished with per-source BFS (scipy's C ``shortest_path``).
    """
    budget = _dense_level_budget(adj.n, adj.nnz)
    if budget:
        found = _distance_sum_by_products(adj.dense(), budget)
        if found is not None:
            return found
    return _distance_sum_by_bfs(adj.sparse()) if bfs_allowed else None


#: Dense frontier expansion is used up to this many nodes (a few ``n × n`` float32 matrices).
_DENSE_MAX_NODES = 4096
#: About how much cheaper one BLAS ``n³`` multiply-add is than one per-source BFS step over
#: one adjacency entry (measured: ~0.03 ns vs ~5 ns); sets the level budget.
_BFS_TO_PRODUCT_COST = 166


def _dense_level_budget(n: int, nnz: int) -> int:
    """How many product levels cost no more than per-source BFS (``n · nnz`` steps); 0 when the
    dense route is not worth trying (or would need too much memory)."""
    if n > _DENSE_MAX_NODES:
        return 0
    return (_BFS_TO_PRODUCT_COST * nnz) // (n * n)


def _distance_sum_by_products(a: np.ndarray, max_levels: int) -> tuple[int, int] | None:
    """Level-synchronous BFS from every node at once over the dense 0/1 matrix ``a``: row ``s``
    of ``frontier`` holds the nodes first reached from ``s`` at the current level.  ``None``
    when more than ``max_levels`` levels would be needed."""
    n = a.shape[0]
    reached = np.eye(n, dtype=bool)
    frontier = np.eye(n, dtype=np.float32)
    total = 0
    level = 0
    remaining = n * n - n
    while remaining:
        if level == max_levels:
            return None
        level += 1
        new = (frontier @ a) > 0  # exact: entries are sums of at most n ones in float32
        new &= ~reached
        count = int(np.count_nonzero(new))
        if count == 0:  # pragma: no cover - adj is connected, so every level reaches someone
            raise ValueError("graph is not connected")
        total += level * count
        remaining -= count
        reached |= new
        frontier = new.astype(np.float32)
    return level, total


def _distance_sum_by_bfs(adj: csr_array) -> tuple[int, int]:
    """Per-source BFS in blocks of rows, so the distance matrix never needs more than about
    ``_DISTANCE_BLOCK_ENTRIES`` entries at once."""
    n = adj.shape[0]
    block = max(1, _DISTANCE_BLOCK_ENTRIES // n)
    longest = 0
    total = 0
    for start in range(0, n, block):
        rows = np.arange(start, min(n, start + block))
        # adj is symmetric, so the directed search finds the same distances and skips
        # scipy's symmetrising pass (about half the time, measured on 20,000-node answers)
        dist = shortest_path(adj, method="D", directed=True, unweighted=True, indices=rows)
        longest = max(longest, int(dist.max()))
        total += int(dist.sum(dtype=np.float64))
    return longest, total
