"""Unit tests of build/template.py: the plan, wording helpers and the level driver."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from pytest_graphinstruct.build.common import BuildError
from pytest_graphinstruct.build.template import (
    Draft,
    Template,
    build_level,
    implicit_of,
    number_text,
    round_outward,
    stratify,
)


@pytest.mark.parametrize(("x", "up", "text"), [
    (0.45, True, "0.45"), (2.10364, True, "2.1037"), (2.10364, False, "2.1036"),
    (3.0, True, "3"), (0.0, False, "0"), (0.28, True, "0.28"), (0.12345, False, "0.1234"),
    (0.39999999999999997, False, "0.4"),  # float noise around a grid point is not a step
])
def test_round_outward_and_number_text(x: float, up: bool, text: str) -> None:
    assert number_text(round_outward(x, 4, up)) == text


def _noop(rng: random.Random, n: int) -> Draft | None:
    return None


def test_stratify_meets_every_allowed_bucket() -> None:
    a = Template("a", _noop)
    b = Template("b", _noop, buckets=("small", "medium"))
    plan = stratify(60, [a, b])
    assert {bk for t, bk in plan if t is a} == {"small", "medium", "large"}
    assert {bk for t, bk in plan if t is b} == {"small", "medium"}
    counts = {bk: sum(1 for _, x in plan if x == bk) for bk in ("small", "medium", "large")}
    assert counts == {"small": 25, "medium": 25, "large": 10}


def test_implicit_of_uses_the_verifier_rules() -> None:
    assert implicit_of(["graph_type=tree", "num_nodes=5"]) == [
        "num_edges=4", "connected=true", "acyclic=true"]


def test_build_level_is_deterministic_and_names_ids() -> None:
    def make(rng: random.Random, n: int) -> Draft:
        return Draft(f"Create a tree with {n} nodes.", ["graph_type=tree", f"num_nodes={n}"],
                     lambda r: nx.random_labeled_tree(n, seed=r.randrange(1 << 30)))

    t = Template("tree", make)
    a = build_level(1, [t], 7, 4)
    assert [r["id"] for r in a] == ["L1-001", "L1-002", "L1-003", "L1-004"]
    assert a == build_level(1, [t], 7, 4)
    assert a != build_level(1, [t], 8, 4)


def test_a_draft_with_one_answer_only_is_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def make(rng: random.Random, n: int) -> Draft:
        calls.append(n)
        if len(calls) % 2:  # odd calls: a path on n nodes has one answer up to isomorphism
            return Draft(f"Create a path graph with {n} nodes.",
                         ["graph_type=path", f"num_nodes={n}"], lambda r: nx.path_graph(n))
        return Draft(f"Create a tree with {n} nodes.", ["graph_type=tree", f"num_nodes={n}"],
                     lambda r: nx.random_labeled_tree(n, seed=r.randrange(1 << 30)))

    recs = build_level(1, [Template("t", make, buckets=("medium",))], 0, 2)
    assert [r["explicit_constraints"][0] for r in recs] == ["graph_type=tree"] * 2

    def only_paths(rng: random.Random, n: int) -> Draft:
        return Draft("Create a path graph.", ["graph_type=path", f"num_nodes={n}"],
                     lambda r: nx.path_graph(n))

    from pytest_graphinstruct.build import template

    monkeypatch.setattr(template, "DRAFT_TRIES", 2)
    with pytest.raises(BuildError, match="drafted nothing usable"):
        build_level(1, [Template("p", only_paths)], 0, 1)
