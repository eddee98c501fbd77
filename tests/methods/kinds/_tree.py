"""The graphs and the instruction the method-kind tests share: a tree with 4 nodes."""

from __future__ import annotations

from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import instruction_from_record

TREE4 = ("Graph[name='t', nodes=4] { node_list = ['0','1','2','3']; "
         "edge_list = [('0','1'), ('1','2'), ('1','3')]; }")
CYCLE4 = ("Graph[name='c', nodes=4] { node_list = ['0','1','2','3']; "
          "edge_list = [('0','1'), ('1','2'), ('2','3'), ('3','0')]; }")  # 4 nodes, not a tree


def tree_instruction(feasible: bool = True) -> Instruction:
    """``L1-001``: a tree with 4 nodes (:data:`TREE4` its reference)."""
    inst = instruction_from_record({
        "id": "L1-001", "level": 1, "instruction": "Generate a tree with 4 nodes.",
        "explicit_constraints": ["graph_type=tree", "num_nodes=4"],
        "implicit_constraints": [], "graph_sizes": ["small"],
        "reference_solutions": [TREE4], "feasible": feasible})
    assert inst is not None
    return inst
