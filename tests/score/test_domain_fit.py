from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.score.domain_fit import (
    WEIGHTS,
    DomainProfile,
    domain_fit,
    facet_scores,
    ks_statistic,
)

_DEGREES = st.lists(st.integers(0, 30), min_size=1, max_size=60)


def test_weights_sum_to_one() -> None:
    assert sum(WEIGHTS.values()) == pytest.approx(1.0)


def test_identical_graph_fits_perfectly() -> None:
    g = nx.karate_club_graph()
    assert domain_fit(g, [DomainProfile(g)]) == pytest.approx(1.0)


def test_no_references_is_absent() -> None:
    assert domain_fit(nx.path_graph(3), []) is None


def test_hand_computed_facets() -> None:
    # a path vs a triangle: KS of degree samples [1,2,1] vs [2,2,2] is 2/3
    g, r = DomainProfile(nx.path_graph(3)), DomainProfile(nx.complete_graph(3))
    s = facet_scores(g, r)
    assert s["degree"] == pytest.approx(max(0.0, 1 - 1.5 * (2 / 3)))
    assert s["clustering"] == pytest.approx(0.0)  # |0 - 1| * 3 > 1
    assert s["density"] == pytest.approx((2 / 3) / 1.0)
    assert s["connectivity"] == 1.0
    # path assortativity is -1 (defined), triangle's is undefined (all degrees equal)
    assert s["assortativity"] == 0.0
    assert s["transitivity"] == pytest.approx(0.0)


def test_disconnected_graph_penalised_and_best_reference_wins() -> None:
    g = nx.Graph([(0, 1), (2, 3)])
    conn = DomainProfile(nx.path_graph(4))
    s = facet_scores(DomainProfile(g), conn)
    assert s["connectivity"] == 0.3
    same = DomainProfile(nx.Graph([(5, 6), (7, 8)]))
    assert domain_fit(g, [conn, same]) == pytest.approx(1.0)


def test_directed_uses_reciprocity() -> None:
    g = nx.DiGraph([(0, 1), (1, 0), (1, 2)])
    r_dir = DomainProfile(nx.DiGraph([(0, 1), (1, 2), (2, 0)]))
    r_und = DomainProfile(nx.path_graph(3))
    assert facet_scores(DomainProfile(g), r_und)["transitivity"] == 0.0
    expected = max(0.0, 1 - 3 * abs(nx.overall_reciprocity(g) - 0.0))
    assert facet_scores(DomainProfile(g), r_dir)["transitivity"] == pytest.approx(expected)


@given(_DEGREES, _DEGREES)
def test_ks_statistic_is_scipys_bit_for_bit(a: list[int], b: list[int]) -> None:
    from scipy.stats import ks_2samp

    x, y = np.array(a, dtype=float), np.array(b, dtype=float)
    with warnings.catch_warnings():  # scipy's p-value of tiny samples divides by zero
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = float(ks_2samp(x, y, method="asymp").statistic)
    assert ks_statistic(x, y) == expected


def test_ks_statistic_by_hand() -> None:
    assert ks_statistic(np.array([1.0, 2.0]), np.array([3.0, 4.0])) == 1.0
    assert ks_statistic(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0])) == 0.0
    assert ks_statistic(np.array([1.0, 2.0]), np.array([2.0, 3.0])) == 0.5
