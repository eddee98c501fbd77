"""Reading and writing a report: ``RunReport.from_json`` and ``to_json`` on an 800-item run.

1. Builds the JSON of an 800-item, 3-sample, one-cell report from the pinned oracle and replay
   reports (``tests/plugin/pinned``: passed and failed items, violation details, raw answers,
   D1 diagnostics), each item's sample written three times and every instruction id distinct.
2. Times ``RunReport.from_json`` on the parsed object (read) and ``to_json`` on the record
   (write), ``--repeats`` times each, in a fresh interpreter with this checkout first on
   ``PYTHONPATH``, and prints the medians.  JSON text parsing and dumping are left out: they
   are the same whatever writes the objects.
3. With ``--against DIR`` (another checkout, e.g. the hand-written code before the codec:
   ``git worktree add --detach /work/precodec 92d7649^``), times the same JSON there the same
   way and prints this checkout's time over that one's (≤ 1: no slower).  Each side also says
   whether what it wrote is the JSON it read.

Absolute times on shared machines are noisy; the two sides run alternately, ``--rounds`` times.

Usage::

    python bench/report_io.py [--against DIR] [--repeats 7] [--rounds 3]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PINNED = ROOT / "tests" / "plugin" / "pinned"


def synthetic_report(items: int = 800, samples: int = 3, *, loci: bool = True) -> dict[str, Any]:
    """The JSON object of a one-cell report of ``items`` items with ``samples`` samples each,
    its items cycled from the pinned reports' (ids made distinct); without ``loci``, every
    violation's ``where`` is empty."""
    oracle = json.loads((PINNED / "oracle.json").read_text(encoding="utf-8"))
    replay = json.loads((PINNED / "replay.json").read_text(encoding="utf-8"))
    pool = [*replay["cells"][0]["per_instruction"], *oracle["cells"][0]["per_instruction"]]
    cell = replay["cells"][0]
    rows = []
    for k in range(items):
        item = copy.deepcopy(pool[k % len(pool)])
        item["instruction_id"] = f"{item['instruction_id']}-{k:04d}"
        item["cell"] = cell["metadata"]["model"] + "-" + cell["metadata"]["strategy"]
        item["model"], item["strategy"] = cell["metadata"]["model"], cell["metadata"]["strategy"]
        item["samples"] = [copy.deepcopy(item["samples"][0]) for _ in range(samples)]
        for sample in item["samples"] if not loci else ():
            for detail in sample["violation_details"]:
                detail["where"] = {}
        rows.append(item)
    head = {k: v for k, v in replay.items() if k not in ("gate", "pareto", "cells")}
    return {**head, "run": None, "gate": replay["gate"], "pareto": replay["pareto"],
            "cells": [{**cell, "per_instruction": rows}]}


def _time_here(path: Path, repeats: int) -> dict[str, Any]:
    """Times ``from_json`` and ``to_json`` with whatever ``pytest_graphinstruct`` is first on
    the path (the subprocess side of :func:`_time_in`)."""
    from pytest_graphinstruct.run.records.results import RunReport

    data = json.loads(path.read_text(encoding="utf-8"))
    reads, writes = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        report = RunReport.from_json(data)
        reads.append(time.perf_counter() - t)
        t = time.perf_counter()
        written = report.to_json()
        writes.append(time.perf_counter() - t)
    return {"read": statistics.median(reads), "write": statistics.median(writes),
            "read_min": min(reads), "write_min": min(writes), "same": written == data}


def _time_in(checkout: Path, path: Path, repeats: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--time", str(path),
                           "--repeats", str(repeats)], env=env, cwd=checkout,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"timing in {checkout} failed:\n{proc.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(proc.stdout)
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--against", type=Path, default=None,
                    help="another checkout to time the same JSON in (e.g. 92d7649^)")
    ap.add_argument("--repeats", type=int, default=7, help="reads and writes per interpreter")
    ap.add_argument("--rounds", type=int, default=3, help="interpreters per side")
    ap.add_argument("--no-loci", action="store_true", help="empty every violation's where "
                    "(the codec's own share: reading a locus is verify.locus's work)")
    ap.add_argument("--time", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.time is not None:
        print(json.dumps(_time_here(args.time, args.repeats)))
        return
    sides = {"this checkout": ROOT}
    if args.against is not None:
        sides["against"] = args.against.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.json"
        data = synthetic_report(loci=not args.no_loci)
        path.write_text(json.dumps(data), encoding="utf-8")
        n = len(data["cells"][0]["per_instruction"])
        print(f"report: {n} items, 3 samples each, {path.stat().st_size / 1e6:.1f} MB of JSON")
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
        for _ in range(args.rounds):
            for name, checkout in sides.items():
                runs[name].append(_time_in(checkout, path, args.repeats))
    medians = {}
    for name, checkout in sides.items():
        read = statistics.median(r["read"] for r in runs[name])
        write = statistics.median(r["write"] for r in runs[name])
        medians[name] = (read, write)
        least = (min(r["read_min"] for r in runs[name]), min(r["write_min"] for r in runs[name]))
        same = "writes what it read" if all(r["same"] for r in runs[name]) else \
            "writes other JSON than it read"
        print(f"{name} ({checkout}): median read {read:.3f} s, write {write:.3f} s; least "
              f"{least[0]:.3f} s, {least[1]:.3f} s ({same})")
    if args.against is not None:
        (r1, w1), (r0, w0) = medians["this checkout"], medians["against"]
        print(f"ratio (this / against): read {r1 / r0:.2f}, write {w1 / w0:.2f}")


if __name__ == "__main__":
    main()
