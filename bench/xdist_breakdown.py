"""Where an xdist run's time goes: the oracle over the project's 800 instructions with ``-n 0``
and ``-n 2``, each process's phases stamped by bench/timeline_plugin.py, beside the two-process
ceiling measured in the same run (bench/replay_bench.py's ``ceiling``).

For each pair (after one warm-up run that writes the bytecode caches) it prints the wall times,
the speed-up and its ratio to the ceiling measured just before the pair, then, for the median
pair, the breakdown of the ``-n 2`` run against the ``-n 0`` run:

* *start*: process start to the first item (imports, plugin configure, collection; under xdist
  the controller's own start before it spawns the workers, then each worker's);
* *items*: first item to last report (the items, and the scoring batches flushed between them);
* *finish*: the worker's ``pytest_sessionfinish`` (its last scoring batch, its payload) and the
  controller's (the report, the verdict, the outputs) and the exits;
* *idle*: how long each worker waited at the end for the other (imbalance).

It prints the ideal ``-n 2`` time (the ``-n 0`` run's phases with the items split evenly, the
start and finish paid once each) so the loss is attributed: what the duplicated start, the
imbalance and the controller cost.  Usage::

    python bench/xdist_breakdown.py [--pairs 3] [--levels 0,1,2,3,4,5] [--samples 5]

Absolute times on shared machines are noisy; the ratios of the same pair are the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from replay_bench import ENV, _timed, ceiling

BENCH = Path(__file__).resolve().parent


def _run(workers: int, timeline: Path, extra: list[str]) -> float:
    """One oracle run; its wall time (its processes append their phases to ``timeline``)."""
    env = dict(ENV)
    env["GI_TIMELINE_FILE"] = str(timeline)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BENCH), env.get("PYTHONPATH")]))
    cmd = [sys.executable, "-m", "pytest", "instructions", "--gi-model=oracle", "-q",
           "-p", "no:cacheprovider", "--gi-cache=none", "-p", "timeline_plugin",
           "-n", str(workers), *extra]
    return _timed(cmd, env)


def _phases(timeline: Path, launched: float) -> dict[str, dict[str, float]]:
    """Per process role: its phase marks as seconds since the command was launched, and its CPU
    seconds by each mark under ``cpu:<mark>``."""
    rows = [json.loads(line) for line in timeline.read_text().splitlines() if line.strip()]
    phases: dict[str, dict[str, float]] = {}
    for r in rows:
        marks = {k: float(v) - launched for k, v in r.items()
                 if isinstance(v, float) and k not in ("pid",)}
        marks.update({f"cpu:{k}": float(v) for k, v in r.get("cpu", {}).items()})
        phases[r["role"]] = marks
    return phases


def _timed_run(workers: int, extra: list[str]) -> tuple[float, dict[str, dict[str, float]]]:
    with tempfile.TemporaryDirectory() as tmp:
        timeline = Path(tmp) / "timeline.jsonl"
        launched = time.time()
        wall = _run(workers, timeline, extra)
        return wall, _phases(timeline, launched)


def _show(label: str, wall: float, phases: dict[str, dict[str, float]]) -> None:
    print(f"  {label}: wall {wall:.2f} s")
    end_items = max(p.get("last_report", 0.0) for p in phases.values())
    for role in sorted(phases, key=lambda r: phases[r].get("process_start", 0.0)):
        p = phases[role]
        start = p.get("process_start", 0.0)
        first = p.get("first_item", p.get("first_report", start))
        last = p.get("last_report", first)
        finish_end = p.get("sessionfinish_end", last)
        idle = ""
        if role.startswith("gw"):
            idle = f", idle at the end {max(0.0, end_items - finish_end):.2f}"
        print(f"    {role:<10} started at {start:5.2f}; start {first - start:5.2f}, "
              f"items {last - first:6.2f}, finish "
              f"{p.get('sessionfinish_end', last) - p.get('sessionfinish_start', last):5.2f}"
              f", exit at {p.get('unconfigure', finish_end):6.2f}{idle}")
        cpu_first = p.get("cpu:first_item", p.get("cpu:first_report", 0.0))
        cpu_last = p.get("cpu:last_report", cpu_first)
        cpu_end = p.get("cpu:unconfigure", cpu_last)
        print(f"    {'':<10} CPU s: start {cpu_first:5.2f}, items {cpu_last - cpu_first:6.2f}, "
              f"after the last item {cpu_end - cpu_last:5.2f}, total {cpu_end:6.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--levels", default=None, help="--gi-levels for the runs (default: all)")
    ap.add_argument("--samples", type=int, default=None,
                    help="--gi-samples for the runs (default: the plugin's, one; the paper: 5)")
    args = ap.parse_args()
    extra = [f"--gi-levels={args.levels}"] if args.levels else []
    if args.samples is not None:
        extra.append(f"--gi-samples={args.samples}")
    _run(0, Path(tempfile.gettempdir()) / f"gi_warmup_{os.getpid()}.jsonl", extra)
    pairs: list[tuple[float, float, float, Any, Any]] = []
    for i in range(args.pairs):
        ceil = ceiling()
        w0, p0 = _timed_run(0, extra)
        w2, p2 = _timed_run(2, extra)
        pairs.append((w0 / w2, ceil, w0, (w0, p0), (w2, p2)))
        print(f"pair {i + 1}: -n 0 {w0:.2f} s, -n 2 {w2:.2f} s, speed-up {w0 / w2:.2f}; "
              f"ceiling {ceil:.2f}; ratio to the ceiling {w0 / w2 / ceil:.2f}", flush=True)
    pairs.sort(key=lambda p: p[0] / p[1])
    speed, ceil, _, (w0, p0), (w2, p2) = pairs[len(pairs) // 2]
    print(f"median pair: speed-up {speed:.2f}, ceiling {ceil:.2f}, ratio {speed / ceil:.2f} "
          f"(target >= 0.85); over all pairs the median ratio is "
          f"{statistics.median(p[0] / p[1] for p in pairs):.2f}")
    _show("-n 0", w0, p0)
    _show("-n 2", w2, p2)
    single = p0.get("single", {})
    if single:
        start = single["first_item"] - single["process_start"]
        items = single["last_report"] - single["first_item"]
        finish = w0 - (single["last_report"] - single["process_start"])
        ideal = start + items / 2 + finish
        print(f"  ideal -n 2 from the -n 0 phases (start and finish once, items halved): "
              f"{ideal:.2f} s -> speed-up {w0 / ideal:.2f}; at the ceiling {ceil:.2f}: "
              f"{start + items / ceil + finish:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
