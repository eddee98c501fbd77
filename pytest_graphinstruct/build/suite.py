"""Assembling a whole suite: six levels of instructions plus the reference pools, on disk.

:func:`build_suite` writes ``<out>/instructions/level_0.json`` … ``level_5.json`` (the
GraphInstruct schema, references inline as ``reference_solutions``), a
``<out>/instructions/manifest.json`` (seed, counts per level and size bucket, sha256 of each
level file) and the pools under ``<out>/references/pools``.  With the default seed the output
equals the committed ``instructions/`` and ``references/`` byte for byte; any other seed gives a
fresh suite with the same stratification.  The pools are the scoring yardstick and are always
built with the pool seed (:data:`~pytest_graphinstruct.build.pools.DEFAULT_SEED`): L3
and L4 targets are calibrated against exactly those graphs, whatever the suite seed.  Files
are written atomically (temporary file, then rename), so an interrupted build never leaves a
half-written level file.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.vocab import SIZE_BUCKETS

DEFAULT_SEED = 0
#: Instructions per level at the default size (the paper's counts).
LEVEL_COUNTS: dict[int, int] = {0: 100, 1: 200, 2: 200, 3: 150, 4: 100, 5: 50}
SCHEMA_VERSION = 1


def level_builder(level: int) -> Callable[[int, int], list[dict[str, Any]]]:
    """The ``build_level<L>(seed, count)`` function of ``level`` (imported lazily)."""
    f: Callable[[int, int], list[dict[str, Any]]]
    if level == 0:
        from pytest_graphinstruct.build.level0 import build_level0 as f
    elif level == 1:
        from pytest_graphinstruct.build.level1 import build_level1 as f
    elif level == 2:
        from pytest_graphinstruct.build.level2 import build_level2 as f
    elif level == 3:
        from pytest_graphinstruct.build.level3 import build_level3 as f
    elif level == 4:
        from pytest_graphinstruct.build.level4 import build_level4 as f
    elif level == 5:
        from pytest_graphinstruct.build.level5 import build_level5 as f
    else:
        raise GraphInstructError(f"unknown level {level!r}: levels are 0-5")
    return f


def level_json(records: list[dict[str, Any]]) -> str:
    """The exact text of a level file: 2-space indented JSON, UTF-8, trailing newline."""
    return json.dumps(records, indent=2, ensure_ascii=False) + "\n"


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _buckets(records: Iterable[dict[str, Any]]) -> dict[str, int]:
    out = dict.fromkeys(SIZE_BUCKETS, 0)
    for r in records:
        out[r["graph_sizes"][0]] += 1
    return out


def build_suite(out_dir: str | Path, seed: int = DEFAULT_SEED, *, l5_size: int | None = None,
                levels: Iterable[int] | None = None, pools: bool = True,
                progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build the suite under ``out_dir`` and return its manifest.

    Args:
        out_dir: target root; ``instructions/`` and ``references/pools/`` are created in it.
        seed: suite seed (default 0, the committed suite).
        l5_size: L5 instruction count (default 50; the paper's future work proposes 150).
        levels: build only these levels (default all six); the manifest lists what was built.
        pools: also (re)build ``references/pools`` (always the pool seed, see above).
        progress: called with one line per finished step.

    Raises:
        GraphInstructError: bad arguments; BuildError when a template fails (a bug).
    """
    counts = dict(LEVEL_COUNTS)
    if l5_size is not None:
        if l5_size < 3:
            raise GraphInstructError(f"--l5-size must be at least 3, got {l5_size}")
        counts[5] = l5_size
    wanted = sorted(set(levels)) if levels is not None else sorted(counts)
    for lv in wanted:
        if lv not in counts:
            raise GraphInstructError(f"unknown level {lv!r}: levels are 0-5")
    out = Path(out_dir)
    inst_dir = out / "instructions"
    inst_dir.mkdir(parents=True, exist_ok=True)
    say = progress or (lambda _line: None)
    manifest: dict[str, Any] = {"schema": SCHEMA_VERSION, "seed": seed, "levels": {}}
    if levels is not None or l5_size is not None:
        manifest["partial"] = {"levels": wanted, "l5_size": counts[5]}
    started = time.perf_counter()
    for lv in wanted:
        t0 = time.perf_counter()
        records = level_builder(lv)(seed, counts[lv])
        text = level_json(records)
        _write_atomic(inst_dir / f"level_{lv}.json", text)
        manifest["levels"][str(lv)] = {
            "instructions": len(records),
            "feasible": sum(1 for r in records if r["feasible"]),
            "references": sum(len(r["reference_solutions"]) for r in records),
            "size_buckets": _buckets(records),
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        }
        say(f"level {lv}: {len(records)} instructions in {time.perf_counter() - t0:.1f} s")
    _write_atomic(inst_dir / "manifest.json",
                  json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    if pools:
        from pytest_graphinstruct.build.pools import DEFAULT_SEED as POOL_SEED
        from pytest_graphinstruct.build.pools import build_pools

        t0 = time.perf_counter()
        build_pools(out / "references" / "pools", seed=POOL_SEED)
        say(f"pools: built in {time.perf_counter() - t0:.1f} s")
    manifest["seconds"] = round(time.perf_counter() - started, 1)
    return manifest
