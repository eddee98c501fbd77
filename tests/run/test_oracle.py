"""OracleBackend: a correct answer for every instruction (references, refusals)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.models.scheduling.scheduler import Scheduler
from pytest_graphinstruct.run.oracle import REFUSAL, OracleBackend
from pytest_graphinstruct.suite.loader import Suite, instruction_from_record, load_suite
from pytest_graphinstruct.verify.verifier import Verifier
from tests.models.helpers import req

TRIANGLE = ("Graph[name='t', nodes=3] {\n    node_list = ['0', '1', '2'];\n"
            "    edge_list = [('0','1'), ('0','2'), ('1','2')];\n}")
PATH3 = ("Graph[name='p', nodes=3] {\n    node_list = ['0', '1', '2'];\n"
         "    edge_list = [('0','1'), ('1','2')];\n}")


def _suite() -> Suite:
    records = [
        {"id": "L0-001", "level": 0, "instruction": "A graph with 3 nodes and 3 edges.",
         "explicit_constraints": ["num_nodes=3", "num_edges=3"],
         "reference_solutions": [PATH3, TRIANGLE]},  # the first reference is wrong
        {"id": "L2-002", "level": 2, "instruction": "A 3-regular graph with 5 nodes.",
         "explicit_constraints": ["degree=3", "num_nodes=5"], "reference_solutions": [],
         "feasible": False},
        {"id": "L0-003", "level": 0, "instruction": "A graph with 3 nodes and 9 edges.",
         "explicit_constraints": ["num_nodes=3", "num_edges=9"],
         "reference_solutions": [PATH3]},  # no reference passes
        {"id": "L0-004", "level": 0, "instruction": "A graph with 2 nodes.",
         "explicit_constraints": ["num_nodes=2"], "reference_solutions": []},
        {"id": "L0-005", "level": 0, "instruction": "A connected graph.",
         "explicit_constraints": ["connected=true"], "reference_solutions": []},
    ]
    return Suite(tuple(instruction_from_record(r) for r in records))


@pytest.mark.slow
def test_oracle_choices() -> None:
    suite = _suite()
    oracle = OracleBackend(suite)
    assert oracle.endpoint == "oracle" and oracle.cacheable is False
    a = oracle.complete(req(iid="L0-001"))
    assert a.text == TRIANGLE and a.usage is None and a.calls == 1
    assert Verifier().verify(suite["L0-001"], a.text).passed
    refusal = oracle.complete(req(iid="L2-002"))
    assert refusal.text == REFUSAL and Verifier().verify(suite["L2-002"], REFUSAL).passed
    assert oracle.complete(req(iid="L0-003")).text == PATH3  # first reference as a fallback
    synthesized = oracle.complete(req(iid="L0-004"))  # no reference: synthesized
    assert synthesized.ok and Verifier().verify(suite["L0-004"], synthesized.text).passed
    missing = oracle.complete(req(iid="L0-005"))  # no reference, no size to synthesize
    assert not missing.ok and "no reference" in missing.error
    unknown = oracle.complete(req(iid="L9-999"))
    assert not unknown.ok and "unknown instruction" in unknown.error
    assert oracle.complete(req(iid="L0-001", sample=3)).text == TRIANGLE


def test_identical_prompts_of_two_instructions_are_not_merged() -> None:
    # The oracle answers by instruction id, so the scheduler must not dedupe on the prompt alone.
    with Scheduler(OracleBackend(_suite()), concurrency=2) as sched:
        a, b = sched.submit(req("same", iid="L0-001")), sched.submit(req("same", iid="L2-002"))
        assert a is not b
        assert (a.result().text, b.result().text) == (TRIANGLE, REFUSAL)
        assert sched.submit(req("same", iid="L0-001")) is a


@pytest.mark.slow
@pytest.mark.official
def test_oracle_passes_the_official_suite_where_its_references_allow(
    official_suite_dir: Path,
) -> None:
    suite = load_suite(official_suite_dir)
    verifier = Verifier()
    oracle = OracleBackend(suite, verifier)
    requests = [req(i.text, iid=i.id) for i in suite]
    with Scheduler(oracle, concurrency=4) as sched:
        answers = [f.result() for f in sched.submit_all(requests)]
    failed = [i.id for i, a in zip(suite, answers, strict=True)
              if not verifier.verify(i, a.text or "").passed]
    # Only instructions none of whose references pass may fail (known dataset defects).
    for iid in failed:
        inst = suite[iid]
        assert inst.feasible and inst.references
        assert not any(verifier.verify(inst, r).passed for r in inst.references)
    assert len(failed) <= len(suite) // 50
    assert all(a.ok and a.usage is None for a in answers)


def test_oracle_synthesizes_when_no_reference_passes() -> None:
    from pytest_graphinstruct.run.oracle import synthesize
    from pytest_graphinstruct.suite.loader import instruction_from_record
    from pytest_graphinstruct.verify.verifier import Verifier

    inst = instruction_from_record({
        "id": "L4-900", "level": 4, "instruction": "A social network of 14 people.",
        "explicit_constraints": ["num_nodes=14", "density<=0.4", "modularity>=0.3",
                                 "min_degree=2", "connected=true", "directed=false"],
        "implicit_constraints": [], "graph_sizes": ["small"], "domain": "social",
        "reference_solutions": []})
    assert inst is not None
    text = synthesize(inst, Verifier())
    assert text is not None and Verifier().verify(inst, text).passed
    assert synthesize(inst, Verifier()) == text  # deterministic
    tiny = instruction_from_record({
        "id": "L2-900", "level": 2, "instruction": "x", "implicit_constraints": [],
        "explicit_constraints": ["num_nodes=4", "num_edges=9"]})  # impossible: > 6 edges
    assert tiny is not None and synthesize(tiny, Verifier(), attempts=50) is None


# Instructions whose own data contradicts itself, so no answer can pass (docs/L5_TASKS.md):
# L5-013 (implicit num_edges=30 needs 15 additions; the text asks for the minimum, 14),
# L5-025 (the base is a 9-node path; text and constraints square an 8-node one),
# L5-033 (maximal planar needs 42 edges; the text says 29).
CONTRADICTORY = {"L5-013", "L5-025", "L5-033"}


@pytest.mark.slow
def test_oracle_on_the_official_suite_scores_d4_one(official_suite_dir: Path) -> None:
    from pytest_graphinstruct.score.d4 import instruction_d4

    suite = load_suite(official_suite_dir)
    oracle = OracleBackend(suite)
    verifier = Verifier()
    failing, below = set(), {}
    for inst in suite:
        answer = oracle.complete(req(iid=inst.id))
        v = verifier.verify(inst, answer.text or "")
        if not v.passed:
            failing.add(inst.id)
        d4 = instruction_d4(inst, [v])
        if d4 < 1 - 1e-9:
            below[inst.id] = d4
    assert failing == CONTRADICTORY
    assert set(below) == CONTRADICTORY, below
