"""An instruction's cluster: its template, else a signature of its pattern (suite/clusters)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.suite.clusters import cluster_of, signature
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import instruction_from_record, load_suite

ROOT = Path(__file__).resolve().parents[2]
OFFICIAL = ROOT.parent / "shared/official-suite/instructions"


def inst(constraints: list[str], *, level: int = 2, **kw: Any) -> Instruction:
    made = instruction_from_record({
        "id": f"L{level}-001", "level": level, "instruction": "Make a graph.",
        "explicit_constraints": constraints, "implicit_constraints": [],
        "graph_sizes": ["small"], "reference_solutions": [], **kw})
    assert made is not None
    return made


def test_the_template_is_the_cluster() -> None:
    i = inst(["num_nodes=5"], template="nodes")
    assert cluster_of(i) == "nodes"


def test_without_a_template_the_pattern_is_the_cluster() -> None:
    i = inst(["num_nodes=12", "graph_type=tree", "directed=false", "density<=0.4"])
    assert cluster_of(i) == signature(i) == (
        "L2|density<=,directed=false,graph_type=tree,num_nodes=")


def test_numbers_do_not_split_a_pattern_but_kinds_of_graph_do() -> None:
    a = inst(["num_nodes=12", "graph_type=tree"])
    assert cluster_of(a) == cluster_of(inst(["graph_type=tree", "num_nodes=40"]))
    assert cluster_of(a) != cluster_of(inst(["num_nodes=12", "graph_type=cycle"]))
    assert cluster_of(a) != cluster_of(inst(["num_nodes>=12", "graph_type=tree"]))
    assert cluster_of(a) != cluster_of(inst(["num_nodes=12", "graph_type=tree"], level=1))
    assert cluster_of(inst(["directed=true"])) != cluster_of(inst(["directed=false"]))


def test_domain_and_infeasibility_are_part_of_the_pattern() -> None:
    social = inst(["num_nodes=10"], level=4, domain="social")
    assert signature(social) == "L4|num_nodes=|domain=social"
    assert cluster_of(social) != cluster_of(inst(["num_nodes=10"], level=4, domain="citation"))
    bad = inst(["num_nodes=3", "num_edges=9"], feasible=False)
    assert signature(bad).endswith("|infeasible")


@given(st.lists(st.integers(1, 60), min_size=3, max_size=3), st.permutations([0, 1, 2]))
def test_signature_ignores_numbers_and_order(values: list[int], order: list[int]) -> None:
    parts = [f"num_nodes={values[0]}", f"max_degree<={values[1]}", f"diameter>={values[2]}"]
    first = inst(["num_nodes=7", "max_degree<=3", "diameter>=2"])
    assert signature(inst([parts[k] for k in order])) == signature(first)


def test_our_suite_clusters_are_its_templates() -> None:
    suite = load_suite(ROOT / "instructions")
    sizes = Counter(cluster_of(i) for i in suite.level(0))
    assert sorted(sizes.values()) == [25, 25, 25, 25]
    assert all(cluster_of(i) == i.template for i in suite)


@pytest.mark.skipif(not OFFICIAL.is_dir(), reason="needs ../shared/official-suite")
def test_official_suite_signatures() -> None:
    suite = load_suite(OFFICIAL)
    per_level = {lv: Counter(cluster_of(i) for i in suite.level(lv)) for lv in range(6)}
    assert {lv: len(c) for lv, c in per_level.items()} == {0: 5, 1: 17, 2: 21, 3: 4, 4: 32,
                                                           5: 36}
    # L3: 140 of 150 instructions share one pattern (docs/PLUGIN.md, "How much the gate can see")
    assert max(per_level[3].values()) == 140
