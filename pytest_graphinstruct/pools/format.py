"""The on-disk pool format: :class:`PoolGraph`, shards, the manifest and the content hash.

A pool directory holds ``manifest.json`` and the JSONL or gzip-JSONL shards it lists; each line
is one graph ``{"id", "directed", "nodes": [...], "edges": [[u, v], ...], "domain"?,
"subgroup"?}`` (see docs/SCORING.md, "Reference pools").  :func:`write_pool` writes that format;
:func:`read_pool` verifies it (counts, per-file and content hashes) and raises
:class:`PoolError` naming the file and line of any problem.  A pools root holds ``l3/`` and/or
``l4/`` pool directories (:data:`LEVEL_DIRS`).

The **content hash** (:func:`content_hash`) is a sha256 over the canonical JSON line of every
graph, in order, so a directory and the same graphs built in memory hash alike.

Verifying every record and recomputing the content hash costs about a second for the shipped
pools (JSON parsing most of it), paid by every process of every run.  A pool whose exact bytes
passed that once need not pay it again: :func:`read_pool` takes the shard digests verified
before (``verified``: kept by the pool's cache, :mod:`~pytest_graphinstruct.pools.cache`) and,
when the manifest and the sha256 of every shard's bytes match them, returns the graphs as
:class:`LineGraphs` — each parsed (and checked) from its line on first use.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, overload

import networkx as nx

from pytest_graphinstruct.errors import GraphInstructError

POOL_FORMAT = "graphinstruct-pool"
POOL_FORMAT_VERSION = 1
MANIFEST = "manifest.json"
#: Level → sub-directory of a pools root.
LEVEL_DIRS: Mapping[int, str] = MappingProxyType({3: "l3", 4: "l4"})

_RECORD_KEYS = frozenset({"id", "directed", "nodes", "edges", "domain", "subgroup"})


class PoolError(GraphInstructError, ValueError):
    """A pool directory is malformed: the message names the file (and line) and the problem."""


class PoolGraph:
    """One pool graph.  ``graph`` has ``str`` node ids and no attributes; treat it as read-only.

    A graph read from a pool directory keeps its node and edge lists and builds the networkx
    graph on first use of :attr:`graph`, so a run builds only the pool graphs it scores
    (:attr:`n`, :attr:`m`, :attr:`directed` and :meth:`record` never build it; :meth:`record`
    keeps the stored order, which is the graph's own order for every file :func:`write_pool`
    wrote).  Equality and hashing are by identity.
    """

    __slots__ = ("_graph", "_lists", "domain", "id", "subgroup")

    def __init__(self, id: str, graph: nx.Graph, domain: str | None = None,
                 subgroup: str | None = None) -> None:
        self.id = id
        self.domain = domain
        self.subgroup = subgroup
        self._graph: nx.Graph | None = graph
        self._lists: tuple[bool, list[str], list[tuple[str, str]]] | None = None

    @classmethod
    def from_lists(cls, id: str, directed: bool, nodes: list[str],
                   edges: list[tuple[str, str]], domain: str | None = None,
                   subgroup: str | None = None) -> PoolGraph:
        """A pool graph given as (validated) node and edge lists; the graph is built lazily."""
        pg = cls.__new__(cls)
        pg.id, pg.domain, pg.subgroup = id, domain, subgroup
        pg._graph = None
        pg._lists = (directed, nodes, edges)
        return pg

    @property
    def graph(self) -> nx.Graph:
        """The networkx graph (built once, on first use)."""
        if self._graph is None:
            assert self._lists is not None
            directed, nodes, edges = self._lists
            g: nx.Graph = nx.DiGraph() if directed else nx.Graph()
            g.add_nodes_from(nodes)
            g.add_edges_from(edges)
            self._graph = g
        return self._graph

    @property
    def directed(self) -> bool:
        """Whether the graph is directed."""
        return self._lists[0] if self._lists is not None else self.graph.is_directed()

    @property
    def n(self) -> int:
        """The number of nodes."""
        return len(self._lists[1]) if self._lists is not None else self.graph.number_of_nodes()

    @property
    def m(self) -> int:
        """The number of edges."""
        return len(self._lists[2]) if self._lists is not None else self.graph.number_of_edges()

    def __repr__(self) -> str:
        return (f"PoolGraph({self.id!r}, {self.n} nodes, {self.m} edges, "
                f"domain={self.domain!r}, subgroup={self.subgroup!r})")

    def record(self) -> dict[str, Any]:
        """The JSONL record of this graph (node and edge order as stored)."""
        if self._lists is not None:
            directed, nodes, edges = self._lists
            rec: dict[str, Any] = {"id": self.id, "directed": directed, "nodes": nodes,
                                   "edges": [[u, v] for u, v in edges]}
        else:
            g = self.graph
            rec = {"id": self.id, "directed": g.is_directed(), "nodes": list(g.nodes()),
                   "edges": [[u, v] for u, v in g.edges()]}
        if self.domain is not None:
            rec["domain"] = self.domain
        if self.subgroup is not None:
            rec["subgroup"] = self.subgroup
        return rec


def _canonical_line(pg: PoolGraph) -> str:
    return json.dumps(pg.record(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(graphs: Iterable[PoolGraph]) -> str:
    """sha256 over the canonical JSON line of every graph, in order (format-independent: a
    directory and the same graphs built in memory hash alike)."""
    h = hashlib.sha256()
    for pg in graphs:
        h.update(_canonical_line(pg).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


# -- reading --------------------------------------------------------------------------------------

def _open_text(path: Path) -> Any:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def _graph_from_record(rec: Any, where: str) -> PoolGraph:
    if not isinstance(rec, dict):
        raise PoolError(f"{where}: a graph record must be a JSON object")
    unknown = set(rec) - _RECORD_KEYS
    if unknown:
        raise PoolError(f"{where}: unknown keys {sorted(unknown)} (allowed: "
                        f"{sorted(_RECORD_KEYS)})")
    for key in ("id", "directed", "nodes", "edges"):
        if key not in rec:
            raise PoolError(f"{where}: missing {key!r}")
    gid, directed, nodes, edges = rec["id"], rec["directed"], rec["nodes"], rec["edges"]
    if not isinstance(gid, str) or not gid:
        raise PoolError(f"{where}: 'id' must be a non-empty string")
    if not isinstance(directed, bool):
        raise PoolError(f"{where}: 'directed' must be true or false")
    for key in ("domain", "subgroup"):
        if rec.get(key) is not None and not isinstance(rec[key], str):
            raise PoolError(f"{where}: {key!r} must be a string")
    if not isinstance(nodes, list):
        raise PoolError(f"{where}: 'nodes' must be a list of strings or integers")
    if set(map(type, nodes)) <= {str}:  # the common case, checked at C speed
        names: list[str] = nodes
    elif all(_is_id(v) for v in nodes):
        names = [str(v) for v in nodes]
    else:
        raise PoolError(f"{where}: 'nodes' must be a list of strings or integers")
    if len(set(names)) != len(names):
        raise PoolError(f"{where}: duplicate node ids")
    if not isinstance(edges, list):
        raise PoolError(f"{where}: 'edges' must be a list of [u, v] pairs")
    known = set(names)
    pairs = _valid_str_edges(edges, known, directed)
    if pairs is None:  # not the common case, or something is wrong: find it, edge by edge
        pairs = []
        seen: set[tuple[str, str]] = set()
        for e in edges:
            if not (type(e) is list and len(e) == 2 and _is_id(e[0]) and _is_id(e[1])):
                raise PoolError(f"{where}: bad edge {e!r} (want [u, v])")
            u, v = str(e[0]), str(e[1])
            if u not in known or v not in known:
                raise PoolError(f"{where}: edge {e!r} names a node not in 'nodes'")
            edge_key = (u, v) if directed or u <= v else (v, u)
            if edge_key in seen:
                raise PoolError(f"{where}: edge {e!r} listed twice")
            seen.add(edge_key)
            pairs.append((u, v))
    return PoolGraph.from_lists(gid, directed, names, pairs, rec.get("domain"),
                                rec.get("subgroup"))


def _valid_str_edges(edges: list[Any], known: set[str],
                     directed: bool) -> list[tuple[str, str]] | None:
    """``edges`` as pairs when every edge is a ``[str, str]`` list between known nodes and none
    repeats (a pool holds ~500k edges, so this runs at C speed); ``None`` otherwise."""
    if not set(map(type, edges)) <= {list} or not set(map(len, edges)) <= {2}:
        return None
    pairs: list[tuple[str, str]] = list(map(tuple, edges))
    if not pairs:
        return pairs
    us, vs = zip(*pairs, strict=True)
    if not (set(map(type, us)) | set(map(type, vs))) <= {str}:
        return None
    if not (known.issuperset(us) and known.issuperset(vs)):
        return None
    distinct = len(set(pairs)) if directed else len(set(map(frozenset, pairs)))
    return pairs if distinct == len(pairs) else None


def _is_id(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))


def _read_shard(path: Path, rel: str) -> tuple[list[PoolGraph], str]:
    """The graphs of one shard and the sha256 of its (decompressed) bytes."""
    h = hashlib.sha256()
    out: list[PoolGraph] = []
    try:
        with _open_text(path) as fh:
            for lineno, line in enumerate(fh, 1):
                h.update(line.encode("utf-8"))
                if not line.strip():
                    continue
                where = f"{rel}:{lineno}"
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise PoolError(f"{where}: not JSON ({exc.msg})") from None
                out.append(_graph_from_record(rec, where))
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise PoolError(f"{rel}: cannot read ({exc})") from None
    return out, h.hexdigest()


class LineGraphs(Sequence[PoolGraph]):
    """The graphs of verified shards, one JSON line each, each parsed on first use (and kept).

    Iterating parses every graph; ``len`` parses none.  A line that does not hold a valid
    record still raises :class:`PoolError` naming its file and line (it cannot, for bytes that
    passed :func:`read_pool`'s checks before, but the check costs nothing extra)."""

    def __init__(self, lines: list[bytes], where: list[tuple[str, int]]) -> None:
        self._lines = lines
        self._where = where
        self._parsed: list[PoolGraph | None] = [None] * len(lines)

    def __len__(self) -> int:
        return len(self._lines)

    @overload
    def __getitem__(self, index: int) -> PoolGraph: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[PoolGraph]: ...

    def __getitem__(self, index: int | slice) -> PoolGraph | Sequence[PoolGraph]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        pg = self._parsed[index]
        if pg is None:
            rel, lineno = self._where[index]
            where = f"{rel}:{lineno}"
            try:
                rec = json.loads(self._lines[index])
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise PoolError(f"{where}: not JSON ({exc})") from None
            pg = _graph_from_record(rec, where)
            self._parsed[index] = pg
        return pg

    def __iter__(self) -> Iterator[PoolGraph]:
        for i in range(len(self)):
            yield self[i]


def _shard_bytes(path: Path) -> bytes:
    """The (decompressed) bytes of one shard."""
    try:
        raw = path.read_bytes()
        return gzip.decompress(raw) if path.name.endswith(".gz") else raw
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise PoolError(f"{path}: cannot read ({exc})") from None


def _read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PoolError(f"{path}: missing (a pool directory needs a {MANIFEST})") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise PoolError(f"{path}: unreadable ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != POOL_FORMAT:
        raise PoolError(f"{path}: 'format' must be {POOL_FORMAT!r}")
    if data.get("version") != POOL_FORMAT_VERSION:
        raise PoolError(f"{path}: unsupported version {data.get('version')!r} "
                        f"(this reader knows {POOL_FORMAT_VERSION})")
    files = data.get("files")
    if not isinstance(files, list) or not all(
            isinstance(f, dict) and isinstance(f.get("path"), str)
            and isinstance(f.get("graphs"), int) and isinstance(f.get("sha256"), str)
            for f in files):
        raise PoolError(f"{path}: 'files' must be a list of {{path, graphs, sha256}}")
    for key in ("graphs", "content_hash"):
        if key not in data:
            raise PoolError(f"{path}: missing {key!r}")
    return data


@dataclass(frozen=True)
class PoolContents:
    """A verified pool directory: its graphs (in stored order), name and content hash."""

    graphs: Sequence[PoolGraph]
    name: str
    content_hash: str
    #: the sha256 of every shard's bytes, in manifest order (what ``verified`` holds)
    shards: tuple[str, ...] = ()
    #: whether the graphs were read from bytes verified before (parsed on first use)
    trusted: bool = False


def read_pool(directory: str | Path,
              verified: Callable[[str], Collection[str]] | None = None) -> PoolContents:
    """Read and verify a pool directory (see the module docstring).

    ``verified``: given the content hash the manifest claims, the shard digests of an earlier
    full verification of that pool (its :attr:`PoolContents.shards`; empty when none).  When
    every shard's bytes hash to them (and to the manifest), the records are not checked again:
    the graphs are :class:`LineGraphs`.

    Raises:
        PoolError: missing/malformed manifest, a shard that is missing, unlisted, unreadable
            or malformed, or a count or hash that does not match the manifest.
    """
    directory = Path(directory)
    manifest = _read_manifest(directory)
    shards = () if verified is None else verified(str(manifest["content_hash"]))
    listed = {f["path"] for f in manifest["files"]}
    for p in sorted(directory.iterdir()):
        if p.name.endswith((".jsonl", ".jsonl.gz")) and p.name not in listed:
            raise PoolError(f"{p}: a shard not listed in {MANIFEST}")
    if shards and [f["sha256"] for f in manifest["files"]] == list(shards):
        quick = _read_verified(directory, manifest)
        if quick is not None:
            return quick
    graphs: list[PoolGraph] = []
    for entry in manifest["files"]:
        rel = entry["path"]
        path = directory / rel
        if not path.is_file():
            raise PoolError(f"{path}: listed in {MANIFEST} but missing")
        part, digest = _read_shard(path, str(path))
        if len(part) != entry["graphs"]:
            raise PoolError(f"{path}: {len(part)} graphs, manifest says {entry['graphs']}")
        if digest != entry["sha256"]:
            raise PoolError(f"{path}: sha256 {digest} does not match the manifest")
        graphs.extend(part)
    if len(graphs) != manifest["graphs"]:
        raise PoolError(f"{directory}: {len(graphs)} graphs, manifest says "
                        f"{manifest['graphs']}")
    ids = [g.id for g in graphs]
    if len(set(ids)) != len(ids):
        raise PoolError(f"{directory}: graph ids must be unique across the pool")
    digest = content_hash(graphs)
    if digest != manifest["content_hash"]:
        raise PoolError(f"{directory}: content hash {digest} does not match the manifest")
    return PoolContents(tuple(graphs), str(manifest.get("name") or directory.name), digest,
                        tuple(f["sha256"] for f in manifest["files"]))


def _read_verified(directory: Path, manifest: Mapping[str, Any]) -> PoolContents | None:
    """The pool as :class:`LineGraphs` when every shard's bytes hash to the manifest's
    (verified) digest and its line count matches; ``None`` otherwise (read it in full)."""
    lines: list[bytes] = []
    where: list[tuple[str, int]] = []
    for entry in manifest["files"]:
        path = directory / entry["path"]
        if not path.is_file():
            return None
        data = _shard_bytes(path)
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            return None
        found = [(i, line) for i, line in enumerate(data.split(b"\n"), 1) if line.strip()]
        if len(found) != entry["graphs"]:
            return None
        lines += [line for _, line in found]
        where += [(str(path), i) for i, _ in found]
    if len(lines) != manifest["graphs"]:
        return None
    return PoolContents(LineGraphs(lines, where), str(manifest.get("name") or directory.name),
                        str(manifest["content_hash"]),
                        tuple(f["sha256"] for f in manifest["files"]), trusted=True)


# -- writing --------------------------------------------------------------------------------------

def write_pool(directory: str | Path, graphs: Iterable[PoolGraph | nx.Graph], *,
               name: str | None = None, level: int | None = None, shard_size: int = 1000,
               compress: bool = True) -> Path:
    """Write ``graphs`` as a pool directory (shards of ``shard_size`` graphs + manifest).

    Plain networkx graphs get ids ``g00000``, … and no domain.  Returns the manifest path.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    items = as_pool_graphs(graphs)
    suffix = ".jsonl.gz" if compress else ".jsonl"
    files = []
    for start in range(0, max(1, len(items)), shard_size):
        part = items[start:start + shard_size]
        rel = f"part-{start // shard_size:04d}{suffix}"
        text = "".join(_canonical_line(pg) + "\n" for pg in part)
        data = text.encode("utf-8")
        if compress:
            (directory / rel).write_bytes(gzip.compress(data, compresslevel=6, mtime=0))
        else:
            (directory / rel).write_bytes(data)
        files.append({"path": rel, "graphs": len(part), "sha256": hashlib.sha256(data).hexdigest()})
    manifest: dict[str, Any] = {"format": POOL_FORMAT, "version": POOL_FORMAT_VERSION,
                                "name": name or directory.name, "graphs": len(items),
                                "content_hash": content_hash(items), "files": files}
    if level is not None:
        manifest["level"] = level
    path = directory / MANIFEST
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return path


def as_pool_graphs(graphs: Iterable[PoolGraph | nx.Graph]) -> list[PoolGraph]:
    """``graphs`` as :class:`PoolGraph` (networkx graphs get ids ``g00000``… and ``str`` nodes;
    ``graph.graph['domain'/'subgroup'/'id']`` are used when present).

    Raises:
        TypeError: an item is neither a :class:`PoolGraph` nor a simple networkx graph.
        PoolError: the ids are not unique.
    """
    out: list[PoolGraph] = []
    for i, g in enumerate(graphs):
        if isinstance(g, PoolGraph):
            out.append(g)
            continue
        if not isinstance(g, nx.Graph) or g.is_multigraph():
            raise TypeError(f"pool graph {i}: need nx.Graph/nx.DiGraph or PoolGraph, got "
                            f"{type(g).__name__}")
        h: nx.Graph = nx.DiGraph() if g.is_directed() else nx.Graph()
        h.add_nodes_from(str(v) for v in g)
        h.add_edges_from((str(u), str(v)) for u, v in g.edges())
        gid = g.graph.get("id")
        out.append(PoolGraph(str(gid) if gid is not None else f"g{i:05d}", h,
                             g.graph.get("domain"), g.graph.get("subgroup")))
    ids = [pg.id for pg in out]
    if len(set(ids)) != len(ids):
        raise PoolError("pool graph ids must be unique")
    return out
