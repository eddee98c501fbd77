from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.score import mmd
from pytest_graphinstruct.score.pools import (
    Pool,
    PoolError,
    PoolGraph,
    ReferencePools,
    match_key,
    write_pool,
)
from pytest_graphinstruct.suite.constraints import parse_constraint
from pytest_graphinstruct.verify.checks import check_constraint, is_checkable
from pytest_graphinstruct.verify.properties import GraphFacts
from pytest_graphinstruct.verify.verdict import Source
from tests.score._d1graphs import instruction, synthetic_pool_graphs

CONSTRAINT_MENU = [
    "num_nodes=14", "num_nodes=16", "num_nodes>=15", "num_edges<=30", "connected=true",
    "directed=false", "directed=true", "density<=0.2", "density>=0.3", "modularity>=0.3",
    "clustering_coefficient>=0.2", "average_path_length<=2.2", "diameter<=4", "min_degree=2",
    "max_degree=6", "planar=true", "acyclic=true", "bipartite=false", "edge_connectivity>=2",
    "graph_type=tree", "task_type=spanning_tree",
]


def brute_force(pool: Pool, texts: list[str], domain: str | None = None) -> tuple[int, ...]:
    cs = [parse_constraint(t) for t in texts]
    out = []
    for i, pg in enumerate(pool.graphs):
        if domain is not None and pg.domain != domain:
            continue
        facts = GraphFacts(pg.graph)  # fresh facts: nothing cached or seeded
        if all(check_constraint(c, facts, Source.EXPLICIT).satisfied
               for c in cs if is_checkable(c)):
            out.append(i)
    return tuple(out)


@pytest.fixture(scope="module")
def graphs() -> list[nx.Graph]:
    gs = synthetic_pool_graphs(40)
    gs.append(nx.DiGraph(nx.gnp_random_graph(14, 0.3, seed=9, directed=True)))
    return gs


# -- format ---------------------------------------------------------------------------------------

def test_write_then_load_round_trips_and_hashes_like_memory(tmp_path: Path,
                                                           graphs: list[nx.Graph]) -> None:
    write_pool(tmp_path / "p", graphs, name="syn", level=3, shard_size=16)
    loaded = Pool.load(tmp_path / "p")
    memory = Pool.from_graphs(graphs)
    assert loaded.content_hash == memory.content_hash
    assert len(loaded) == 41
    manifest = json.loads((tmp_path / "p" / "manifest.json").read_text())
    assert manifest["graphs"] == 41 and len(manifest["files"]) == 3
    assert manifest["level"] == 3 and manifest["content_hash"] == loaded.content_hash
    for a, b in zip(loaded.graphs, memory.graphs, strict=True):
        assert a.id == b.id and a.subgroup == b.subgroup
        assert nx.utils.graphs_equal(a.graph, b.graph)
    assert loaded.graphs[-1].graph.is_directed()
    assert all(isinstance(v, str) for v in loaded.graphs[0].graph)


def test_uncompressed_shards_load_too(tmp_path: Path, graphs: list[nx.Graph]) -> None:
    write_pool(tmp_path, graphs[:5], compress=False)
    assert len(Pool.load(tmp_path)) == 5


def _pool_dir(tmp_path: Path, graphs: list[nx.Graph]) -> Path:
    d = tmp_path / "pool"
    write_pool(d, graphs[:6], compress=False, shard_size=3)
    return d


def test_missing_manifest(tmp_path: Path) -> None:
    with pytest.raises(PoolError, match=r"manifest\.json"):
        Pool.load(tmp_path)


def test_tampered_shard_is_rejected(tmp_path: Path, graphs: list[nx.Graph]) -> None:
    d = _pool_dir(tmp_path, graphs)
    shard = d / "part-0000.jsonl"
    lines = shard.read_text().splitlines(keepends=True)
    rec = json.loads(lines[0])
    rec["edges"] = rec["edges"][1:]
    lines[0] = json.dumps(rec) + "\n"
    shard.write_text("".join(lines))
    with pytest.raises(PoolError, match=r"part-0000.jsonl: sha256"):
        Pool.load(d)


