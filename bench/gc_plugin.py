"""A pytest plugin for bench/gc_thresholds.py: each process of a run (the single process, the
xdist controller, each worker) appends one JSON line to the file named by ``GI_GC_FILE``: its
role, the seconds spent in garbage collection, the collections of each generation, the
thresholds it ran with and its peak resident memory.  With ``GI_GC_DEFAULTS=1`` it sets
CPython's default thresholds (700, 10, 10) after the benchmark plugin set its own, for the
comparison.  Loaded with ``-p gc_plugin`` (bench/ on PYTHONPATH).
"""

from __future__ import annotations

import gc
import json
import os
import resource
import time
from typing import Any

import pytest
from timeline_plugin import role

_SPENT = {"seconds": 0.0, "started": 0.0}
_COUNTS = [0, 0, 0]


def _callback(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _SPENT["started"] = time.perf_counter()
    else:
        _SPENT["seconds"] += time.perf_counter() - _SPENT["started"]
        _COUNTS[info["generation"]] += 1


gc.callbacks.append(_callback)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("GI_GC_DEFAULTS") == "1":
        gc.set_threshold(700, 10, 10)


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    line = {"role": role(config), "gc_s": _SPENT["seconds"], "collections": list(_COUNTS),
            "thresholds": list(gc.get_threshold()),
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    path = os.environ.get("GI_GC_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
