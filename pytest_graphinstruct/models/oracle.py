"""The oracle model: answers every instruction with a correct graph from the suite itself.

It is the benchmark's self-test — a run with ``--gi-model=oracle`` should pass every item whose
references are sound.  The answer is, in order of preference:

1. the first reference solution that passes the verifier;
2. the first *repaired* reference that passes: the reference with its self-loops and repeated
   edges dropped, re-serialized (some official references carry self-loops — a data defect that
   breaks the no-contradiction rule, not the task);
3. for an infeasible instruction, a refusal sentence (the correct answer to an infeasible task);
4. the first reference (when nothing passes — a defect of the suite, which the run then shows);
5. otherwise ``Answer(error=...)`` (a feasible instruction with no reference at all).

The oracle spends no tokens: ``usage`` is ``None`` and ``calls`` is 1.  It is not cacheable.
"""

from __future__ import annotations

import threading

from pytest_graphinstruct.models.base import Answer, Request
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import Suite
from pytest_graphinstruct.verify.verifier import Verifier

REFUSAL = ("No such graph exists: the constraints are contradictory, so this instruction is "
           "infeasible.")


class OracleBackend:
    """Answers from the suite's references (see the module docstring).  Thread-safe."""

    endpoint = "oracle"
    cacheable = False

    def __init__(self, suite: Suite, verifier: Verifier | None = None) -> None:
        self.suite = suite
        self.verifier = verifier or Verifier()
        self._chosen: dict[str, Answer] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OracleBackend({len(self.suite)} instructions)"

    def complete(self, request: Request) -> Answer:
        """The oracle's answer to ``request.instruction_id`` (the same for every sample)."""
        with self._lock:
            known = self._chosen.get(request.instruction_id)
        if known is not None:
            return known
        inst = self.suite.get(request.instruction_id)
        if inst is None:
            return Answer(error=f"oracle: unknown instruction {request.instruction_id!r} "
                                "(not in the suite)", calls=0)
        answer = self._choose(inst)
        with self._lock:
            self._chosen.setdefault(inst.id, answer)
        return answer

    def _choose(self, inst: Instruction) -> Answer:
        for ref in inst.references:
            if self.verifier.verify(inst, ref).passed:
                return Answer(text=ref, usage=None, calls=1, finish_reason="stop")
        for ref in inst.references:
            repaired = _repaired(ref)
            if repaired is not None and self.verifier.verify(inst, repaired).passed:
                return Answer(text=repaired, usage=None, calls=1, finish_reason="stop")
        if not inst.feasible:
            return Answer(text=REFUSAL, usage=None, calls=1, finish_reason="stop")
        if inst.references:
            return Answer(text=inst.references[0], usage=None, calls=1, finish_reason="stop")
        return Answer(error=f"oracle: {inst.id} is feasible but has no reference solution",
                      calls=0)


def _repaired(reference: str) -> str | None:
    """``reference`` minus self-loops (repeats vanish when re-serialized); ``None`` if unchanged."""
    import networkx as nx

    from pytest_graphinstruct.graphs.parse import parse_graph
    from pytest_graphinstruct.graphs.serialize import serialize

    pg = parse_graph(reference)
    loops = list(nx.selfloop_edges(pg.graph))
    if not loops and not pg.duplicate_edges:
        return None
    g = pg.graph.copy()
    g.remove_edges_from(loops)
    return serialize(g, name=pg.name)
