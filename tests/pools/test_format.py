"""The pool directory format: writing, loading, verifying (pools/format.py)."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.pools import Pool, PoolError, write_pool
from pytest_graphinstruct.pools.format import LineGraphs, _valid_str_edges, content_hash


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


@pytest.mark.parametrize(("record", "message"), [
    ({"id": "a", "directed": False, "nodes": ["0", "1"], "edges": [["0", "2"]]}, "not in 'nodes'"),
    ({"id": "a", "directed": False, "nodes": ["0", "1"], "edges": [["0", "1"], ["1", "0"]]},
     "twice"),
    ({"id": "a", "directed": True, "nodes": ["0", "1"], "edges": [["0", "1"], ["0", "1"]]},
     "twice"),
    ({"id": "a", "directed": False, "nodes": ["0", "1"], "edges": [["0", "1", "1"]]},
     "bad edge"),
    ({"id": "a", "directed": False, "nodes": ["0", "1"], "edges": [["0", 1.5]]}, "bad edge"),
    ({"id": "a", "directed": False, "nodes": ["0", "0"], "edges": []}, "duplicate node"),
    ({"id": "a", "directed": False, "nodes": ["0", None], "edges": []}, "'nodes' must"),
])
def test_string_id_records_get_the_same_checks(tmp_path: Path, record: dict[str, object],
                                               message: str) -> None:
    """Records with string ids take the fast validation path; it rejects what the edge-by-edge
    check rejects, with the same message."""
    data = (json.dumps(record) + "\n").encode()
    (tmp_path / "s.jsonl").write_bytes(data)
    manifest = {"format": "graphinstruct-pool", "version": 1, "graphs": 1, "content_hash": "x",
                "files": [{"path": "s.jsonl", "graphs": 1,
                           "sha256": hashlib.sha256(data).hexdigest()}]}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(PoolError, match=message):
        Pool.load(tmp_path)


def test_loaded_graphs_are_built_on_first_use(tmp_path: Path, graphs: list[nx.Graph]) -> None:
    write_pool(tmp_path, graphs[:4], compress=False)
    loaded = Pool.load(tmp_path)
    first = loaded.graphs[0]
    assert first._graph is None  # size, direction and record need no networkx graph
    assert (first.n, first.m, first.directed) == (graphs[0].number_of_nodes(),
                                                  graphs[0].number_of_edges(),
                                                  graphs[0].is_directed())
    assert first.record()["id"] == first.id and first._graph is None
    assert first.graph is first.graph  # built once
    want = nx.relabel_nodes(graphs[0], str)
    assert list(first.graph.nodes) == list(want.nodes)
    assert {frozenset(e) for e in first.graph.edges} == {frozenset(e) for e in want.edges}


@settings(max_examples=300, deadline=None)
@given(edges=st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from("abcd")), max_size=8),
       directed=st.booleans())
def test_the_fast_edge_check_accepts_exactly_the_lists_without_a_repeat(
        edges: list[tuple[str, str]], directed: bool) -> None:
    as_lists = [[u, v] for u, v in edges]
    keys = [(u, v) if directed else frozenset((u, v)) for u, v in edges]
    repeats = len(set(keys)) != len(keys)
    got = _valid_str_edges(as_lists, set("abcd"), directed)
    assert (got is None) == repeats
    if got is not None:
        assert got == edges


def test_a_pool_verified_once_is_read_from_its_lines_after(tmp_path: Path,
                                                            graphs: list[nx.Graph]) -> None:
    """The second load with a cache skips the record checks (the bytes were verified) and
    parses graphs on first use — the same graphs, the same content hash."""
    write_pool(tmp_path / "p", graphs, shard_size=16)
    first = Pool.load(tmp_path / "p", cache_dir=tmp_path / "cache")
    again = Pool.load(tmp_path / "p", cache_dir=tmp_path / "cache")
    assert isinstance(again.graphs, LineGraphs) and not isinstance(first.graphs, LineGraphs)
    assert again.content_hash == first.content_hash == content_hash(again.graphs)
    assert [g.record() for g in again.graphs] == [g.record() for g in first.graphs]
    assert again.graphs[3] is again.graphs[3]  # parsed once
    assert [g.id for g in again.graphs[1:3]] == [first.graphs[1].id, first.graphs[2].id]


def test_a_shard_changed_after_verification_is_verified_again(
        tmp_path: Path, graphs: list[nx.Graph]) -> None:
    d = _pool_dir(tmp_path, graphs)
    Pool.load(d, cache_dir=tmp_path / "cache")
    shard = d / "part-0000.jsonl"
    rec = json.loads(shard.read_text().splitlines()[0])
    rec["edges"] = rec["edges"][1:]
    shard.write_text(json.dumps(rec) + "\n" + "".join(shard.read_text().splitlines(
        keepends=True)[1:]))
    with pytest.raises(PoolError, match=r"part-0000.jsonl: sha256"):
        Pool.load(d, cache_dir=tmp_path / "cache")


def test_a_bad_line_still_names_its_file_and_line() -> None:
    lines = LineGraphs([b'{"id": "a", "directed": false, "nodes": ["x"], "edges": []}',
                        b'{"id": "b"'], [("s.jsonl", 1), ("s.jsonl", 3)])
    assert len(lines) == 2 and lines[0].id == "a"
    with pytest.raises(PoolError, match=r"s\.jsonl:3: not JSON"):
        lines[1]
