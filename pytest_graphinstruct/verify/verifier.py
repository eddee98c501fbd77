"""The :class:`Verifier`: raw answer + instruction → :class:`Verification`.

This is the one place that decides how an answer to an instruction is parsed
(:meth:`Verifier.parse`: parser limits, GraphEdit answers applied to the L5 base graph, isolated
nodes dropped for node-removing L5 tasks) and which checks apply to it; the pytest items, D4
scoring, VGIG feedback, few-shot exemplars and the suite builder all call it.  Order of
verdicts:

1. feasibility / parse (an infeasible instruction answered with a refusal passes; with a graph it
   fails; a feasible one answered with no graph fails),
2. explicit constraints (task/domain metadata keys are not graph properties and are skipped),
3. the instruction's dataset ``implicit_constraints``,
4. constraints inferred from the graph type that neither list already states,
5. no-contradiction checks,
6. L5 task semantics relative to the base graph.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_graphinstruct.graphs.model import (
    DEFAULT_LIMITS,
    Limits,
    Outcome,
    ParsedGraph,
    ParseResult,
)
from pytest_graphinstruct.graphs.parse import parse_answer
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.checks import check_constraint, is_checkable
from pytest_graphinstruct.verify.contradictions import check_contradictions
from pytest_graphinstruct.verify.implicit import merge_implicit
from pytest_graphinstruct.verify.properties import GraphFacts
from pytest_graphinstruct.verify.tasks import check_task, removes_nodes
from pytest_graphinstruct.verify.verdict import Source, Verdict, Verification


@dataclass(frozen=True)
class Verifier:
    """Parses answers and checks them against instructions.

    Stateless apart from its parser limits; safe to share across threads.
    """

    limits: Limits = DEFAULT_LIMITS

    def parse(self, instruction: Instruction, text: str) -> ParseResult:
        """Parse one raw answer to ``instruction`` the way every check sees it.  Never raises.

        :func:`~pytest_graphinstruct.graphs.parse.parse_answer` under this verifier's
        ``limits``; a ``GraphEdit`` answer is applied to the instruction's base graph (L5), and
        for a node-removing task (:func:`~.tasks.removes_nodes`: k-core, pruned tree, extracted
        subgraph, contraction, line graph, relabelling) the base nodes the edit leaves isolated
        are dropped.  Without a base graph a ``GraphEdit`` answer is a parse failure.
        """
        return parse_answer(
            text,
            base=instruction.base,
            drop_isolated=removes_nodes(instruction.task_type),
            limits=self.limits,
        )

    def verify(self, instruction: Instruction, raw: str) -> Verification:
        """Verify one raw model answer to ``instruction``.

        Never raises for any ``raw`` (bad answers become failed verdicts).  The result's
        ``passed`` is true exactly when the answer is acceptable: a graph meeting every check
        for a feasible instruction, a refusal for an infeasible one.
        """
        result = self.parse(instruction, raw)
        verdicts: list[Verdict] = []
        if not instruction.feasible:
            verdicts.append(_feasibility_verdict(result.outcome, result.reason, result.graph))
        elif result.outcome is not Outcome.GRAPH:
            verdicts.append(_missing_graph_verdict(result.outcome, result.reason))
        if result.graph is not None:
            verdicts.extend(self.check_graph(instruction, result.graph))
        return Verification(instruction.id, result, tuple(verdicts))

    def check_graph(self, instruction: Instruction, pg: ParsedGraph) -> tuple[Verdict, ...]:
        """All constraint, no-contradiction and task verdicts for one parsed graph."""
        facts = GraphFacts(pg.graph)
        dataset, inferred = merge_implicit(instruction.explicit, instruction.implicit)
        out: list[Verdict] = []
        for source, constraints in (
            (Source.EXPLICIT, instruction.explicit),
            (Source.IMPLICIT, dataset),
            (Source.INFERRED, inferred),
        ):
            out.extend(check_constraint(c, facts, source) for c in constraints if is_checkable(c))
        out.extend(check_contradictions(pg))
        task = instruction.task_type
        if task is not None and instruction.base is not None:
            out.extend(
                check_task(
                    task,
                    base=instruction.base,
                    result=pg,
                    explicit=instruction.explicit,
                    text=instruction.text,
                )
            )
        return tuple(out)


def _feasibility_verdict(
    outcome: Outcome, reason: str | None, graph: ParsedGraph | None
) -> Verdict:
    expected = "a refusal (the instruction is infeasible)"
    if outcome is Outcome.REFUSAL:
        return Verdict("feasible=false", "feasible", Source.FEASIBILITY, True, expected,
                       f"refusal: {reason}")
    if outcome is Outcome.GRAPH and graph is not None:
        observed = (f"a confabulated graph with {graph.num_nodes} nodes and "
                    f"{graph.num_edges} edges")
        return Verdict("feasible=false", "feasible", Source.FEASIBILITY, False, expected, observed)
    return Verdict("feasible=false", "feasible", Source.PARSE, False, expected,
                   f"no graph and no refusal: {reason}")


def _missing_graph_verdict(outcome: Outcome, reason: str | None) -> Verdict:
    if outcome is Outcome.REFUSAL:
        return Verdict("parseable_output", "parse", Source.FEASIBILITY, False,
                       "a graph (the instruction is feasible)", f"refusal: {reason}")
    return Verdict("parseable_output", "parse", Source.PARSE, False, "a graph",
                   f"parse failure: {reason}")


DEFAULT_VERIFIER = Verifier()
