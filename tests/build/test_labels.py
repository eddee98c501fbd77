"""build.labels: the domain vocabularies keep their promises (enough, distinct, no digits)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.build import labels
from pytest_graphinstruct.build.labels import (
    ELEMENTS_BY_DEGREE,
    MIN_DISTINCT,
    VALENCE,
    draw_labels,
    weighted_choice,
)

POOLS = {"people": labels.PEOPLE, "papers": labels.PAPER_TITLES, "proteins": labels.PROTEINS,
         "producers": labels.PRODUCERS, "consumers": labels.CONSUMERS,
         "devices": labels.DEVICES, "stations": labels.STATIONS,
         "intersections": labels.INTERSECTIONS,
         # a knowledge graph draws its nodes from every entity kind together
         "knowledge": tuple(x for kind in labels.KG_ENTITIES.values() for x in kind)}


@pytest.mark.parametrize("name", sorted(POOLS))
def test_every_pool_has_enough_distinct_digit_free_labels(name: str) -> None:
    pool = POOLS[name]
    assert len(set(pool)) == len(pool) >= MIN_DISTINCT
    assert not [x for x in pool if any(ch.isdigit() for ch in x)]


def test_relations_connect_known_entity_kinds() -> None:
    for (a, b), names in labels.KG_RELATIONS.items():
        assert a in labels.KG_ENTITIES and b in labels.KG_ENTITIES and names


def test_elements_fit_their_degree() -> None:
    for degree, options in ELEMENTS_BY_DEGREE.items():
        assert all(VALENCE[element] >= degree for element, _ in options)


@given(st.integers(0, MIN_DISTINCT), st.integers(0, 2**32))
def test_draw_labels_is_distinct_and_deterministic(k: int, seed: int) -> None:
    drawn = draw_labels(random.Random(seed), labels.PEOPLE, k)
    assert len(set(drawn)) == k and set(drawn) <= set(labels.PEOPLE)
    assert draw_labels(random.Random(seed), labels.PEOPLE, k) == drawn


def test_draw_labels_refuses_a_too_small_vocabulary() -> None:
    with pytest.raises(ValueError, match="need 3 distinct labels"):
        draw_labels(random.Random(0), ["a", "b"], 3)


def test_weighted_choice_never_picks_a_zero_weight() -> None:
    rng = random.Random(1)
    picks = {weighted_choice(rng, [("a", 0), ("b", 1), ("c", 3)]) for _ in range(200)}
    assert picks == {"b", "c"}