def test_count_mismatch_and_unlisted_shard(tmp_path: Path, graphs: list[nx.Graph]) -> None:
    d = _pool_dir(tmp_path, graphs)
    manifest = json.loads((d / "manifest.json").read_text())
    manifest["files"][0]["graphs"] = 4
    (d / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(PoolError, match="3 graphs, manifest says 4"):
        Pool.load(d)
    d2 = _pool_dir(tmp_path / "b", graphs)
    (d2 / "extra.jsonl").write_text("")
    with pytest.raises(PoolError, match="not listed"):
        Pool.load(d2)


@pytest.mark.parametrize(("record", "message"), [
    ({"id": "a", "directed": False, "nodes": [0, 1], "edges": [[0, 2]]}, "not in 'nodes'"),
    ({"id": "a", "directed": False, "nodes": [0, 1], "edges": [[0, 1], [1, 0]]}, "twice"),
    ({"id": "a", "directed": "no", "nodes": [], "edges": []}, "'directed'"),
    ({"id": "a", "directed": False, "nodes": [], "edges": [], "weight": 1}, "unknown keys"),
    ({"directed": False, "nodes": [], "edges": []}, "missing 'id'"),
])
def test_bad_records_name_file_and_line(tmp_path: Path, record: dict[str, object],
                                        message: str) -> None:
    good = {"id": "ok", "directed": False, "nodes": ["x"], "edges": []}
    data = (json.dumps(good) + "\n" + json.dumps(record) + "\n").encode()
    (tmp_path / "s.jsonl.gz").write_bytes(gzip.compress(data))
    manifest = {"format": "graphinstruct-pool", "version": 1, "graphs": 2, "content_hash": "x",
                "files": [{"path": "s.jsonl.gz", "graphs": 2,
                           "sha256": hashlib.sha256(data).hexdigest()}]}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(PoolError, match=message) as info:
        Pool.load(tmp_path)
    assert "s.jsonl.gz:2" in str(info.value)


# -- matching -------------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(CONSTRAINT_MENU), min_size=0, max_size=4))
def test_matching_equals_brute_force(texts: list[str]) -> None:
    pool = _shared_pool()
    got = pool.match([parse_constraint(t) for t in texts])
    assert got.indices == brute_force(pool, texts)


_SHARED: list[Pool] = []


def _shared_pool() -> Pool:
    if not _SHARED:
        gs = synthetic_pool_graphs(40)
        gs.append(nx.gnp_random_graph(14, 0.3, seed=9, directed=True))
        _SHARED.append(Pool.from_graphs(gs))
    return _SHARED[0]


def test_match_is_cached_per_canonical_key() -> None:
    pool = Pool.from_graphs(synthetic_pool_graphs(20))
    a = pool.match([parse_constraint("connected=true"), parse_constraint("density<=0.3")])
    checks = pool.computed["checks"]
    b = pool.match([parse_constraint("density <= 0.3"), parse_constraint("connected=true"),
                    parse_constraint("task_type=mst")])  # same set: other order, metadata key
    assert a.key == b.key == match_key(a_cs := [parse_constraint("density<=0.3"),
                                               parse_constraint("connected=true")])
    assert a_cs and b.indices == a.indices
    assert pool.computed["checks"] == checks and pool.computed["matches"] == 1


def test_domain_filter(tmp_path: Path) -> None:
    social = [nx.barabasi_albert_graph(12, 2, seed=i) for i in range(3)]
    molecular = [nx.path_graph(12) for _ in range(2)]
    items = [PoolGraph(f"s{i}", nx.relabel_nodes(g, str), "social") for i, g in enumerate(social)]
    items += [PoolGraph(f"m{i}", nx.relabel_nodes(g, str), "molecular")
              for i, g in enumerate(molecular)]
    pool = Pool.from_graphs(items)
    inst = instruction(id="L4-001", level=4, domain="social",
                       explicit_constraints=["num_nodes=12", "connected=true"])
    m = pool.match_instruction(inst)
    assert m.indices == (0, 1, 2)
    assert all(g.domain == "social" for g in m.graphs)
    assert m.key[-1] == "domain=social"


# -- the disk cache -------------------------------------------------------------------------------

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


# -- pools per level ------------------------------------------------------------------------------

def test_reference_pools_layout(tmp_path: Path, graphs: list[nx.Graph]) -> None:
    write_pool(tmp_path / "l3", graphs[:10])
    pools = ReferencePools.load(tmp_path)
    assert set(pools.pools) == {3}
    assert pools.for_level(4) is None
    inst = instruction(id="L4-001", level=4, domain="social")
    assert pools.match(inst) is None
    l3 = instruction(id="L3-001", level=3)
    m = pools.match(l3)
    assert m is not None and m.indices == brute_force(m.pool, ["num_nodes=6"])
    with pytest.raises(PoolError, match="no pool found"):
        ReferencePools.load(tmp_path / "l3")
