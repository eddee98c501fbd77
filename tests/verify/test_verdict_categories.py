"""Every verdict has a category, and violated numeric ones a signed gap (verify/verdict.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.suite.loader import instruction_from_record
from pytest_graphinstruct.verify.verdict import CATEGORIES
from pytest_graphinstruct.verify.verifier import Verifier

V = Verifier()
PATH5 = ("Graph[name='g', nodes=5] { node_list = ['0','1','2','3','4']; "
         "edge_list = [('0','1'), ('1','2'), ('2','3'), ('3','4')]; }")


def _verify(explicit: list[str], raw: str = PATH5) -> dict[str, object]:
    inst = instruction_from_record({"id": "L3-001", "level": 3, "instruction": "x",
                                    "explicit_constraints": explicit,
                                    "implicit_constraints": [], "graph_sizes": ["small"],
                                    "reference_solutions": []})
    assert inst is not None
    return {v.key: v for v in V.verify(inst, raw).verdicts}


def test_categories_by_key() -> None:
    vs = _verify(["num_nodes=6", "directed=true", "min_degree=2", "density>=0.9",
                  "acyclic=false", "diameter<=2"])
    shown = {k: v.category for k, v in vs.items()  # type: ignore[attr-defined]
             if not k.startswith(("no_", "header_"))}  # no-contradiction checks: structural
    assert shown == {
        "num_nodes": "count", "directed": "direction", "min_degree": "degree",
        "density": "numeric", "acyclic": "structural", "diameter": "numeric"}


def test_gap_is_signed_and_only_for_violated_numbers() -> None:
    vs = _verify(["num_nodes=6", "density>=0.9", "diameter<=2", "directed=true", "num_edges=4"])
    nodes, density, diameter = vs["num_nodes"].gap, vs["density"].gap, vs["diameter"].gap  # type: ignore[attr-defined]
    assert nodes is not None and (nodes.gap, nodes.direction) == (-1.0, "low")
    assert density is not None and density.gap == pytest.approx(0.4 - 0.9)
    assert diameter is not None and (diameter.gap, diameter.direction) == (2.0, "high")
    assert vs["directed"].gap is None and vs["num_edges"].gap is None  # type: ignore[attr-defined]


def test_a_parse_failure_is_its_own_category() -> None:
    vs = _verify(["num_nodes=5"], "nothing")
    assert {v.category for v in vs.values()} == {"parse"}  # type: ignore[attr-defined]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200))
def test_any_answer_gets_known_categories(raw: str) -> None:
    for v in _verify(["num_nodes=5", "density<=0.3", "connected=true"], raw).values():
        assert v.category in (*CATEGORIES, "parse")  # type: ignore[attr-defined]
        gap = v.gap  # type: ignore[attr-defined]
        assert gap is None or (not v.satisfied and gap.gap == gap.observed - gap.target)  # type: ignore[attr-defined]
