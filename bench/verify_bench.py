"""Verifier throughput on the official references (single process).

Feeds both references of every feasible instruction of the official suite to the verifier as if
they were model answers (parse + every check), and prints answers per second, split into
parsing and checking, with the median of several rounds (absolute timings on shared machines
are noisy; compare ratios and medians).

Usage::

    python bench/verify_bench.py [--suite ../shared/official-suite/instructions] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from pytest_graphinstruct.graphs.parse import parse_answer
from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.verify.tasks import NODE_REMOVING_TASKS
from pytest_graphinstruct.verify.verifier import Verifier

DEFAULT_SUITE = Path(__file__).resolve().parents[1].parent / "shared/official-suite/instructions"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=str(DEFAULT_SUITE))
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if not Path(args.suite).is_dir():
        print(f"suite not found: {args.suite}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    suite = load_suite(args.suite)
    load_s = time.perf_counter() - t0
    work = [(inst, ref) for inst in suite for ref in inst.references]
    verifier = Verifier()

    parse_times, total_times = [], []
    passed = 0
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        for inst, ref in work:
            parse_answer(ref, base=inst.base, drop_isolated=inst.task_type in NODE_REMOVING_TASKS)
        parse_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        passed = sum(verifier.verify(inst, ref).passed for inst, ref in work)
        total_times.append(time.perf_counter() - t0)

    n = len(work)
    parse_s = statistics.median(parse_times)
    total_s = statistics.median(total_times)
    print(f"suite load (800 instructions, constraints + L5 base graphs parsed): {load_s:.2f} s")
    print(f"answers: {n} (both references of every feasible instruction), rounds: {args.rounds}")
    print(f"parse only:        {n / parse_s:8.0f} answers/s  (median {parse_s:.3f} s)")
    print(f"parse + all checks:{n / total_s:8.0f} answers/s  (median {total_s:.3f} s)")
    print(f"checking share of verify time: {max(0.0, total_s - parse_s) / total_s:.0%}")
    print(f"answers passing every verdict: {passed}/{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
