"""The reference-pool builder: determinism, graph validity, domains, and the committed pools."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.build import domains as dm
from pytest_graphinstruct.build import pools as pb
from pytest_graphinstruct.pools import Pool, PoolGraph, ReferencePools
from pytest_graphinstruct.pools.format import MANIFEST

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "references" / "pools"
SCALE = 0.02  # 4 graphs per L3 subgroup, 1–3 per L4 subgroup


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.fixture(scope="module")
def small_pools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pools")
    pb.build_pools(out, seed=7, scale=SCALE)
    return out


def _connected(g: nx.Graph) -> bool:
    return nx.is_weakly_connected(g) if g.is_directed() else nx.is_connected(g)


def _check_ids(pg: PoolGraph) -> None:
    assert list(pg.graph.nodes()) == [str(i) for i in range(pg.graph.number_of_nodes())]
    assert nx.number_of_selfloops(pg.graph) == 0


def test_same_seed_gives_identical_bytes(small_pools: Path, tmp_path: Path) -> None:
    summary = pb.build_pools(tmp_path, seed=7, scale=SCALE)
    assert _files(tmp_path) == _files(small_pools)
    assert summary["l3"]["graphs"] == 15 * 4
    assert summary["l4"]["domains"] == {d: summary["l4"]["domains"][d] for d in dm.DOMAINS}


def test_other_seed_gives_other_graphs(small_pools: Path, tmp_path: Path) -> None:
    pb.build_pools(tmp_path, seed=8, scale=SCALE)
    for sub in ("l3", "l4"):
        a = json.loads((tmp_path / sub / MANIFEST).read_text())["content_hash"]
        b = json.loads((small_pools / sub / MANIFEST).read_text())["content_hash"]
        assert a != b


def test_l3_graphs_connected_undirected_in_bucket(small_pools: Path) -> None:
    pool = Pool.load(small_pools / "l3")
    seen = set()
    for pg in pool.graphs:
        assert pg.subgroup is not None and pg.domain is None
        seen.add(pg.subgroup)
        lo, hi = pb.SIZE_BUCKETS[pg.subgroup.rsplit("_", 1)[1]]
        assert lo <= pg.graph.number_of_nodes() <= hi, pg.id
        assert not pg.graph.is_directed(), pg.id
        assert _connected(pg.graph), pg.id
        _check_ids(pg)
    assert seen == set(pb.l3_subgroups()) and len(seen) == 15


def test_l4_graphs_domains_directedness_sizes(small_pools: Path) -> None:
    pool = Pool.load(small_pools / "l4")
    domains = set()
    for pg in pool.graphs:
        assert pg.domain in dm.DOMAINS, pg.id
        domains.add(pg.domain)
        g = pg.graph
        assert g.is_directed() == (pg.domain in dm.DIRECTED_DOMAINS), pg.id
        lo, hi = dm.MOLECULAR_SIZE if pg.domain == "molecular" else dm.L4_SIZE
        assert lo <= g.number_of_nodes() <= hi, pg.id
        assert _connected(g), pg.id
        _check_ids(pg)
        if pg.domain == "molecular":
            assert max(d for _, d in g.degree()) <= 4, pg.id
        if pg.domain == "citation":
            assert nx.is_directed_acyclic_graph(g), pg.id
    assert domains == set(dm.DOMAINS)
    real = {pg.subgroup for pg in pool.graphs if pg.subgroup.startswith("real_")}
    assert real == set(pb.REAL_NETWORKS)


def test_full_scale_l3_subgroups_are_valid_on_a_sample() -> None:
    """Rejection sampling terminates and stays in bounds on a sample of every subgroup."""
    for sub in pb.l3_subgroups():
        for i in (0, 57, 199):
            g = pb.l3_graph(sub, i, seed=3).graph
            lo, hi = pb.SIZE_BUCKETS[sub.rsplit("_", 1)[1]]
            assert lo <= g.number_of_nodes() <= hi and nx.is_connected(g)


def test_scale_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        pb.build_pools(tmp_path, scale=0)


def test_cli_build_pools(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "pools", "--seed", "7", "--scale", str(SCALE), "--out",
                 str(tmp_path)]) == 0
    assert "l3: 60 graphs" in capsys.readouterr().out
    assert ReferencePools.load(tmp_path).for_level(3) is not None
    assert main(["build", "pools", "--scale", "0", "--out", str(tmp_path / "x")]) == 2


# -- the committed pools -----------------------------------------------------------------------

def _committed() -> Path:
    if not (COMMITTED / "l3" / MANIFEST).is_file() or not (COMMITTED / "l4" / MANIFEST).is_file():
        pytest.skip("references/pools is absent")
    return COMMITTED


@pytest.fixture(scope="module")
def committed_pools(tmp_path_factory: pytest.TempPathFactory) -> ReferencePools:
    return ReferencePools.load(_committed(), cache_dir=tmp_path_factory.mktemp("cache"))


def test_committed_pools_load_and_match_manifest(committed_pools: ReferencePools) -> None:
    root, pools = COMMITTED, committed_pools
    for level, sub, expected in ((3, "l3", 3000), (4, "l4", 1000)):
        manifest = json.loads((root / sub / MANIFEST).read_text())
        pool = pools.for_level(level)
        assert pool is not None
        assert len(pool) == manifest["graphs"] == expected
        assert pool.content_hash == manifest["content_hash"]
        assert sum(f["graphs"] for f in manifest["files"]) == manifest["graphs"]
    l4 = pools.for_level(4)
    assert l4 is not None
    counts = {d: sum(1 for pg in l4.graphs if pg.domain == d) for d in dm.DOMAINS}
    assert counts == dict.fromkeys(dm.DOMAINS, 125)


def test_default_seed_reproduces_committed_sample(committed_pools: ReferencePools) -> None:
    """A few graphs of every subgroup regenerate exactly as committed (fast, precise failures)."""
    l3_pool, l4_pool = committed_pools.for_level(3), committed_pools.for_level(4)
    assert l3_pool is not None and l4_pool is not None
    l3 = {pg.id: pg for pg in l3_pool.graphs}
    for sub in pb.l3_subgroups():
        for i in (0, 199):
            pg = pb.l3_graph(sub, i, seed=pb.DEFAULT_SEED)
            assert pg.record() == l3[pg.id].record(), pg.id
    l4 = {pg.id: pg for pg in l4_pool.graphs}
    for pg in pb.real_graphs():
        assert pg.record() == l4[pg.id].record(), pg.id
    for spec in pb.L4_SUBGROUPS:
        for i in (0, spec.count - 1):
            pg = pb.l4_graph(spec, i, seed=pb.DEFAULT_SEED)
            assert pg.record() == l4[pg.id].record(), pg.id


def test_default_seed_rebuild_reproduces_committed_bytes(tmp_path: Path) -> None:
    """The whole default build (about 7 s) is byte-identical to references/pools."""
    root = _committed()
    pb.build_pools(tmp_path, seed=pb.DEFAULT_SEED)
    assert _files(tmp_path) == _files(root)
