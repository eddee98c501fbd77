"""Level 2 — at least four joint constraints, including provably infeasible combinations.

Feasible templates combine a structure (regular, tree, planar, bipartite, DAG, forest) with
sizes and bounds (degrees, diameter, components, edge connectivity).  Where a bound has no
closed form (diameter, edge connectivity) it is calibrated from a *witness*: a graph drawn by
the reference generator itself, so the instruction is feasible by construction.

Infeasible templates (``feasible: false``, no references) each carry an ``infeasibility``
field naming the theorem that rules them out and the arithmetic of the proof; the tests check
every proof independently from the constraints alone.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from typing import Any

import networkx as nx

from pytest_graphinstruct.build import generators as gen
from pytest_graphinstruct.build.template import (
    SIZE_RANGES,
    Draft,
    Template,
    build_level,
    phrase,
    stratify,
)

#: How many of the default 200 L2 instructions are infeasible (the paper's count).
INFEASIBLE_COUNT = 9

_REGULAR = (
    "Generate a connected, undirected {k}-regular graph with {n} nodes.",
    "Create an undirected graph on {n} nodes that is connected and in which every node has "
    "degree exactly {k}.",
    "Construct a {k}-regular undirected graph with {n} nodes that is connected.",
)


def _regular(rng: random.Random, n: int) -> Draft | None:
    k = rng.randint(3, min(6, n - 4)) if n >= 8 else 0
    if k == 0 or (n * k) % 2:
        return None
    return Draft(phrase(rng, _REGULAR, n=n, k=k),
                 [f"num_nodes={n}", f"degree={k}", "connected=true", "directed=false"],
                 lambda r: gen.random_regular(n, k, r, connected=True))


_TREE = (
    "Generate an undirected tree with {n} nodes in which no node has degree above {d}.",
    "Create an undirected tree on {n} nodes whose maximum degree is at most {d}.",
    "Construct a tree with {n} nodes, undirected, where every node has at most {d} neighbours.",
)


def _tree(rng: random.Random, n: int) -> Draft:
    d = rng.randint(3, 5)
    return Draft(phrase(rng, _TREE, n=n, d=d),
                 ["graph_type=tree", f"num_nodes={n}", f"max_degree={d}", "directed=false"],
                 lambda r: gen.random_tree(n, r, max_degree=d))


_PLANAR = (
    "Generate a connected, undirected planar graph with {n} nodes and {m} edges.",
    "Create an undirected graph on {n} nodes with {m} edges that is planar and connected.",
    "Construct a planar graph with {n} nodes and exactly {m} edges; it must be connected and "
    "undirected.",
)


def _planar(rng: random.Random, n: int) -> Draft:
    m = rng.randint(n + n // 2, min(2 * n + n // 2, 3 * n - 7))
    return Draft(phrase(rng, _PLANAR, n=n, m=m),
                 [f"num_nodes={n}", f"num_edges={m}", "planar=true", "connected=true",
                  "directed=false"],
                 lambda r: gen.random_planar(n, m, r, connected=True))


_BIPARTITE = (
    "Generate a connected, undirected bipartite graph with {n} nodes and {m} edges.",
    "Create an undirected graph on {n} nodes with {m} edges that is bipartite and connected.",
    "Construct a bipartite graph with {n} nodes and exactly {m} edges that is connected and "
    "undirected.",
)


def _bipartite(rng: random.Random, n: int) -> Draft:
    m = rng.randint(n, n + n // 2)
    return Draft(phrase(rng, _BIPARTITE, n=n, m=m),
                 [f"num_nodes={n}", f"num_edges={m}", "bipartite=true", "connected=true",
                  "directed=false"],
                 lambda r: gen.random_bipartite(n, m, r, connected=True))


_DAG = (
    "Generate a connected directed acyclic graph with {n} nodes and {m} edges.",
    "Create a directed acyclic graph (DAG) on {n} nodes with {m} arcs that is connected.",
    "Construct a DAG with {n} nodes and exactly {m} directed edges whose underlying graph is "
    "connected.",
)


def _dag(rng: random.Random, n: int) -> Draft:
    m = rng.randint(n, min(2 * n, n * (n - 1) // 2))
    return Draft(phrase(rng, _DAG, n=n, m=m),
                 ["graph_type=dag", f"num_nodes={n}", f"num_edges={m}", "connected=true",
                  "directed=true"],
                 lambda r: gen.random_dag(n, m, r, connected=True))


_DIAMETER = (
    "Generate a connected, undirected graph with {n} nodes whose diameter is at most {d} and "
    "whose maximum degree is at most {D}.",
    "Create an undirected graph on {n} nodes that is connected, has diameter at most {d}, and "
    "in which no node has more than {D} neighbours.",
    "Construct a connected undirected graph with {n} nodes, maximum degree at most {D} and "
    "diameter at most {d}.",
)


def _diameter_witness(n: int, deg: int, r: random.Random) -> nx.Graph | None:
    return gen.random_degree_bounded(n, n * deg // 2, 1, deg + 1, r)


def _diameter(rng: random.Random, n: int) -> Draft | None:
    deg = rng.randint(3, 4)
    w = _diameter_witness(n, deg, rng)
    if w is None or not nx.is_connected(w):
        return None
    big = deg + 1
    d = nx.diameter(w) + rng.randint(0, 1)
    return Draft(phrase(rng, _DIAMETER, n=n, d=d, D=big),
                 [f"num_nodes={n}", "connected=true", f"diameter<={d}", f"max_degree={big}",
                  "directed=false"],
                 lambda r: _diameter_witness(n, deg, r))


_FOREST = (
    "Generate an undirected acyclic graph with {n} nodes and {m} edges that has exactly {c} "
    "components.",
    "Create an undirected graph on {n} nodes with {m} edges, no cycles, and {c} components.",
    "Construct an acyclic undirected graph that has {n} nodes, {m} edges and {c} separate "
    "components.",
)


def _forest(rng: random.Random, n: int) -> Draft:
    c = rng.randint(2, max(2, n // 5))
    return Draft(phrase(rng, _FOREST, n=n, m=n - c, c=c),
                 [f"num_nodes={n}", f"num_edges={n - c}", f"num_components={c}",
                  "acyclic=true", "directed=false"],
                 lambda r: gen.random_forest(n, c, r))


_CONNECTIVITY = (
    "Generate a connected, undirected graph with {n} nodes and {m} edges whose edge "
    "connectivity is at least {k}.",
    "Create an undirected graph on {n} nodes with {m} edges that is connected and has edge "
    "connectivity at least {k}.",
    "Construct a connected undirected graph with {n} nodes and exactly {m} edges such that "
    "its edge connectivity is at least {k}.",
)


def _connectivity_witness(n: int, k: int, m: int, r: random.Random) -> nx.Graph | None:
    g = gen.random_regular(n, k, r, connected=True)
    if g is None:
        return None
    nodes = list(g)
    while g.number_of_edges() < m:
        u, v = r.sample(nodes, 2)
        g.add_edge(u, v)
    return g


def _connectivity(rng: random.Random, n: int) -> Draft | None:
    if n < 8:  # a cycle on few nodes would be the only answer
        return None
    k = rng.choice((2, 3, 4))
    if (n * k) % 2:
        return None
    m = n * k // 2 + rng.randint(1, n // 3)  # k = 2 with m = n would force a cycle
    return Draft(phrase(rng, _CONNECTIVITY, n=n, m=m, k=k),
                 [f"num_nodes={n}", f"num_edges={m}", "connected=true",
                  f"edge_connectivity>={k}", "directed=false"],
                 lambda r: _connectivity_witness(n, k, m, r))


_DEGREES = (
    "Generate an undirected graph with {n} nodes and {m} edges in which every node has degree "
    "at least {a} and at most {b}.",
    "Create an undirected graph on {n} nodes with {m} edges, minimum degree at least {a} and "
    "maximum degree at most {b}.",
    "Construct an undirected graph that has {n} nodes and exactly {m} edges, where each node "
    "has between {a} and {b} neighbours.",
)


def _degrees(rng: random.Random, n: int) -> Draft | None:
    a = rng.randint(1, 3)
    b = a + rng.randint(2, 3)
    m = rng.randint((n * a + 1) // 2 + 1, (n * b) // 2 - 1)
    if m * 2 > n * (n - 1):
        return None
    return Draft(phrase(rng, _DEGREES, n=n, m=m, a=a, b=b),
                 [f"num_nodes={n}", f"num_edges={m}", f"min_degree={a}", f"max_degree={b}",
                  "directed=false"],
                 lambda r: gen.random_degree_bounded(n, m, a, b, r))


#: L2 node counts: at least 8 nodes, so that every template admits several answers.
L2_SIZES = {**SIZE_RANGES, "small": (8, 20)}

FEASIBLE: tuple[Template, ...] = (
    Template("regular_connected", _regular, sizes=L2_SIZES, phrasings=len(_REGULAR)),
    Template("tree_max_degree", _tree, sizes=L2_SIZES, phrasings=len(_TREE)),
    Template("planar_connected", _planar, sizes=L2_SIZES, phrasings=len(_PLANAR)),
    Template("bipartite_connected", _bipartite, sizes=L2_SIZES, phrasings=len(_BIPARTITE)),
    Template("dag_connected", _dag, sizes=L2_SIZES, phrasings=len(_DAG)),
    Template("diameter_max_degree", _diameter, sizes=L2_SIZES, phrasings=len(_DIAMETER)),
    Template("forest_components", _forest, sizes=L2_SIZES, phrasings=len(_FOREST)),
    Template("edge_connectivity", _connectivity, sizes=L2_SIZES,
             phrasings=len(_CONNECTIVITY)),
    Template("degree_range", _degrees, sizes=L2_SIZES, phrasings=len(_DEGREES)),
)


# -- infeasible ------------------------------------------------------------------------------------

def _infeasible(text: str, explicit: list[str], theorem: str, proof: str) -> Draft:
    return Draft(text, explicit, None, feasible=False,
                 extra={"infeasibility": {"theorem": theorem, "proof": proof}})


_BAD_TREE = ("Generate a connected, undirected tree with {n} nodes and {m} edges.",
             "Create an undirected tree on {n} nodes that has exactly {m} edges.")


def _bad_tree(rng: random.Random, n: int) -> Draft:
    m = n + rng.randint(0, 2)
    return _infeasible(phrase(rng, _BAD_TREE, n=n, m=m),
                       ["graph_type=tree", f"num_nodes={n}", f"num_edges={m}", "directed=false"],
                       "tree_edge_count",
                       f"every tree on {n} nodes has exactly {n - 1} edges, not {m}")


_BAD_REGULAR = ("Generate a connected, undirected {k}-regular graph with {n} nodes.",
                "Create an undirected graph on {n} nodes, connected, in which every node has "
                "degree exactly {k}.")


def _bad_regular(rng: random.Random, n: int) -> Draft | None:
    if n % 2 == 0:
        return None
    k = rng.choice((3, 5))
    return _infeasible(phrase(rng, _BAD_REGULAR, n=n, k=k),
                       [f"num_nodes={n}", f"degree={k}", "connected=true", "directed=false"],
                       "handshake_lemma",
                       f"the degree sum {n}·{k} = {n * k} is odd, but every graph has an even "
                       "degree sum (twice its edge count)")


_BAD_PLANAR = ("Generate a connected, undirected planar graph with {n} nodes and {m} edges.",
               "Create an undirected graph on {n} nodes with {m} edges that is planar and "
               "connected.")


def _bad_planar(rng: random.Random, n: int) -> Draft:
    m = 3 * n - 6 + rng.randint(1, n // 4 + 1)
    return _infeasible(phrase(rng, _BAD_PLANAR, n=n, m=m),
                       [f"num_nodes={n}", f"num_edges={m}", "planar=true", "connected=true",
                        "directed=false"],
                       "euler_planar_bound",
                       f"a simple planar graph on n = {n} ≥ 3 nodes has at most 3n − 6 = "
                       f"{3 * n - 6} edges (Euler's formula), fewer than {m}")


_BAD_BIPARTITE = ("Generate an undirected bipartite graph with {n} nodes and {m} edges, "
                  "connected.",
                  "Create a connected, undirected graph on {n} nodes with {m} edges that is "
                  "bipartite.")


def _bad_bipartite(rng: random.Random, n: int) -> Draft | None:
    if n > 30:
        return None
    cap = (n // 2) * (n - n // 2)
    m = cap + rng.randint(1, n // 2)
    return _infeasible(phrase(rng, _BAD_BIPARTITE, n=n, m=m),
                       [f"num_nodes={n}", f"num_edges={m}", "bipartite=true", "connected=true",
                        "directed=false"],
                       "bipartite_edge_bound",
                       f"a bipartite graph on {n} nodes with sides p + q = {n} has at most "
                       f"p·q ≤ ⌊n²/4⌋ = {cap} edges (Mantel), fewer than {m}")


INFEASIBLE: tuple[Template, ...] = (
    Template("infeasible_tree_edges", _bad_tree, sizes=L2_SIZES, phrasings=len(_BAD_TREE)),
    Template("infeasible_odd_regular", _bad_regular, sizes=L2_SIZES,
             phrasings=len(_BAD_REGULAR)),
    Template("infeasible_planar_dense", _bad_planar, sizes=L2_SIZES,
             phrasings=len(_BAD_PLANAR)),
    Template("infeasible_bipartite_dense", _bad_bipartite, buckets=("small", "medium"),
             sizes=L2_SIZES, phrasings=len(_BAD_BIPARTITE)),
)
TEMPLATES: tuple[Template, ...] = FEASIBLE + INFEASIBLE


def plan(count: int) -> list[tuple[Template, str]]:
    """Feasible slots from :func:`stratify`, with the infeasible ones (9 per 200, at least one)
    spread evenly through the level."""
    bad = max(1, round(count * INFEASIBLE_COUNT / 200))
    good = stratify(count - bad, FEASIBLE)
    bad_slots = stratify(bad, INFEASIBLE)
    step = count / bad
    positions = {int(step * (j + 0.5)): j for j in range(bad)}
    out: list[tuple[Template, str]] = []
    gi = 0
    for i in range(count):
        if i in positions:
            out.append(bad_slots[positions[i]])
        else:
            out.append(good[gi])
            gi += 1
    return out


def build_level2(seed: int, count: int = 200, indices: Collection[int] | None = None
                 ) -> list[dict[str, Any]]:
    """``count`` L2 records (ids ``L2-001`` …); 9 per 200 are infeasible."""
    return build_level(2, TEMPLATES, seed, count, plan=plan(count), indices=indices)


__all__ = ["FEASIBLE", "INFEASIBLE", "SIZE_RANGES", "build_level2", "plan"]
