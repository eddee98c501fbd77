"""Few-shot exemplars: the pool they come from and the deterministic choice per instruction.

An :class:`ExemplarPool` holds candidate worked examples built from a suite:

- one per *feasible* instruction with a reference solution: the instruction as the user message
  states it (L5: base graph + task), the answer (the first reference, re-serialised in the
  canonical code-style form; at L5 the reference GraphEdit when applying it to the base graph
  reproduces that reference, else the full graph; named ``'example'``, generator provenance
  properties dropped), and a templated reasoning paragraph
  (:mod:`.reasoning`);
- one per *infeasible* instruction: a refusal exemplar whose answer explains why no graph
  exists (a computed reason when a simple one applies, e.g. an odd degree sum).

Candidates whose instruction text or answer is longer than ``max_chars`` are left out, so every
prompt stays bounded.

:meth:`ExemplarPool.select` promises, for an instruction ``I``, ``k`` and ``seed``:

- the result never contains ``I`` itself (same id, or the same instruction text);
- it depends only on ``(seed, I.id, I's graph_type/domain/task_type/level, the pool's set of
  candidates)`` — not on the order the pool was built in, the order or subset of instructions
  asked, the number of workers, or any global random state;
- candidates come from ``I``'s level; when the pool holds refusal exemplars at that level and
  ``k >= 2``, exactly one of them is included; the feasible slots prefer candidates sharing
  more of ``I``'s graph_type, domain and task_type; when the level has fewer than ``k``
  candidates the rest come from levels ``L+1, L-1, L+2, L-2`` in that order;
- within those rules candidates are ranked by ``sha256(f"{seed}:{I.id}:{candidate.id}")``;
  the chosen ones are shown in the order of that same hash (so a refusal exemplar is not always
  first or last).

By default the pool is the suite being run (leave-one-out, as in the reference release); build
it from another suite for held-out exemplars (see docs/PROMPTS.md for the trade-off).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Final

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.graphs.model import ParsedGraph, ParseResult
from pytest_graphinstruct.graphs.parse import parse_graph
from pytest_graphinstruct.graphs.serialize import serialize
from pytest_graphinstruct.prompts.builder import task_text
from pytest_graphinstruct.prompts.reasoning import (
    exemplar_reasoning,
    refusal_answer,
    refusal_reasoning,
)
from pytest_graphinstruct.prompts.texts import PACKAGED, TemplateSet
from pytest_graphinstruct.suite.instruction import Instruction

AnswerParser = Callable[[Instruction, str], ParseResult]
"""How a run reads an answer to an instruction (``Verifier.parse``): an L5 exemplar's edit form
is kept only when, so read, it gives the reference graph.  Passed in, so that the prompts do
not depend on the verifier."""

#: Exemplars per prompt.
DEFAULT_K: Final = 3
#: Longest exemplar instruction text or answer kept in a pool (characters).
MAX_EXEMPLAR_CHARS: Final = 3000
#: Graph-level properties of references that record how the dataset generated them (networkx
#: generator names, SBM subgroup labels); they are dropped from exemplar answers.
PROVENANCE_KEYS: Final = frozenset({"name", "model", "subgroup"})
#: Levels tried, as offsets from the asked level, when it has too few candidates.
FALLBACK_OFFSETS: Final[tuple[int, ...]] = (1, -1, 2, -2)


@dataclass(frozen=True)
class Exemplar:
    """One worked example as shown in a few-shot prompt.

    Attributes:
        instruction_text: the request as a user message states it (L5: base graph + task).
        answer: the good answer: a code-style graph or GraphEdit, or for a refusal exemplar a
            short explanation of why no graph exists.
        reasoning: a short templated reasoning paragraph (shown by few-cot only), or ``None``.
        refusal: true for a refusal exemplar (an infeasible instruction).
        source_id: id of the instruction it was made from.
        level: level of that instruction.
    """

    instruction_text: str
    answer: str
    reasoning: str | None
    refusal: bool
    source_id: str = ""
    level: int | None = None


@dataclass(frozen=True)
class _Candidate:
    exemplar: Exemplar
    key_text: str  # normalised instruction text, to exclude the asked instruction
    graph_type: str | None
    domain: str | None
    task_type: str | None

    @property
    def id(self) -> str:
        return self.exemplar.source_id

    @property
    def level(self) -> int | None:
        return self.exemplar.level


def _norm(text: str) -> str:
    return " ".join(text.split())


def _rank(seed: int, instruction_id: str, candidate_id: str) -> bytes:
    return hashlib.sha256(f"{seed}:{instruction_id}:{candidate_id}".encode()).digest()


def _same_structure(a: ParsedGraph, b: ParsedGraph) -> bool:
    ga, gb = a.graph, b.graph
    if ga.is_directed() != gb.is_directed() or set(ga.nodes) != set(gb.nodes):
        return False
    if ga.is_directed():
        return set(ga.edges) == set(gb.edges)
    return {frozenset(e) for e in ga.edges} == {frozenset(e) for e in gb.edges}


def _answer_text(graph: ParsedGraph) -> str:
    """The canonical text of a reference graph as an exemplar answer: named ``'example'``,
    without the :data:`PROVENANCE_KEYS` graph properties."""
    if any(k in PROVENANCE_KEYS for k in graph.graph.graph):
        g = graph.graph.copy()
        for k in PROVENANCE_KEYS:
            g.graph.pop(k, None)
        graph = replace(graph, graph=g)
    return serialize(graph, name="example")


def _feasible_candidate(inst: Instruction, max_chars: int, templates: TemplateSet,
                        parse: AnswerParser) -> _Candidate | None:
    """The exemplar of a feasible instruction, or ``None`` when it has no usable reference or
    its text or answer is longer than ``max_chars``."""
    text = task_text(inst, templates)
    if not inst.references or len(text) > max_chars:
        return None
    ref_text = inst.references[0].strip()
    graph: ParsedGraph | None
    try:
        graph = parse_graph(ref_text)
    except GraphInstructError:
        graph = None
    answer: str | None = None
    as_edit = False
    if graph is not None and inst.base is not None and inst.graph_edits:
        edit_text = inst.graph_edits[0].strip()
        result = parse(inst, edit_text)
        if (len(edit_text) <= max_chars and result.graph is not None
                and result.graph.fmt == "edit" and _same_structure(result.graph, graph)):
            answer, as_edit = edit_text, True
    if answer is None:
        answer = _answer_text(graph) if graph is not None else ref_text
    if len(answer) > max_chars:
        return None
    reasoning = exemplar_reasoning(inst, graph, as_edit=as_edit, templates=templates)
    return _Candidate(
        Exemplar(text, answer, reasoning, False, inst.id, inst.level),
        _norm(inst.text), inst.graph_type, inst.domain, inst.task_type,
    )


def _refusal_candidate(inst: Instruction, max_chars: int,
                       templates: TemplateSet) -> _Candidate | None:
    text = task_text(inst, templates)
    if len(text) > max_chars:
        return None
    ex = Exemplar(text, refusal_answer(inst, templates), refusal_reasoning(inst, templates),
                  True, inst.id, inst.level)
    return _Candidate(ex, _norm(inst.text), inst.graph_type, inst.domain, inst.task_type)


class ExemplarPool:
    """Candidate exemplars, and their deterministic selection (see module doc)."""

    def __init__(self, candidates: Iterable[_Candidate]) -> None:
        # Canonical order (by content), so nothing depends on the order of construction.
        self._candidates = tuple(sorted(
            candidates,
            key=lambda c: (c.level if c.level is not None else -1, c.id,
                           c.exemplar.instruction_text, c.exemplar.answer),
        ))
        by_level: dict[int | None, list[_Candidate]] = {}
        for c in self._candidates:
            by_level.setdefault(c.level, []).append(c)
        self._by_level = {lv: tuple(cs) for lv, cs in by_level.items()}

    @classmethod
    def from_instructions(
        cls, instructions: Iterable[Instruction], *, parse: AnswerParser,
        max_chars: int = MAX_EXEMPLAR_CHARS, templates: TemplateSet = PACKAGED,
    ) -> ExemplarPool:
        """A pool of exemplars made from ``instructions`` (see module doc for what is kept),
        worded by ``templates`` (the run's prompt texts; default: the packaged ones); ``parse``
        reads an answer as the run does (:data:`AnswerParser`)."""
        if max_chars < 1:
            raise ValueError(f"max_chars must be positive, got {max_chars!r}")
        out: list[_Candidate] = []
        for inst in instructions:
            c = (_feasible_candidate(inst, max_chars, templates, parse) if inst.feasible
                 else _refusal_candidate(inst, max_chars, templates))
            if c is not None:
                out.append(c)
        return cls(out)

    @classmethod
    def from_suite(
        cls, suite: Iterable[Instruction], *, parse: AnswerParser,
        max_chars: int = MAX_EXEMPLAR_CHARS, templates: TemplateSet = PACKAGED,
    ) -> ExemplarPool:
        """A pool made from every instruction of ``suite`` (a :class:`Suite` or any iterable of
        instructions): the suite being run (leave-one-out) or a separate held-out suite."""
        return cls.from_instructions(suite, parse=parse, max_chars=max_chars,
                                     templates=templates)

    def __len__(self) -> int:
        return len(self._candidates)

    @property
    def exemplars(self) -> tuple[Exemplar, ...]:
        """Every candidate exemplar, in canonical order (level, source id)."""
        return tuple(c.exemplar for c in self._candidates)

    def select(self, instruction: Instruction, k: int = DEFAULT_K, seed: int = 0
               ) -> tuple[Exemplar, ...]:
        """Up to ``k`` exemplars for ``instruction`` (rules in the module doc).

        Fewer than ``k`` only when the asked level and its fallback levels together hold fewer
        candidates.

        Raises:
            ValueError: ``k`` is negative.
        """
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k!r}")
        if k == 0:
            return ()
        asked_text = _norm(instruction.text)

        def usable(level: int) -> list[_Candidate]:
            return [c for c in self._by_level.get(level, ())
                    if c.id != instruction.id and c.key_text != asked_text]

        def rank(c: _Candidate) -> tuple[bytes, str, str, str]:
            return (_rank(seed, instruction.id, c.id), c.id, c.exemplar.instruction_text,
                    c.exemplar.answer)

        def preference(c: _Candidate) -> tuple[int, tuple[bytes, str, str, str]]:
            shared = sum(
                1 for mine, theirs in ((instruction.graph_type, c.graph_type),
                                       (instruction.domain, c.domain),
                                       (instruction.task_type, c.task_type))
                if mine is not None and mine == theirs
            )
            return (-shared, rank(c))

        chosen: list[_Candidate] = []
        same_level = usable(instruction.level)
        refusals = sorted((c for c in same_level if c.exemplar.refusal), key=rank)
        if refusals and k >= 2:
            chosen.append(refusals[0])
        for offset in (0, *FALLBACK_OFFSETS):
            if len(chosen) >= k:
                break
            pool = same_level if offset == 0 else usable(instruction.level + offset)
            feasible = sorted((c for c in pool if not c.exemplar.refusal), key=preference)
            chosen.extend(feasible[: k - len(chosen)])
        chosen.sort(key=rank)
        return tuple(c.exemplar for c in chosen)

