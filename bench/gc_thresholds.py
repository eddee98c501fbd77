"""What the run's garbage-collector policy (``pytest_graphinstruct/run/gc_policy.py``) saves:
the oracle over the project's 800 instructions, D3's store off, with ``-n 0`` and ``-n 2``,
each with CPython's default thresholds (700, 10, 10) and with the policy's, in turn.

Each process stamps its collection time, its collections per generation and its peak memory
through bench/gc_plugin.py.  Prints, per configuration, the median wall time, the seconds
each process spent collecting and its collections, and the peak memory; then the ratio of the
medians.  Usage::

    python bench/gc_thresholds.py [--rounds 3] [--levels 0,1,2,3,4,5]

Absolute times on shared machines are noisy; compare the configurations of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from replay_bench import ENV, _timed

BENCH = Path(__file__).resolve().parent


def _run(workers: int, defaults: bool, extra: list[str]) -> tuple[float, list[dict[str, object]]]:
    """One oracle run: its wall time and what each of its processes stamped."""
    with tempfile.TemporaryDirectory() as tmp:
        stamps = Path(tmp) / "gc.jsonl"
        env = dict(ENV)
        env["GI_GC_FILE"] = str(stamps)
        env["GI_GC_DEFAULTS"] = "1" if defaults else "0"
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BENCH), env.get("PYTHONPATH")]))
        cmd = [sys.executable, "-m", "pytest", "instructions", "--gi-model=oracle", "-q",
               "-p", "no:cacheprovider", "--gi-cache=none", "-p", "gc_plugin",
               "-n", str(workers), *extra]
        wall = _timed(cmd, env)
        rows = [json.loads(line) for line in stamps.read_text().splitlines() if line.strip()]
        return wall, sorted(rows, key=lambda r: str(r["role"]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--levels", default=None, help="--gi-levels for the runs (default: all)")
    args = ap.parse_args()
    extra = [f"--gi-levels={args.levels}"] if args.levels else []
    _run(0, False, extra)  # writes the bytecode caches
    configs = [(w, d) for w in (0, 2) for d in (True, False)]
    walls: dict[tuple[int, bool], list[float]] = {c: [] for c in configs}
    last: dict[tuple[int, bool], list[dict[str, object]]] = {}
    for _ in range(args.rounds):
        for config in configs:
            wall, rows = _run(*config, extra)
            walls[config].append(wall)
            last[config] = rows
    for workers, defaults in configs:
        label = f"-n {workers}, {'CPython defaults' if defaults else 'the run policy'}"
        med = statistics.median(walls[(workers, defaults)])
        print(f"{label}: wall median {med:.2f} s "
              f"({', '.join(f'{w:.2f}' for w in walls[(workers, defaults)])})")
        for row in last[(workers, defaults)]:
            print(f"    {row['role']:<10} collecting {row['gc_s']:.2f} s, collections "
                  f"{row['collections']} at thresholds {row['thresholds']}, peak "
                  f"{row['peak_mib']:.0f} MiB")
    for workers in (0, 2):
        old = statistics.median(walls[(workers, True)])
        new = statistics.median(walls[(workers, False)])
        print(f"-n {workers}: the policy's wall / the defaults' = {new / old:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
