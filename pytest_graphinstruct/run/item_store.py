"""Whole item results kept on disk between runs of ``score`` (:class:`ItemStore`).

``score`` run again on answers it scored before — a CI job re-run, the same recorded file
scored for another report — reads each item's result instead of verifying and scoring its
answers again.  An item's result is a pure function of its instruction (the whole record),
its cell, its answers (texts, usage, calls, latencies), the run's pass rule, the parser's
limits and the reference pools, given the code that computes it and the machine (D3's last
digits depend on the CPU: :mod:`~pytest_graphinstruct.score.gcn_store`).  What keeps a stored
result right:

* the store's database is named by a **fingerprint** of every file of this package (any
  change to the code starts an empty one), of Python's version, of the versions of numpy, scipy,
  networkx, torch and torch_geometric, of the CPU and of the environment variables that choose
  kernels (:func:`package_fingerprint`);
* a result's key is the sha256 of everything else it depends on (:func:`item_key`);
* only scored items (``passed``/``failed``) are kept, and only from runs that train D3 on the
  CPU (a GPU's sums are not reproducible); an item with an answer error is never read from it;
* a database that cannot be opened and a row that cannot be decoded are misses, a write that
  fails is skipped: the store never raises into scoring.

It lives beside D3's result store and follows its setting (:data:`~.gcn_store.ENV`):
``$XDG_CACHE_HOME/pytest-graphinstruct/d3/items-<fingerprint>.sqlite`` by default, in ``DIR``
where ``GI_D3_CACHE=DIR``, off where ``GI_D3_CACHE=off`` (the test suite runs with it off).
One SQLite database per fingerprint, a row per item (its result as zlib-compressed JSON, ~1 KB
for five samples), written in one transaction per scoring batch (a file per item cost 0.4 ms
to create on this project's ext4 machines: 0.35 s more for each 800 items never scored).
Results stored more than :data:`KEEP_DAYS` days ago are deleted, and so are other
fingerprints' databases not written for as long, at most once a day
(:meth:`ItemStore.prune`).  Only the ``score`` command uses
it: a pytest item needs the verdicts of its answers for its assertion, not only their result.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import sys
import threading
import time
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest_graphinstruct
from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.graphs.model import Limits
from pytest_graphinstruct.pools import ReferencePools
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.records.codec import ShapeError
from pytest_graphinstruct.run.records.results import ItemResult
from pytest_graphinstruct.score import gcn_store
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.vocab import PassRule

try:
    import sqlite3
except ImportError:  # pragma: no cover - a Python built without SQLite: no store
    sqlite3 = None  # type: ignore[assignment]

KEEP_DAYS = 30
"""A result stored this many days ago is deleted by :meth:`ItemStore.prune` (and is computed
and stored again when it is next needed)."""
_PRUNE_EVERY_S = 86_400.0


class ItemStore:
    """Item results by key, in one SQLite database of ``folder`` named by ``fingerprint``
    (:mod:`sqlite3`: one transaction per batch of results, safe from several processes; each
    process opens its own connection, after any fork)."""

    def __init__(self, folder: Path, fingerprint: str) -> None:
        self.path = folder / f"items-{fingerprint[:32]}.sqlite"
        self._conn: sqlite3.Connection | None = None
        self._inherited: list[sqlite3.Connection] = []
        self._pid = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ItemStore({self.path})"

    def get(self, key: str) -> ItemResult | None:
        """The stored result of ``key``, or ``None`` (none stored, or unreadable)."""
        try:
            with self._lock:
                row = self._db().execute("SELECT value FROM items WHERE key = ?",
                                         (key,)).fetchone()
            if row is None:
                return None
            return ItemResult.from_json(json.loads(zlib.decompress(row[0])))
        except (sqlite3.Error, OSError, ValueError, ShapeError, zlib.error):
            return None

    def put(self, results: Mapping[str, ItemResult], *, now: float | None = None) -> int:
        """Store ``results`` by key in one transaction (only scored items'); the count
        written (0 when the store cannot be written)."""
        now = time.time() if now is None else now
        rows = []
        for key, result in results.items():
            if not result.scored:
                continue
            with contextlib.suppress(ValueError):  # a value JSON cannot hold: not kept
                rows.append((key, zlib.compress(json.dumps(
                    result.to_json(), separators=(",", ":"), allow_nan=False).encode("utf-8")),
                    now))
        if not rows:
            return 0
        try:
            with self._lock, self._db() as db:
                db.executemany("INSERT OR REPLACE INTO items (key, value, stored) "
                               "VALUES (?, ?, ?)", rows)
        except (sqlite3.Error, OSError):
            return 0
        return len(rows)

    def prune(self, *, now: float | None = None) -> int:
        """Delete the results stored more than :data:`KEEP_DAYS` days ago, and the databases
        of other fingerprints (older code) not written for as long, unless that was done
        within the last day; the count of results deleted."""
        now = time.time() if now is None else now
        cutoff = now - KEEP_DAYS * 86_400.0
        try:
            with self._lock, self._db() as db:
                row = db.execute("SELECT value FROM meta WHERE name = 'pruned'").fetchone()
                if row is not None and now - float(row[0]) < _PRUNE_EVERY_S:
                    return 0
                db.execute("INSERT OR REPLACE INTO meta (name, value) VALUES ('pruned', ?)",
                           (repr(now),))
                deleted = db.execute("DELETE FROM items WHERE stored < ?", (cutoff,)).rowcount
        except (sqlite3.Error, OSError, ValueError):
            return 0
        for other in self.path.parent.glob("items-*.sqlite*"):
            if not other.name.startswith(self.path.name):
                with contextlib.suppress(OSError):
                    if other.stat().st_mtime < cutoff:
                        other.unlink()
        return deleted

    def close(self) -> None:
        """Close this process's connection (the next use opens another)."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():  # a forked child opens its own
            if self._conn is not None:  # the parent's, never closed here (SQLite forbids
                self._inherited.append(self._conn)  # using it across a fork)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=60.0, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            with conn:
                conn.execute("CREATE TABLE IF NOT EXISTS items "
                             "(key TEXT PRIMARY KEY, value BLOB NOT NULL, stored REAL NOT NULL)")
                conn.execute("CREATE TABLE IF NOT EXISTS meta "
                             "(name TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._conn, self._pid = conn, os.getpid()
        return self._conn


def item_key(instruction: Instruction, cell: Cell, answers: Sequence[Answer], *,
             pass_rule: PassRule, limits: Limits, pools: ReferencePools | None) -> str:
    """The key of one item's result: sha256 over everything it depends on besides the code
    and the machine (see the module docstring) — the instruction's every field but the file
    it was read from (a suite moved or checked out elsewhere is the same suite)."""
    pool_ids = None if pools is None else tuple(
        (level, pool.name, pool.content_hash) for level, pool in sorted(pools.pools.items()))
    return gcn_store.result_key("item", dataclasses.replace(instruction, source=""), cell,
                                tuple(answers), pass_rule, limits, pool_ids)


def package_fingerprint() -> str:
    """sha256 over every file of this package (path and bytes; compiled caches aside),
    Python's version and :func:`.gcn_store.fingerprint`'s libraries, CPU and kernel settings.

    Raises:
        OSError: a file of the package cannot be read.
    """
    root = Path(pytest_graphinstruct.__file__).resolve().parent
    h = hashlib.sha256(sys.version.encode("utf-8"))
    files = sorted(p for p in root.rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
    for path in files:
        rel = path.relative_to(root).as_posix().encode("utf-8")
        data = path.read_bytes()
        h.update(len(rel).to_bytes(8, "little") + rel + len(data).to_bytes(8, "little"))
        h.update(data)
    h.update(gcn_store.fingerprint(()).encode("ascii"))
    return h.hexdigest()


_DEFAULT: dict[str, ItemStore | None] = {}
_DEFAULT_LOCK = threading.Lock()


def default_item_store() -> ItemStore | None:
    """The process's item store as :data:`~.gcn_store.ENV` says (``None``: off, no folder to
    put it in, or a Python without :mod:`sqlite3`), pruned when it is opened
    (:meth:`ItemStore.prune`); one per setting."""
    setting = os.environ.get(gcn_store.ENV, "")
    with _DEFAULT_LOCK:
        if setting not in _DEFAULT:
            store: ItemStore | None = None
            try:
                folder = gcn_store.store_folder()
                if folder is not None and sqlite3 is not None:
                    store = ItemStore(folder, package_fingerprint())
                    store.prune()
                    store.close()  # opened again on first use, after any fork
            except (OSError, RuntimeError, KeyError):  # no home folder, unreadable source
                store = None
            _DEFAULT[setting] = store
        return _DEFAULT[setting]
