"""Canonical node order of an undirected simple graph (individualization–refinement search).

D3 must not depend on how a model named or ordered its nodes.  Every D3 computation therefore
runs on the *canonical form* of the graph's undirected simple view: the nodes are put in an
order that depends only on the graph's structure, so two isomorphic inputs (any relabelling, any
insertion order) yield the very same adjacency matrix, and every float computation after that
sees bit-identical inputs.

Algorithm (the classic individualization–refinement scheme of McKay's nauty, written small):

* *colour refinement*: a node's colour is refined by the sorted multiset of its neighbours'
  colours until the partition is equitable; new colours are ranks of the (old colour, degree,
  sorted neighbour colours) rows in lexicographic order, so they are isomorphism-invariant;
* *search tree*: while a cell (colour class) has several nodes, take the smallest non-singleton
  cell (ties: lowest colour), and branch on individualizing each of its nodes, then refine;
  each leaf (discrete partition) is an order, its *certificate* the packed upper triangle of the
  reordered adjacency matrix; the canonical order is the leaf with the smallest certificate;
* *components*: a disconnected graph is the concatenation of its canonically ordered connected
  components, sorted by (size, certificate);
* *pruning* that never changes the result: (1) twins (``N(u) = N(v)`` or ``N[u] = N[v]``) are
  interchangeable, so a cell made only of twins is individualized in one step and twins are one
  orbit; (2) two leaves with equal certificates give an automorphism, which prunes the children
  in one orbit and lets the search jump back to where the two paths diverged.

Promise: when :attr:`Canonical.exact` is true (the search finished within ``max_leaves``), the
canonical adjacency matrix and certificate are identical for all isomorphic inputs.  The budget
is only reached by large, highly regular graphs with few automorphisms (e.g. big strongly
regular graphs); then the best order found is used and ``exact`` is false.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np

DEFAULT_MAX_LEAVES = 2048


@dataclass(frozen=True, eq=False)
class Canonical:
    """The canonical form of one graph.

    Attributes:
        order: ``order[i]`` is the input index of the node placed at canonical position ``i``.
        adjacency: the canonical adjacency matrix (``bool``, symmetric, zero diagonal, read-only).
        certificate: bytes that are equal exactly for isomorphic graphs (when ``exact``).
        exact: the search finished; the form is canonical.
        leaves: number of search-tree leaves visited.
    """

    order: np.ndarray
    adjacency: np.ndarray
    certificate: bytes
    exact: bool
    leaves: int

    @property
    def n(self) -> int:
        return int(self.adjacency.shape[0])


def undirected_adjacency(graph: nx.Graph) -> tuple[list[Hashable], np.ndarray]:
    """The nodes (in insertion order) and the adjacency matrix of the undirected simple view.

    Direction is dropped (an arc in either direction is an edge) and self-loops are removed.
    """
    nodes = list(graph.nodes())
    index = {v: i for i, v in enumerate(nodes)}
    a = np.zeros((len(nodes), len(nodes)), dtype=bool)
    for u, v in graph.edges():
        if u != v:
            i, j = index[u], index[v]
            a[i, j] = a[j, i] = True
    return nodes, a


def canonical_graph(graph: nx.Graph, *, max_leaves: int = DEFAULT_MAX_LEAVES) -> Canonical:
    """:func:`canonical_form` of the undirected simple view of ``graph``."""
    return canonical_form(undirected_adjacency(graph)[1], max_leaves=max_leaves)


def canonical_form(adjacency: np.ndarray, *, max_leaves: int = DEFAULT_MAX_LEAVES) -> Canonical:
    """The canonical order of a symmetric boolean adjacency matrix (zero diagonal).

    Raises:
        ValueError: the matrix is not square, not symmetric or has a non-zero diagonal.
    """
    a = np.asarray(adjacency, dtype=bool)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("adjacency must be a square matrix")
    if not np.array_equal(a, a.T) or a.diagonal().any():
        raise ValueError("adjacency must be symmetric with a zero diagonal")
    n = a.shape[0]
    labels = _components(a)
    count = int(labels.max()) + 1 if n else 0
    if count <= 1:
        search = _Search(a, max_leaves)
        order, _ = search.run()
        exact, leaves = search.exact, search.leaves
    else:
        # a disjoint union: canonical components, sorted by (size, certificate)
        parts = []
        exact, leaves = True, 0
        for c in range(count):
            members = np.nonzero(labels == c)[0]
            sub = _Search(a[np.ix_(members, members)], max_leaves)
            sub_order, sub_cert = sub.run()
            exact, leaves = exact and sub.exact, leaves + sub.leaves
            parts.append((len(members), sub_cert, members[sub_order]))
        parts.sort(key=lambda p: (p[0], p[1]))
        order = np.concatenate([p[2] for p in parts]).astype(np.int64)
    canon = a[np.ix_(order, order)]
    canon.setflags(write=False)
    order.setflags(write=False)
    return Canonical(order, canon, _certificate(a, order), exact, leaves)


def _components(a: np.ndarray) -> np.ndarray:
    """Connected-component label of each node (labels in order of first node)."""
    n = a.shape[0]
    labels = np.full(n, -1, dtype=np.int64)
    count = 0
    for start in range(n):
        if labels[start] >= 0:
            continue
        labels[start] = count
        frontier = np.array([start])
        while frontier.size:
            reached = np.nonzero(a[frontier].any(axis=0) & (labels < 0))[0]
            labels[reached] = count
            frontier = reached
        count += 1
    return labels


def _certificate(a: np.ndarray, order: np.ndarray) -> bytes:
    n = a.shape[0]
    iu = np.triu_indices(n, 1)
    bits = a[np.ix_(order, order)][iu]
    return n.to_bytes(4, "little") + np.packbits(bits).tobytes()


def _row_ranks(keys: np.ndarray) -> np.ndarray:
    """Dense ranks of the rows of an integer matrix in lexicographic order (0 = smallest)."""
    order = np.lexsort(keys.T[::-1])
    ordered = keys[order]
    change = np.any(ordered[1:] != ordered[:-1], axis=1)
    ranks = np.empty(keys.shape[0], dtype=np.int64)
    ranks[order] = np.concatenate([[0], np.cumsum(change)])
    return ranks


def _ranks(values: np.ndarray) -> np.ndarray:
    """Dense ranks of 1-D integer values (0 = smallest)."""
    _, inv = np.unique(values, return_inverse=True)
    return inv.reshape(-1).astype(np.int64)


class _Search:
    """One individualization–refinement search (see the module docstring)."""

    def __init__(self, a: np.ndarray, max_leaves: int) -> None:
        self.a = a
        self.n = n = a.shape[0]
        self.max_leaves = max_leaves
        self.leaves = 0
        self.exact = True
        src, dst = np.nonzero(a)  # both directions, row-major
        self.src, self.dst = src.astype(np.int64), dst.astype(np.int64)
        self.deg = a.sum(axis=1).astype(np.int64)
        self.maxdeg = int(self.deg.max()) if n else 0
        starts = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(self.deg, out=starts[1:])
        self.starts = starts
        self.twin = self._twin_classes()
        self.generators: list[np.ndarray] = []
        self.first: tuple[bytes, np.ndarray, tuple[int, ...]] | None = None
        self.best: tuple[bytes, np.ndarray, tuple[int, ...]] | None = None

    # -- twins -------------------------------------------------------------------------------
    def _twin_classes(self) -> np.ndarray:
        """Class id per node: nodes with equal open or equal closed neighbourhoods share one."""
        n = self.n
        parent = list(range(n))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for closed in (False, True):
            rows = self.a.copy()
            if closed:
                np.fill_diagonal(rows, True)
            seen: dict[bytes, int] = {}
            for v in range(n):
                key = np.packbits(rows[v]).tobytes()
                u = seen.setdefault(key, v)
                if u != v:
                    parent[find(v)] = find(u)
        return np.array([find(v) for v in range(n)], dtype=np.int64)

    # -- refinement --------------------------------------------------------------------------
    def _refine(self, colours: np.ndarray) -> np.ndarray:
        n = self.n
        c = colours
        count = int(c.max()) + 1 if n else 0
        if n == 0 or self.src.size == 0:
            return c
        local = np.arange(self.src.size, dtype=np.int64) - self.starts[self.src]
        while count < n:
            nc = c[self.dst]
            idx = np.lexsort((nc, self.src))
            keys = np.full((n, self.maxdeg + 2), -1, dtype=np.int64)
            keys[:, 0] = c
            keys[:, 1] = self.deg
            keys[self.src[idx], 2 + local] = nc[idx]
            new = _row_ranks(keys)
            new_count = int(new.max()) + 1
            if new_count == count:
                return c
            c, count = new, new_count
        return c

    @staticmethod
    def _individualize(colours: np.ndarray, vertices: Sequence[int]) -> np.ndarray:
        """Give ``vertices`` (in this order) their own colours just before the rest of the cell."""
        k = len(vertices)
        key = colours * (k + 1) + k
        for i, v in enumerate(vertices):
            key[v] = colours[v] * (k + 1) + i
        return _ranks(key)

    # -- search ------------------------------------------------------------------------------
    def run(self) -> tuple[np.ndarray, bytes]:
        n = self.n
        if n == 0:
            return np.zeros(0, dtype=np.int64), _certificate(self.a, np.zeros(0, dtype=np.int64))
        root = self._refine(_ranks(self.deg))
        self._dfs(root)
        assert self.best is not None
        return self.best[1], self.best[0]

    def _target_cell(self, colours: np.ndarray) -> np.ndarray | None:
        counts = np.bincount(colours)
        multi = np.nonzero(counts > 1)[0]
        if multi.size == 0:
            return None
        sizes = counts[multi]
        colour = multi[int(np.argmin(sizes))]  # smallest cell, lowest colour on ties
        return np.nonzero(colours == colour)[0]

    def _leaf(self, colours: np.ndarray, path: tuple[int, ...]) -> int | None:
        """Record a leaf; return the depth to jump back to when it closes a subtree."""
        self.leaves += 1
        order = np.argsort(colours, kind="stable")
        cert = _certificate(self.a, order)
        if self.first is None:
            self.first = self.best = (cert, order, path)
            return None
        for known in (self.first, self.best):
            assert known is not None
            if cert == known[0]:
                perm = np.empty(self.n, dtype=np.int64)
                perm[known[1]] = order  # maps the known leaf's order onto this one
                self.generators.append(perm)
                return _divergence(path, known[2])
        assert self.best is not None
        if cert < self.best[0]:
            self.best = (cert, order, path)
        return None

    def _orbit_roots(self, path: tuple[int, ...], cell: np.ndarray) -> dict[int, int]:
        """Orbit representative of each cell node under automorphisms known to fix ``path``."""
        parent: dict[int, int] = {}

        def find(x: int) -> int:
            parent.setdefault(x, x)
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        def union(x: int, y: int) -> None:
            rx, ry = find(x), find(y)
            if rx != ry:
                parent[max(rx, ry)] = min(rx, ry)

        cell_set = {int(v) for v in cell}
        by_twin: dict[int, int] = {}
        for v in cell_set:
            t = int(self.twin[v])
            union(v, by_twin.setdefault(t, v))
        plist = list(path)
        for g in self.generators:
            if plist and not np.array_equal(g[plist], plist):
                continue
            for v in cell_set:
                w = int(g[v])
                if w in cell_set:
                    union(v, w)
        return {v: find(v) for v in cell_set}

    def _descend(self, colours: np.ndarray,
                 path: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, ...], np.ndarray | None]:
        """Apply the one-child (all-twin cell) steps; return colours, path and target cell."""
        while True:
            cell = self._target_cell(colours)
            if cell is None or len({int(self.twin[v]) for v in cell}) > 1:
                return colours, path, cell
            members = [int(v) for v in cell]
            colours = self._refine(self._individualize(colours, members))
            path = (*path, *members)

    def _dfs(self, root: np.ndarray) -> None:
        """Depth-first search of the tree (explicit stack: paths can be as long as n/2)."""
        colours, path, cell = self._descend(root, ())
        if cell is None:
            self._leaf(colours, path)
            return
        # frame: colours, path, cell, explored children, next position in cell
        stack: list[tuple[np.ndarray, tuple[int, ...], np.ndarray, list[int], list[int]]] = [
            (colours, path, cell, [], [0])]
        jump: int | None = None
        while stack:
            colours, path, cell, explored, pos = stack[-1]
            if jump is not None:
                if jump < len(path):
                    stack.pop()
                    continue
                jump = None
            if self.leaves >= self.max_leaves:
                self.exact = False
                return
            v = self._next_child(path, cell, explored, pos)
            if v is None:
                stack.pop()
                continue
            explored.append(v)
            child, cpath, ccell = self._descend(
                self._refine(self._individualize(colours, [v])), (*path, v))
            if ccell is None:
                jump = self._leaf(child, cpath)
            else:
                stack.append((child, cpath, ccell, [], [0]))

    def _next_child(self, path: tuple[int, ...], cell: np.ndarray, explored: list[int],
                    pos: list[int]) -> int | None:
        """The next cell node not in the orbit of an explored one (``pos`` is advanced)."""
        while pos[0] < len(cell):
            v = int(cell[pos[0]])
            pos[0] += 1
            if not explored:
                return v
            roots = self._orbit_roots(path, cell)
            if all(roots[v] != roots[u] for u in explored):
                return v
        return None


def _divergence(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))
