"""D3's GCN results kept on disk between runs (:class:`GcnStore`).

A GCN's soft accuracy is a pure function of what it is trained and evaluated on (the canonical
graphs, their spectral features, the configuration) on a given CPU: training is bit-reproducible
there (:mod:`~pytest_graphinstruct.score.gcn`).  A CI job that scores the same answers again —
a rerun from the answer cache, a replay, the same suite's references — trains the same models
again; the store lets it read them instead.

What keeps a stored value right:

* the file is named by a **fingerprint** of everything the value could depend on besides its
  key: the source of the modules that compute it (``gcn``, ``gcn_backend``, ``d3``,
  ``embedding``, ``canon``, ``kernels.blas``), the versions of torch, torch_geometric, numpy,
  scipy and networkx, the CPU (its model and instruction-set
  flags: AVX-512 and AVX2 kernels differ in the last digits) and the environment variables
  that choose kernels; any change starts an empty file;
* the **key** of a value is the sha256 of its kind, the canonical certificates of its graphs and
  the GCN configuration (:func:`result_key`);
* only CPU results are stored (a GPU's scatter sums are not reproducible);
* a line that cannot be read is skipped; the store never raises into scoring (a store that
  cannot be read or written is simply not used: the value is computed).

The store is ``$XDG_CACHE_HOME/pytest-graphinstruct/d3`` (``~/.cache/...``) unless the
environment variable :data:`ENV` names another folder, or says ``off`` (the test suite runs
with it off, so its digests are computed, not read).

The **reference side** — experiment A of every reference and pool graph, which depends on the
suite and its pools only — has a store of its own (:func:`reference_store`:
``.../pytest-graphinstruct/references``, :data:`REFERENCE_ENV`), on even where the result store
is off: it is computed once per suite version and machine and read by every process and later
run (each xdist worker, each CI shard), whatever the answers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import threading
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from types import ModuleType

try:  # POSIX only
    import fcntl
except ImportError:  # pragma: no cover - Windows: appends without a lock
    fcntl = None  # type: ignore[assignment]

ENV = "GI_D3_CACHE"
"""``off`` (or ``0``, ``no``, ``false``): no store; a folder: the store's; unset: the default."""
REFERENCE_ENV = "GI_REFERENCE_CACHE"
"""As :data:`ENV`, for the reference side's store (:func:`reference_store`)."""

_KERNEL_ENV = ("ATEN_CPU_CAPABILITY", "OPENBLAS_CORETYPE", "MKL_CBWR", "DNNL_MAX_CPU_ISA",
               "MKL_ENABLE_INSTRUCTIONS", "NPY_DISABLE_CPU_FEATURES")
_OFF = frozenset({"off", "0", "no", "false"})


class GcnStore:
    """Soft accuracies by key, read from and appended to one file of ``folder`` named by
    ``fingerprint``.  Safe from several threads and processes (appends under ``flock``)."""

    def __init__(self, folder: Path, fingerprint: str) -> None:
        self.path = folder / f"gcn-{fingerprint[:32]}.jsonl"
        self._values: dict[str, float] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"GcnStore({self.path})"

    def get(self, key: str) -> float | None:
        """The stored value of ``key``, or ``None``."""
        with self._lock:
            return self._loaded().get(key)

    def put(self, values: Mapping[str, float]) -> None:
        """Store ``values`` (appended in one write; a failure leaves them unstored)."""
        with self._lock:
            known = self._loaded()
            new = {k: v for k, v in values.items() if k not in known}
            if not new:
                return
            blob = "".join(json.dumps({"k": k, "v": v.hex()}) + "\n" for k, v in new.items())
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                try:
                    if fcntl is not None:
                        fcntl.flock(fd, fcntl.LOCK_EX)
                    os.write(fd, blob.encode("utf-8"))
                finally:
                    os.close(fd)  # releases the lock
            except OSError:
                return
            known.update(new)

    def _loaded(self) -> dict[str, float]:
        if self._values is None:
            self._values = {}
            with contextlib.suppress(OSError):
                for line in self.path.read_text(encoding="utf-8").splitlines():
                    with contextlib.suppress(ValueError, TypeError, KeyError, AttributeError):
                        rec = json.loads(line)
                        self._values[str(rec["k"])] = float.fromhex(rec["v"])
        return self._values


def result_key(kind: str, *parts: object) -> str:
    """The key of one result: sha256 over its kind and parts (bytes as they are, anything
    else by ``repr``)."""
    h = hashlib.sha256(kind.encode("utf-8"))
    for part in parts:
        data = part if isinstance(part, bytes) else repr(part).encode("utf-8")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def fingerprint(modules: tuple[ModuleType, ...]) -> str:
    """What a stored value depends on besides its key (see the module's docstring)."""
    from pytest_graphinstruct.pools.cache import code_fingerprint

    h = hashlib.sha256(code_fingerprint(modules).encode("ascii"))
    for dist in ("torch", "torch_geometric", "numpy", "scipy", "networkx"):
        try:
            h.update(f"{dist}={metadata.version(dist)};".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{dist}=;".encode())
    h.update(_cpu().encode("utf-8"))
    for name in _KERNEL_ENV:
        h.update(f"{name}={os.environ.get(name, '')};".encode())
    return h.hexdigest()


def _cpu() -> str:
    """The CPU's model and instruction-set flags (Linux), else what ``platform`` says."""
    with contextlib.suppress(OSError):
        model = flags = ""
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "model name" and not model:
                model = value.strip()
            elif key in ("flags", "Features") and not flags:
                flags = " ".join(sorted(value.split()))
            if model and flags:
                break
        if model or flags:
            return f"{model}|{flags}"
    return f"{platform.machine()}|{platform.processor()}"


_DEFAULT: dict[tuple[str, str], GcnStore | None] = {}
_DEFAULT_LOCK = threading.Lock()


def default_store(modules: tuple[ModuleType, ...]) -> GcnStore | None:
    """The process's result store as :data:`ENV` says (``None``: off), one per setting."""
    return _configured(modules, ENV, "d3")


def reference_store(modules: tuple[ModuleType, ...]) -> GcnStore | None:
    """The process's store of the reference side as :data:`REFERENCE_ENV` says (``None``:
    off), one per setting."""
    return _configured(modules, REFERENCE_ENV, "references")


def store_folder(env: str = ENV, name: str = "d3") -> Path | None:
    """The folder the environment variable ``env`` gives a store (default: the result
    store's): the folder it names, ``None`` where it says ``off``, unset
    ``$XDG_CACHE_HOME/pytest-graphinstruct/<name>``.

    Raises:
        RuntimeError: unset, and no home folder to put it in.
    """
    setting = os.environ.get(env, "")
    if setting.strip().lower() in _OFF:
        return None
    if setting:
        return Path(setting)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-graphinstruct" / name


def _configured(modules: tuple[ModuleType, ...], env: str, name: str) -> GcnStore | None:
    setting = os.environ.get(env, "")
    with _DEFAULT_LOCK:
        if (env, setting) not in _DEFAULT:
            store: GcnStore | None = None
            try:
                folder = store_folder(env, name)
                if folder is not None:
                    store = GcnStore(folder, fingerprint(modules))
            except (OSError, RuntimeError, KeyError):  # no home folder, unreadable source
                store = None
            _DEFAULT[env, setting] = store
        return _DEFAULT[env, setting]
