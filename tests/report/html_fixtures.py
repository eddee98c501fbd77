"""Reports for the HTML report's tests: real verdicts of crafted answers to the project's
suite (instructions/), so violation details, loci and the taxonomy are the real ones."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pytest_graphinstruct.answers import Answer, MethodStep, Usage
from pytest_graphinstruct.run.aggregate import build_run_report
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.evaluate import evaluate
from pytest_graphinstruct.run.records.results import CellMetadata, ItemResult, RunReport
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import load_suite

SUITE = Path(__file__).resolve().parents[2] / "instructions"

HOSTILE = "</script><script>alert(1)</script> {{ 7*7 }} {% raw %} <img src=x onerror=alert(2)>"

# L1-001: a tree with exactly 8 nodes.  CYCLE adds the edge 0-4: a cycle 0-1-4.
TREE = """Graph[name='t', directed=false, nodes=8] {
    node_list = ['0', '1', '2', '3', '4', '5', '6', '7'];
    edge_list = [('0','1'), ('1','4'), ('1','5'), ('1','7'), ('2','4'), ('3','6'), ('4','6')];
}"""
CYCLE = TREE.replace("('4','6')]", "('4','6'), ('0','4')]")


@cache
def instructions() -> dict[str, Instruction]:
    return {i.id: i for i in load_suite(SUITE, levels=[1])}


def _usage(n: int) -> Usage:
    return Usage(input_tokens=100, output_tokens=n, source="provider")


def items(model: str, strategy: str, *, good: bool) -> list[ItemResult]:
    """Four L1 items: L1-001 right (or with a cycle), L1-002 refused, L1-003 a hostile
    unparseable text, L1-004 an empty answer."""
    insts = instructions()
    cell = Cell(model, strategy)
    first = TREE if good else CYCLE
    step = MethodStep(round=0, source="round0", temperature=0.0, input_tokens=100,
                      output_tokens=50, calls=1, d4=0.5, passed=False, kept=True)
    return [
        evaluate(insts["L1-001"], [Answer(text=first, usage=_usage(80),
                                          steps=() if good else (step,))], cell=cell),
        evaluate(insts["L1-002"], [Answer(text="I cannot do this: it is impossible.",
                                          usage=_usage(10))], cell=cell),
        evaluate(insts["L1-003"], [Answer(text=HOSTILE, usage=_usage(30))], cell=cell),
        evaluate(insts["L1-004"], [Answer(text="", usage=_usage(1))], cell=cell),
    ]


@cache
def two_cell_report() -> RunReport:
    """Cells m-zero-shot (L1-001 with a cycle) and m-few-shot (L1-001 right)."""
    order = {i: k for k, i in enumerate(instructions())}
    return build_run_report(
        [(CellMetadata("m", "zero-shot"), items("m", "zero-shot", good=False)),
         (CellMetadata("m", "few-shot"), items("m", "few-shot", good=True))],
        suite_order=order)
