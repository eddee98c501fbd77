"""build/l5_templates.py: every L5 template drafts a verifiable instruction — a base listed in
the text, the explicit constraints its text states, result graphs that pass the verifier and sit
in the scheduled size bucket, the edit counts it states or certifies — deterministically for a
seed; and the small wording helpers."""

from __future__ import annotations

import random
import re
from typing import Any

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.build import l5_templates as lt
from pytest_graphinstruct.build.common import as_instruction, check_reference, make_record
from pytest_graphinstruct.build.l5_templates import RANGES, TEMPLATES, Draft
from pytest_graphinstruct.build.template import implicit_of
from pytest_graphinstruct.graphs.serialize import serialize
from pytest_graphinstruct.verify.tasks import CHECKED_TASKS
from pytest_graphinstruct.verify.tasks import text as task_text
from pytest_graphinstruct.verify.verifier import DEFAULT_VERIFIER
from pytest_graphinstruct.vocab import size_bucket
from tests.suite.agreement import disagreements

CASES = [(name, bucket) for name, (_, buckets) in TEMPLATES.items() for bucket in buckets]
DRAFT_TRIES, ANSWER_TRIES = 30, 60  # as the driver (build/level5.py) tries them
PAIR = re.compile(r"\((\d+),(\d+)(?:,w=(\d+))?\)")
STATED = re.compile(r"\bexactly \d+ (?:edges?|arcs?)\b|\(exactly \d+\)")


def _draw(draft: Draft, rng: random.Random) -> nx.Graph | None:
    return next((g for _ in range(ANSWER_TRIES) if (g := draft.draw(rng)) is not None), None)


def _drafted(name: str, bucket: str, rng: random.Random) -> tuple[Draft, nx.Graph]:
    """The first draft with a result, as the driver finds it: an unlucky construction
    (``None``) or a draft whose draws keep failing is drafted again from the same stream."""
    make, _ = TEMPLATES[name]
    for _ in range(DRAFT_TRIES):
        draft = make(rng, bucket)
        if draft is not None and (result := _draw(draft, rng)) is not None:
            return draft, result
    raise AssertionError(f"{name}/{bucket}: no draft with a result in {DRAFT_TRIES} tries")


def _record(name: str, bucket: str, draft: Draft) -> dict[str, Any]:
    return make_record("L5-001", 5, draft.text, draft.explicit, implicit_of(draft.explicit),
                       size=bucket, template=name,
                       extra={"base_graph": serialize(draft.base, name="L5-001-base")})


def _value(draft: Draft, key: str) -> str | None:
    return next((c.split("=", 1)[1] for c in draft.explicit if c.split("=", 1)[0] == key), None)


def _edges(g: nx.Graph) -> set[Any]:
    return set(g.edges()) if g.is_directed() else {frozenset(e) for e in g.edges()}


def _check_promises(name: str, bucket: str, seed: int) -> None:
    rng = random.Random(seed)
    draft, result = _drafted(name, bucket, rng)
    base = draft.base
    # verifiable: a task the L5 verifier checks, named with the base's direction
    assert draft.task in CHECKED_TASKS
    assert _value(draft, "task_type") == draft.task
    assert _value(draft, "directed") == str(base.is_directed()).lower()
    assert draft.operation in ("remove_edges", "add_edges", "modify")
    assert draft.steps and all(t and d for t, d in draft.steps) and draft.method and draft.notes
    # the base: ids 0..n-1, no isolated node, listed (weights too) as the one bracketed list
    n = base.number_of_nodes()
    assert sorted(base, key=int) == [str(i) for i in range(n)]
    assert not list(nx.isolates(base))
    [listing] = re.findall(r"\[([^\[\]]*)\]", draft.text)
    found = PAIR.findall(listing)
    assert len(found) == base.number_of_edges()
    assert {(u, v) if base.is_directed() else frozenset((u, v)) for u, v, _ in found} \
        == _edges(base)
    for u, v, w in found:
        assert (w or None) == (str(base.edges[u, v]["weight"]) if "weight" in base.edges[u, v]
                               else None)
    # text and explicit constraints agree (numbers, property words)
    record = _record(name, bucket, draft)
    assert disagreements(record) == []
    # the result: in the scheduled bucket, of the stated size, passing the whole verifier
    size = result.number_of_nodes()
    lo, hi = RANGES[bucket]
    assert lo <= size <= hi and size_bucket(size) == bucket
    assert _value(draft, "num_nodes") == str(size)
    inst = as_instruction(record)
    text, why = check_reference(inst, result, "L5-001-ref1")
    assert text is not None, why
    # every task changes the base: the base itself is no answer
    assert not DEFAULT_VERIFIER.verify(inst, serialize(base, name="b")).passed
    # unique: every draw is the same graph
    if draft.unique:
        again = _draw(draft, rng)
        assert again is not None
        assert set(again) == set(result) and _edges(again) == _edges(result)
    # a stated edit count is the drawn edit's size; no other phrase reads as one
    stated = task_text.stated_count(draft.text)
    assert (stated is not None) == bool(STATED.search(draft.text))
    if stated is not None:
        added, removed = _edges(result) - _edges(base), _edges(base) - _edges(result)
        verb, count = stated
        if verb == "add":
            assert (len(added), len(removed)) == (count, 0)
        elif verb == "remove":
            assert (len(added), len(removed)) == (0, count)
        else:
            assert {(v, u) for u, v in removed} == added and len(added) == count


