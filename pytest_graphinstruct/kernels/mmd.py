"""Structural MMD for D1: graph features, 1-D EMD, Gaussian-EMD kernel, unbiased MMD².

Features of one graph (each a normalised histogram, so a probability vector):

* ``degree`` — histogram of node degrees ``0..max`` (directed: in + out; a self-loop adds 2);
  the empty graph is ``[1.0]``.
* ``clustering`` — :data:`CLUSTERING_BINS` equal bins on ``[0, 1]`` of the local clustering
  coefficients of the undirected view (``nx.clustering``'s values, from the exact sparse
  triangle counts of :mod:`~pytest_graphinstruct.kernels.triangles`); the empty graph is uniform.
* ``spectral`` — :data:`SPECTRAL_BINS` equal bins on ``[0, 2]`` of the *whole* spectrum of the
  normalised Laplacian ``D^-1/2 (D − A) D^-1/2`` of the undirected view (the spectral feature of
  You et al. 2018).  Deviation: the reference release sorts the eigenvalues, drops the first,
  keeps ≤ 20 and renormalises the *eigenvalue vector itself* into a pseudo-distribution over
  eigenvalue positions, which is not a distribution of anything.  Second deviation, from You et
  al.'s code (and GRAN's), which bins the eigenvalues on ``[−1e-5, 2]`` and so drops an
  eigenvalue that lands just above 2 (a bipartite component's exact 2, computed as 2 + ε): we
  clip the spectrum to ``[0, 2]``, so that eigenvalue
  counts in the last bin, and bin on ``[0, 2]``.  An independent check found clipping the better
  choice (whether the eigenvalue counts no longer depends on rounding noise).  Eigenvalues are
  rounded to 9 decimals before binning so relabelling a graph cannot move one across a bin edge.
  Graphs above :data:`SPECTRAL_MAX_NODES` nodes get no spectral feature (the eigen-solve is
  O(n³)): such a graph is treated as one point infinitely far from every graph that has one
  (kernel 0 to those, 1 to other oversize graphs) and results count it.  The empty graph and a
  single node put all mass at 0.

Distance between two histograms on the same bins: 1-D earth mover's distance in bin units,
``EMD(p, q) = Σ_t |P(t) − Q(t)|`` with ``P, Q`` the cumulative sums (the shorter histogram is
zero-padded, i.e. its CDF continues at 1).  Pairwise EMD matrices are computed at once from the
CDF matrices (``scipy.spatial.distance.cdist`` cityblock over the common prefix, plus each side's
tail term) — no Python loop over pairs.

Kernel: ``k(a, b) = exp(−EMD(a, b)² / (2σ²))``, one σ per feature.  **σ comes from the
reference set alone** (:class:`ReferenceStats`): the median EMD over the reference pairs
(``i < j``; over an evenly spaced subset of at most :data:`BANDWIDTH_SAMPLE` references for
large sets); when that median is ≤ 1e-10 (mostly duplicate references) the median of the
positive distances, and 1.0 if there are none.  So two models scored against one reference set
are scored on the same scale.  Deviation: the release takes the median of the cross distances
between the model's graphs and the references, so σ moves with the model being scored.

Estimator (as in the release): ``MMD² = mean_{i≠j} k(x_i, x_j) + mean_{i≠j} k(y_i, y_j) −
2·mean k(x_i, y_j)``; 0 when either side has fewer than 2 graphs; ``MMD = sqrt(max(0, MMD²))``
and the feature's score is ``exp(−MMD)`` ∈ (0, 1].  The reference term ``mean k(y_i, y_j)``
depends on the references only and is computed once per reference set.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp

from pytest_graphinstruct.kernels import triangles
from pytest_graphinstruct.kernels.blas import single_blas_thread

DEGREE = "degree"
CLUSTERING = "clustering"
SPECTRAL = "spectral"
#: The three D1 features, in report order.
FEATURES: tuple[str, ...] = (DEGREE, CLUSTERING, SPECTRAL)

CLUSTERING_BINS = 10
SPECTRAL_BINS = 200
#: Above this many nodes a graph gets no spectral feature (see the module docstring).
SPECTRAL_MAX_NODES = 2_000
#: σ is the median over the pairs of at most this many (evenly spaced) references.
BANDWIDTH_SAMPLE = 2_000
#: A median distance at or below this is treated as zero (see the module docstring).
SIGMA_FLOOR = 1e-10
_CHUNK_ENTRIES = 4_000_000  # bound on the entries of one pairwise block


# -- features of one graph ------------------------------------------------------------------------

@dataclass(frozen=True)
class _Arrays:
    """A graph as index arrays: ``src``/``dst`` per edge (arc), ``n`` nodes."""

    n: int
    src: np.ndarray
    dst: np.ndarray

    @classmethod
    def of(cls, g: nx.Graph) -> _Arrays:
        index = {v: i for i, v in enumerate(g)}
        m = g.number_of_edges()
        flat = np.fromiter((index[x] for e in g.edges() for x in e), dtype=np.int64, count=2 * m)
        return cls(len(index), flat[0::2].copy(), flat[1::2].copy())

    def degrees(self) -> np.ndarray:
        """Degree per node (directed: in + out); a self-loop adds 2, as in networkx."""
        return (np.bincount(self.src, minlength=self.n)
                + np.bincount(self.dst, minlength=self.n))

    def simple_undirected(self) -> sp.csr_array:
        """0/1 adjacency of the undirected view without self-loops."""
        keep = self.src != self.dst
        r = np.concatenate([self.src[keep], self.dst[keep]])
        c = np.concatenate([self.dst[keep], self.src[keep]])
        a = sp.csr_array((np.ones(len(r)), (r, c)), shape=(self.n, self.n))
        a.sum_duplicates()
        a.data[:] = 1.0  # an arc pair u->v, v->u is one undirected edge
        return a


def degree_histogram(g: nx.Graph) -> np.ndarray:
    """Normalised histogram of degrees ``0..max`` (see the module docstring)."""
    return _degree_histogram(_Arrays.of(g))


def _degree_histogram(a: _Arrays) -> np.ndarray:
    if a.n == 0:
        return np.ones(1)
    return np.bincount(a.degrees()) / a.n


def clustering_histogram(g: nx.Graph) -> np.ndarray:
    """Normalised 10-bin histogram on [0, 1] of local clustering (undirected view)."""
    return _clustering_histogram(g, _Arrays.of(g))


def local_clustering(g: nx.Graph, arrays: _Arrays | None = None) -> np.ndarray:
    """``nx.clustering`` of the undirected view (self-loops ignored), per node in ``g``'s node
    order: ``2T(v) / (d(v)(d(v) − 1))`` from exact integer triangle counts."""
    a = _Arrays.of(g) if arrays is None else arrays
    nodes, u, v = triangles.simple_edges(g)
    tri, deg = triangles.triangles_and_degrees(len(nodes), u, v)
    twice_t, d = 2 * tri, deg.astype(float)
    out = np.zeros(a.n)
    ok = (d >= 2) & (twice_t > 0)
    out[ok] = twice_t[ok] / (d[ok] * (d[ok] - 1))
    return out


def _clustering_histogram(g: nx.Graph, a: _Arrays) -> np.ndarray:
    if a.n == 0:
        return np.full(CLUSTERING_BINS, 1.0 / CLUSTERING_BINS)
    counts, _ = np.histogram(local_clustering(g, a), bins=CLUSTERING_BINS, range=(0.0, 1.0))
    return counts / a.n


def _spectrum(a: _Arrays) -> np.ndarray:
    """Sorted eigenvalues of ``D^-1/2 (D − A) D^-1/2`` of the undirected view (isolated nodes
    give 0; a self-loop adds 1 to ``A``'s diagonal, as in networkx), clipped to [0, 2]."""
    n = a.n
    if n == 0:
        return np.zeros(0)
    adj = np.zeros((n, n))
    adj[a.src, a.dst] = 1.0
    adj[a.dst, a.src] = 1.0
    deg = adj.sum(axis=1)
    with np.errstate(divide="ignore"):
        inv_sqrt = np.where(deg > 0, 1.0 / np.sqrt(deg), 0.0)
    lap = (np.diag(deg) - adj) * inv_sqrt[:, None] * inv_sqrt[None, :]
    with single_blas_thread():  # tiny matrices: threads cost more than they give
        eig = np.linalg.eigvalsh(lap)
    return np.clip(eig, 0.0, 2.0)


def spectral_histogram(g: nx.Graph) -> np.ndarray | None:
    """Normalised :data:`SPECTRAL_BINS`-bin histogram on [0, 2] of the normalised-Laplacian
    spectrum; ``None`` above :data:`SPECTRAL_MAX_NODES` nodes."""
    return _spectral_histogram(_Arrays.of(g))


def _spectral_histogram(a: _Arrays) -> np.ndarray | None:
    if a.n > SPECTRAL_MAX_NODES:
        return None
    hist = np.zeros(SPECTRAL_BINS)
    if a.n == 0:
        hist[0] = 1.0
        return hist
    eig = np.round(_spectrum(a), 9)
    counts, _ = np.histogram(eig, bins=SPECTRAL_BINS, range=(0.0, 2.0))
    return counts / a.n


def graph_features(g: nx.Graph) -> dict[str, np.ndarray | None]:
    """The three feature histograms of ``g`` (``spectral`` is ``None`` above the cap)."""
    a = _Arrays.of(g)
    return {DEGREE: _degree_histogram(a), CLUSTERING: _clustering_histogram(g, a),
            SPECTRAL: _spectral_histogram(a)}


# -- feature matrices -----------------------------------------------------------------------------

@dataclass(frozen=True)
class FeatureBlock:
    """One feature of many graphs: CDF rows (zero-padded histograms, cumulated) and validity.

    ``hist`` is ``N × L`` (rows padded with zeros to the longest), ``cdf`` its row-wise cumsum,
    ``valid[i]`` false when graph ``i`` has no value for this feature (its rows are zero).
    """

    hist: np.ndarray
    cdf: np.ndarray
    valid: np.ndarray

    @classmethod
    def from_histograms(cls, hists: Sequence[np.ndarray | None]) -> FeatureBlock:
        width = max((len(h) for h in hists if h is not None), default=1)
        hist = np.zeros((len(hists), width))
        valid = np.zeros(len(hists), dtype=bool)
        for i, h in enumerate(hists):
            if h is not None:
                hist[i, : len(h)] = h
                valid[i] = True
        return cls.from_matrix(hist, valid)

    @classmethod
    def from_matrix(cls, hist: np.ndarray, valid: np.ndarray) -> FeatureBlock:
        """From an ``N × L`` histogram matrix (``L ≥ 1``) and an ``N`` validity mask."""
        hist = np.ascontiguousarray(hist, dtype=np.float64)
        if hist.ndim != 2 or hist.shape[1] == 0 or hist.shape[0] != len(valid):
            raise ValueError(f"bad feature matrix shape {hist.shape} for {len(valid)} graphs")
        return cls(hist, np.cumsum(hist, axis=1), np.asarray(valid, dtype=bool))

    def __len__(self) -> int:
        return len(self.valid)

    def take(self, indices: np.ndarray) -> FeatureBlock:
        return FeatureBlock(self.hist[indices], self.cdf[indices], self.valid[indices])


@dataclass(frozen=True)
class FeatureTable:
    """The D1 features of a sequence of graphs, one :class:`FeatureBlock` per feature."""

    blocks: Mapping[str, FeatureBlock]

    @classmethod
    def of_graphs(cls, graphs: Sequence[nx.Graph]) -> FeatureTable:
        return cls.of_features([graph_features(g) for g in graphs])

    @classmethod
    def of_features(cls, feats: Sequence[Mapping[str, np.ndarray | None]]) -> FeatureTable:
        return cls(MappingProxyType({f: FeatureBlock.from_histograms([x[f] for x in feats])
                                     for f in FEATURES}))

    def __len__(self) -> int:
        return len(self.blocks[DEGREE])

    def take(self, indices: Sequence[int] | np.ndarray) -> FeatureTable:
        idx = np.asarray(indices, dtype=np.intp)
        return FeatureTable(MappingProxyType({f: b.take(idx) for f, b in self.blocks.items()}))

    def oversize(self) -> int:
        """How many graphs lack the spectral feature (above :data:`SPECTRAL_MAX_NODES`)."""
        return int((~self.blocks[SPECTRAL].valid).sum())


# -- distances and kernels ------------------------------------------------------------------------

def pairwise_emd(a_cdf: np.ndarray, b_cdf: np.ndarray) -> np.ndarray:
    """``D[i, j] = Σ_t |A[i, t] − B[j, t]|`` for CDF rows, the shorter side continued at 1.

    Vectorised: cityblock distances over the common prefix plus each side's tail term
    ``Σ_{t ≥ common} (1 − CDF(t))``, which depends on one row only.
    """
    from scipy.spatial.distance import cdist  # here: scipy.spatial costs ~0.2 s to import

    common = min(a_cdf.shape[1], b_cdf.shape[1])
    d = cdist(a_cdf[:, :common], b_cdf[:, :common], metric="cityblock")
    if a_cdf.shape[1] > common:
        d += np.abs(1.0 - a_cdf[:, common:]).sum(axis=1)[:, None]
    if b_cdf.shape[1] > common:
        d += np.abs(1.0 - b_cdf[:, common:]).sum(axis=1)[None, :]
    return d


def gaussian_kernel(dist: np.ndarray, sigma: float) -> np.ndarray:
    """``exp(−d² / (2σ²))`` elementwise."""
    return np.exp(-(dist * dist) / (2.0 * sigma * sigma))


def kernel_matrix(a: FeatureBlock, b: FeatureBlock, sigma: float) -> np.ndarray:
    """Gaussian-EMD kernel between the rows of ``a`` and ``b``; rows without a value are one
    far-away point (kernel 1 among themselves, 0 to every row with a value)."""
    k = gaussian_kernel(pairwise_emd(a.cdf, b.cdf), sigma)
    va, vb = a.valid, b.valid
    if not (va.all() and vb.all()):
        k[~va, :] = 0.0
        k[:, ~vb] = 0.0
        k[np.ix_(~va, ~vb)] = 1.0
    return k


def _offdiag_mean(k: np.ndarray) -> float:
    n = k.shape[0]
    return float((k.sum() - np.trace(k)) / (n * (n - 1)))


def bandwidth(block: FeatureBlock) -> float:
    """σ of one feature from the reference rows alone (see the module docstring)."""
    idx = np.flatnonzero(block.valid)
    if len(idx) > BANDWIDTH_SAMPLE:
        idx = idx[np.linspace(0, len(idx) - 1, BANDWIDTH_SAMPLE).round().astype(np.intp)]
    if len(idx) < 2:
        return 1.0
    cdf = block.cdf[idx]
    d = pairwise_emd(cdf, cdf)[np.triu_indices(len(idx), k=1)]
    med = float(np.median(d))
    if med > SIGMA_FLOOR:
        return med
    positive = d[d > SIGMA_FLOOR]
    return float(np.median(positive)) if len(positive) else 1.0


def _mean_reference_kernel(block: FeatureBlock, sigma: float) -> float:
    """``mean_{i≠j} k(y_i, y_j)``, in row chunks (no N × N matrix for large sets)."""
    n = len(block)
    if n < 2:
        return 0.0
    step = max(1, _CHUNK_ENTRIES // n)
    total = 0.0
    for start in range(0, n, step):
        part = block.take(np.arange(start, min(n, start + step)))
        total += float(kernel_matrix(part, block, sigma).sum())
    return (total - n) / (n * (n - 1))  # the diagonal is exactly 1 (EMD 0, or both invalid)


@dataclass(frozen=True)
class ReferenceStats:
    """Per feature, σ and ``mean_{i≠j} k(y_i, y_j)`` of a reference set (pure functions of the
    references: computed once per reference set and cached by the pools)."""

    sigma: Mapping[str, float]
    kyy: Mapping[str, float]

    @classmethod
    def compute(cls, table: FeatureTable) -> ReferenceStats:
        sigma = {f: bandwidth(table.blocks[f]) for f in FEATURES}
        kyy = {f: _mean_reference_kernel(table.blocks[f], sigma[f]) for f in FEATURES}
        return cls(MappingProxyType(sigma), MappingProxyType(kyy))

    def to_json(self) -> dict[str, Any]:
        return {"sigma": dict(self.sigma), "kyy": dict(self.kyy)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReferenceStats:
        return cls(MappingProxyType({f: float(data["sigma"][f]) for f in FEATURES}),
                   MappingProxyType({f: float(data["kyy"][f]) for f in FEATURES}))


@dataclass(frozen=True)
class FeatureMMD:
    """One feature's MMD against a reference set."""

    mmd: float
    score: float
    sigma: float


@dataclass(frozen=True)
class MMDResult:
    """MMD of a generated set against a reference set, per feature and averaged.

    ``mean`` is the mean of the three feature scores (each ``exp(−MMD)``); ``oversize`` counts
    generated graphs without a spectral feature.
    """

    features: Mapping[str, FeatureMMD]
    mean: float
    generated: int
    references: int
    oversize: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {f: {"mmd": v.mmd, "score": v.score, "sigma": v.sigma}
                               for f, v in self.features.items()}
        out.update(mean=self.mean, generated=self.generated, references=self.references,
                   oversize=self.oversize)
        return out


@dataclass(frozen=True)
class ReferenceSet:
    """A fixed reference set: its features and its :class:`ReferenceStats`."""

    table: FeatureTable
    stats: ReferenceStats

    @classmethod
    def of(cls, table: FeatureTable, stats: ReferenceStats | None = None) -> ReferenceSet:
        return cls(table, ReferenceStats.compute(table) if stats is None else stats)

    def __len__(self) -> int:
        return len(self.table)

    def score(self, generated: FeatureTable) -> MMDResult:
        """MMD of ``generated`` against this set (σ and the reference term are this set's)."""
        out = {f: block_mmd(generated.blocks[f], self.table.blocks[f], self.stats.sigma[f],
                            self.stats.kyy[f]) for f in FEATURES}
        mean = sum(v.score for v in out.values()) / len(out)
        return MMDResult(MappingProxyType(out), mean, len(generated), len(self.table),
                         generated.oversize())


def block_mmd(x: FeatureBlock, y: FeatureBlock, sigma: float | None = None,
              kyy: float | None = None) -> FeatureMMD:
    """MMD of one feature between generated rows ``x`` and reference rows ``y``.

    ``sigma`` and ``kyy`` (``mean_{i≠j} k(y_i, y_j)``) are computed from ``y`` when not given.
    """
    if sigma is None:
        sigma = bandwidth(y)
    if len(x) < 2 or len(y) < 2:
        m2 = 0.0
    else:
        if kyy is None:
            kyy = _mean_reference_kernel(y, sigma)
        kxx = _offdiag_mean(kernel_matrix(x, x, sigma))
        kxy = float(kernel_matrix(x, y, sigma).mean())
        m2 = kxx + kyy - 2.0 * kxy
    mmd = math.sqrt(max(0.0, m2))
    return FeatureMMD(mmd, math.exp(-mmd), sigma)


def mmd_score(generated: Sequence[nx.Graph], references: Sequence[nx.Graph]) -> MMDResult:
    """Convenience: MMD of two graph lists, σ from ``references`` (features computed here)."""
    ref = ReferenceSet.of(FeatureTable.of_graphs(references))
    return ref.score(FeatureTable.of_graphs(generated))
