"""D4 instruction match, computed from the verifier's verdicts.

Per sample (a graph answer that is *valid*: parsed and passing its explicit ``graph_type``):

* L0–L3: ``0.4·E + 0.4·I + 0.2·NC``, or ``2/3·E + 1/3·NC`` when nothing is implied;
* L4: ``0.65·CS + 0.20·DSF + 0.15·NC`` (``DSF`` = domain structural fit against the
  instruction's same-domain references that pass their own instruction's checks; without such
  references the two other terms are renormalized);
* L5: ``0.45·EQ + 0.40·CS + 0.15·RA``.

``E`` = satisfied share of explicit constraints (metadata keys excluded), ``I`` = satisfied share
of implicit constraints (the dataset's ``implicit_constraints`` plus those inferred from the graph
type), ``NC`` = 1 when every no-contradiction check holds, else 0, ``CS`` = ``0.6·E + 0.4·I``
(``E`` alone when nothing is implied).  ``EQ`` (edit quality) = mean of the task-semantics
verdict rate (are the *right* edges edited) and the count closeness ``min(a/o, o/a)`` of the
actual edit size ``a`` to the minimal edit ``o`` (computed for the task, else the smallest
reference edit — except for tasks that rename nodes, where only the task verdicts count).
``RA`` (reasoning alignment, from the answer alone) = for a ``GraphEdit`` answer,
the share of its stated operations that are real changes of the base (no removal of an absent
edge, no addition of a present one); an empty ``GraphEdit`` (no operation) gets 1 when the
minimal edit (the ``o`` above) is 0 — doing nothing was right — and 0 otherwise (also when
``o`` is unknown); a full ``Graph`` answer states no edit and gets 0.7.

Instruction level: the mean over valid samples (0 when none is valid).  Infeasible instructions:
the share of samples that are refusals (a parse failure or a confabulated graph scores 0).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

from pytest_graphinstruct.graphs.model import ParsedGraph
from pytest_graphinstruct.graphs.serialize import serialize
from pytest_graphinstruct.score.domain_fit import DomainProfile, domain_fit
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.tasks import minimal_edit, task_spec
from pytest_graphinstruct.verify.tasks.diff import edit_size
from pytest_graphinstruct.verify.verdict import Source, Verification

#: RA of a full ``Graph[...]`` answer at L5 (it states no edit to align with).
FULL_GRAPH_RA = 0.7
#: RA of an empty ``GraphEdit`` (no operation) when the minimal edit is 0, and when it is not.
EMPTY_EDIT_RA_RIGHT, EMPTY_EDIT_RA_WRONG = 1.0, 0.0


def is_valid(v: Verification) -> bool:
    """A sample is valid when it parsed and passes its explicit ``graph_type`` constraints."""
    if not v.parse.parsed:
        return False
    return all(x.satisfied for x in v.of(Source.EXPLICIT) if x.key == "graph_type")


@dataclass(frozen=True)
class D4Parts:
    """The terms of one sample's D4 (``None`` where a term does not apply)."""

    score: float
    explicit: float
    implicit: float | None
    no_contradiction: float
    domain_fit: float | None = None
    edit_quality: float | None = None
    reasoning: float | None = None


def sample_d4(instruction: Instruction, v: Verification,
              pool: Sequence[DomainProfile] = ()) -> D4Parts:
    """D4 of one valid sample (see the module docstring); callers check :func:`is_valid`.

    ``pool``: profiles of same-domain reference-pool graphs matching the instruction; at L4 the
    domain fit takes the best of them and of the instruction's sound references.
    """
    graph = v.parse.graph
    assert graph is not None, "sample_d4 needs a parsed sample"
    e = v.rate(Source.EXPLICIT)
    e = 1.0 if e is None else e
    i = v.rate(Source.IMPLICIT, Source.INFERRED)
    nc = 1.0 if all(x.satisfied for x in v.of(Source.CONTRADICTION)) else 0.0
    cs = e if i is None else 0.6 * e + 0.4 * i
    if instruction.level <= 3:
        score = (2 / 3) * e + (1 / 3) * nc if i is None else 0.4 * e + 0.4 * i + 0.2 * nc
        return D4Parts(score, e, i, nc)
    if instruction.level == 4:
        dsf = domain_fit(graph.graph, (*_profiles(instruction), *pool))
        if dsf is None:
            score = (0.65 * cs + 0.15 * nc) / 0.80
        else:
            score = 0.65 * cs + 0.20 * dsf + 0.15 * nc
        return D4Parts(score, e, i, nc, domain_fit=dsf)
    optimal = _optimal_edit(instruction)
    eq = _edit_quality(instruction, v, graph, optimal)
    ra = _reasoning_alignment(instruction, graph, optimal)
    score = 0.45 * eq + 0.40 * cs + 0.15 * ra
    return D4Parts(score, e, i, nc, edit_quality=eq, reasoning=ra)


