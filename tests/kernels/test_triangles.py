"""kernels.triangles: exact triangle counts, clustering and transitivity equal to networkx's."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from pytest_graphinstruct.kernels import triangles as tr


def _cases() -> dict[str, nx.Graph]:
    d = nx.gnp_random_graph(40, 0.2, seed=3, directed=True)
    d.add_edge(5, 5)  # a self-loop is ignored
    multi_dir = nx.DiGraph([(0, 1), (1, 0), (1, 2), (2, 0), (3, 3)])
    labelled = nx.relabel_nodes(nx.karate_club_graph(), {i: f"n{i}" for i in range(34)})
    return {
        "empty": nx.Graph(), "one node": nx.empty_graph(1), "edgeless": nx.empty_graph(5),
        "triangle": nx.complete_graph(3), "k7": nx.complete_graph(7),
        "karate (string ids)": labelled, "gnp": nx.gnp_random_graph(120, 0.15, seed=1),
        "ba hubs": nx.barabasi_albert_graph(300, 4, seed=2), "directed + loop": d,
        "reciprocal arcs": multi_dir, "star": nx.star_graph(30),
    }


@pytest.mark.parametrize("dense_nodes", [tr.DENSE_NODES, 0], ids=["as shipped", "all sparse"])
@pytest.mark.parametrize("name", sorted(_cases()))
def test_counts_clustering_and_transitivity_equal_networkx(
        name: str, dense_nodes: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tr, "DENSE_NODES", dense_nodes)
    g = _cases()[name]
    u = g.to_undirected(as_view=True) if g.is_directed() else g
    simple = nx.Graph(u)
    simple.remove_edges_from(list(nx.selfloop_edges(simple)))
    tri, deg = tr.graph_triangles(g)
    assert tri.tolist() == [nx.triangles(simple, v) for v in g]
    assert deg.tolist() == [simple.degree(v) for v in g]
    if len(g):
        assert tr.average_clustering(g) == nx.average_clustering(u)  # the same float, exactly
    assert tr.transitivity(g) == nx.transitivity(u)


def test_row_chunks_do_not_change_the_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    g = nx.gnp_random_graph(150, 0.2, seed=7)
    dense = tr.graph_triangles(g)[0]  # 150 nodes: the dense product
    monkeypatch.setattr(tr, "DENSE_NODES", 0)
    whole = tr.graph_triangles(g)[0]
    assert np.array_equal(whole, dense)
    monkeypatch.setattr(tr, "_CHUNK_WORK", 50)  # many small chunks
    assert np.array_equal(tr.graph_triangles(g)[0], whole)
