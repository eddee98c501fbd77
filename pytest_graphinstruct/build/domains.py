"""Domain generators shared by the reference pools and the level-4 suite.

The L4 pool (:mod:`~pytest_graphinstruct.build.pools`) draws its synthetic graphs from these
generators, and the L4 instructions (:mod:`~pytest_graphinstruct.build.level4`) draw their
references' structures from the same ones, so an instruction's references come from the model
its pool yardsticks came from.  Promises:

* **Deterministic.**  Every generator draws only from the stream it is given (a numpy
  :class:`~numpy.random.Generator`, except where a generator says otherwise; see
  :mod:`~pytest_graphinstruct.build.streams`), in a fixed order: a generator's output is a pure
  function of the stream's state and its arguments.
* **Raw structures.**  A generator returns a graph on integer (or, before relabelling, tuple)
  ids with the directedness of its domain (:data:`DIRECTED_DOMAINS`), or ``None`` for a
  rejected draw; callers check the size and connectivity they need and relabel.
* **One knowledge-graph model.**  :func:`knowledge_graph` (the pool's) and
  :func:`typed_knowledge_graph` (the suite's: entity ``type`` and edge ``relation`` attributes)
  are one growth model, :func:`grow_knowledge_graph`, run with the parameters and the stream
  kind each was built with; both keep to the schema :data:`~.labels.KG_RELATIONS`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Protocol

import networkx as nx
import numpy as np

from pytest_graphinstruct.build import labels as vocab
from pytest_graphinstruct.build.streams import nx_seed

DOMAINS: tuple[str, ...] = ("social", "citation", "biological", "ecological", "communication",
                            "infrastructure", "knowledge_graph", "molecular")
DIRECTED_DOMAINS: frozenset[str] = frozenset({"citation", "ecological", "knowledge_graph"})
#: Node-count range of L4 graphs (inclusive); molecular skeletons use :data:`MOLECULAR_SIZE`.
L4_SIZE: tuple[int, int] = (8, 60)
MOLECULAR_SIZE: tuple[int, int] = (8, 30)
#: Draws of the niche model per attempt at an exact species count (:func:`exact_niche`).
NICHE_DRAWS = 80
#: Relative frequency of the knowledge-graph entity types, in :data:`~.labels.KG_ENTITIES` order
#: (person, organization, place, work, concept).
KG_TYPE_WEIGHTS: tuple[int, ...] = (7, 4, 3, 3, 3)

Rng = np.random.Generator


# -- building blocks (also used by the pool's L3 families) -----------------------------------------

def uniform_int(rng: Rng, lo: int, hi: int) -> int:
    """A uniform integer in ``lo..hi`` (inclusive)."""
    return int(rng.integers(lo, hi + 1))


def block_sizes(rng: Rng, n: int, blocks: int, minimum: int) -> list[int]:
    """``blocks`` random block sizes of at least ``minimum`` summing to ``n``."""
    extra = n - blocks * minimum
    cuts = np.sort(rng.integers(0, extra + 1, size=blocks - 1))
    parts = np.diff(np.concatenate(([0], cuts, [extra])))
    return [minimum + int(p) for p in parts]


def degree_sbm(rng: Rng, sizes: list[int], d_in: float, d_out: float, *, cap_in: float,
               cap_out: float | None = None) -> nx.Graph:
    """A stochastic block model whose block probabilities give each node about ``d_in``
    neighbours inside its block and ``d_out`` outside it (capped at ``cap_in``/``cap_out``)."""
    n = sum(sizes)
    k = len(sizes)
    probs = []
    for i in range(k):
        row = []
        for j in range(k):
            if i == j:
                row.append(min(cap_in, d_in / max(1, sizes[i] - 1)))
            else:
                p = d_out / max(1.0, n - (sizes[i] + sizes[j]) / 2)
                row.append(p if cap_out is None else min(cap_out, p))
        probs.append(row)
    return nx.stochastic_block_model(sizes, probs, seed=nx_seed(rng))


# -- L4 domain generators (numpy streams; return None to reject a draw) ----------------------------

def social_holme_kim(rng: Rng, n: int) -> nx.Graph:
    """Preferential attachment with triadic closure (Holme & Kim's powerlaw-cluster model)."""
    m = uniform_int(rng, 1, 3) if n < 15 else uniform_int(rng, 2, 4)
    return nx.powerlaw_cluster_graph(n, m, float(rng.uniform(0.3, 0.9)), seed=nx_seed(rng))


def citation_dag(rng: Rng, n: int) -> nx.DiGraph:
    """Growing DAG: paper ``t`` cites earlier papers chosen ∝ (citations + a) (Price's model);
    edges point from the citing to the cited paper."""
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    indeg = np.zeros(n)
    a = float(rng.uniform(0.5, 2.0))
    mean_refs = float(rng.uniform(1.2, 3.5))
    for t in range(1, n):
        k = min(t, 1 + int(rng.poisson(mean_refs - 1)))
        w = indeg[:t] + a
        cited = rng.choice(t, size=k, replace=False, p=w / w.sum())
        for c in cited:
            g.add_edge(t, int(c))
            indeg[int(c)] += 1
    return g


def biological_duplication(rng: Rng, n: int) -> nx.Graph:
    """Duplication–divergence (protein-interaction-like): sparse, hubby, locally redundant."""
    return nx.duplication_divergence_graph(n, float(rng.uniform(0.25, 0.5)), seed=nx_seed(rng))


def biological_modules(rng: Rng, n: int) -> nx.Graph:
    """Sparse modular network: a stochastic block model with few links between modules."""
    blocks = uniform_int(rng, 2, max(2, min(6, n // 6)))
    sizes = block_sizes(rng, n, blocks, 4)
    d_in = float(rng.uniform(2.0, 4.0))
    d_out = float(rng.uniform(0.2, 0.8))
    return degree_sbm(rng, sizes, d_in, d_out, cap_in=0.9)


def ecological_niche(rng: Rng, n: int) -> nx.DiGraph | None:
    """Niche-model food web (Williams & Martinez 2000); edges point from prey to predator.
    Isolated species are dropped, as in the model's usual use; too small a web is rejected."""
    c = float(rng.uniform(0.08, 0.22))
    beta = 1.0 / (2.0 * c) - 1.0
    niche = rng.uniform(0.0, 1.0, size=n)
    ranges = niche * rng.beta(1.0, beta, size=n)
    centres = rng.uniform(ranges / 2.0, np.maximum(niche, ranges / 2.0))
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for i in range(n):
        lo, hi = centres[i] - ranges[i] / 2.0, centres[i] + ranges[i] / 2.0
        for j in range(n):
            if i != j and lo <= niche[j] <= hi:
                g.add_edge(j, i)
    web = max(nx.weakly_connected_components(g), key=lambda s: (len(s), min(s)))
    if len(web) < max(L4_SIZE[0], int(0.8 * n)):
        return None
    return g.subgraph(sorted(web)).copy()


def communication_hubs(rng: Rng, n: int) -> nx.Graph:
    """Hub-dominated, fairly dense exchange network: Barabási–Albert with a larger ``m``."""
    m = uniform_int(rng, 3, max(3, min(7, n // 3)))
    return nx.barabasi_albert_graph(n, m, seed=nx_seed(rng))


def infrastructure_geometric(rng: Rng, n: int) -> nx.Graph:
    """Random geometric graph in the unit square (links between nearby sites)."""
    radius = float(rng.uniform(1.1, 1.6)) * math.sqrt(math.log(n) / (math.pi * n))
    return nx.random_geometric_graph(n, radius, seed=nx_seed(rng))


def infrastructure_grid(rng: Rng, n: int) -> nx.Graph | None:
    """Perturbed street grid: a ``rows × cols`` lattice with some non-bridge links removed and
    a few diagonal shortcuts added."""
    rows = uniform_int(rng, 2, max(2, int(math.sqrt(n))))
    cols = n // rows
    if rows * cols < L4_SIZE[0] or cols < 2:
        return None
    g = nx.grid_2d_graph(rows, cols)
    edges = sorted(g.edges())
    drop = rng.permutation(len(edges))[: int(len(edges) * float(rng.uniform(0.05, 0.25)))]
    for i in sorted(int(x) for x in drop):
        u, v = edges[i]
        g.remove_edge(u, v)
        if not nx.has_path(g, u, v):
            g.add_edge(u, v)
    for _ in range(uniform_int(rng, 0, max(1, rows * cols // 12))):
        r, c = uniform_int(rng, 0, rows - 2), uniform_int(rng, 0, cols - 2)
        g.add_edge((r, c), (r + 1, c + 1))
    return nx.convert_node_labels_to_integers(g, ordering="sorted")


# -- the knowledge-graph model ---------------------------------------------------------------------

class _Draws(Protocol):
    """The draws :func:`grow_knowledge_graph` makes, on either kind of stream."""

    def categories(self, weights: Sequence[int], k: int) -> list[int]: ...
    def uniform(self, lo: float, hi: float) -> float: ...
    def poisson(self, lam: float) -> int: ...
    def random(self) -> float: ...
    def weighted(self, weights: Sequence[int]) -> int: ...
    def below(self, n: int) -> int: ...
    def pick(self, options: Sequence[str]) -> str: ...


class _NumpyDraws:
    def __init__(self, rng: Rng) -> None:
        self.rng = rng

    def _p(self, weights: Sequence[int]) -> np.ndarray:
        w = np.asarray(weights, dtype=float)
        return w / w.sum()

    def categories(self, weights: Sequence[int], k: int) -> list[int]:
        return [int(i) for i in self.rng.choice(len(weights), size=k, p=self._p(weights))]

    def uniform(self, lo: float, hi: float) -> float:
        return float(self.rng.uniform(lo, hi))

    def poisson(self, lam: float) -> int:
        return int(self.rng.poisson(lam))

    def random(self) -> float:
        return float(self.rng.random())

    def weighted(self, weights: Sequence[int]) -> int:
        return int(self.rng.choice(len(weights), p=self._p(weights)))

    def below(self, n: int) -> int:
        return int(self.rng.integers(n))

    def pick(self, options: Sequence[str]) -> str:
        return options[self.below(len(options))]


class _PythonDraws:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def categories(self, weights: Sequence[int], k: int) -> list[int]:
        return self.rng.choices(range(len(weights)), weights=weights, k=k)

    def uniform(self, lo: float, hi: float) -> float:
        return self.rng.uniform(lo, hi)

    def poisson(self, lam: float) -> int:
        """A Poisson(``lam``) draw by inversion (small ``lam``)."""
        k, p = 0, math.exp(-lam)
        s, u = p, self.rng.random()
        while u > s:
            k += 1
            p *= lam / k
            s += p
        return k

    def random(self) -> float:
        return self.rng.random()

    def weighted(self, weights: Sequence[int]) -> int:
        return self.rng.choices(range(len(weights)), weights=weights, k=1)[0]

    def below(self, n: int) -> int:
        return self.rng.randrange(n)

    def pick(self, options: Sequence[str]) -> str:
        return self.rng.choice(options)


def grow_knowledge_graph(draws: _Draws, n: int, *, rate_per_entity: bool, named: bool
                         ) -> nx.DiGraph | None:
    """A knowledge graph of ``n`` typed entities (node attribute ``type``, drawn with
    :data:`KG_TYPE_WEIGHTS`) grown one entity at a time: each entity states ``1 + Poisson(λ)``
    facts (λ uniform in 0.3–1.2, drawn once per graph, or once per entity when
    ``rate_per_entity``) with earlier entities, as subject (70 %) or object, only along
    :data:`~.labels.KG_RELATIONS` type pairs; objects are picked ∝ (in-degree + 1)², subjects
    uniformly, which makes hub entities (popular places, organizations, concepts).

    With ``named`` every edge gets a ``relation`` drawn from its type pair's names, and an entity
    that stated no fact states one with a random schema-compatible entity (``None`` when there is
    none).  Without, such an entity is linked to the entity of largest in-degree (the first on a
    tie) whatever their types, and edges carry no attributes."""
    types = list(vocab.KG_ENTITIES)
    kinds = [types[i] for i in draws.categories(KG_TYPE_WEIGHTS, n)]
    g = nx.DiGraph()
    for v in range(n):
        g.add_node(v, type=kinds[v])
    indeg = [0] * n
    lam = 0.0 if rate_per_entity else draws.uniform(0.3, 1.2)

    def partners(t: int, subject: bool) -> list[int]:
        return [j for j in range(t)
                if ((kinds[t], kinds[j]) if subject else (kinds[j], kinds[t])) in vocab.KG_RELATIONS
                and not g.has_edge(t, j) and not g.has_edge(j, t)]

    def state(u: int, v: int) -> None:
        if named:
            g.add_edge(u, v, relation=draws.pick(vocab.KG_RELATIONS[(kinds[u], kinds[v])]))
        else:
            g.add_edge(u, v)
        indeg[v] += 1

    for t in range(1, n):
        rate = draws.uniform(0.3, 1.2) if rate_per_entity else lam
        for _ in range(1 + draws.poisson(rate)):
            subject = draws.random() < 0.7
            ok = partners(t, subject)
            if ok:
                j = ok[draws.weighted([(indeg[j] + 1) ** 2 if subject else 1 for j in ok])]
                state(*((t, j) if subject else (j, t)))
        if g.degree(t) > 0:
            continue
        if not named:  # no fact drawn: attach to the biggest hub
            state(t, max(range(t), key=indeg.__getitem__))
            continue
        options = [(t, j) for j in partners(t, True)] + [(j, t) for j in partners(t, False)]
        if not options:
            return None
        state(*options[draws.below(len(options))])
    return g


def knowledge_graph(rng: Rng, n: int) -> nx.DiGraph:
    """The pool's knowledge graph: :func:`grow_knowledge_graph` on a numpy stream, λ drawn per
    entity, unnamed edges (never ``None``)."""
    g = grow_knowledge_graph(_NumpyDraws(rng), n, rate_per_entity=True, named=False)
    assert g is not None  # unnamed growth always finds a partner (the hub)
    return g


def typed_knowledge_graph(rng: random.Random, n: int) -> nx.DiGraph | None:
    """The suite's knowledge graph: :func:`grow_knowledge_graph` on a :class:`random.Random`,
    λ drawn once, named relations (``None`` when an entity finds no schema-compatible partner)."""
    return grow_knowledge_graph(_PythonDraws(rng), n, rate_per_entity=False, named=True)


def molecular_skeleton(rng: Rng, n: int) -> nx.Graph:
    """Heavy-atom skeleton: a random tree with degree ≤ 4 plus ring closures (5- and 6-membered
    rings, occasionally 3/4/7) between atoms with free valence."""
    g = nx.Graph()
    g.add_node(0)
    for t in range(1, n):
        free = [v for v in range(t) if g.degree(v) < 4]
        w = np.array([3.0 if g.degree(v) <= 1 else 1.0 for v in free])
        g.add_edge(t, free[int(rng.choice(len(free), p=w / w.sum()))])
    rings = uniform_int(rng, 0, max(1, n // 6))
    for _ in range(rings):
        size = int(rng.choice([3, 4, 5, 6, 7], p=[0.03, 0.04, 0.35, 0.53, 0.05]))
        cands = [(u, v) for u in g for v in g if u < v and g.degree(u) < 4 and g.degree(v) < 4
                 and not g.has_edge(u, v)]
        cands = [(u, v) for u, v in cands if nx.shortest_path_length(g, u, v) == size - 1]
        if cands:
            u, v = cands[int(rng.integers(len(cands)))]
            g.add_edge(u, v)
    return g



def exact_niche(rng: Rng, n: int) -> nx.DiGraph | None:
    """A niche-model food web with exactly ``n`` species (:func:`ecological_niche` drops
    isolated species, so it is drawn at slightly larger sizes, up to :data:`NICHE_DRAWS` times,
    until one web has ``n``)."""
    for _ in range(NICHE_DRAWS):
        g = ecological_niche(rng, int(rng.integers(n, n + max(2, n // 5) + 1)))
        if g is not None and g.number_of_nodes() == n:
            return g
    return None