def instruction_d4(instruction: Instruction, samples: Sequence[Verification],
                   pool: Sequence[DomainProfile] = ()) -> float:
    """D4 of one instruction over its k samples (see the module docstring)."""
    if not samples:
        return 0.0
    if not instruction.feasible:
        return fmean(1.0 if s.parse.refusal else 0.0 for s in samples)
    scores = [sample_d4(instruction, s, pool).score for s in samples if is_valid(s)]
    return fmean(scores) if scores else 0.0


class _ProfileCache:
    """Profiles of sound references, keyed by the *content* they depend on (never by id: two
    instructions may share an id and differ).  Bounded (least recently used first out) and safe
    to share across threads."""

    def __init__(self, capacity: int = 1024) -> None:
        self._capacity = capacity
        self._data: OrderedDict[str, tuple[DomainProfile, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> tuple[DomainProfile, ...] | None:
        with self._lock:
            found = self._data.get(key)
            if found is not None:
                self._data.move_to_end(key)
            return found

    def put(self, key: str, profiles: tuple[DomainProfile, ...]) -> None:
        with self._lock:
            self._data[key] = profiles
            self._data.move_to_end(key)
            while len(self._data) > self._capacity:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


_PROFILE_CACHE = _ProfileCache()


def _profile_key(instruction: Instruction) -> str:
    """A digest of everything the sound-reference profiles depend on: the references and what
    the verifier checks them against (constraints, text, base graph)."""
    base = None if instruction.base is None else serialize(instruction.base)
    content = repr((instruction.references, instruction.explicit, instruction.implicit,
                    instruction.text, base))
    return hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()


def _profiles(instruction: Instruction) -> tuple[DomainProfile, ...]:
    """Profiles of the instruction's *sound* references: those that pass every check of their
    own instruction (a defective reference — e.g. one with self-loops — is no yardstick)."""
    key = _profile_key(instruction)
    cached = _PROFILE_CACHE.get(key)
    if cached is None:
        from pytest_graphinstruct.verify.verifier import DEFAULT_VERIFIER

        sound = [r for r in instruction.reference_graphs
                 if all(v.satisfied for v in DEFAULT_VERIFIER.check_graph(instruction, r))]
        cached = tuple(DomainProfile(r.graph) for r in sound)
        _PROFILE_CACHE.put(key, cached)
    return cached


def _optimal_edit(instruction: Instruction) -> int | None:
    """The size ``o`` of the minimal edit: computed for the task, else the smallest reference
    edit — except for tasks whose result names its nodes freely (an edit size between
    differently named graphs says nothing).  ``None`` without a base graph or when unknown."""
    base = instruction.base
    if base is None:
        return None
    spec = task_spec(instruction.task_type)
    optimal = None
    if instruction.task_type is not None:
        optimal = minimal_edit(instruction.task_type, base=base, explicit=instruction.explicit,
                               text=instruction.text)
    if (optimal is None and instruction.references
            and not (spec is not None and spec.renames_nodes)):
        optimal = min(edit_size(base, r) for r in instruction.reference_graphs)
    return optimal


def _edit_quality(instruction: Instruction, v: Verification, graph: ParsedGraph,
                  optimal: int | None) -> float:
    base = instruction.base
    task_rate = v.rate(Source.TASK)
    if base is None:
        return 1.0 if task_rate is None else task_rate
    actual = edit_size(base, graph)
    if optimal is None:
        closeness = None
    elif optimal == 0 or actual == 0:
        closeness = 1.0 if actual == optimal else 0.0
    else:
        closeness = min(actual / optimal, optimal / actual)
    parts = [x for x in (task_rate, closeness) if x is not None]
    return fmean(parts) if parts else 1.0


def _reasoning_alignment(instruction: Instruction, graph: ParsedGraph,
                         optimal: int | None) -> float:
    """RA of one answer (module docstring).  An empty ``GraphEdit`` states that nothing needs
    to change: aligned exactly when the minimal edit is known to be 0."""
    edit = graph.edit
    base = instruction.base
    if edit is None or base is None:
        return FULL_GRAPH_RA
    ops = len(edit.add_edges) + len(edit.remove_edges)
    if ops == 0:
        return EMPTY_EDIT_RA_RIGHT if optimal == 0 else EMPTY_EDIT_RA_WRONG
    b = base.graph
    real = sum(1 for u, w in edit.remove_edges if b.has_edge(u, w))
    real += sum(1 for u, w in edit.add_edges if not b.has_edge(u, w))
    return real / ops