@pytest.mark.parametrize(("name", "bucket"), CASES)
def test_every_template_keeps_its_promises_in_every_bucket_it_serves(name: str,
                                                                    bucket: str) -> None:
    _check_promises(name, bucket, seed=11)


@given(st.sampled_from(CASES), st.integers(0, 2**32))
def test_any_seed_gives_a_draft_that_keeps_the_promises(case: tuple[str, str],
                                                        seed: int) -> None:
    _check_promises(*case, seed=seed)


@pytest.mark.parametrize(("name", "bucket"), CASES)
def test_a_seed_fixes_the_draft_and_its_draws(name: str, bucket: str) -> None:
    def run(seed: int) -> tuple[str, list[str], list[tuple[str, str]], list[Any]]:
        rng = random.Random(seed)
        draft, result = _drafted(name, bucket, rng)
        draws = [sorted(map(sorted, _edges(g))) for g in (result, _draw(draft, rng))]
        return draft.text, draft.explicit, list(draft.base.edges()), draws

    assert run(3) == run(3)
    assert run(3) != run(4)


# ----------------------------------------------------------------------------- certificates


def _diff(name: str, bucket: str, seed: int) -> tuple[nx.Graph, nx.Graph, int, int]:
    draft, result = _drafted(name, bucket, random.Random(seed))
    base = draft.base
    return (base, result, len(_edges(result) - _edges(base)),
            len(_edges(base) - _edges(result)))


@given(st.sampled_from(("small", "medium", "large")), st.integers(0, 2**32))
def test_a_spanning_tree_removes_m_minus_n_plus_one(bucket: str, seed: int) -> None:
    base, result, added, removed = _diff("spanning_tree", bucket, seed)
    assert nx.is_tree(result) and added == 0
    assert removed == base.number_of_edges() - base.number_of_nodes() + 1


@given(st.sampled_from(("small", "medium", "large")), st.integers(0, 2**32))
def test_make_connected_adds_one_edge_fewer_than_the_components(bucket: str, seed: int) -> None:
    base, result, added, removed = _diff("make_connected", bucket, seed)
    assert nx.is_connected(result) and removed == 0
    assert added == nx.number_connected_components(base) - 1 >= 1


@given(st.sampled_from(("small", "medium", "large")), st.integers(0, 2**32))
def test_break_cycles_removes_the_cycle_rank(bucket: str, seed: int) -> None:
    base, result, added, removed = _diff("break_cycles", bucket, seed)
    assert nx.is_forest(result) and added == 0
    rank = (base.number_of_edges() - base.number_of_nodes()
            + nx.number_connected_components(base))
    assert removed == rank >= 1
    assert nx.number_connected_components(result) == nx.number_connected_components(base)


@given(st.sampled_from(("small", "medium")), st.integers(0, 2**32))
def test_break_triangles_plants_edge_disjoint_triangles_one_removal_each(bucket: str,
                                                                         seed: int) -> None:
    base, result, added, removed = _diff("break_triangles", bucket, seed)
    triangles = [c for c in nx.enumerate_all_cliques(base) if len(c) == 3]
    sides = [{frozenset(p) for p in ((a, b), (a, c), (b, c))} for a, b, c in triangles]
    assert sum(len(s) for s in sides) == len(set().union(*sides))  # edge-disjoint
    assert added == 0 and removed == len(triangles) >= 1
    assert not any(nx.triangles(result).values())


