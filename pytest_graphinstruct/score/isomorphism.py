"""Exact isomorphism classes of a handful of graphs, with a deterministic work bound.

Used by D1 uniqueness.  Promises:

* **Exact.**  Two graphs land in one class only when an isomorphism has been *found and
  verified* edge by edge, and in different classes only when non-isomorphism has been *proved*
  (an invariant differs, or an exhaustive search found no isomorphism).  Invariants (sizes,
  degree profile, a Weisfeiler–Lehman hash, the adjacency spectrum) only ever *separate* graphs,
  never merge them, so same-size regular graphs (which WL cannot tell apart) are still
  separated.
* **Directed-aware.**  Directedness is part of the class: a directed and an undirected graph are
  never isomorphic; directed graphs are compared as directed graphs (arc orientation matters).
  Self-loops are structure (they count).  Node/edge attributes are ignored.
* **Bounded and deterministic.**  The search is an individualisation–refinement procedure (the
  idea behind nauty/bliss, written here with vectorised colour refinement): colour refinement on
  the disjoint union of the two graphs, then branching on one vertex of the smallest non-trivial
  colour class against every same-coloured vertex of the other graph.  Its cost is counted in
  *edge visits* (deterministic, unlike wall time); when a pair exceeds :data:`ISO_WORK_BUDGET`
  the pair is *undecided*, and graphs larger than :data:`ISO_MAX_NODES` nodes or
  :data:`ISO_MAX_EDGES` edges are compared by invariants only (undecided when those agree).
  Undecided pairs are reported (:attr:`IsoClasses.exact` is ``False``, with a lower and an upper
  bound on the class count) — never guessed.

Soundness of the refinement: colours are computed by one deterministic, relabelling-invariant
function of the union's structure (hash collisions can only make the partition *coarser*, which
costs search time but never correctness), so corresponding vertices of isomorphic graphs always
receive equal colours; a colour-count mismatch between the two sides therefore proves that no
isomorphism extends the current individualisation, and a discrete partition yields the unique
candidate bijection, which is verified on the edge sets.  At every search node the bijection
pairing same-coloured vertices in index order is also tried and verified — a success proves
isomorphism early (graphs with many automorphisms: stars, empty graphs, grids).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import networkx as nx
import numpy as np

from pytest_graphinstruct.kernels.blas import single_blas_thread

#: Graphs with more nodes are compared by invariants only (an undecided pair if these agree).
ISO_MAX_NODES = 5_000
#: Graphs with more edges are compared by invariants only.
ISO_MAX_EDGES = 50_000
#: Largest number of edge visits (summed over refinement rounds and search nodes) spent on one
#: pair before it is declared undecided.  About 1–2 s of numpy work on the CI machine.
ISO_WORK_BUDGET = 30_000_000
#: Graphs up to this many nodes get the spectral invariant (dense eigen-solve, O(n³)).
SPECTRUM_MAX_NODES = 1_500
#: Relative spectral difference taken as proof of non-isomorphism (round-off is ~1e-13).
SPECTRUM_TOL = 1e-6
#: The WL bucket hash is computed only below this many edges (it is a bucket key, not a verdict).
WL_MAX_EDGES = 50_000

_P = np.int64(2_147_483_647)  # 2**31 - 1: hashed colours are < _P, sums of < 2**22 stay exact


@dataclass(frozen=True)
class IsoClasses:
    """Isomorphism classes of a sequence of graphs.

    Attributes:
        labels: the class of each input graph (0, 1, … in order of first appearance).  When
            some pair is undecided, an undecided graph gets a class of its own (the upper
            bound's assignment).
        classes: the number of classes — proven exact when :attr:`exact`, else the upper bound.
        classes_min: a lower bound on the number of classes (equal to ``classes`` when exact):
            every graph whose own class rests on an undecided comparison is assumed to match.
        undecided_pairs: pairs of input indices whose isomorphism could not be decided within
            the caps.
        exact: no pair was undecided.
    """

    labels: tuple[int, ...]
    classes: int
    classes_min: int
    undecided_pairs: tuple[tuple[int, int], ...] = field(default=())

    @property
    def exact(self) -> bool:
        return not self.undecided_pairs


def isomorphism_classes(graphs: Sequence[nx.Graph], *,
                        work_budget: int = ISO_WORK_BUDGET) -> IsoClasses:
    """Partition ``graphs`` into isomorphism classes (see the module docstring for promises).

    Each graph is compared with one representative of every existing class in its invariant
    bucket, in input order, so the result depends only on the graphs and their order.
    """
    prepared = [_Prepared.of(g) for g in graphs]
    reps: list[int] = []  # representative graph index per class
    labels: list[int] = []
    undecided: list[tuple[int, int]] = []
    doubtful = 0  # classes opened although a comparison with an older class was undecided
    for i, p in enumerate(prepared):
        found = None
        opened_doubtfully = False
        for c, r in enumerate(reps):
            q = prepared[r]
            if q.key != p.key:  # differing invariants: not isomorphic
                continue
            verdict = _isomorphic(q, p, work_budget)
            if verdict is True:
                found = c
                break
            if verdict is None:
                undecided.append((r, i))
                opened_doubtfully = True
        if found is None:
            reps.append(i)
            labels.append(len(reps) - 1)
            doubtful += opened_doubtfully
        else:
            labels.append(found)
    return IsoClasses(tuple(labels), len(reps), len(reps) - doubtful, tuple(undecided))


def is_isomorphic(g: nx.Graph, h: nx.Graph, *, work_budget: int = ISO_WORK_BUDGET) -> bool | None:
    """``True``/``False`` when decided exactly, ``None`` when a cap was hit."""
    a, b = _Prepared.of(g), _Prepared.of(h)
    if a.key != b.key:
        return False
    return _isomorphic(a, b, work_budget)


# -- preparation ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Prepared:
    """A graph as integer arrays plus its cheap invariants (the bucket key)."""

    graph: nx.Graph
    directed: bool
    n: int
    src: np.ndarray  # edge endpoints as node indices (undirected: each edge once)
    dst: np.ndarray
    init: np.ndarray  # initial colour key per node (degree profile), int64 rows
    key: tuple[object, ...]  # cheap invariants: directed, n, m, self-loops, degree profile

    @classmethod
    def of(cls, g: nx.Graph) -> _Prepared:
        nodes = list(g)
        index = {v: i for i, v in enumerate(nodes)}
        n = len(nodes)
        m = g.number_of_edges()
        directed = g.is_directed()
        edges = np.fromiter((x for u, v in g.edges() for x in (index[u], index[v])),
                            dtype=np.int64, count=2 * m).reshape(m, 2)
        src, dst = edges[:, 0].copy(), edges[:, 1].copy()
        loops = np.bincount(src[src == dst], minlength=n)
        if directed:
            out_d = np.bincount(src, minlength=n)
            in_d = np.bincount(dst, minlength=n)
            init = np.stack([out_d, in_d, loops], axis=1).astype(np.int64)
        else:
            deg = np.bincount(src, minlength=n) + np.bincount(dst, minlength=n)
            init = np.stack([deg, loops], axis=1).astype(np.int64)
        profile = tuple(map(tuple, init[np.lexsort(init.T[::-1])].tolist())) if n else ()
        key = (directed, n, m, int(loops.sum()), profile)
        return cls(g, directed, n, src, dst, init, key)

    @cached_property
    def wl(self) -> str | None:
        """3-round WL hash (a bucket key, computed only when the cheap key collides)."""
        return _wl_hash(self.graph) if self.m <= WL_MAX_EDGES else None

    @property
    def m(self) -> int:
        return len(self.src)

    @property
    def small_enough(self) -> bool:
        return self.n <= ISO_MAX_NODES and self.m <= ISO_MAX_EDGES

    @cached_property
    def spectrum(self) -> np.ndarray | None:
        """Sorted adjacency eigenvalues (singular values when directed); ``None`` above
        :data:`SPECTRUM_MAX_NODES`.  An isomorphism invariant used to *prove* non-isomorphism
        (cospectral pairs fall through to the search)."""
        if self.n > SPECTRUM_MAX_NODES:
            return None
        adj = np.zeros((self.n, self.n))
        adj[self.src, self.dst] = 1.0
        with single_blas_thread():  # small matrices: BLAS threads cost more than they give
            if not self.directed:
                adj[self.dst, self.src] = 1.0
                return np.linalg.eigvalsh(adj)
            return np.sort(np.linalg.svd(adj, compute_uv=False))


def _wl_hash(g: nx.Graph) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # networkx 3.5 notes that unlabelled hashes changed
        return nx.weisfeiler_lehman_graph_hash(g, iterations=3)


# -- the pairwise test ----------------------------------------------------------------------------

class _OutOfBudget(Exception):
    pass


def _isomorphic(a: _Prepared, b: _Prepared, budget: int) -> bool | None:
    """Exact test for two graphs with equal cheap keys; ``None`` when a cap is hit."""
    if a.n == 0 or _same_labelled(a.graph, b.graph):
        return True
    if a.wl != b.wl:  # an invariant differs
        return False
    if not (a.small_enough and b.small_enough):
        return None
    if _spectra_differ(a, b):
        return False
    search = _Search(a, b, budget)
    try:
        return search.run()
    except _OutOfBudget:
        return None


def _same_labelled(g: nx.Graph, h: nx.Graph) -> bool:
    """Same node ids and same edges (the common case of a model repeating itself verbatim)."""
    if set(g) != set(h):
        return False
    if g.is_directed():
        return set(g.edges()) == set(h.edges())
    return {frozenset(e) for e in g.edges()} == {frozenset(e) for e in h.edges()}


def _spectra_differ(a: _Prepared, b: _Prepared) -> bool:
    """Whether the spectra differ by far more than eigen-solver round-off (a proof that the
    graphs are not isomorphic: isomorphic graphs have identical spectra)."""
    sa, sb = a.spectrum, b.spectrum
    if sa is None or sb is None:
        return False
    scale = max(1.0, float(np.abs(sa).max(initial=0.0)), float(np.abs(sb).max(initial=0.0)))
    return bool(np.abs(sa - sb).max(initial=0.0) > SPECTRUM_TOL * scale)


class _Search:
    """Individualisation–refinement on the disjoint union of ``a`` and ``b``."""

    def __init__(self, a: _Prepared, b: _Prepared, budget: int) -> None:
        self.a, self.b = a, b
        self.n = a.n
        self.directed = a.directed
        self.src = np.concatenate([a.src, b.src + a.n])
        self.dst = np.concatenate([a.dst, b.dst + a.n])
        self.size = 2 * a.n
        self.budget = budget
        self.work = 0
        _, init = np.unique(np.concatenate([a.init, b.init]), axis=0, return_inverse=True)
        self.init = init.reshape(-1).astype(np.int64)

    def run(self) -> bool:
        """Depth-first individualisation–refinement (iterative: no recursion limit)."""
        n = self.n
        stack = [iter([self.init])]
        while stack:
            colours = next(stack[-1], None)
            if colours is None:
                stack.pop()
                continue
            refined = self._refine(colours)
            if refined is None:
                continue
            if self._verify(refined):  # the colour-order bijection already works
                return True
            left = refined[:n]
            counts = np.bincount(left)
            if counts.max() == 1:  # discrete: the only candidate failed
                continue
            sizes = np.where(counts > 1, counts, np.iinfo(np.int64).max)
            target = int(np.argmin(sizes))  # smallest non-trivial class, lowest colour on ties
            v = int(np.flatnonzero(left == target)[0])
            stack.append(self._branches(refined, v, target))
        return False

    def _branches(self, colours: np.ndarray, v: int, target: int) -> Iterator[np.ndarray]:
        """Individualise ``a``-vertex ``v`` together with each same-coloured ``b``-vertex."""
        n = self.n
        fresh = int(colours.max()) + 1
        for w in np.flatnonzero(colours[n:] == target):
            branch = colours.copy()
            branch[v] = fresh
            branch[n + int(w)] = fresh
            yield branch

    def _spend(self, amount: int) -> None:
        self.work += amount
        if self.work > self.budget:
            raise _OutOfBudget

    def _balanced(self, colours: np.ndarray, k: int) -> bool:
        left = np.bincount(colours[: self.n], minlength=k)
        right = np.bincount(colours[self.n:], minlength=k)
        return bool(np.array_equal(left, right))

    def _refine(self, colours: np.ndarray) -> np.ndarray | None:
        """Refine to a stable colouring; ``None`` as soon as the two sides disagree."""
        k = int(colours.max()) + 1
        while True:
            if not self._balanced(colours, k):
                return None
            self._spend(len(self.src) + self.size)
            signature = np.zeros(self.size, dtype=np.int64)
            for salt in (0x9E3779B1, 0x85EBCA77):
                h = _mix(colours, salt)
                parts: tuple[np.ndarray, ...]
                if self.directed:
                    parts = (_neighbour_sum(self.src, h[self.dst], self.size),
                             _neighbour_sum(self.dst, h[self.src], self.size))
                else:
                    parts = (_neighbour_sum(self.src, h[self.dst], self.size)
                             + _neighbour_sum(self.dst, h[self.src], self.size),)
                for part in parts:
                    signature = _mix(signature ^ part, salt)
            # old colour in the high bits: the new partition refines the old one
            _, new = np.unique((colours << np.int64(31)) | signature, return_inverse=True)
            new = new.reshape(-1).astype(np.int64)
            k_new = int(new.max()) + 1
            if k_new == k:
                return colours
            colours, k = new, k_new

    def _verify(self, colours: np.ndarray) -> bool:
        """Whether the colour-order bijection maps ``a``'s edges exactly onto ``b``'s.

        The bijection pairs the i-th ``a``-vertex of each colour with the i-th ``b``-vertex of
        that colour (index order); for a discrete colouring it is the only candidate.
        """
        n = self.n
        self._spend(len(self.src) + self.size)
        order_a = np.lexsort((np.arange(n), colours[:n]))
        order_b = np.lexsort((np.arange(n), colours[n:]))
        phi = np.empty(n, dtype=np.int64)
        phi[order_a] = order_b  # a-node i -> b-node phi[i]
        a, b = self.a, self.b
        mapped = np.stack([phi[a.src], phi[a.dst]], axis=1)
        target = np.stack([b.src, b.dst], axis=1)
        if not self.directed:
            mapped.sort(axis=1)
            target = np.sort(target, axis=1)
        mapped = mapped[np.lexsort(mapped.T[::-1])]
        target = target[np.lexsort(target.T[::-1])]
        return bool(np.array_equal(mapped, target))


def _mix(colours: np.ndarray, salt: int) -> np.ndarray:
    """A fixed pseudo-random map colour → [0, 2**31 − 1) (deterministic, label-free)."""
    x = (colours.astype(np.uint64) + np.uint64(salt)) * np.uint64(0x9E3779B97F4A7C15)
    x ^= x >> np.uint64(29)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(32)
    return (x % np.uint64(_P)).astype(np.int64)


def _neighbour_sum(at: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """``sum(values[e] for edges e with endpoint at[e] == v)`` per vertex, exactly.

    Values are < 2**31 and a vertex has < 2**22 incident edges here, so every partial sum is an
    integer below 2**53 and float64 accumulation is exact in any order (relabelling-invariant).
    """
    return np.bincount(at, weights=values.astype(np.float64), minlength=size).astype(np.int64)
