"""One sample's report entry (run/evaluate.sample_result)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.run.evaluate import sample_result
from pytest_graphinstruct.run.records.results import SampleResult, ViolationDetail
from pytest_graphinstruct.suite.loader import instruction_from_record
from pytest_graphinstruct.verify.verifier import Verifier

CYCLE4 = ("Graph[name='c', nodes=4] { node_list = ['0','1','2','3']; "
          "edge_list = [('0','1'), ('1','2'), ('2','3'), ('3','0')]; }")


def test_violations_carry_their_category_and_gap() -> None:
    inst = instruction_from_record({
        "id": "L1-001", "level": 1, "instruction": "Generate a tree with 5 nodes.",
        "explicit_constraints": ["graph_type=tree", "num_nodes=5"],
        "implicit_constraints": [], "graph_sizes": ["small"], "reference_solutions": []})
    assert inst is not None
    v = Verifier().verify(inst, CYCLE4)
    result = sample_result(v, Answer(text=CYCLE4, usage=Usage(3, 4)))
    details = {d.constraint: d for d in result.violation_details}
    assert details["graph_type=tree"] == ViolationDetail("graph_type=tree", "structural", None)
    assert details["num_nodes=5"] == ViolationDetail("num_nodes=5", "count", -1.0)
    assert details["acyclic=true"].category == "structural"  # inferred from the tree
    assert SampleResult.from_json(result.to_json()) == result


def test_a_parse_failure_has_no_violation_details() -> None:
    inst = instruction_from_record({
        "id": "L0-001", "level": 0, "instruction": "3 nodes.", "explicit_constraints":
        ["num_nodes=3"], "implicit_constraints": [], "graph_sizes": ["small"],
        "reference_solutions": []})
    assert inst is not None
    result = sample_result(Verifier().verify(inst, "no graph"), Answer(text="no graph"))
    assert not result.parsed and result.violation_details == ()


def test_an_item_records_its_cluster() -> None:
    from pytest_graphinstruct.run.config import Cell
    from pytest_graphinstruct.run.evaluate import error_result, evaluate

    record = {"id": "L0-001", "level": 0, "instruction": "3 nodes.",
              "explicit_constraints": ["num_nodes=3"], "implicit_constraints": [],
              "graph_sizes": ["small"], "reference_solutions": []}
    with_template = instruction_from_record({**record, "template": "nodes"})
    without = instruction_from_record(record)
    assert with_template is not None and without is not None
    graph = "Graph[name='g', nodes=3] { node_list = ['0','1','2']; edge_list = [('0','1')]; }"
    assert evaluate(with_template, [Answer(text=graph)]).cluster == "nodes"
    assert evaluate(without, [Answer(text=graph)]).cluster == "L0|num_nodes="
    err = error_result(with_template, Cell("m", "zero-shot"), [], outcome="error", error="x")
    assert err.cluster == "nodes"


@pytest.mark.slow
@pytest.mark.parametrize("level", [3, 4, 5])
def test_a_190k_edge_answer_is_checked_and_scored_in_bounded_time(level: int) -> None:
    """Issue 20 item 9: one 190k-edge answer took 192 s at L4 (D4's networkx triangles, D3's
    GCN and dense greedy modularity), ~66 s at L3/L5 (all-pairs distances, the L5 edit
    distance).  Measured after the fixes: 2-5 s (docs/PARSING.md); the 120 s limit is a
    generous bound (>20x), not a benchmark.  The D3 GCN part must be reported absent as too
    large, never silently computed on a weaker basis, and the reason said once."""
    root = Path(__file__).resolve().parents[2]
    script = root / "bench" / "big_answer.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--child", "lines", "190000", str(level)],
        capture_output=True, text=True, timeout=120, check=False, cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    assert figures["outcome"] == "graph"
    assert figures["absent"]["D3"] == ("a part could not be computed: gcn: not computed: "
                                       "answer too large (190000 edges > 20000)")
