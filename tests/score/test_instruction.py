from __future__ import annotations

import math
from typing import Any

import pytest

from pytest_graphinstruct.models.base import Answer, Usage
from pytest_graphinstruct.score.instruction import score_instruction
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import instruction_from_record
from pytest_graphinstruct.verify.verifier import Verifier

V = Verifier()
TREE = "Graph[name='t'] { node_list = [0,1,2,3]; edge_list = [(0,1),(1,2),(1,3)]; }"


def make(**over: Any) -> Instruction:
    rec: dict[str, Any] = {"id": "L1-001", "level": 1, "instruction": "A tree with 4 nodes.",
                           "explicit_constraints": ["graph_type=tree", "num_nodes=4"],
                           "implicit_constraints": ["num_edges=3"]}
    rec.update(over)
    inst = instruction_from_record(rec)
    assert inst is not None
    return inst


USAGE = Usage(100, 50)


def run(inst: Instruction, texts: list[str], usage: Usage | None = USAGE) -> Any:
    answers = [Answer(text=t, usage=usage, calls=1) for t in texts]
    return score_instruction(inst, answers, [V.verify(inst, t) for t in texts])


def test_feasible_dimensions_and_level_scores() -> None:
    s = run(make(), [TREE, TREE])
    assert s.dimensions["D4"] == pytest.approx(1.0)
    d5 = 0.7 * math.exp(-150 / 1000) + 0.3 * 1.0  # 300 tokens / 2 valid, 2 calls / 2 valid
    assert s.dimensions["D5"] == pytest.approx(d5)
    assert s.dimensions["D2"] is None and s.dimensions["D3"] is None  # not weighted at L1
    assert "D2" in s.absent and "not weighted" in s.absent["D2"]
    out = s.to_json()
    assert out["tpv"] == pytest.approx(150) and out["tokens"] == 300
    # the quality-only level score never uses D5; the full one does
    assert s.level.score is not None and s.level_with_d5.score is not None
    assert "D5" not in s.level.weights and "D5" in s.level_with_d5.weights


def test_unknown_usage_makes_d5_absent_not_estimated() -> None:
    s = run(make(), [TREE], usage=None)
    assert s.dimensions["D5"] is None and "usage unknown" in s.absent["D5"]
    assert "D5" in s.level_with_d5.missing


def test_infeasible_scores_refusals() -> None:
    inst = make(id="L2-009", level=2, explicit_constraints=["degree=3", "num_nodes=5"],
                implicit_constraints=[], feasible=False)
    s = run(inst, ["No such graph exists: 15 is odd.", "garbage", TREE, "Impossible: odd sum."])
    assert s.dimensions["D1"] == pytest.approx(0.5)
    assert s.dimensions["D4"] == pytest.approx(0.5)
    assert s.dimensions["D5"] == pytest.approx(0.5)
    assert s.level.score == pytest.approx(0.5)
