"""Matching instructions to pool graphs: the pool subset of a constraint set.

* **Same checks as the verifier.**  A constraint set's subset is the pool graphs that satisfy
  every checkable constraint, decided by :func:`~pytest_graphinstruct.verify.checks.
  check_constraint` on :class:`~pytest_graphinstruct.verify.properties.GraphFacts` — exactly the
  verdict an answer with that graph would get.  When the instruction has a domain (L4), only
  pool graphs of the same domain are candidates (:func:`instruction_domain`).
* **Cheap first.**  Constraints whose verdict depends on one cheap number (node count, edge
  count, directedness) are decided once per distinct value; the others are tried cheapest first
  and a failure skips the rest, so expensive properties are computed only for graphs that
  survived the cheaper constraints.  The result equals re-checking every pool graph.
* **Facts shared and persisted.**  :class:`Matcher` keeps one :class:`GraphFacts` per pool graph,
  seeded with persisted values of the :data:`~pytest_graphinstruct.pools.cache.PERSISTED_FACTS`
  and recording newly computed ones for the disk cache.

Subsets are identified by :func:`match_key` (the canonical form of a constraint set).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

import numpy as np

from pytest_graphinstruct.kernels import mmd
from pytest_graphinstruct.pools.cache import PERSISTED_FACTS, decode_fact, encode_fact
from pytest_graphinstruct.pools.format import PoolGraph
from pytest_graphinstruct.suite.constraints import Constraint
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.checks import check_constraint, is_checkable
from pytest_graphinstruct.verify.properties import GraphFacts
from pytest_graphinstruct.verify.verdict import Source

#: Constraint keys in the order they are tried (cheap first; a failure skips the rest).
_KEY_COST: Mapping[str, int] = MappingProxyType({
    k: i for i, k in enumerate((
        "num_nodes", "directed", "num_edges", "min_degree", "max_degree", "degree", "density",
        "num_components", "connected", "bipartite", "acyclic", "bipartite_sides", "graph_type",
        "clustering_coefficient", "planar", "diameter", "average_path_length",
        "edge_connectivity", "modularity"))
})


#: Keys whose verdict is a function of one cheap graph number (see Matcher._prefilter_mask).
_PREFILTER: Mapping[str, Callable[[PoolGraph], object]] = MappingProxyType({
    "num_nodes": lambda pg: pg.n,
    "num_edges": lambda pg: pg.m,
    "directed": lambda pg: pg.directed,
})


def match_key(constraints: Iterable[Constraint], domain: str | None = None) -> tuple[str, ...]:
    """The canonical key of a constraint set: sorted canonical forms of its checkable
    constraints (metadata keys skipped), plus ``domain=<d>`` when a domain filter applies."""
    key = sorted({c.canonical for c in constraints if is_checkable(c)})
    if domain is not None:
        key.append(f"domain={domain}")
    return tuple(key)


def instruction_domain(instruction: Instruction) -> str | None:
    """The instruction's domain (``domain`` field, else an explicit ``domain=`` constraint)."""
    if instruction.domain is not None:
        return instruction.domain
    c = instruction.first("domain")
    return str(c.value) if c is not None else None


class MatchedPool(Protocol):
    """What a :class:`PoolMatch` refers back to (a :class:`~pytest_graphinstruct.pools.Pool`)."""

    @property
    def graphs(self) -> Sequence[PoolGraph]: ...

    def reference_set(self, match: PoolMatch) -> mmd.ReferenceSet: ...


@dataclass(frozen=True)
class PoolMatch:
    """The pool graphs matching one constraint set (indices ascending, into ``pool.graphs``)."""

    pool: MatchedPool = field(repr=False, compare=False)
    key: tuple[str, ...]
    indices: tuple[int, ...]

    @property
    def count(self) -> int:
        return len(self.indices)

    @property
    def graphs(self) -> tuple[PoolGraph, ...]:
        return tuple(self.pool.graphs[i] for i in self.indices)

    def reference_set(self) -> mmd.ReferenceSet:
        """The MMD reference set of this subset (statistics computed once, then cached)."""
        return self.pool.reference_set(self)


