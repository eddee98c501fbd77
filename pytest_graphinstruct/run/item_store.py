"""Whole item results kept on disk between runs of ``score`` (:class:`ItemStore`).

``score`` run again on answers it scored before — a CI job re-run, the same recorded file
scored for another report — reads each item's result instead of verifying and scoring its
answers again.  An item's result is a pure function of its instruction (the whole record),
its cell, its answers (texts, usage, calls, latencies), the run's pass rule, the parser's
limits and the reference pools, given the code that computes it and the machine (D3's last
digits depend on the CPU: :mod:`~pytest_graphinstruct.score.gcn_store`).  What keeps a stored
result right:

* the store's folder is named by a **fingerprint** of every file of this package (any change
  to the code starts an empty folder), of Python's version, of the versions of numpy, scipy,
  networkx, torch and torch_geometric, of the CPU and of the environment variables that choose
  kernels (:func:`package_fingerprint`);
* a result's file is named by the sha256 of everything else it depends on (:func:`item_key`);
* only scored items (``passed``/``failed``) are kept, and only from runs that train D3 on the
  CPU (a GPU's sums are not reproducible); an item with an answer error is never read from it;
* a file that cannot be read or decoded is a miss, a write that fails is skipped: the store
  never raises into scoring.  Writes are atomic (several processes may score at once).

It lives beside D3's result store and follows its setting (:data:`~.gcn_store.ENV`):
``$XDG_CACHE_HOME/pytest-graphinstruct/d3/items/<fingerprint>/`` by default, ``DIR/items/...``
where ``GI_D3_CACHE=DIR``, off where ``GI_D3_CACHE=off`` (the test suite runs with it off).
Each result is one zlib-compressed JSON file (~2 KB for five samples); files not read or
written for :data:`KEEP_DAYS` days are deleted, in every fingerprint's folder, at most once a
day (:meth:`ItemStore.prune`).  Only the ``score`` command uses it: a pytest item needs the
verdicts of its answers for its assertion, not only their result.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import threading
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

import pytest_graphinstruct
from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.graphs.model import Limits
from pytest_graphinstruct.pools import ReferencePools
from pytest_graphinstruct.pools.cache import atomic_file
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.records.codec import ShapeError
from pytest_graphinstruct.run.records.results import ItemResult
from pytest_graphinstruct.score import gcn_store
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.vocab import PassRule

KEEP_DAYS = 30
"""A result not read or written for this many days is deleted by :meth:`ItemStore.prune`."""
_PRUNE_EVERY_S = 86_400.0
_STAMP = ".pruned"
_KEPT = ("passed", "failed")


class ItemStore:
    """Item results by key, one file each under ``folder`` (one fingerprint's folder)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __repr__(self) -> str:
        return f"ItemStore({self.folder})"

    def get(self, key: str) -> ItemResult | None:
        """The stored result of ``key``, or ``None`` (none stored, or unreadable)."""
        path = self._path(key)
        try:
            result = ItemResult.from_json(json.loads(zlib.decompress(path.read_bytes())))
        except (OSError, ValueError, ShapeError, zlib.error):
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # used now: kept by prune
        return result

    def put(self, key: str, result: ItemResult) -> bool:
        """Store ``result`` under ``key`` (only a scored item's); whether it was written."""
        if result.outcome not in _KEPT:
            return False
        path = self._path(key)
        blob = zlib.compress(json.dumps(result.to_json(), separators=(",", ":"),
                                        allow_nan=False).encode("utf-8"))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_file(path) as tmp:
                tmp.write_bytes(blob)
        except (OSError, ValueError):
            return False
        return True

    def prune(self, *, now: float | None = None) -> int:
        """Delete the results of every fingerprint's folder that were not read or written for
        :data:`KEEP_DAYS` days, unless that was done within the last day; the count deleted."""
        now = time.time() if now is None else now
        root = self.folder.parent
        stamp = root / _STAMP
        try:
            if now - stamp.stat().st_mtime < _PRUNE_EVERY_S:
                return 0
        except OSError:
            pass
        try:
            root.mkdir(parents=True, exist_ok=True)
            stamp.touch()
        except OSError:
            return 0
        cutoff = now - KEEP_DAYS * 86_400.0
        deleted = 0
        for dirpath, _dirs, filenames in os.walk(root, topdown=False):
            for name in filenames:
                path = Path(dirpath) / name
                if name == _STAMP and Path(dirpath) == root:
                    continue
                with contextlib.suppress(OSError):
                    if path.stat().st_mtime < cutoff:
                        path.unlink()
                        deleted += 1
            if Path(dirpath) != root:
                with contextlib.suppress(OSError):
                    os.rmdir(dirpath)  # only succeeds when empty
        return deleted

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json.z"


def item_key(instruction: Instruction, cell: Cell, answers: Sequence[Answer], *,
             pass_rule: PassRule, limits: Limits, pools: ReferencePools | None) -> str:
    """The key of one item's result: sha256 over everything it depends on besides the code
    and the machine (see the module docstring)."""
    pool_ids = None if pools is None else tuple(
        (level, pool.name, pool.content_hash) for level, pool in sorted(pools.pools.items()))
    return gcn_store.result_key("item", instruction, cell, tuple(answers), pass_rule, limits,
                                pool_ids)


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
    """The process's item store as :data:`~.gcn_store.ENV` says (``None``: off, or no folder
    to put it in), pruned when it is opened (:meth:`ItemStore.prune`); one per setting."""
    setting = os.environ.get(gcn_store.ENV, "")
    with _DEFAULT_LOCK:
        if setting not in _DEFAULT:
            store: ItemStore | None = None
            try:
                folder = gcn_store.store_folder()
                if folder is not None:
                    store = ItemStore(folder / "items" / package_fingerprint()[:32])
                    store.prune()
            except (OSError, RuntimeError, KeyError):  # no home folder, unreadable source
                store = None
            _DEFAULT[setting] = store
        return _DEFAULT[setting]
