"""Level 4 of the project's suite: domain semantics over eight domains.

:func:`build_level4` writes ``count`` instructions asking for a graph of one domain (social,
citation, biological, ecological, communication, infrastructure, knowledge_graph, molecular) with
a node count and one to three domain-appropriate structural constraints, each instruction with two
verified, non-isomorphic references carrying domain text.  Promises:

* **Deterministic.**  Record ``i`` is a pure function of ``(seed, i)``: its domain comes from a
  shuffle of the eight domains per block of eight indices, its size bucket and template from
  per-domain schedules, and everything else from ``rng_for(seed, "L4", i, ...)``.  The same
  ``(seed, count)`` gives byte-identical JSON (no set iteration, no global random state).
* **Balanced.**  Domains take turns in blocks of eight (100 records: 12 or 13 per domain).  Each
  non-molecular domain cycles through 13 size buckets holding 4 small (≤ 20 nodes), 5 medium
  (21–50) and 4 large (51–60); molecular cycles 7 small and 6 medium (the molecular pool stops at
  30 atoms).  With 100 records every bucket holds at least 21.
* **Calibrated against the project's pool.**  Constraint values come from the L4 pool graphs of
  the same domain (:func:`~pytest_graphinstruct.build.pools.full_pool` with the pool's
  own seed, :data:`POOL_SEED`, i.e. the committed ``references/pools/l4``): a bound is a
  quantile over pool graphs of similar size, loosened until a chosen set of two or three pool
  graphs with *exactly* the instruction's node count satisfies every constraint jointly.  So every
  instruction matches at least two same-domain pool graphs when its node count has two (at
  least one always), and its D4 yardsticks exist.
* **Text agrees with constraints.**  Every number in the text is a constraint value and vice
  versa; ``directed``/``undirected`` and the boolean properties are named exactly when
  constrained; the node noun is the domain's (users, papers, proteins, species, routers or
  devices, stations or intersections, entities, atoms).
* **References carry domain text.**  Node ``label`` attributes unique within a graph (names,
  titles, species, devices, stations, entities, or element-indexed atoms ``C3`` with an
  ``element`` attribute), an edge ``relation`` per edge (``cites``, ``eaten_by``, typed
  knowledge-graph relations, ``bond`` with an integer ``order`` that respects valence) and the
  graph attribute ``domain``.  Structures come from the pool's own domain generators
  (:mod:`~pytest_graphinstruct.build.domains`); the knowledge graph is the pool's growth model
  in its typed variant (:func:`~pytest_graphinstruct.build.domains.typed_knowledge_graph`),
  which names each relation from the entity types.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import networkx as nx

from pytest_graphinstruct.build import domains as dm
from pytest_graphinstruct.build import labels as vocab
from pytest_graphinstruct.build.common import (
    BuildError,
    find_references,
    make_record,
)
from pytest_graphinstruct.build.domains import DIRECTED_DOMAINS, DOMAINS, L4_SIZE, MOLECULAR_SIZE
from pytest_graphinstruct.build.pools import DEFAULT_SEED, full_pool
from pytest_graphinstruct.build.streams import np_rng_from, rng_for
from pytest_graphinstruct.build.template import number_text, round_outward
from pytest_graphinstruct.suite.constraints import parse_constraint
from pytest_graphinstruct.verify.checks import check_constraint
from pytest_graphinstruct.verify.properties import GraphFacts
from pytest_graphinstruct.verify.verdict import Source
from pytest_graphinstruct.vocab import size_bucket

LEVEL = 4
#: Seed of the pool the constraints are calibrated against (the committed pool's).
POOL_SEED = DEFAULT_SEED
#: Per-domain bucket schedules (cycled over a domain's rounds after a seeded shuffle).
BUCKET_SCHEDULE: tuple[str, ...] = ("small",) * 4 + ("medium",) * 5 + ("large",) * 4
MOLECULAR_SCHEDULE: tuple[str, ...] = ("small",) * 7 + ("medium",) * 6
#: Node-count range of each bucket at L4 (the pool spans 8–60 nodes).
BUCKET_RANGE: dict[str, tuple[int, int]] = {"small": (8, 20), "medium": (21, 50),
                                            "large": (51, 60)}
#: Attempts (node count, then calibration) before a template is declared unusable.
CALIBRATION_ATTEMPTS = 60
#: Reference draws allowed per instruction (each draw is one verifier call).
REFERENCE_TRIES = 1500
#: Largest degree an infrastructure yardstick (and so a degree cap) may have.
STREET_DEGREE = 6
#: Draws of the typed knowledge-graph model per reference draw (a draw fails when an entity
#: finds no schema-compatible partner).
KG_DRAWS = 40


# -- the pool, by domain and node count ------------------------------------------------------------

@functools.cache
def _pool() -> dict[str, dict[int, tuple[GraphFacts, ...]]]:
    """Facts of the L4 pool graphs: domain → node count → graphs (pool order)."""
    out: dict[str, dict[int, list[GraphFacts]]] = {d: {} for d in DOMAINS}
    for pg in full_pool(4, POOL_SEED):
        assert pg.domain is not None
        out[pg.domain].setdefault(pg.graph.number_of_nodes(), []).append(GraphFacts(pg.graph))
    return {d: {n: tuple(gs) for n, gs in sorted(by_n.items())} for d, by_n in out.items()}


# -- constraint kinds: calibration -----------------------------------------------------------------

@dataclass(frozen=True)
class _Calib:
    """What a constraint kind is calibrated on: ``exact`` (the chosen pool graphs with the
    instruction's node count, which must all pass) and ``near`` (pool graphs of similar size)."""

    rng: random.Random
    n: int
    exact: Sequence[GraphFacts]
    near: Sequence[GraphFacts]


#: A calibrated kind: (constraint strings, text fields) or ``None`` when unusable at this size.
_Calibrated = tuple[list[str], dict[str, str]] | None


def _quantile(values: Sequence[float], q: float) -> float:
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _upper(c: _Calib, prop: Callable[[GraphFacts], float], q: float) -> float:
    return max(_quantile([prop(f) for f in c.near], q), max(prop(f) for f in c.exact))


def _lower(c: _Calib, prop: Callable[[GraphFacts], float], q: float) -> float:
    return min(_quantile([prop(f) for f in c.near], q), min(prop(f) for f in c.exact))


def _cal_connected(c: _Calib) -> _Calibrated:
    return ["connected=true"], {}


def _cal_acyclic(c: _Calib) -> _Calibrated:
    return ["acyclic=true"], {}


def _cal_planar(c: _Calib) -> _Calibrated:
    return ["planar=true"], {}


def _cal_density_max(c: _Calib) -> _Calibrated:
    d = round_outward(_upper(c, lambda f: f.density, c.rng.uniform(0.6, 0.9)), 4, up=True)
    return [f"density<={number_text(d)}"], {"d": number_text(d)}


def _cal_density_range(c: _Calib) -> _Calibrated:
    lo = round_outward(_lower(c, lambda f: f.density, c.rng.uniform(0.1, 0.3)), 3, up=False)
    hi = round_outward(_upper(c, lambda f: f.density, c.rng.uniform(0.7, 0.9)), 3, up=True)
    if lo <= 0 or lo >= hi:
        return None
    a, b = number_text(lo), number_text(hi)
    return [f"density>={a}", f"density<={b}"], {"lo": a, "hi": b}


def _cal_clustering_min(c: _Calib) -> _Calibrated:
    x = round_outward(_lower(c, lambda f: f.clustering, c.rng.uniform(0.15, 0.45)), 2, up=False)
    if x < Decimal("0.1"):
        return None
    return [f"clustering_coefficient>={number_text(x)}"], {"c": number_text(x)}


def _cal_modularity_min(c: _Calib) -> _Calibrated:
    x = round_outward(_lower(c, lambda f: f.modularity, c.rng.uniform(0.15, 0.45)), 2, up=False)
    if x < Decimal("0.1"):
        return None
    return [f"modularity>={number_text(x)}"], {"q": number_text(x)}


def _cal_min_degree(c: _Calib) -> _Calibrated:
    k = math.floor(_lower(c, lambda f: f.min_degree, c.rng.uniform(0.3, 0.6)))
    if k < 2:
        return None
    return [f"min_degree={k}"], {"k": str(k)}


def _cal_max_degree_cap(c: _Calib) -> _Calibrated:
    k = math.ceil(_upper(c, lambda f: f.max_degree, c.rng.uniform(0.65, 0.9)))
    if k >= c.n - 1:
        return None
    return [f"max_degree={k}"], {"k": str(k)}


def _cal_valence_cap(c: _Calib) -> _Calibrated:
    if max(f.max_degree for f in c.exact) > 4:
        return None
    return ["max_degree=4"], {"k": "4"}


def _cal_hub_degree(c: _Calib) -> _Calibrated:
    h = math.floor(_lower(c, lambda f: f.max_degree, c.rng.uniform(0.2, 0.5)))
    if h < 3:
        return None
    return [f"max_degree>={h}"], {"h": str(h)}


def _cal_edge_range(c: _Calib) -> _Calibrated:
    ratio = [f.m / f.n for f in c.near]
    lo_x = min(_quantile(ratio, c.rng.uniform(0.15, 0.35)) * c.n, min(f.m for f in c.exact))
    hi_x = max(_quantile(ratio, c.rng.uniform(0.65, 0.85)) * c.n, max(f.m for f in c.exact))
    lo = max(1, 5 * math.floor(lo_x / 5))
    hi = 5 * math.ceil(hi_x / 5)
    if lo >= hi:
        return None
    return [f"num_edges>={lo}", f"num_edges<={hi}"], {"lo": str(lo), "hi": str(hi)}


@dataclass(frozen=True)
class _Kind:
    """A structural constraint kind: how it is calibrated, how many constraint strings it adds,
    and (for boolean kinds) which pool graphs may serve as its yardsticks."""

    calibrate: Callable[[_Calib], _Calibrated]
    size: int = 1
    holds: Callable[[GraphFacts], bool] | None = None


KINDS: dict[str, _Kind] = {
    "connected": _Kind(_cal_connected, holds=lambda f: f.connected),
    "acyclic": _Kind(_cal_acyclic, holds=lambda f: f.acyclic),
    "planar": _Kind(_cal_planar, holds=lambda f: f.planar),
    "density_max": _Kind(_cal_density_max),
    "density_range": _Kind(_cal_density_range, size=2),
    "clustering_min": _Kind(_cal_clustering_min),
    "modularity_min": _Kind(_cal_modularity_min),
    "min_degree": _Kind(_cal_min_degree),
    # a street corner or station joins few segments: yardsticks are the pool graphs with at most
    # STREET_DEGREE (the grid-like ones), not the denser geometric ones
    "max_degree_cap": _Kind(_cal_max_degree_cap, holds=lambda f: f.max_degree <= STREET_DEGREE),
    "valence_cap": _Kind(_cal_valence_cap, holds=lambda f: f.max_degree <= 4),
    "hub_degree": _Kind(_cal_hub_degree),
    "edge_range": _Kind(_cal_edge_range, size=2),
}


# -- templates and wording -------------------------------------------------------------------------

@dataclass(frozen=True)
class Template:
    """One L4 template: a domain, opening phrasings (``{n}`` = node count; each names the domain,
    the node noun and the directedness), the structural kinds it may ask for (the first
    ``required`` always, the rest optionally, at most three constraints in all) and the node noun
    used in clause phrasings."""

    name: str
    domain: str
    openers: tuple[str, ...]
    kinds: tuple[str, ...]
    required: int
    node: str
    nodes: str
    style: str = ""  #: reference flavour within the domain (e.g. transit vs road)


TEMPLATES: dict[str, tuple[Template, ...]] = {
    "social": (
        Template("social_friendship", "social", (
            "Generate an undirected social network of {n} users of a neighbourhood forum, where "
            "an edge joins two users who are friends.",
            "Create a friendship graph for a social platform with {n} users; friendship is "
            "mutual, so the graph is undirected.",
            "Build an undirected social network among {n} users of a hobby club app in which "
            "each edge records a friendship.",
        ), ("clustering_min", "connected", "density_max"), 1, "user", "users"),
        Template("social_sparse", "social", (
            "Design an undirected social network of {n} users on a messaging app, where each "
            "edge means two users have exchanged contact details.",
            "Generate a social graph of {n} users of a small online community; ties are "
            "reciprocal, so the network is undirected.",
            "Produce an undirected social network with {n} users, each edge being an "
            "acquaintance between two members.",
        ), ("density_max", "min_degree", "connected"), 2, "user", "users"),
        Template("social_communities", "social", (
            "Generate an undirected social network of {n} users drawn from several interest "
            "groups (hikers, gamers, book readers), with an edge for every friendship.",
            "Create an undirected social graph over {n} users of a campus network, where "
            "students mostly befriend others in their own clubs.",
            "Build a social network of {n} users whose friendships cluster around a few "
            "communities; edges are undirected.",
        ), ("modularity_min", "connected", "clustering_min"), 1, "user", "users"),
    ),
    "citation": (
        Template("citation_dag", "citation", (
            "Generate a citation network of {n} papers in which each paper cites earlier papers; "
            "edges are directed from the citing paper to the cited one.",
            "Create a directed citation graph for {n} research papers, with an arc from every "
            "paper to each paper in its reference list.",
            "Build a citation network among {n} papers of a growing research field. Citations "
            "are directed edges pointing from newer papers to the older work they cite.",
        ), ("acyclic", "connected", "density_max"), 1, "paper", "papers"),
        Template("citation_volume", "citation", (
            "Create a directed citation network of {n} papers from a workshop series, each edge "
            "pointing from a citing paper to a paper it cites.",
            "Generate a citation graph of {n} papers; an edge is directed from the paper that "
            "cites to the paper being cited.",
            "Model the citation links among {n} papers as a directed graph whose arcs run from "
            "citing to cited paper.",
        ), ("acyclic", "edge_range"), 2, "paper", "papers"),
        Template("citation_landmark", "citation", (
            "Generate a directed citation network of {n} papers that includes an influential "
            "landmark paper, with edges from citing papers to the papers they cite.",
            "Build a citation graph with {n} papers around a popular research topic; citations "
            "are directed from the later paper to the earlier one.",
            "Create a directed citation network for {n} papers, where a few highly cited papers "
            "attract much of the attention.",
        ), ("acyclic", "hub_degree", "connected"), 2, "paper", "papers"),
    ),
    "biological": (
        Template("ppi_hubs", "biological", (
            "Generate an undirected protein–protein interaction network of {n} proteins, with an "
            "edge for each pair of proteins observed to bind.",
            "Create a protein interaction map for {n} proteins of a yeast-like cell; interactions "
            "are symmetric, so the graph is undirected.",
            "Build an undirected biological network of {n} proteins in which edges are physical "
            "interactions found by a binding assay.",
        ), ("density_max", "hub_degree", "connected"), 1, "protein", "proteins"),
        Template("ppi_modules", "biological", (
            "Generate an undirected protein interaction network of {n} proteins organised into "
            "functional complexes, where proteins of the same complex often interact.",
            "Create a modular biological network of {n} proteins; each undirected edge is an "
            "interaction, mostly within pathways.",
            "Build an undirected protein–protein interaction graph over {n} proteins grouped "
            "into signalling pathways with only occasional cross-talk.",
        ), ("modularity_min", "connected", "density_max"), 1, "protein", "proteins",
            "modules"),
    ),
    "ecological": (
        Template("food_web_connectance", "ecological", (
            "Generate a food web of {n} species as a directed graph, with an edge from each prey "
            "species to each predator that eats it.",
            "Create a directed food web for a lake ecosystem with {n} species; every edge points "
            "from a prey to its predator, following the flow of energy.",
            "Build a food web among {n} species of a salt marsh. Feeding links are directed "
            "edges that go from the species eaten to the species eating it.",
        ), ("density_range", "connected"), 1, "species", "species"),
        Template("food_web_generalist", "ecological", (
            "Generate a directed food web of {n} species in a grassland, where each edge runs "
            "from a prey species to a predator.",
            "Create an ecological network of {n} species in which directed edges carry energy "
            "from prey to predators and a few generalists feed widely.",
            "Build a food web of {n} forest species; feeding relations are directed from the "
            "species that is eaten to the one that eats it.",
        ), ("hub_degree", "connected", "density_max"), 1, "species", "species"),
    ),
    "communication": (
        Template("comm_redundancy", "communication", (
            "Generate an undirected communication network of {n} routers in a regional "
            "backbone, where each edge is a physical link between two routers.",
            "Create a communication network among {n} devices of a campus; links carry traffic "
            "both ways, so the graph is undirected.",
            "Build an undirected communication graph for {n} routers of an internet service "
            "provider, one edge per cable between routers.",
        ), ("min_degree", "connected", "density_max"), 1, "device", "devices"),
        Template("comm_hubs", "communication", (
            "Generate an undirected communication network of {n} devices in a data centre, with "
            "edges for network links and a few central switches.",
            "Create a communication network of {n} routers in which traffic concentrates on a "
            "few core routers; each undirected edge is a link between two routers.",
            "Build an undirected communication graph for {n} devices in an office network where "
            "most links lead to core equipment.",
        ), ("hub_degree", "min_degree", "connected"), 1, "device", "devices"),
    ),
    "infrastructure": (
        Template("transit_map", "infrastructure", (
            "Generate an undirected transit network of {n} stations for a city metro, where an "
            "edge is a rail segment between two consecutive stations.",
            "Create a light-rail map with {n} stations; trains run both ways, so the graph is "
            "undirected.",
            "Build an undirected infrastructure network of {n} stations of a regional rail "
            "system, with one edge per track segment.",
        ), ("planar", "max_degree_cap", "connected"), 1, "station", "stations", "transit"),
        Template("road_grid", "infrastructure", (
            "Generate an undirected road network of {n} intersections in a city district, with "
            "an edge for each street segment between intersections.",
            "Create a street map with {n} intersections as an undirected graph; each edge is a "
            "two-way road segment.",
            "Build an undirected road grid of {n} intersections for a planned town, where edges "
            "are street blocks.",
        ), ("max_degree_cap", "density_max", "connected"), 1, "intersection", "intersections",
            "road"),
    ),
    "knowledge_graph": (
        Template("kg_hubs", "knowledge_graph", (
            "Generate a knowledge graph of {n} entities (people, organizations, places, creative "
            "works and concepts) whose directed edges are typed facts such as born_in or "
            "works_for.",
            "Create a directed knowledge graph with {n} entities, where each edge states a fact "
            "from a subject entity to an object entity.",
            "Build an encyclopedic knowledge graph over {n} entities; relations are directed "
            "from subject to object.",
        ), ("hub_degree", "connected", "density_max"), 1, "entity", "entities"),
        Template("kg_facts", "knowledge_graph", (
            "Generate a small directed knowledge graph of {n} entities about a fictional "
            "country, each edge being one subject–relation–object fact.",
            "Create a knowledge graph with {n} entities drawn from a history archive; facts are "
            "directed edges from subject to object.",
            "Build a directed knowledge graph of {n} entities describing people, the "
            "organizations they work for and the places they live in.",
        ), ("edge_range", "connected"), 1, "entity", "entities"),
    ),
    "molecular": (
        Template("molecule_skeleton", "molecular", (
            "Generate the heavy-atom skeleton of an organic molecule with {n} atoms as an "
            "undirected graph, one edge per chemical bond (hydrogens are implicit).",
            "Create a molecular graph of {n} atoms for a drug-like compound; bonds are "
            "undirected edges and hydrogen atoms are left out.",
            "Build an undirected molecule graph with {n} atoms, where each edge is a covalent "
            "bond between two heavy atoms.",
        ), ("valence_cap", "connected", "density_max"), 1, "atom", "atoms"),
        Template("molecule_open_chain", "molecular", (
            "Generate an undirected graph of an open-chain molecule with {n} atoms, with bonds "
            "as edges and hydrogens left implicit.",
            "Create the heavy-atom skeleton of a chain-like molecule of {n} atoms as an "
            "undirected graph.",
            "Build a molecular graph with {n} atoms for a branched aliphatic compound; bonds are "
            "undirected edges.",
        ), ("acyclic", "valence_cap", "connected"), 2, "atom", "atoms"),
    ),
}

#: Clause phrasings: domain → kind → phrasings (fields: calibrated values, ``{node}``,
#: ``{nodes}``).  Each kind a domain's templates use has at least three.
CLAUSES: dict[str, dict[str, tuple[str, ...]]] = {
    "social": {
        "connected": (
            "The network must be connected: every user can reach every other through a chain "
            "of friends.",
            "It should be connected, with no user or group cut off from the rest.",
            "Make sure the friendship graph is connected.",
        ),
        "clustering_min": (
            "Friends of friends tend to be friends, so the average clustering coefficient should "
            "be at least {c}.",
            "Keep plenty of closed friend triangles: an average clustering coefficient of at "
            "least {c}.",
            "The average clustering coefficient must reach {c} or more.",
        ),
        "density_max": (
            "Most pairs of users are strangers: the density must be at most {d}.",
            "Keep it sparse, with a density of no more than {d}.",
            "The density of the network should not exceed {d}.",
        ),
        "min_degree": (
            "Every user has at least {k} friends.",
            "No user is left with fewer than {k} friends.",
            "Each user should know at least {k} other users.",
        ),
        "modularity_min": (
            "The community structure should be clear, with modularity at least {q}.",
            "Friend groups should stand out: a modularity of {q} or higher.",
            "Aim for a modularity of at least {q}.",
        ),
    },
    "citation": {
        "acyclic": (
            "Since a paper can only cite earlier work, the graph must be acyclic.",
            "There can be no citation loops: the network has to be acyclic.",
            "Keep the citation graph acyclic, as publication order forbids citing a later paper.",
        ),
        "connected": (
            "Ignoring edge direction, the network must be connected.",
            "Every paper should belong to one connected body of literature when directions are "
            "ignored.",
            "The graph should be connected if we disregard which way each citation points.",
        ),
        "density_max": (
            "The citation density must stay at most {d}.",
            "Reference lists are short relative to the field, so the density is at most {d}.",
            "The density of the citation graph should be no higher than {d}.",
        ),
        "edge_range": (
            "Altogether there should be between {lo} and {hi} citations.",
            "The total number of citations must be at least {lo} and at most {hi}.",
            "Include no fewer than {lo} and no more than {hi} citation edges.",
        ),
        "hub_degree": (
            "At least one landmark paper takes part in {h} or more citations (cited or citing).",
            "Some paper must have a total degree of at least {h}, counting the citations it "
            "gives and receives.",
            "The most central paper should be involved in at least {h} citations, counting both "
            "directions.",
        ),
    },
    "biological": {
        "connected": (
            "All proteins must belong to one connected interaction network.",
            "The interaction network should be connected.",
            "Make the network connected, with no protein isolated from the rest.",
        ),
        "density_max": (
            "Interaction maps are sparse: keep the density at most {d}.",
            "The density must not exceed {d}.",
            "Most protein pairs do not interact, so the density should be at most {d}.",
        ),
        "hub_degree": (
            "Include at least one hub protein that interacts with {h} or more partners.",
            "Some protein should act as a hub with at least {h} interaction partners.",
            "The most promiscuous protein must have at least {h} partners.",
        ),
        "modularity_min": (
            "Functional modules should be visible, with modularity at least {q}.",
            "The network should split into modules: a modularity of at least {q}.",
            "Aim for a modularity of {q} or more.",
        ),
    },
    "ecological": {
        "connected": (
            "Ignoring direction, the food web must be connected.",
            "Every species should be linked into a single connected web when edge directions "
            "are ignored.",
            "The web must be connected if feeding directions are disregarded.",
        ),
        "density_range": (
            "Its density should lie between {lo} and {hi}.",
            "Keep the density at least {lo} and at most {hi}, a typical range for food webs.",
            "The density must be no lower than {lo} and no higher than {hi}.",
        ),
        "density_max": (
            "The density must be at most {d}.",
            "Feeding links are selective, so keep the density no higher than {d}.",
            "The density of the web should not exceed {d}.",
        ),
        "hub_degree": (
            "At least one generalist species takes part in {h} or more feeding links (as "
            "predator or prey).",
            "Some species must have a total degree of at least {h}, counting what it eats and "
            "what eats it.",
            "Include a generalist involved in no fewer than {h} feeding links.",
        ),
    },
    "communication": {
        "connected": (
            "Every device must reach every other, so the network has to be connected.",
            "The network should be connected.",
            "Keep the network connected so that no device is cut off.",
        ),
        "min_degree": (
            "For redundancy, each device needs at least {k} links.",
            "Every device must have at least {k} neighbours so that a single failure cannot "
            "isolate it.",
            "No device may have fewer than {k} links.",
        ),
        "density_max": (
            "Cabling is expensive, so the density must be at most {d}.",
            "Keep the link density at or below {d}.",
            "The density should not exceed {d}.",
        ),
        "hub_degree": (
            "At least one core device must have {h} or more links.",
            "Include a hub with at least {h} links.",
            "The busiest device should be linked to at least {h} others.",
        ),
    },
    "infrastructure": {
        "connected": (
            "Every {node} must be reachable from every other, so the network is connected.",
            "The network has to be connected.",
            "Keep it connected: no {node} may be cut off.",
        ),
        "planar": (
            "The layout must be planar, drawable on the map without crossing segments.",
            "Segments may only meet at {nodes}, so the graph must be planar.",
            "Make the network planar.",
        ),
        "max_degree_cap": (
            "No {node} joins more than {k} segments.",
            "Each {node} has at most {k} segments meeting at it.",
            "The maximum degree must be at most {k}.",
        ),
        "density_max": (
            "Keep the density at most {d}.",
            "The network is sparse, with a density of no more than {d}.",
            "Its density should not exceed {d}.",
        ),
    },
    "knowledge_graph": {
        "connected": (
            "Ignoring direction, the knowledge graph must be connected.",
            "All entities should form one connected graph when edge directions are disregarded.",
            "The graph must be connected if we ignore which way the facts point.",
        ),
        "hub_degree": (
            "Some hub entity, such as a capital city or a large organization, takes part in at "
            "least {h} facts.",
            "At least one entity must have {h} or more facts attached (incoming or outgoing).",
            "The busiest entity should appear in no fewer than {h} facts.",
        ),
        "density_max": (
            "Keep it sparse: a density of at most {d}.",
            "The density must not exceed {d}.",
            "Facts are selective, so the density should be no more than {d}.",
        ),
        "edge_range": (
            "State between {lo} and {hi} facts in total.",
            "The graph should hold at least {lo} and at most {hi} facts.",
            "Include no fewer than {lo} and no more than {hi} relation edges.",
        ),
    },
    "molecular": {
        "connected": (
            "A molecule is a single piece, so the graph must be connected.",
            "The bond graph has to be connected.",
            "All atoms must be joined into one connected structure.",
        ),
        "valence_cap": (
            "Respect valence: no atom may have more than {k} bonds.",
            "Each atom bonds to at most {k} neighbours, as carbon's valence allows.",
            "The maximum degree must be at most {k}, the valence of carbon.",
        ),
        "density_max": (
            "Molecular graphs are sparse: the density is at most {d}.",
            "The density should not exceed {d}.",
            "Keep the bond density no higher than {d}.",
        ),
        "acyclic": (
            "The molecule has no rings, so the graph must be acyclic.",
            "Make it acyclic, with no ring closures.",
            "The skeleton must be acyclic.",
        ),
    },
}


# -- schedule --------------------------------------------------------------------------------------

def _domain_of(seed: int, index: int) -> str:
    """Domains take turns: a seeded shuffle of the eight domains per block of eight indices."""
    order = list(DOMAINS)
    rng_for(seed, "L4", "block", index // len(DOMAINS)).shuffle(order)
    return order[index % len(DOMAINS)]


@functools.cache
def _schedule(seed: int, domain: str) -> tuple[tuple[str, ...], int]:
    """The domain's shuffled bucket schedule and its template offset."""
    buckets = list(MOLECULAR_SCHEDULE if domain == "molecular" else BUCKET_SCHEDULE)
    rng = rng_for(seed, "L4", "schedule", domain)
    rng.shuffle(buckets)
    return tuple(buckets), rng.randrange(len(TEMPLATES[domain]))


def _size_range(domain: str, bucket: str) -> tuple[int, int]:
    lo, hi = BUCKET_RANGE[bucket]
    d_lo, d_hi = MOLECULAR_SIZE if domain == "molecular" else L4_SIZE
    return max(lo, d_lo), min(hi, d_hi)


# -- calibration -----------------------------------------------------------------------------------

def _holds_all(kinds: Sequence[str], f: GraphFacts) -> bool:
    """Whether pool graph ``f`` satisfies every boolean kind among ``kinds``."""
    for k in kinds:
        holds = KINDS[k].holds
        if holds is not None and not holds(f):
            return False
    return True


def _near(domain: str, n: int, kinds: Sequence[str]) -> list[GraphFacts]:
    """Pool graphs of ``domain`` with node counts near ``n`` (window widened until ≥ 8 graphs)
    that satisfy the boolean kinds."""
    by_n = _pool()[domain]
    width = max(2, n // 8)
    while True:
        out = [f for m, gs in by_n.items() if abs(m - n) <= width for f in gs
               if _holds_all(kinds, f)]
        if len(out) >= 8 or width > 60:
            return out
        width += 2


def _choose_kinds(rng: random.Random, t: Template) -> list[str]:
    """The template's required kinds plus a random subset of its optional ones, at most three
    constraint strings in all (template order kept)."""
    chosen = list(t.kinds[: t.required])
    optional = list(t.kinds[t.required:])
    budget = 3 - sum(KINDS[k].size for k in chosen)
    extra = rng.randint(0, len(optional))
    for k in rng.sample(optional, extra):
        if KINDS[k].size <= budget:
            chosen.append(k)
            budget -= KINDS[k].size
    return [k for k in t.kinds if k in chosen]


def _calibrate(rng: random.Random, t: Template, bucket: str
               ) -> tuple[int, list[str], dict[str, dict[str, str]], int]:
    """Pick the node count and kinds and calibrate them: returns ``(n, structural constraints,
    text fields per kind, yardstick count)``.

    Raises:
        BuildError: no node count in the bucket supports the template after
            :data:`CALIBRATION_ATTEMPTS` tries.
    """
    lo, hi = _size_range(t.domain, bucket)
    by_n = _pool()[t.domain]
    for _ in range(CALIBRATION_ATTEMPTS):
        kinds = _choose_kinds(rng, t)
        counts = {n: sum(_holds_all(kinds, f) for f in by_n.get(n, ())) for n in range(lo, hi + 1)}
        several = [n for n, c in counts.items() if c >= 2]
        some = several or [n for n, c in counts.items() if c >= 1]
        if not some:
            continue
        n = rng.choices(some, weights=[counts[m] for m in some], k=1)[0]
        exact = [f for f in by_n[n] if _holds_all(kinds, f)]
        chosen = rng.sample(exact, min(len(exact), rng.choice((2, 2, 3))))
        calib = _Calib(rng, n, chosen, _near(t.domain, n, kinds))
        constraints: list[str] = []
        fields: dict[str, dict[str, str]] = {}
        for k in kinds:
            got = KINDS[k].calibrate(calib)
            if got is None:
                break
            constraints += got[0]
            fields[k] = got[1]
        else:
            parsed = [parse_constraint(s) for s in constraints]
            joint = [f for f in chosen
                     if all(check_constraint(c, f, Source.EXPLICIT).satisfied for c in parsed)]
            if len(joint) != len(chosen):  # pragma: no cover - bounds are built to include them
                raise BuildError(f"{t.name}: calibrated bounds exclude their own yardsticks")
            return n, constraints, fields, len(chosen)
    raise BuildError(f"{t.name}: no {bucket} node count supports the template")


# -- reference structures --------------------------------------------------------------------------

def _structure(domain: str, style: str, kinds: Sequence[str], rng: random.Random, n: int
               ) -> nx.Graph | None:
    """One structure of ``n`` nodes from the domain's generators (``None``: rejected draw)."""
    np_rng = np_rng_from(rng, bits=31)
    g: nx.Graph | None
    if domain == "social":
        g = dm.social_holme_kim(np_rng, n)
    elif domain == "citation":
        g = dm.citation_dag(np_rng, n)
    elif domain == "biological":
        modular = style == "modules" or rng.random() < 0.5
        g = (dm.biological_modules if modular else dm.biological_duplication)(np_rng, n)
    elif domain == "ecological":
        g = dm.exact_niche(np_rng, n)
    elif domain == "communication":
        g = dm.communication_hubs(np_rng, n)
    elif domain == "infrastructure":
        grid = "planar" in kinds or rng.random() < 0.5
        g = (dm.infrastructure_grid if grid else dm.infrastructure_geometric)(np_rng, n)
    elif domain == "knowledge_graph":
        g = None
        for _ in range(KG_DRAWS):
            g = dm.typed_knowledge_graph(rng, n)
            if g is not None:
                break
    else:
        g = dm.molecular_skeleton(np_rng, n)
    if g is None or g.number_of_nodes() != n:
        return None
    # a clean copy on 0..n-1 (sorted order kept: citation ids stay in publication order);
    # generator internals (SBM blocks and partition, geometric positions) are dropped
    keep = ("type", "relation") if domain == "knowledge_graph" else ()
    ids = {v: i for i, v in enumerate(sorted(g))}
    h: nx.Graph = nx.DiGraph() if g.is_directed() else nx.Graph()
    h.add_nodes_from((ids[v], {k: d[k] for k in keep if k in d})
                     for v, d in sorted(g.nodes(data=True)))
    h.add_edges_from((ids[u], ids[v], {k: d[k] for k in keep if k in d})
                     for u, v, d in g.edges(data=True))
    connected = nx.is_weakly_connected(h) if h.is_directed() else nx.is_connected(h)
    if not connected or nx.number_of_selfloops(h):
        return None
    return h


# -- decoration: labels, relations, domain ---------------------------------------------------------

def _decorate_molecule(g: nx.Graph, rng: random.Random) -> None:
    """Elements by degree (valence respected), bond orders raised where both atoms have free
    valence, labels ``<element><index>``."""
    element = {v: vocab.weighted_choice(rng, vocab.ELEMENTS_BY_DEGREE[g.degree(v)])
               for v in sorted(g)}
    free = {v: vocab.VALENCE[element[v]] - g.degree(v) for v in sorted(g)}
    order = {e: 1 for e in g.edges()}
    edges = sorted(g.edges())
    rng.shuffle(edges)
    for u, v in edges:
        if free[u] >= 1 and free[v] >= 1 and rng.random() < 0.3:
            bump = 2 if free[u] >= 2 and free[v] >= 2 and rng.random() < 0.15 else 1
            order[(u, v)] += bump
            free[u] -= bump
            free[v] -= bump
    seen: dict[str, int] = {}
    for v in sorted(g):
        seen[element[v]] = seen.get(element[v], 0) + 1
        g.nodes[v]["element"] = element[v]
        g.nodes[v]["label"] = f"{element[v]}{seen[element[v]]}"
    for (u, v), k in order.items():
        g.edges[u, v]["relation"] = "bond"
        g.edges[u, v]["order"] = k


def _decorate(g: nx.Graph, domain: str, style: str, rng: random.Random) -> nx.Graph:
    """Add labels, relations and graph attributes for ``domain``; relabel ids to a random
    permutation of ``'0'..'n-1'``."""
    n = g.number_of_nodes()
    nodes = sorted(g)
    if domain == "molecular":
        _decorate_molecule(g, rng)
    elif domain == "knowledge_graph":
        for t in vocab.KG_ENTITIES:
            members = [v for v in nodes if g.nodes[v]["type"] == t]
            for v, name in zip(members, vocab.draw_labels(rng, vocab.KG_ENTITIES[t],
                                                          len(members)), strict=True):
                g.nodes[v]["label"] = name
    elif domain == "ecological":
        producers = [v for v in nodes if g.in_degree(v) == 0]
        consumers = [v for v in nodes if g.in_degree(v) > 0]
        for group, role, names in ((producers, "producer", vocab.PRODUCERS),
                                   (consumers, "consumer", vocab.CONSUMERS)):
            for v, name in zip(group, vocab.draw_labels(rng, names, len(group)), strict=True):
                g.nodes[v]["label"] = name
                g.nodes[v]["role"] = role
        for u, v in g.edges():
            g.edges[u, v]["relation"] = "eaten_by"
    else:
        words = {"social": vocab.PEOPLE, "citation": vocab.PAPER_TITLES,
                 "biological": vocab.PROTEINS, "communication": vocab.DEVICES,
                 "infrastructure": vocab.STATIONS if style == "transit"
                 else vocab.INTERSECTIONS}[domain]
        for v, name in zip(nodes, vocab.draw_labels(rng, words, n), strict=True):
            g.nodes[v]["label"] = name
        if domain == "citation":  # node t cites earlier nodes: years never decrease with t
            year = rng.randint(1995, 2012)
            for v in nodes:
                year += 1 if rng.random() < 0.3 else 0
                g.nodes[v]["year"] = year
        for u, v in sorted(g.edges()):
            g.edges[u, v]["relation"] = {
                "social": "friends_with", "citation": "cites", "biological": "interacts_with",
                "infrastructure": "rail_link" if style == "transit" else "road_segment",
            }.get(domain) or vocab.weighted_choice(rng, vocab.LINK_MEDIA)
    perm = list(range(n))
    rng.shuffle(perm)
    out = nx.relabel_nodes(g, {v: str(perm[i]) for i, v in enumerate(nodes)})
    out.graph["domain"] = domain
    return out


def reference_generator(t: Template, kinds: Sequence[str], n: int
                        ) -> Callable[[random.Random], nx.Graph | None]:
    """The draw function :func:`find_references` calls for an instruction of template ``t``."""
    def generate(rng: random.Random) -> nx.Graph | None:
        g = _structure(t.domain, t.style, kinds, rng, n)
        return None if g is None else _decorate(g, t.domain, t.style, rng)
    return generate


# -- records ---------------------------------------------------------------------------------------

def _text(rng: random.Random, t: Template, n: int, kinds: Sequence[str],
          fields: dict[str, dict[str, str]]) -> str:
    parts = [rng.choice(t.openers).format(n=n)]
    for k in kinds:
        parts.append(rng.choice(CLAUSES[t.domain][k]).format(node=t.node, nodes=t.nodes,
                                                             **fields[k]))
    return " ".join(parts)


def build_record(seed: int, index: int) -> dict[str, Any]:
    """Record ``index`` (0-based; id ``L4-<index+1>``) with its two references.

    Raises:
        BuildError: the template cannot be calibrated or no references are found.
    """
    domain = _domain_of(seed, index)
    rounds = index // len(DOMAINS)
    buckets, offset = _schedule(seed, domain)
    bucket = buckets[rounds % len(buckets)]
    templates = TEMPLATES[domain]
    t = templates[(rounds + offset) % len(templates)]
    rng = rng_for(seed, "L4", index)
    n, structural, fields, _ = _calibrate(rng, t, bucket)
    kinds = list(fields)
    directed = domain in DIRECTED_DOMAINS
    explicit = [f"num_nodes={n}", f"directed={'true' if directed else 'false'}", *structural]
    iid = f"L4-{index + 1:03d}"
    rec = make_record(iid, LEVEL, _text(rng, t, n, kinds, fields), explicit,
                      size=size_bucket(n), domain=domain, template=t.name)
    find_references(rec, reference_generator(t, kinds, n), rng_for(seed, "L4", index, "ref"),
                    tries=REFERENCE_TRIES)
    return rec


def build_level4(seed: int, count: int = 100) -> list[dict[str, Any]]:
    """``count`` level-4 records ``L4-001`` … (see the module docstring for the promises).

    Raises:
        BuildError: a template could not be calibrated or referenced (never skipped silently).
    """
    return [build_record(seed, i) for i in range(count)]
