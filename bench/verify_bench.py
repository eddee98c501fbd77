"""Verifier throughput on the official references (single process).

Feeds both references of every feasible instruction of the official suite to the verifier as if
they were model answers (parse + every check), and prints answers per second, split into
parsing and checking, with the median of several rounds (absolute timings on shared machines
are noisy; compare ratios and medians), and a digest of every verdict.

With ``--against DIR`` (another checkout, e.g. a worktree of ``main``), both checkouts are timed
in alternating processes, ``--rounds`` each, and the ratios of their medians are printed beside
both verdict digests (equal digests: the same verdicts, texts and scores to the last digit).

Usage::

    python bench/verify_bench.py [--suite ../shared/official-suite/instructions] [--rounds 3]
                                 [--against DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from pytest_graphinstruct.graphs.parse import parse_answer
from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.verify.tasks import NODE_REMOVING_TASKS
from pytest_graphinstruct.verify.verifier import Verifier

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SUITE = ROOT.parent / "shared/official-suite/instructions"


def _measure(suite_dir: str, rounds: int) -> dict[str, float | int | str]:
    """Times of this process's checkout: suite load, median parse and parse + checks."""
    t0 = time.perf_counter()
    suite = load_suite(suite_dir)
    load_s = time.perf_counter() - t0
    work = [(inst, ref) for inst in suite for ref in inst.references]
    verifier = Verifier()
    parse_times, total_times = [], []
    passed = 0
    digest = ""
    for _ in range(rounds):
        t0 = time.perf_counter()
        for inst, ref in work:
            parse_answer(ref, base=inst.base, drop_isolated=inst.task_type in NODE_REMOVING_TASKS)
        parse_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        results = [verifier.verify(inst, ref) for inst, ref in work]
        total_times.append(time.perf_counter() - t0)
        passed = sum(v.passed for v in results)
        digest = hashlib.sha256(
            "\n".join(repr(v.verdicts) for v in results).encode()).hexdigest()[:16]
    return {"load_s": load_s, "answers": len(work), "parse_s": statistics.median(parse_times),
            "total_s": statistics.median(total_times), "passed": passed, "digest": digest}


def _print(figures: dict[str, float | int | str], rounds: int) -> None:
    n, parse_s, total_s = figures["answers"], figures["parse_s"], figures["total_s"]
    assert isinstance(n, int) and isinstance(parse_s, float) and isinstance(total_s, float)
    print(f"suite load (800 instructions, constraints + L5 base graphs parsed): "
          f"{figures['load_s']:.2f} s")
    print(f"answers: {n} (both references of every feasible instruction), rounds: {rounds}")
    print(f"parse only:        {n / parse_s:8.0f} answers/s  (median {parse_s:.3f} s)")
    print(f"parse + all checks:{n / total_s:8.0f} answers/s  (median {total_s:.3f} s)")
    print(f"checking share of verify time: {max(0.0, total_s - parse_s) / total_s:.0%}")
    print(f"answers passing every verdict: {figures['passed']}/{n}; "
          f"verdict digest {figures['digest']}")


def _measure_in(checkout: Path, suite_dir: str) -> dict[str, float | int | str]:
    """One round measured by this bench in a fresh interpreter importing ``checkout``."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--suite", suite_dir,
                           "--rounds", "1", "--json"], env=env, cwd=checkout,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"timing in {checkout} failed:\n{proc.stderr[-2000:]}")
    figures: dict[str, float | int | str] = json.loads(proc.stdout)
    return figures


def _compare(against: Path, suite_dir: str, rounds: int) -> None:
    sides = {"this checkout": ROOT, "against": against.resolve()}
    runs: dict[str, list[dict[str, float | int | str]]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, checkout in sides.items():
            runs[name].append(_measure_in(checkout, suite_dir))
    medians = {}
    for name, checkout in sides.items():
        parse_s = statistics.median(float(r["parse_s"]) for r in runs[name])
        total_s = statistics.median(float(r["total_s"]) for r in runs[name])
        digests = sorted({str(r["digest"]) for r in runs[name]})
        medians[name] = (parse_s, total_s)
        print(f"{name} ({checkout}): median parse {parse_s:.3f} s, parse + all checks "
              f"{total_s:.3f} s, checks {total_s - parse_s:.3f} s; passing "
              f"{runs[name][0]['passed']}/{runs[name][0]['answers']}; verdict digest "
              f"{', '.join(digests)}")
    (p1, t1), (p0, t0) = medians["this checkout"], medians["against"]
    same = {str(r["digest"]) for rs in runs.values() for r in rs}
    print(f"speed-up (against / this, medians of {rounds} alternating processes each): "
          f"parse {p0 / p1:.2f}x, checks {(t0 - p0) / (t1 - p1):.2f}x, parse + all checks "
          f"{t0 / t1:.2f}x; verdicts {'identical' if len(same) == 1 else 'DIFFER'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--suite", default=str(DEFAULT_SUITE))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--against", type=Path, default=None,
                    help="another checkout to time side by side (e.g. a worktree of main)")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not Path(args.suite).is_dir():
        print(f"suite not found: {args.suite}", file=sys.stderr)
        return 2
    if args.against is not None:
        _compare(args.against, str(Path(args.suite).resolve()), args.rounds)
        return 0
    figures = _measure(args.suite, args.rounds)
    if args.json:
        print(json.dumps(figures))
    else:
        _print(figures, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
