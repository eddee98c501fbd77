"""Unit tests of score.embedding: the sparse greedy-modularity merges against the dense rule."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from pytest_graphinstruct.score.embedding import greedy_modularity


def _dense_greedy(adjacency: np.ndarray) -> np.ndarray:
    """The rule written out on the full gain matrix (the previous, O(n³) implementation): merge
    the adjacent pair with the largest integer gain, ties to the first pair in row-major order."""
    a = np.asarray(adjacency, dtype=np.int64)
    n = a.shape[0]
    owner = np.arange(n)
    two_m = int(a.sum())
    if n and two_m > 0:
        e = a.copy()
        dsum = a.sum(axis=1)
        active = np.ones(n, dtype=bool)
        upper = np.triu(np.ones((n, n), dtype=bool), 1)
        while True:
            ok = upper & (e > 0) & active[:, None] & active[None, :]
            if not ok.any():
                break
            masked = np.where(ok, two_m * e - np.outer(dsum, dsum), np.iinfo(np.int64).min)
            flat = int(np.argmax(masked))
            if masked.flat[flat] < 0:
                break
            i, j = divmod(flat, n)
            e[i, :] += e[j, :]
            e[:, i] += e[:, j]
            e[j, :] = 0
            e[:, j] = 0
            dsum[i] += dsum[j]
            dsum[j] = 0
            active[j] = False
            owner[owner == j] = i
    groups: dict[int, list[int]] = {}
    for v in range(n):
        groups.setdefault(int(owner[v]), []).append(v)
    labels = np.empty(n, dtype=np.int64)
    for c, members in enumerate(sorted(groups.values(), key=lambda g: (-len(g), g[0]))):
        labels[members] = c
    return labels


def _adjacency(g: nx.Graph) -> np.ndarray:
    return nx.to_numpy_array(g, nodelist=sorted(g), dtype=bool)


GRAPHS = {
    "gnp-sparse": lambda s: nx.gnp_random_graph(60, 0.05, seed=s),
    "gnp-dense": lambda s: nx.gnp_random_graph(50, 0.5, seed=s),
    "regular (all ties)": lambda s: nx.random_regular_graph(4, 40, seed=s),
    "ba hubs": lambda s: nx.barabasi_albert_graph(80, 2, seed=s),
    "caveman": lambda s: nx.relaxed_caveman_graph(6, 5, 0.1, seed=s),
    "disconnected": lambda s: nx.disjoint_union(nx.cycle_graph(7), nx.path_graph(5 + s % 3)),
}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", sorted(GRAPHS))
def test_sparse_merges_give_the_dense_rules_labels(kind: str, seed: int) -> None:
    a = _adjacency(GRAPHS[kind](seed))
    assert list(greedy_modularity(a)) == list(_dense_greedy(a))


def test_grid_and_complete_graph_ties_match_the_dense_rule() -> None:
    for g in (nx.grid_2d_graph(6, 7), nx.complete_graph(12), nx.star_graph(15)):
        a = _adjacency(nx.convert_node_labels_to_integers(g))
        assert list(greedy_modularity(a)) == list(_dense_greedy(a))
