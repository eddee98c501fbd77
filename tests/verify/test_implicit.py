"""Implicit-constraint inference: rules, de-duplication, merge, and soundness on real graphs."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.verify.checks import check_constraint
from pytest_graphinstruct.verify.implicit import infer_implicit, merge_implicit, semantic_key
from pytest_graphinstruct.verify.properties import GraphFacts
from pytest_graphinstruct.verify.verdict import Source
from tests.verify._graphgen import C, orient, relabel_randomly


def inferred(*texts: str) -> list[str]:
    return [c.text for c in infer_implicit([C(t) for t in texts])]


@pytest.mark.parametrize(("explicit", "expected"), [
    (["graph_type=tree", "num_nodes=10"], ["num_edges=9", "connected=true", "acyclic=true"]),
    (["graph_type=tree"], ["connected=true", "acyclic=true"]),
    (["graph_type=forest", "num_nodes=10"], ["acyclic=true"]),
    (["graph_type=path", "num_nodes=6"],
     ["connected=true", "acyclic=true", "num_edges=5", "max_degree=2"]),
    (["graph_type=cycle", "num_nodes=7"], ["connected=true", "degree=2", "num_edges=7"]),
    (["graph_type=complete", "num_nodes=6"], ["num_edges=15", "degree=5"]),
    (["graph_type=complete", "num_nodes=6", "directed=true"], ["num_edges=30", "degree=10"]),
    (["graph_type=complete"], []),
    (["graph_type=star", "num_nodes=8"], ["connected=true", "num_edges=7", "acyclic=true"]),
    (["graph_type=wheel", "num_nodes=8"], ["num_edges=14", "connected=true", "planar=true"]),
    (["graph_type=grid", "num_nodes=12"], ["connected=true", "planar=true", "bipartite=true"]),
    (["graph_type=regular", "num_nodes=10", "degree=3"], ["num_edges=15"]),
    (["num_nodes=10", "degree=4"], ["num_edges=20"]),
    (["num_nodes=5", "degree=3"], []),  # infeasible: 15 is odd, nothing to infer
    (["num_nodes=10", "degree<=4"], []),
    (["graph_type=bipartite", "bipartite_sides=3,4"], ["bipartite=true", "num_edges<=12"]),
    (["graph_type=bipartite", "bipartite_sides=3,4", "directed=true"],
     ["bipartite=true", "num_edges<=24"]),
    (["graph_type=complete_bipartite", "bipartite_sides=3,4"],
     ["bipartite=true", "num_nodes=7", "num_edges=12"]),
    (["graph_type=complete_bipartite"], ["bipartite=true"]),
    (["graph_type=dag", "num_nodes=5"], ["directed=true", "acyclic=true"]),
    (["graph_type=connected"], ["connected=true"]),
    (["graph_type=planar"], ["planar=true"]),
    (["graph_type=acyclic"], ["acyclic=true"]),
    (["graph_type!=tree", "num_nodes=4"], []),
    (["num_nodes=4", "density<=0.5"], []),
    ([], []),
])
def test_rules(explicit: list[str], expected: list[str]) -> None:
    assert inferred(*explicit) == expected


def test_explicit_duplicates_are_dropped() -> None:
    assert inferred("graph_type=tree", "num_nodes=10", "num_edges=9") == [
        "connected=true", "acyclic=true"]
    # equivalent spellings count as already present
    assert inferred("graph_type=tree", "connected!=false", "acyclic==true") == []
    assert inferred("graph_type=path", "num_nodes=3", "max_degree<=2") == [
        "connected=true", "acyclic=true", "num_edges=2"]
    # cycle's degree=2 and the degree rule give the same edge count once
    assert inferred("graph_type=cycle", "num_nodes=5", "degree=2") == [
        "connected=true", "num_edges=5"]


def test_conflicting_inference_is_kept() -> None:
    # the instruction is inconsistent; both constraints stay so the answer cannot satisfy both
    assert "num_edges=9" in inferred("graph_type=tree", "num_nodes=10", "num_edges=12")


def test_inferred_text_is_canonical() -> None:
    (c,) = infer_implicit([C("graph_type=forest")])
    assert c.text == c.canonical == "acyclic=true"


def test_semantic_key() -> None:
    assert semantic_key(C("connected!=false")) == semantic_key(C("connected=true"))
    assert semantic_key(C("min_degree=2")) == semantic_key(C("min_degree>=2"))
    assert semantic_key(C("density<=0.5")) == semantic_key(C("density<=0.50"))
    assert semantic_key(C("num_edges=3")) != semantic_key(C("num_edges<=3"))


def test_merge_implicit() -> None:
    explicit = [C(t) for t in ("graph_type=tree", "num_nodes=14", "directed=true",
                               "num_edges=13")]
    dataset = [C(t) for t in ("num_edges=13", "acyclic=true", "connected=true")]
    ds, inf = merge_implicit(explicit, dataset)
    assert [c.text for c in ds] == ["num_edges=13", "acyclic=true", "connected=true"]
    assert inf == ()
    ds, inf = merge_implicit(explicit[:2], [C("acyclic=true")])
    assert [c.text for c in inf] == ["num_edges=13", "connected=true"]
    assert merge_implicit([], []) == ((), ())


# -- soundness: graphs of the type satisfy every inferred constraint ------------------------------

def _instances(kind: str, n: int, k: int, seed: int) -> list[tuple[nx.Graph, list[str]]]:
    """(graph, explicit constraints) pairs that satisfy the explicit constraints."""
    out: list[tuple[nx.Graph, list[str]]] = []
    if kind == "tree":
        t = nx.random_labeled_tree(n, seed=seed)
        out += [(t, []), (orient(t, "out"), ["directed=true"]),
                (orient(t, "in"), ["directed=true"])]
    elif kind == "forest":
        f = nx.disjoint_union(nx.random_labeled_tree(n, seed=seed), nx.path_graph(k))
        out += [(f, []), (orient(f, "out"), ["directed=true"])]
    elif kind == "path":
        out += [(nx.path_graph(n), []),
                (nx.path_graph(n, create_using=nx.DiGraph), ["directed=true"])]
    elif kind == "cycle" and n >= 3:
        out += [(nx.cycle_graph(n), []),
                (nx.cycle_graph(n, create_using=nx.DiGraph), ["directed=true"])]
    elif kind == "complete":
        out += [(nx.complete_graph(n), []),
                (nx.complete_graph(n, create_using=nx.DiGraph), ["directed=true"])]
    elif kind == "star":
        s = nx.star_graph(n - 1)
        out += [(s, []), (orient(s, "in"), ["directed=true"])]
    elif kind == "wheel" and n >= 4:
        w = nx.wheel_graph(n)
        out += [(w, []), (orient(w, "random", seed), ["directed=true"])]
    elif kind == "grid":
        g = nx.grid_2d_graph(max(2, n // 3), k + 1)
        out += [(g, []), (orient(g, "random", seed), ["directed=true"])]
    elif kind == "complete_bipartite":
        g = nx.complete_bipartite_graph(n, k)
        out += [(g, [f"bipartite_sides={n},{k}"]),
                (orient(g, "random", seed), [f"bipartite_sides={n},{k}", "directed=true"])]
    elif kind == "bipartite":
        g = nx.bipartite.random_graph(n, k, 0.5, seed=seed)
        out += [(g, [f"bipartite_sides={n},{k}"]),
                (orient(g, "both"), [f"bipartite_sides={n},{k}", "directed=true"])]
    elif kind == "regular" and (n * min(k, n - 1)) % 2 == 0:
        d = min(k, n - 1)
        out += [(nx.random_regular_graph(d, n, seed=seed), [f"degree={d}"])]
    elif kind == "dag":
        g = orient(nx.gnp_random_graph(n, 0.4, seed=seed), "out")
        out += [(g, ["directed=true"])]
    elif kind in ("connected", "planar", "acyclic"):
        g = nx.random_labeled_tree(n, seed=seed)
        out += [(g, [])]
    return out


@given(st.sampled_from(["tree", "forest", "path", "cycle", "complete", "star", "wheel", "grid",
                        "complete_bipartite", "bipartite", "regular", "dag", "connected",
                        "planar", "acyclic"]),
       st.integers(1, 9), st.integers(1, 4), st.integers(0, 10_000))
def test_inferred_constraints_hold_on_graphs_of_the_type(kind: str, n: int, k: int,
                                                         seed: int) -> None:
    for g, extra in _instances(kind, n, k, seed):
        g = relabel_randomly(g, seed)
        f = GraphFacts(g)
        explicit = [C(f"graph_type={kind}"), C(f"num_nodes={g.number_of_nodes()}")]
        explicit += [C(t) for t in extra]
        for c in explicit:  # the instance really satisfies its explicit constraints
            assert check_constraint(c, f, Source.EXPLICIT).satisfied, (c.text, kind, extra)
        for c in infer_implicit(explicit):
            v = check_constraint(c, f, Source.INFERRED)
            assert v.satisfied, (kind, extra, v.describe())
