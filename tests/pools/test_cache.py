"""The on-disk feature/fact/match cache of a pool (pools/cache.py)."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from pytest_graphinstruct.kernels import mmd
from pytest_graphinstruct.pools import Pool, write_pool
from pytest_graphinstruct.suite.constraints import parse_constraint
from tests.pools._pools import brute_force


def test_second_load_recomputes_nothing(tmp_path: Path, graphs: list[nx.Graph],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    write_pool(tmp_path / "p", graphs)
    cache = tmp_path / "cache"
    texts = ["num_nodes>=15", "modularity>=0.2", "connected=true"]
    first = Pool.load(tmp_path / "p", cache_dir=cache)
    m1 = first.match([parse_constraint(t) for t in texts])
    ref1 = m1.reference_set()
    assert first.computed["features"] == len(graphs) and first.computed["stats"] == 1
    first.flush()  # (also done every FLUSH_INTERVAL_S while matching and at exit)

    calls = {"features": 0, "modularity": 0}
    real_features = mmd.graph_features
    real_greedy = nx.community.greedy_modularity_communities

    def counting_features(g: nx.Graph) -> dict[str, np.ndarray | None]:
        calls["features"] += 1
        return real_features(g)

    def counting_greedy(*args: object, **kwargs: object) -> object:
        calls["modularity"] += 1
        return real_greedy(*args, **kwargs)

    monkeypatch.setattr(mmd, "graph_features", counting_features)
    monkeypatch.setattr(nx.community, "greedy_modularity_communities", counting_greedy)

    second = Pool.load(tmp_path / "p", cache_dir=cache)
    m2 = second.match([parse_constraint(t) for t in texts])
    ref2 = m2.reference_set()
    assert m2.indices == m1.indices
    assert second.computed == {"features": 0, "checks": 0, "matches": 0, "stats": 0}
    assert calls == {"features": 0, "modularity": 0}
    for f in mmd.FEATURES:
        assert np.array_equal(ref1.table.blocks[f].hist, ref2.table.blocks[f].hist)
        assert ref1.stats.sigma[f] == ref2.stats.sigma[f]
        assert ref1.stats.kyy[f] == ref2.stats.kyy[f]

    # a new constraint set on the second load reuses the persisted modularity values
    texts2 = ["num_nodes>=15", "connected=true", "modularity>=0.25"]
    m3 = second.match([parse_constraint(t) for t in texts2])
    assert calls["modularity"] == 0
    assert m3.indices == brute_force(second, texts2)


@pytest.mark.slow
def test_seeded_facts_give_the_same_verdicts(tmp_path: Path, graphs: list[nx.Graph]) -> None:
    cache = tmp_path / "cache"
    first = Pool.from_graphs(graphs, cache_dir=cache)
    every = ["modularity>=0.1", "clustering_coefficient>=0.0", "average_path_length<=99",
             "planar=true", "acyclic=false", "edge_connectivity>=0", "density>=0"]
    for t in every:
        first.match([parse_constraint(t)])
    first.flush()
    second = Pool.from_graphs(graphs, cache_dir=cache)
    for t in ["modularity>=0.3", "clustering_coefficient>=0.2", "average_path_length<=2.2",
              "diameter<=3", "planar=false", "acyclic=true", "edge_connectivity>=2",
              "density<=0.25"]:
        assert second.match([parse_constraint(t)]).indices == brute_force(second, [t])


def test_flush_writes_matches(tmp_path: Path, graphs: list[nx.Graph]) -> None:
    a = Pool.from_graphs(graphs[:8], cache_dir=tmp_path)
    a.match([parse_constraint("connected=true")])
    a.flush()
    b = Pool.from_graphs(graphs[:8], cache_dir=tmp_path)
    b.match([parse_constraint("connected=true")])
    assert b.computed["matches"] == 0
    a.flush()  # nothing new: no write, no error


def test_cache_is_keyed_by_content(tmp_path: Path, graphs: list[nx.Graph]) -> None:
    cache = tmp_path / "cache"
    a = Pool.from_graphs(graphs[:10], cache_dir=cache)
    b = Pool.from_graphs(graphs[:11], cache_dir=cache)
    assert a.cache_path != b.cache_path
    _ = a.features
    _ = b.features
    assert b.computed["features"] == 11


def test_corrupt_cache_files_are_recomputed(tmp_path: Path, graphs: list[nx.Graph]) -> None:
    cache = tmp_path / "cache"
    a = Pool.from_graphs(graphs[:8], cache_dir=cache)
    _ = a.features
    a.match([parse_constraint("connected=true")])
    assert a.cache_path is not None
    for name in ("features.npz", "matches.json", "facts.json"):
        (a.cache_path / name).write_text("garbage")
    b = Pool.from_graphs(graphs[:8], cache_dir=cache)
    _ = b.features
    assert b.computed["features"] == 8
    assert b.match([parse_constraint("connected=true")]).indices == \
        brute_force(b, ["connected=true"])
