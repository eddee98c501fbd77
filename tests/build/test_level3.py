"""Level 3 builder: pool calibration (anchor satisfies, peers mostly do) and references."""

from __future__ import annotations

from collections import Counter

import networkx as nx
import pytest

from pytest_graphinstruct.build import pools as pb
from pytest_graphinstruct.build.common import as_instruction
from pytest_graphinstruct.build.level3 import (
    _METRICS,
    POOL_SEED,
    YARDSTICKS,
    _pool,
    build_level3,
    plan,
    yardsticks,
)
from pytest_graphinstruct.verify.checks import check_constraint, is_checkable
from pytest_graphinstruct.verify.properties import GraphFacts
from pytest_graphinstruct.verify.verdict import Source
from pytest_graphinstruct.verify.verifier import DEFAULT_VERIFIER
from tests.suite.agreement import disagreements

SAMPLE = set(range(1, 16)) | {77, 150}


def test_plan_covers_fifteen_subgroups_evenly() -> None:
    counts = Counter(g for g, _ in plan(150))
    assert len(counts) == 15 and set(counts.values()) == {10}


@pytest.fixture(scope="module")
def sample() -> list[dict]:
    return build_level3(0, 150, indices=SAMPLE)


def test_every_yardstick_satisfies_its_instruction(sample: list[dict]) -> None:
    pool = _pool(POOL_SEED)
    for r in sample:
        assert r["anchor"].startswith(f"l3-{r['subgroup']}-")
        family = r["subgroup"].rsplit("_", 1)[0]
        sticks = yardsticks(pool, r["anchor"], _METRICS[family])
        assert sticks[0] == r["anchor"] and len(sticks) == r["yardsticks"] == YARDSTICKS
        inst = as_instruction(r)
        for gid in sticks:
            g = pool.graphs[gid]
            assert inst.num_nodes == g.number_of_nodes()
            facts = GraphFacts(g)
            for c in inst.explicit:
                if is_checkable(c):
                    assert check_constraint(c, facts, Source.EXPLICIT).satisfied, (r["id"], gid)


def test_anchor_is_the_pool_graph_of_that_id() -> None:
    pool = _pool(POOL_SEED)
    g = pb.l3_graph("ws_medium", 7, POOL_SEED).graph
    assert nx.utils.graphs_equal(pool.graphs["l3-ws_medium-0007"], g)


def test_references_pass_and_texts_agree(sample: list[dict]) -> None:
    for r in sample:
        assert len(r["explicit_constraints"]) >= 6
        assert disagreements(r) == [], r["id"]
        inst = as_instruction(r)
        for ref in r["reference_solutions"]:
            assert DEFAULT_VERIFIER.verify(inst, ref).passed, r["id"]
    assert Counter(r["graph_sizes"][0] for r in sample)["small"] >= 5