class Matcher:
    """Decides which graphs of a pool satisfy a constraint set.

    Holds the per-graph :class:`GraphFacts` (seeded from :attr:`persisted`) and, in
    :attr:`persisted`, the encoded values of the persisted facts computed so far
    (:attr:`facts_dirty` tells whether any is new).  Counts constraint checks in
    ``computed["checks"]``.  Not thread-safe: the owning pool serializes calls.
    """

    def __init__(self, graphs: Sequence[PoolGraph], computed: dict[str, int]) -> None:
        self.graphs = graphs  # not copied: a pool's LineGraphs parses a graph on first use
        self.computed = computed
        #: persisted fact name → encoded value per pool graph (``None``: not computed)
        self.persisted: dict[str, list[Any]] = {}
        self.facts_dirty = False
        self._facts: dict[int, GraphFacts] = {}
        self._group_cache: dict[str, dict[object, np.ndarray]] = {}

    def facts(self, index: int) -> GraphFacts:
        """The (shared, cached) :class:`GraphFacts` of pool graph ``index``, seeded with the
        persisted properties."""
        f = self._facts.get(index)
        if f is None:
            f = GraphFacts(self.graphs[index].graph)
            for name, values in self.persisted.items():
                if values[index] is not None:
                    f.__dict__[name] = decode_fact(name, values[index])
            self._facts[index] = f
        return f

    def compute(self, cs: Sequence[Constraint], domain: str | None) -> tuple[int, ...]:
        """Indices of the pool graphs satisfying every constraint of ``cs`` (all checkable)
        and, if ``domain`` is given, of that domain."""
        mask = np.ones(len(self.graphs), dtype=bool)
        if domain is not None:
            mask &= np.array([pg.domain == domain for pg in self.graphs], dtype=bool)
        for c in cs:
            if c.key in _PREFILTER:
                mask &= self._prefilter_mask(c)
        ordered = sorted(cs, key=lambda c: (_KEY_COST.get(c.key, len(_KEY_COST) // 2),
                                            c.canonical))
        out = []
        for i in np.flatnonzero(mask).tolist():
            facts = self.facts(i)
            ok = True
            for c in ordered:
                self.computed["checks"] += 1
                if not check_constraint(c, facts, Source.EXPLICIT).satisfied:
                    ok = False
                    break
            if ok:
                out.append(i)
            self._remember_facts(i, facts)
        return tuple(out)

    def _prefilter_mask(self, c: Constraint) -> np.ndarray:
        """Pool graphs that can pass ``c``, whose verdict depends on one cheap number only
        (node count, edge count, directedness): ``check_constraint`` is evaluated once per
        distinct value, on the first pool graph having it — the same check, shared."""
        groups = self._groups(c.key)
        mask = np.zeros(len(self.graphs), dtype=bool)
        for members in groups.values():
            self.computed["checks"] += 1
            if check_constraint(c, self.facts(int(members[0])), Source.EXPLICIT).satisfied:
                mask[members] = True
        return mask

    def _groups(self, key: str) -> Mapping[object, np.ndarray]:
        groups = self._group_cache.get(key)
        if groups is None:
            prop = _PREFILTER[key]
            acc: dict[object, list[int]] = {}
            for i, pg in enumerate(self.graphs):
                acc.setdefault(prop(pg), []).append(i)
            groups = {v: np.array(ix, dtype=np.intp) for v, ix in acc.items()}
            self._group_cache[key] = groups
        return groups

    def _remember_facts(self, index: int, facts: GraphFacts) -> None:
        for name in PERSISTED_FACTS:
            if name in facts.__dict__:
                values = self.persisted.setdefault(name, [None] * len(self.graphs))
                if values[index] is None:
                    values[index] = encode_fact(facts.__dict__[name])
                    self.facts_dirty = True
