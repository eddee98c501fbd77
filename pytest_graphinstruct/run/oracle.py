"""The oracle model: answers every instruction with a correct graph from the suite itself.

It is the benchmark's self-test — a run with ``--gi-model=oracle`` should pass every item whose
references are sound.  The answer is, in order of preference:

1. the first reference that passes the verifier — for L5 the dataset's ``graph_edits`` (the
   edit in GraphEdit form) are tried before the full reference graphs;
2. the first *repaired* reference that passes: the reference with its self-loops and repeated
   edges dropped, re-serialized (some official references carry self-loops — a data defect that
   breaks the no-contradiction rule, not the task);
3. for an infeasible instruction, a refusal sentence (the correct answer to an infeasible task);
4. for a graph-building instruction (not L5 editing), a *synthesized* graph: a deterministic,
   bounded search over seeded random graphs (planted partitions, G(n,p), small worlds) of the
   instruction's size, the first one the verifier accepts (see :func:`synthesize`);
5. the first reference (when nothing passes — a defect of the suite, which the run then shows);
6. otherwise ``Answer(error=...)`` (a feasible instruction with no reference at all).

The oracle spends no tokens: ``usage`` is ``None`` and ``calls`` is 1.  It is not cacheable.
"""

from __future__ import annotations

import threading

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import Suite
from pytest_graphinstruct.verify.verifier import Verifier

REFUSAL = ("No such graph exists: the constraints are contradictory, so this instruction is "
           "infeasible.")


class OracleBackend:
    """Answers from the suite's references (see the module docstring).  Thread-safe."""

    endpoint = "oracle"
    cacheable = False
    inline = True  # answers from memory (the scheduler asks in the submitting thread)

    def __init__(self, suite: Suite, verifier: Verifier | None = None) -> None:
        self.suite = suite
        self.verifier = verifier or Verifier()
        self._chosen: dict[str, Answer] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OracleBackend({len(self.suite)} instructions)"

    def complete(self, request: Request) -> Answer:
        """The oracle's answer to ``request.instruction_id`` (the same for every sample)."""
        inst = self.suite.get(request.instruction_id)
        if inst is None:
            return Answer(error=f"oracle: unknown instruction {request.instruction_id!r} "
                                "(not in the suite)", calls=0)
        return self.answer(inst)

    def answer(self, inst: Instruction) -> Answer:
        """The oracle's answer to ``inst`` (module docstring), chosen once per instruction id
        and the same ever after."""
        with self._lock:
            known = self._chosen.get(inst.id)
        if known is not None:
            return known
        answer = self._choose(inst)
        with self._lock:
            return self._chosen.setdefault(inst.id, answer)

    def _choose(self, inst: Instruction) -> Answer:
        # L5: the edit itself (GraphEdit form) is the most faithful answer when it passes.
        for ref in (*inst.graph_edits, *inst.references):
            if self.verifier.verify(inst, ref).passed:
                return Answer(text=ref, usage=None, calls=1, finish_reason="stop")
        for ref in inst.references:
            repaired = _repaired(ref)
            if repaired is not None and self.verifier.verify(inst, repaired).passed:
                return Answer(text=repaired, usage=None, calls=1, finish_reason="stop")
        if not inst.feasible:
            return Answer(text=REFUSAL, usage=None, calls=1, finish_reason="stop")
        made = synthesize(inst, self.verifier)
        if made is not None:
            return Answer(text=made, usage=None, calls=1, finish_reason="stop")
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


SYNTHESIS_ATTEMPTS = 3000


def synthesize(inst: Instruction, verifier: Verifier,
               attempts: int = SYNTHESIS_ATTEMPTS) -> str | None:
    """A code-style graph that passes every verdict of ``inst``, or ``None``.

    Deterministic (seeded by the instruction id) and bounded by ``attempts`` candidates drawn
    in turn from planted-partition graphs, G(n, p) and connected small-world graphs on the
    instruction's ``num_nodes``, oriented from lower to higher node when it asks for a directed
    graph.  Not used for L5 (an edit of a base graph is not a random graph) nor without a node
    count.
    """
    import hashlib
    import random

    import networkx as nx

    from pytest_graphinstruct.graphs.serialize import serialize

    n = inst.num_nodes
    if n is None or n < 2 or inst.base is not None:
        return None
    directed = any(c.key == "directed" and c.value is True for c in inst.explicit)
    seed = int.from_bytes(hashlib.sha256(inst.id.encode()).digest()[:8], "big")
    rng = random.Random(seed)
    for attempt in range(attempts):
        family = attempt % 3
        s = rng.randrange(1 << 30)
        if family == 0:
            k = rng.randint(2, max(2, min(5, n // 3)))
            sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
            g = nx.random_partition_graph(sizes, rng.uniform(0.2, 0.95), rng.uniform(0.0, 0.15),
                                          seed=s)
        elif family == 1:
            g = nx.gnp_random_graph(n, rng.uniform(0.05, 0.9), seed=s)
        else:
            g = nx.connected_watts_strogatz_graph(n, max(2, rng.randint(2, max(2, n // 3))),
                                                  rng.uniform(0.0, 0.5), seed=s)
        g = nx.Graph(list(g.edges()))  # plain: no generator attributes
        g.add_nodes_from(range(n))
        if directed:
            g = nx.DiGraph((min(u, v), max(u, v)) for u, v in g.edges())
            g.add_nodes_from(range(n))
        text = serialize(nx.relabel_nodes(g, str), name=f"{inst.id}-synth")
        if verifier.verify(inst, text).passed:
            return text
    return None
