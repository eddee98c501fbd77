from __future__ import annotations

import math
from typing import Any

import pytest

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.score.instruction_score import score_instruction
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


def test_pools_feed_d1_mmd_and_d3_references() -> None:
    from types import MappingProxyType

    import networkx as nx

    from pytest_graphinstruct.pools import Pool, ReferencePools

    graphs = [nx.connected_watts_strogatz_graph(12, 4, 0.2, seed=s) for s in range(30)]
    pools = ReferencePools(MappingProxyType({3: Pool.from_graphs(graphs)}))
    ref = ("Graph[name='r'] { node_list = [" + ",".join(str(i) for i in range(12)) + "]; "
           "edge_list = [" + ",".join(f"({u},{v})" for u, v in graphs[0].edges()) + "]; }")
    inst = make(id="L3-001", level=3, instruction="A small world with 12 nodes.",
                explicit_constraints=["num_nodes=12", "connected=true", "directed=false"],
                implicit_constraints=[], reference_solutions=[ref])
    answers = [nx.connected_watts_strogatz_graph(12, 4, 0.3, seed=100 + s) for s in range(3)]
    texts = ["Graph[name='a'] { node_list = [" + ",".join(str(i) for i in range(12)) + "]; "
             "edge_list = [" + ",".join(f"({u},{v})" for u, v in g.edges()) + "]; }"
             for g in answers]
    with_pools = score_instruction(inst, [Answer(text=t, usage=USAGE) for t in texts],
                                   [V.verify(inst, t) for t in texts], pools)
    assert with_pools.details.d1 is not None and with_pools.details.d1["formula"] == "distribution"
    assert with_pools.details.pool_references is not None
    assert len(with_pools.details.pool_references) == 3
    without = run(inst, texts)
    assert without.details.d1 is not None and without.details.d1["formula"] == "constraint"
    assert without.details.pool_references is None
    # D3 takes the closest reference, so more yardsticks never lower it
    assert with_pools.dimensions["D3"] is not None and without.dimensions["D3"] is not None
    assert with_pools.dimensions["D3"] >= without.dimensions["D3"] - 1e-12


def test_batched_scoring_equals_one_by_one() -> None:
    import networkx as nx

    from pytest_graphinstruct.score.instruction_score import score_instructions

    def text(g: nx.Graph) -> str:
        return ("Graph[name='a'] { node_list = [" + ",".join(str(i) for i in g.nodes()) + "]; "
                "edge_list = [" + ",".join(f"({u},{v})" for u, v in g.edges()) + "]; }")

    items = []
    for n in (12, 16, 20):
        ref = text(nx.connected_watts_strogatz_graph(n, 4, 0.2, seed=n))
        inst = make(id=f"L3-0{n}", level=3, instruction=f"A small world with {n} nodes.",
                    explicit_constraints=[f"num_nodes={n}", "connected=true"],
                    implicit_constraints=[], reference_solutions=[ref])
        texts = [text(nx.connected_watts_strogatz_graph(n, 4, 0.3, seed=n + k)) for k in (1, 2)]
        items.append((inst, [Answer(text=t, usage=USAGE) for t in texts],
                      [V.verify(inst, t) for t in texts]))
    batched = [s.to_json() for s in score_instructions(items)]
    single = [score_instruction(i, a, v).to_json() for i, a, v in items]
    assert batched == single
    assert all(s["dimension_scores"]["D3"] is not None for s in batched)
