"""How often the garbage collector runs while a benchmark run or ``score`` works.

A run builds a heap of hundreds of thousands of long-lived objects (the suite, the pools,
parsed graphs, caches) that seldom form garbage cycles.  With CPython's default thresholds
(700, 10, 10) the collector ran ~1,800 young and 9 full collections in one process's run of the
oracle over the 800 instructions (0.9 s of a 7.6 s run), each full one walking the whole heap
again as it grew; with :data:`THRESHOLDS`, 66-110 young and one or two full ones (0.2-0.4 s)
at the same peak memory (``python bench/gc_thresholds.py``).  Objects are still freed by
reference counting the moment they are dropped; only reference cycles wait longer.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLDS = (10_000, 20, 20)
"""The collector's thresholds while a run works (``gc.set_threshold``)."""


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Within the block the collector runs with :data:`THRESHOLDS`; after it, with the
    thresholds it had before (whatever the block raised)."""
    before = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
