"""Run numpy's linear algebra on one BLAS thread (tiny matrices: threads are pure overhead).

An eigendecomposition of a 60×60 matrix takes ≈1.5 ms with OpenBLAS's default two threads on a
2-core machine and ≈0.25 ms with one; a single thread also makes the results independent of the
machine's core count.  numpy has no API for this, so :func:`single_blas_thread` calls the
thread setter exported by the OpenBLAS library bundled in numpy's wheel (found next to the
package, loaded by numpy already).  When no such library is found (a numpy built on MKL or a
system BLAS), it does nothing — set ``OPENBLAS_NUM_THREADS=1``/``MKL_NUM_THREADS=1`` instead.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import threading
from collections.abc import Iterator
from typing import Any

_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
            "openblas_set_num_threads64_", "openblas_set_num_threads")
_GETTERS = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
            "openblas_get_num_threads64_", "openblas_get_num_threads")

_lock = threading.RLock()
_depth = 0
_saved = 0
_api: tuple[Any, Any] | bool | None = False  # False: not looked up yet


def _find() -> tuple[Any, Any] | None:
    import numpy

    root = os.path.dirname(numpy.__file__)
    patterns = [os.path.join(root, "..", "numpy.libs", "*openblas*"),
                os.path.join(root, ".dylibs", "*openblas*")]
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for set_name, get_name in zip(_SETTERS, _GETTERS, strict=True):
                setter = getattr(lib, set_name, None)
                getter = getattr(lib, get_name, None)
                if setter is not None and getter is not None:
                    setter.argtypes = [ctypes.c_int]
                    getter.restype = ctypes.c_int
                    return setter, getter
    return None


def blas_threads() -> int | None:
    """The current OpenBLAS thread count, or ``None`` when the library was not found."""
    global _api
    with _lock:
        if _api is False:
            _api = _find()
        if not _api:
            return None
        return int(_api[1]())  # type: ignore[index]


@contextlib.contextmanager
def single_blas_thread() -> Iterator[None]:
    """numpy's OpenBLAS on one thread inside the block (re-entrant; restored afterwards)."""
    global _depth, _saved
    current = blas_threads()
    if current is None:
        yield
        return
    assert _api
    setter = _api[0]  # type: ignore[index]
    with _lock:
        if _depth == 0:
            _saved = current
            if current != 1:
                setter(1)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved != 1:
                setter(_saved)
