from __future__ import annotations

import os
from pathlib import Path

import networkx as nx
import pytest

from pytest_graphinstruct.score.diagnostics import (
    ORBITS,
    ged_similarity,
    graph_edit_distance,
    orbit_counts,
    orbit_mmd,
)


def test_orbit_counts_hand_computed() -> None:
    assert orbit_counts(nx.complete_graph(4)).tolist() == [[3, 3, 3, 1]] * 4
    star = orbit_counts(nx.star_graph(3)).tolist()
    assert star[0] == [3, 3, 0, 1] and star[1:] == [[1, 0, 0, 0]] * 3
    loop = nx.Graph([(0, 1), (1, 1)])  # self-loops ignored
    assert orbit_counts(loop).tolist() == [[1, 0, 0, 0], [1, 0, 0, 0]]


def test_orbit_mmd_identical_sets_score_one() -> None:
    graphs = [nx.gnp_random_graph(12, 0.3, seed=i) for i in range(6)]
    r = orbit_mmd(graphs, graphs)
    assert set(r.orbits) == set(ORBITS)
    assert r.mean == pytest.approx(1.0)
    far = orbit_mmd([nx.complete_graph(12)] * 3, graphs)
    assert far.mean < 1.0


@pytest.mark.slow
def test_ged_small_pair_is_exact() -> None:
    r = graph_edit_distance(nx.path_graph(4), nx.cycle_graph(4), timeout_s=30)
    assert r.exact and r.distance == 1.0 and r.lower_bound == 1 and r.error is None
    sim, exact = ged_similarity(nx.path_graph(4), [nx.cycle_graph(4), nx.path_graph(4)],
                                timeout_s=30)
    assert exact and sim == 1.0


def _children() -> set[int]:
    me = str(os.getpid())
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:
            out.add(int(stat.parent.name))
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_ged_timeout_really_stops_the_work() -> None:
    before = _children()
    a = nx.gnp_random_graph(40, 0.3, seed=1)
    b = nx.gnp_random_graph(40, 0.3, seed=2)
    r = graph_edit_distance(a, b, timeout_s=1.0)
    # The search of two 40-node graphs would run for ages: a call that returned at all, not
    # exact and with no worker error, was ended by its timeout (after the whole second).
    assert not r.exact and r.error is None and r.seconds >= 1.0
    assert r.distance is None or r.distance >= r.lower_bound
    assert _children() <= before  # the worker was killed and reaped: nothing keeps running
