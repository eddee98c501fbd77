"""Node-order-free spectral features of a graph, and the D3 comparisons built on them.

Every quantity here is computed from the *canonical* adjacency matrix of the graph's undirected
simple view (:mod:`pytest_graphinstruct.score.canon`): directions are dropped, self-loops are
removed, node ids are forgotten.  So the features of two isomorphic graphs are bit-identical,
whatever the ids and the insertion order were.  On top of that, every quantity is also
mathematically invariant (it depends on eigenspaces, never on a particular eigenvector basis or on
node positions), so the canonical order only removes floating-point noise — it never decides a
value.

Spectral basis: the symmetric normalized Laplacian ``L = I' − D^-1/2 A D^-1/2`` (Chung's form:
``I'`` has a 1 only for non-isolated nodes, so an isolated node lies in the null space), which is
symmetric for every graph, so ``numpy.linalg.eigh`` is valid.  Its spectrum lies in [0, 2].

* **Low-frequency subspace** ``U``: the eigenvectors of the ``k + 1`` smallest eigenvalues
  (``k`` = :data:`K_EIGEN` = 4), completed to whole eigenvalue clusters (so ``U`` does not depend
  on how a degenerate eigenspace was split), minus the trivial direction ``s = D^1/2·1``.
* **Descriptor frame** ``Φ`` (``n × 3``): per-node structural descriptors on fixed scales —
  degree / max degree, local clustering, mean neighbour degree / max degree.  Each column is made
  orthogonal to ``s`` and scaled to unit length (a constant column vanishes).
* **Compressed projector** ``G = Φᵀ P_U Φ`` (``m × m``): ``G[a, a]`` is the share of descriptor
  ``a``'s (non-trivial) energy lying in the low-frequency subspace, ``G[a, b]`` the correlation of
  the two projected descriptors.  ``G`` is a node-free image of the subspace's geometry.
* **Heat-kernel signature** (HKS) of node ``i`` at time ``t``: ``Σ_λ>0 exp(−tλ)·v_λ(i)²`` =
  ``exp(−tL)[i, i]`` without the null space — the node embedding of the embedding MMD.  It is
  invariant to the eigenvector basis (unlike raw spectral coordinates, which carry a sign and
  rotation ambiguity) and lies in [0, 1].
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from functools import cached_property

import networkx as nx
import numpy as np

from pytest_graphinstruct.kernels.blas import single_blas_thread
from pytest_graphinstruct.score.canon import Canonical, canonical_graph

K_EIGEN = 4
HKS_TIMES: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0)
CLUSTER_TOL = 1e-8
ZERO_TOL = 1e-9
MMD_SIGMA = 0.1


@dataclass(frozen=True, eq=False)
class SpectralFeatures:
    """The D3 features of one graph (computed from its canonical form; read-only arrays).

    Attributes:
        canonical: the canonical form the features were computed from.
        eigenvalues: the normalized-Laplacian spectrum, ascending.
        compressed: the compressed projector ``G`` (``3 × 3``, see the module docstring).
        hks: the heat-kernel signatures (``n × len(HKS_TIMES)``), one row per canonical node.
        node_features: GCN input features (``n × 4``, float32): degree / max degree, local
            clustering, mean neighbour degree / max degree, HKS at ``t = 2``.
    """

    canonical: Canonical
    eigenvalues: np.ndarray
    compressed: np.ndarray
    hks: np.ndarray
    node_features: np.ndarray
    _self_means: dict[float, float] = field(default_factory=dict, init=False, repr=False)

    @property
    def n(self) -> int:
        return self.canonical.n

    @property
    def num_edges(self) -> int:
        return int(self.canonical.adjacency.sum()) // 2

    @cached_property
    def communities(self) -> np.ndarray:
        """Greedy-modularity community of each canonical node (see :func:`greedy_modularity`)."""
        labels = greedy_modularity(self.canonical.adjacency)
        labels.setflags(write=False)
        return labels


def spectral_features(graph: nx.Graph | Canonical) -> SpectralFeatures:
    """The features of a graph (any ids, directed or not) or of a canonical form."""
    with single_blas_thread():
        canon = graph if isinstance(graph, Canonical) else canonical_graph(graph)
        return _features(canon)


def _features(canon: Canonical) -> SpectralFeatures:
    a = canon.adjacency.astype(np.float64)
    n = a.shape[0]
    deg = a.sum(axis=1)
    if n == 0:
        empty = np.zeros((0, 0))
        return SpectralFeatures(canon, np.zeros(0), empty, np.zeros((0, len(HKS_TIMES))),
                                np.zeros((0, 4), dtype=np.float32))
    inv_sqrt = np.zeros(n)
    nz = deg > 0
    inv_sqrt[nz] = 1.0 / np.sqrt(deg[nz])
    lap = np.diag(nz.astype(np.float64)) - inv_sqrt[:, None] * a * inv_sqrt[None, :]
    lam, vec = np.linalg.eigh(lap)
    lam = np.clip(lam, 0.0, 2.0)

    # heat-kernel signature without the null space
    weights = np.where(lam > ZERO_TOL, 1.0, 0.0)
    sq = vec * vec
    hks = np.stack([sq @ (weights * np.exp(-t * lam)) for t in HKS_TIMES], axis=1)

    # local descriptors
    dmax = float(deg.max()) if deg.max() > 0 else 1.0
    tri = ((a @ a) * a).sum(axis=1)
    pairs = deg * (deg - 1)
    clustering = np.divide(tri, pairs, out=np.zeros(n), where=pairs > 0)
    knn = np.divide(a @ deg, deg, out=np.zeros(n), where=deg > 0)
    local = np.stack([deg / dmax, clustering, knn / dmax], axis=1)
    node_features = np.concatenate([local, hks[:, 2:3]], axis=1).astype(np.float32)

    # low-frequency subspace, completed to eigenvalue clusters, minus the trivial direction
    end = min(K_EIGEN + 1, n)
    while end < n and lam[end] - lam[end - 1] <= CLUSTER_TOL:
        end += 1
    basis = vec[:, :end]
    s = np.sqrt(deg)
    s_norm = float(np.linalg.norm(s))
    s_hat = s / s_norm if s_norm > 0 else s

    phi = local - np.outer(s_hat, s_hat @ local)
    norms = np.linalg.norm(phi, axis=0)
    phi = np.divide(phi, norms, out=np.zeros_like(phi), where=norms > ZERO_TOL)
    proj = basis.T @ phi  # P_U φ = V_J V_Jᵀ φ because φ ⟂ s and s ∈ span(V_J)
    compressed = proj.T @ proj

    for arr in (lam, compressed, hks, node_features):
        arr.setflags(write=False)
    return SpectralFeatures(canon, lam, compressed, hks, node_features)


def grassmann_coherence(a: SpectralFeatures, b: SpectralFeatures) -> float:
    """Similarity in [0, 1] of two graphs' low-frequency subspaces, seen in the descriptor frame.

    ``⟨G_a, G_b⟩_F / (‖G_a‖_F·‖G_b‖_F)`` (cosine of the compressed projectors; ≥ 0 because both
    are positive semi-definite).  For two projectors of equal rank ``k`` this is the mean squared
    cosine of their principal angles — the reference release's formula — but computed in a
    coordinate system shared by both graphs instead of by aligning node positions.  When a
    subspace has no image in the frame (``‖G‖ ≈ 0``: all descriptors constant, e.g. a
    vertex-transitive graph) the coherence is 1 if the other has none either, else 0.
    """
    na = float(np.linalg.norm(a.compressed))
    nb = float(np.linalg.norm(b.compressed))
    if na <= ZERO_TOL or nb <= ZERO_TOL:
        return 1.0 if na <= ZERO_TOL and nb <= ZERO_TOL else 0.0
    if np.array_equal(a.compressed, b.compressed):
        return 1.0  # exactly, not 1 − 1 ulp from the rounding of the norms
    value = float(np.sum(a.compressed * b.compressed)) / (na * nb)
    return min(1.0, max(0.0, value))


def _kernel_mean(x: np.ndarray, y: np.ndarray, sigma: float) -> float:
    # explicit differences (not |x|² + |y|² − 2x·y): exact zeros for equal rows, and no BLAS
    # kernel choice (numpy uses syrk for x @ x.T but gemm for an equal copy) can change a bit
    diff = x[:, None, :] - y[None, :, :]
    d2 = np.einsum("ijk,ijk->ij", diff, diff)
    return float(np.mean(np.exp(-d2 / (2.0 * sigma * sigma))))


def _self_mean(a: SpectralFeatures, sigma: float) -> float:
    """``mean K(x, x')`` over ``a``'s HKS rows, computed once per graph and ``sigma`` (a graph
    meets every reference of its instruction, a reference every sample)."""
    hit = a._self_means.get(sigma)
    if hit is None:
        hit = a._self_means[sigma] = _kernel_mean(a.hks, a.hks, sigma)
    return hit


def embedding_mmd(a: SpectralFeatures, b: SpectralFeatures, sigma: float = MMD_SIGMA) -> float:
    """MMD between the two graphs' HKS point sets (RBF kernel of width ``sigma``).

    The biased V-statistic ``mean K(x,x') + mean K(y,y') − 2·mean K(x,y)`` (all pairs, diagonal
    included), so it is ≥ 0 and exactly 0 for identical point sets; returns its square root.
    """
    if a.n == 0 or b.n == 0:
        return float("nan")
    xx = _self_mean(a, sigma)
    yy = _self_mean(b, sigma)
    xy = _kernel_mean(a.hks, b.hks, sigma)
    return float(np.sqrt(max(0.0, xx + yy - 2.0 * xy)))


def greedy_modularity(adjacency: np.ndarray) -> np.ndarray:
    """Clauset–Newman–Moore greedy modularity communities, as class labels of the nodes.

    Starts from singletons and repeatedly merges the pair of *adjacent* communities with the
    largest modularity gain ``ΔQ = 2·(e_ij − a_i·a_j)`` while the gain is ≥ 0 (networkx's rule);
    gains are compared exactly (in integers), and ties go to the first pair in node order (the
    smaller community index first; the merged community keeps the smaller index).
    Labels rank the final communities by size (descending), ties by their first node, so label 0
    is the largest community.  An edgeless graph gives every node its own community.
    Deterministic for a given matrix; run on the canonical matrix it is node-order free.

    Cost: sparse (a dict of neighbour communities per community, a heap of candidate merges
    with stale entries skipped), O((m + Σ merged row sizes)·log) ≤ O((m + n²)·log n) time and
    O(m + n) memory — not the O(n³) of rescanning the n × n gain matrix for every merge.
    """
    a = np.asarray(adjacency, dtype=np.int64)
    n = a.shape[0]
    members: list[list[int]] = [[v] for v in range(n)]
    if n and int(a.sum()) > 0:
        members = _cnm_merges(a)
    ranked = sorted((g for g in members if g), key=lambda g: (-len(g), min(g)))
    labels = np.empty(n, dtype=np.int64)
    for c, group in enumerate(ranked):
        labels[group] = c
    return labels


def _cnm_merges(a: np.ndarray) -> list[list[int]]:
    """The members of every community after the greedy merges (empty lists for merged ones).

    The gain of merging communities ``i < j`` is kept in the integer form
    ``2m·e_ij − d_i·d_j`` (``ΔQ·(2m)²/2``), so ties are exact.  The heap holds
    ``(−gain, i, j, version_i, version_j)``: the largest gain pops first, ties the smallest
    ``(i, j)`` — the first pair in row-major order.  Only the pairs that touch the merged
    community change; their old entries are recognised as stale by the version stamps.
    """
    n = a.shape[0]
    two_m = int(a.sum())
    src, dst = np.nonzero(np.triu(a, 1))
    weights = a[src, dst]
    rows: list[dict[int, int]] = [{} for _ in range(n)]
    for i, j, w in zip(src.tolist(), dst.tolist(), weights.tolist(), strict=True):
        rows[i][j] = w
        rows[j][i] = w
    dsum = a.sum(axis=1).tolist()
    version = [0] * n
    active = [True] * n
    members: list[list[int]] = [[v] for v in range(n)]
    heap = [(dsum[i] * dsum[j] - two_m * w, i, j, 0, 0)
            for i, j, w in zip(src.tolist(), dst.tolist(), weights.tolist(), strict=True)]
    heapq.heapify(heap)
    bound = 3 * len(heap) + 1024  # the heap never holds more (memory O(m))
    while heap:
        neg, i, j, vi, vj = heapq.heappop(heap)
        if not (active[i] and active[j] and version[i] == vi and version[j] == vj):
            continue
        if neg > 0:  # the best gain left is negative
            break
        row_i, row_j = rows[i], rows[j]
        del row_i[j], row_j[i]
        for k, w in row_j.items():
            row_i[k] = row_i.get(k, 0) + w
            row_k = rows[k]
            row_k[i] = row_k.get(i, 0) + row_k.pop(j)
        rows[j] = {}
        dsum[i] += dsum[j]
        dsum[j] = 0
        active[j] = False
        version[i] += 1
        members[i].extend(members[j])
        members[j] = []
        d_i = dsum[i]
        for k, w in row_i.items():
            lo, hi = (i, k) if i < k else (k, i)
            heapq.heappush(heap, (d_i * dsum[k] - two_m * w, lo, hi, version[lo], version[hi]))
        if len(heap) > bound:  # mostly stale entries: keep the current ones (amortised O(1))
            heap = [e for e in heap if active[e[1]] and active[e[2]]
                    and version[e[1]] == e[3] and version[e[2]] == e[4]]
            heapq.heapify(heap)
    return members