@given(st.sampled_from(("small", "medium", "large")), st.integers(0, 2**32))
def test_make_regular_adds_what_a_regular_graph_lacks(bucket: str, seed: int) -> None:
    base, result, added, removed = _diff("make_regular", bucket, seed)
    degrees = {d for _, d in result.degree()}
    assert len(degrees) == 1 and removed == 0
    [k] = degrees
    assert added == k * base.number_of_nodes() // 2 - base.number_of_edges() >= 2


@given(st.sampled_from(("small", "medium", "large")), st.integers(0, 2**32))
def test_make_acyclic_changes_one_arc_per_planted_cycle(bucket: str, seed: int) -> None:
    base, result, added, removed = _diff("make_acyclic", bucket, seed)
    assert nx.is_directed_acyclic_graph(result) and not nx.is_directed_acyclic_graph(base)
    assert added in (0, removed) and removed >= 1
    # a certificate of the minimum: that many arc-disjoint directed cycles in the base
    cycles = []
    rest = nx.DiGraph(base)
    while True:
        try:
            cycle = nx.find_cycle(rest)
        except nx.NetworkXNoCycle:
            break
        cycles.append(cycle)
        rest.remove_edges_from(cycle)
    assert len(cycles) == removed  # each directed cycle uses exactly one planted back arc


@given(st.sampled_from(("small", "medium", "large")), st.integers(0, 2**32))
def test_k_core_is_the_networkx_k_core(bucket: str, seed: int) -> None:
    draft, result = _drafted("k_core", bucket, random.Random(seed))
    k = int(_value(draft, "min_degree") or 0)
    assert task_text.k_core(draft.text) == k
    core = nx.k_core(draft.base, k)
    assert set(result) == set(core) and _edges(result) == _edges(core)


@given(st.sampled_from(("small", "medium", "large")), st.integers(0, 2**32))
def test_graph_power_is_the_networkx_power(bucket: str, seed: int) -> None:
    draft, result = _drafted("graph_power", bucket, random.Random(seed))
    k = task_text.graph_power(draft.text)
    assert k in (2, 3) and (k == 2 or bucket == "small")
    assert _edges(result) == _edges(nx.power(draft.base, k))


# ----------------------------------------------------------------------------- the table


def test_the_table_names_each_maker_after_itself_and_serves_known_buckets() -> None:
    for name, (make, buckets) in TEMPLATES.items():
        assert make.__name__ == name and make.__doc__
        assert buckets and set(buckets) <= set(RANGES)
        assert list(buckets) == [b for b in RANGES if b in buckets]  # small, medium, large
    assert {name for name, _ in CASES} == set(TEMPLATES)


def test_the_ranges_lie_inside_their_buckets_and_results_stay_small() -> None:
    for bucket, (lo, hi) in RANGES.items():
        assert lo <= hi <= 80
        assert size_bucket(lo) == size_bucket(hi) == bucket


@pytest.mark.parametrize("bucket", list(RANGES))
def test_n_draws_from_the_bucket_clamped_to_the_bounds(bucket: str) -> None:
    lo, hi = RANGES[bucket]
    rng = random.Random(0)
    assert all(lo <= lt._n(rng, bucket) <= hi for _ in range(50))
    assert {lt._n(rng, bucket, lo=lo + 1, hi=lo + 2) for _ in range(50)} == {lo + 1, lo + 2}
    assert {lt._n(rng, bucket, lo=0, hi=1000) for _ in range(200)} <= set(range(lo, hi + 1))


def test_plural() -> None:
    assert [lt._plural(k, "edge") for k in (0, 1, 2)] == ["0 edges", "1 edge", "2 edges"]


def test_listings() -> None:
    g = nx.Graph()
    g.add_edge("10", "2", weight=4)
    g.add_edge("0", "1", weight=1)
    assert lt._listing(g) == "[(0,1), (2,10)]"
    assert lt._weighted_listing(g) == "[(0,1,w=1), (2,10,w=4)]"
