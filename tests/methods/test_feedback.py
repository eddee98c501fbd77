"""Verifier feedback per granularity (methods/feedback.py), from real verdicts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.methods.feedback import (
    CATEGORIES,
    FEEDBACK_LEVELS,
    MAX_BULLETS,
    feedback,
)
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import instruction_from_record
from pytest_graphinstruct.verify.verifier import Verifier

V = Verifier()


def _inst(explicit: list[str], implicit: list[str] | None = None, level: int = 2) -> Instruction:
    inst = instruction_from_record({
        "id": f"L{level}-001", "level": level, "instruction": "Make a graph.",
        "explicit_constraints": explicit, "implicit_constraints": implicit or [],
        "graph_sizes": ["small"], "reference_solutions": []})
    assert inst is not None
    return inst


def _graph(n: int, edges: list[tuple[int, int]]) -> str:
    nodes = ", ".join(f"'{i}'" for i in range(n))
    es = ", ".join(f"('{u}','{v}')" for u, v in edges)
    return f"Graph[name='g', nodes={n}] {{ node_list = [{nodes}]; edge_list = [{es}]; }}"


PATH5 = _graph(5, [(0, 1), (1, 2), (2, 3), (3, 4)])


def test_a_passing_answer_gets_no_feedback_at_any_level() -> None:
    v = V.verify(_inst(["num_nodes=5", "connected=true"]), PATH5)
    assert v.passed
    assert all(feedback(v, level) == "" for level in FEEDBACK_LEVELS)


def test_none_is_one_binary_sentence() -> None:
    v = V.verify(_inst(["num_nodes=6"]), PATH5)
    text = feedback(v, "none")
    assert "does not satisfy every constraint" in text and "num_nodes" not in text


def test_coarse_names_categories_and_keys_in_order() -> None:
    v = V.verify(_inst(["num_nodes=6", "min_degree=2", "directed=true", "acyclic=false"]),
                 PATH5)
    text = feedback(v, "coarse")
    assert ("structural (acyclic); direction (directed); count (num_nodes); degree (min_degree)"
            in text)
    assert "expected" not in text


def test_fine_gives_expected_observed_gap_hint_and_locus() -> None:
    v = V.verify(_inst(["num_nodes=7", "density>=0.8", "min_degree=2", "connected=true"]),
                 _graph(5, [(0, 1), (2, 3)]))
    text = feedback(v, "fine")
    lines = text.splitlines()
    assert lines[0].startswith("The verifier found these problems")
    bullets = [line for line in lines if line.startswith("- ")]
    # structural -> count -> degree -> numeric
    assert [b.split(":")[0] for b in bullets] == ["- connected=true", "- num_nodes=7",
                                                 "- min_degree=2", "- density>=0.8"]
    assert "components" in bullets[0]
    assert "gap -2: add 2" in bullets[1]
    assert "add edges at the offending nodes" in bullets[2]
    assert "offending nodes: 0, 1, 2, 3, 4" in bullets[2]
    assert "gap -0.6" in bullets[3] and "add edges" in bullets[3]
    assert lines[-1].startswith("Output a revised graph")


def test_fine_shows_a_cycle_as_its_nodes() -> None:
    v = V.verify(_inst(["acyclic=true"]), _graph(4, [(0, 1), (1, 2), (2, 0), (2, 3)]))
    assert "a cycle: 0 -> 1 -> 2 -> 0" in feedback(v, "fine")


def test_fine_is_bounded() -> None:
    explicit = [f"num_nodes={n}" for n in range(6, 6 + MAX_BULLETS + 3)]
    v = V.verify(_inst(explicit), PATH5)
    bullets = [line for line in feedback(v, "fine").splitlines() if line.startswith("- ")]
    assert len(bullets) == MAX_BULLETS + 1 and bullets[-1] == "- ... and 3 more"


def test_an_unparsed_answer_is_told_so() -> None:
    v = V.verify(_inst(["num_nodes=5"]), "no graph here")
    assert not v.parse.parsed
    assert "could not be read as a graph" in feedback(v, "fine")
    assert "could not be read as a graph" in feedback(v, "coarse")


def test_numeric_gap_only_for_numbers() -> None:
    v = V.verify(_inst(["density>=0.8", "directed=true"]), PATH5)
    gaps = {d.key: d.gap for d in v.violations}
    assert gaps["directed"] is None
    gap = gaps["density"]
    assert gap is not None and gap.direction == "low" and gap.gap == pytest.approx(0.4 - 0.8)


def test_every_verdict_has_a_known_category() -> None:
    v = V.verify(_inst(["num_nodes=6", "density<=0.1", "planar=false", "max_degree=1"]), PATH5)
    assert {d.category for d in v.verdicts} <= {*CATEGORIES, "parse"}


def test_unknown_level_is_an_error() -> None:
    v = V.verify(_inst(["num_nodes=6"]), PATH5)
    with pytest.raises(ValueError, match="feedback level"):
        feedback(v, "verbose")


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=300), st.sampled_from(FEEDBACK_LEVELS))
def test_any_answer_gets_bounded_one_line_bullets(raw: str, level: str) -> None:
    v = V.verify(_inst(["num_nodes=5", "connected=true"]), raw)
    text = feedback(v, level)
    assert (text == "") == v.passed
    assert len(text.splitlines()) <= MAX_BULLETS + 3


def test_fine_feedback_compares_an_l4_answer_with_its_domain_prior() -> None:
    inst = instruction_from_record({
        "id": "L4-001", "level": 4, "instruction": "A social network of 5 people.",
        "explicit_constraints": ["num_nodes=6"], "implicit_constraints": [], "domain": "social",
        "graph_sizes": ["small"], "reference_solutions": []})
    assert inst is not None and inst.domain == "social"
    v = V.verify(inst, PATH5)  # a path: sparse, no triangles
    text = feedback(v, "fine", instruction=inst)
    assert "domain (social): average degree 1.6 is below the usual 4–6" in text
    assert "clustering 0 is below" in text
    # only fine feedback, only with the instruction, and never for a passing answer
    assert "domain (social)" not in feedback(v, "coarse", instruction=inst)
    assert "domain (social)" not in feedback(v, "fine")
    ok = V.verify(_inst(["num_nodes=5"], level=4), PATH5)
    assert feedback(ok, "fine", instruction=inst) == ""


def _l5(task: str, explicit: list[str], base: str, text: str = "Edit the graph.") -> Instruction:
    inst = instruction_from_record({
        "id": "L5-001", "level": 5, "instruction": text,
        "explicit_constraints": [*explicit, f"task_type={task}"], "implicit_constraints": [],
        "graph_sizes": ["small"], "reference_solutions": [], "base_graph": base})
    assert inst is not None and inst.base is not None
    return inst


# a triangle 0-1-2 with a tail 2-3: break_cycles must remove exactly one triangle edge
TRIANGLE_TAIL = _graph(4, [(0, 1), (1, 2), (0, 2), (2, 3)])
TRIANGLE_FREE = "Make the graph triangle-free: remove the fewest edges possible."


def test_fine_l5_feedback_gives_partial_credit_and_the_state_diff() -> None:
    inst = _l5("break_cycles", ["num_nodes=4", "directed=false"], TRIANGLE_TAIL,
              TRIANGLE_FREE)
    # removed the tail instead of a triangle edge, and added an edge that is not in the base
    v = V.verify(inst, _graph(4, [(0, 1), (1, 2), (0, 2), (1, 3)]))
    text = feedback(v, "fine", instruction=inst)
    lines = text.splitlines()
    assert lines[0] == ("Progress on the edit: 2 of 4 task checks hold (nodes_preserved, "
                        "minimal_removed); still failing: subgraph_of_base, triangle_free.")
    assert lines[1] == ("Your graph compared with the base graph: added 1 edge ((1, 3)); "
                        "removed 1 edge ((2, 3)).")
    # the loci of task verdicts are shown: the stray edge and the triangle
    assert "edges that should not be there: (1, 3)" in text
    assert "triangles: {0, 1, 2}" in text
    # only at fine granularity, only with the instruction
    assert "Progress on the edit" not in feedback(v, "coarse", instruction=inst)
    assert "Progress on the edit" not in feedback(v, "fine")


def test_fine_l5_feedback_says_when_nothing_changed_and_bounds_the_diff() -> None:
    inst = _l5("break_cycles", ["num_nodes=4", "directed=false"], TRIANGLE_TAIL,
              TRIANGLE_FREE)
    unchanged = feedback(V.verify(inst, TRIANGLE_TAIL), "fine", instruction=inst)
    assert "Your graph compared with the base graph: no change at all." in unchanged
    assert "still failing: triangle_free, minimal_removed." in unchanged
    long = "n" * 500
    many = _graph(4, [(0, 1), (1, 2), (0, 2), (2, 3)]).replace("'3'", f"'{long}'")
    edited = feedback(V.verify(inst, many + ""), "fine", instruction=inst)
    diff_line = next(x for x in edited.splitlines() if x.startswith("Your graph compared"))
    assert long not in diff_line and "…" in diff_line
    assert len(diff_line) < 400


def test_fine_l5_feedback_lists_a_bounded_sample_of_missing_edges() -> None:
    base = _graph(8, [(i, i + 1) for i in range(7)])  # a path; its square adds 6 edges
    inst = _l5("graph_power", ["num_nodes=8", "directed=false"], base)
    text = feedback(V.verify(inst, base), "fine", instruction=inst)
    assert "missing edges: (0, 2), (1, 3), (2, 4), (3, 5), (4, 6), ... (of 6)" in text


STAR5 = _graph(5, [(0, 1), (0, 2), (0, 3), (0, 4)])


def test_fine_flags_violations_that_pull_the_edge_count_both_ways() -> None:
    inst = _inst(["num_nodes=5", "num_edges=6", "max_degree<=3"])
    text = feedback(V.verify(inst, STAR5), "fine", instruction=inst)
    assert ("Note: these pull in opposite directions — num_edges=6 call for more edges, "
            "max_degree<=3 for fewer;") in text
    assert "pull in opposite" not in feedback(V.verify(inst, STAR5), "coarse")
    # the same way (both want more edges): no flag
    same = _inst(["num_nodes=5", "num_edges=6", "connected=true"])
    forest = _graph(5, [(0, 1), (2, 3)])
    text = feedback(V.verify(same, forest), "fine", instruction=same)
    assert "num_edges=6" in text and "connected" in text
    assert "pull in opposite" not in text
    # structural wants count too: a cycle to break and edges to add
    cyc = _inst(["num_nodes=5", "num_edges=4", "acyclic=true"])
    triangle = _graph(5, [(0, 1), (1, 2), (0, 2)])
    text = feedback(V.verify(cyc, triangle), "fine", instruction=cyc)
    assert "num_edges=4 call for more edges, acyclic=true for fewer" in text


def test_fine_l3_feedback_gives_the_numeric_gap_and_tolerance_band() -> None:
    inst = _inst(["num_nodes=5", "density>=0.8"], level=3)
    text = feedback(V.verify(inst, PATH5), "fine", instruction=inst)
    line = next(x for x in text.splitlines() if x.startswith("- density>=0.8"))
    assert "expected >= 0.8 (-5% tolerance: >= 0.76)" in line
    assert "observed 0.4" in line and "(gap -0.4: add edges)" in line


def test_the_wording_comes_from_the_run_s_templates() -> None:
    from pytest_graphinstruct.prompts.texts import TemplateSet

    v = V.verify(_inst(["num_nodes=7", "density>=0.8"]), _graph(5, [(0, 1), (2, 3)]))
    mine = TemplateSet((
        ("feedback_hints", "=== density_low ===\nthicken it"),
        ("feedback", "=== bullet_gap_hint ===\n$constraint is off by $gap; $hint\n"
                     "=== hint_count_low ===\nneed $amount more"),
    ))
    bullets = [line for line in feedback(v, "fine", templates=mine).splitlines()
               if line.startswith("- ")]
    assert bullets == ["- num_nodes=7 is off by -2; need 2 more",
                       "- density>=0.8 is off by -0.6; thicken it"]
    assert "(gap -0.6: add edges)" in feedback(v, "fine")
