"""The one evaluation path, end to end: ``score`` vs ``pytest --gi-replay`` on the same answers,
and what xdist buys the oracle.

1. Writes the official suite's references as recorded answers (``--k`` samples per instruction
   cycling its references, a refusal for an infeasible one: 800 × 5 = 4,000 outputs).
2. Times ``python -m pytest_graphinstruct score`` and ``pytest --gi-replay`` (one process) on
   that file, both with the default pools, and checks the two reports are identical but for
   their ``run`` records.
3. Times the oracle over the project's own 800 instructions with ``-n 0`` and ``-n 2``,
   ``--pairs`` times in turn after one warm-up run, and prints every pair and the median ratio.
4. Before each pair, measures what two processes can gain on this machine at all: a CPU-bound
   loop (no I/O, nothing shared) run alone, then twice at once.  The ceiling is
   ``2 × alone / slower of the two``: 2.0 on two idle physical cores; less on shared vCPUs
   (SMT siblings, a busy host).  The oracle's speed-up is printed beside it.

Prints wall times and the ratios the project holds itself to (replay / score ≤ 1.5;
oracle -n 0 / -n 2 ≥ 1.6 on two cores).  Absolute times on shared machines are noisy.

The child processes run with bytecode caching on, as a user's do: ``PYTHONDONTWRITEBYTECODE``
(set in some sandboxes) is removed from their environment, because with it every process
recompiles the package and pytest rewrites its asserts again (about 3.5 s per process here, paid
once by ``-n 0`` and three times by ``-n 2``).  They run with D3's GCN result store off
(``GI_D3_CACHE=off``): each run scores from scratch, as the first run on a machine does.

Usage::

    python bench/replay_bench.py [--suite DIR] [--k 5] [--pairs 5] [--skip-xdist]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reference_answers import write_recorded

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SUITE = ROOT.parent / "shared/official-suite/instructions"


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
# Every run scores from scratch: D3's GCN result store (score/gcn_store.py) would otherwise
# serve every run after the first (bench/score_rerun.py times that).
ENV["GI_D3_CACHE"] = "off"


def _timed(cmd: list[str], env: dict[str, str] = ENV) -> float:
    """The wall time of ``cmd`` run from the project root; exits with its output if it fails."""
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False, env=env)
    elapsed = time.perf_counter() - t
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout[-2000:]}"
                 f"\n{proc.stderr[-2000:]}")
    return elapsed


SPIN = "x = 0\nfor i in range(25_000_000):\n    x += i\n"


def ceiling() -> float:
    """What two CPU-bound processes gain here over one: ``2 × alone / slower of two``."""
    cmd = [sys.executable, "-c", SPIN]
    alone = _timed(cmd)
    t = time.perf_counter()
    procs = [subprocess.Popen(cmd, env=ENV) for _ in range(2)]
    for proc in procs:
        proc.wait()
    return 2 * alone / (time.perf_counter() - t)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=str(DEFAULT_SUITE))
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--skip-xdist", action="store_true")
    args = ap.parse_args()
    from pytest_graphinstruct.suite.loader import load_suite

    suite = load_suite(args.suite)
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        answers = Path(tmp) / "refs.jsonl"
        write_recorded(answers, suite, args.k)
        a, b = Path(tmp) / "score.json", Path(tmp) / "replay.json"
        t_score = _timed([py, "-m", "pytest_graphinstruct", "score", "--suite", args.suite,
                          "--responses", str(answers), "--report", str(a)])
        t_replay = _timed([py, "-m", "pytest", "instructions", f"--gi-suite={args.suite}",
                           f"--gi-replay={answers}", f"--gi-report={b}", "--gi-violations=report",
                           "-q", "-p", "no:cacheprovider", "-n", "0"])
        reports = [json.loads(f.read_text(encoding="utf-8")) for f in (a, b)]
        for report in reports:  # the run records differ in their times and machine
            report.pop("run", None)
            report.pop("gate", None)  # the run's verdict; score judges nothing
        same = reports[0] == reports[1]
        n = len(suite) * args.k
        print(f"{n} outputs: score {t_score:.1f} s, pytest --gi-replay {t_replay:.1f} s, "
              f"ratio {t_replay / t_score:.2f} (target <= 1.5); reports identical: {same}")
        if not args.skip_xdist:
            base = [py, "-m", "pytest", "instructions", "--gi-model=oracle", "-q",
                    "-p", "no:cacheprovider", "--gi-cache=none"]
            _timed([*base, "--collect-only"])  # warm-up: bytecode caches written
            ratios, ceilings = [], []
            for i in range(args.pairs):
                ceilings.append(ceiling())
                t0 = _timed([*base, "-n", "0"])
                t2 = _timed([*base, "-n", "2"])
                ratios.append(t0 / t2)
                print(f"oracle pair {i + 1}: -n 0 {t0:.1f} s, -n 2 {t2:.1f} s, "
                      f"speed-up {t0 / t2:.2f}; two CPU-bound processes gain "
                      f"{ceilings[-1]:.2f} here", flush=True)
            print(f"oracle, the project's suite: median speed-up over {args.pairs} pairs "
                  f"{statistics.median(ratios):.2f} (target >= 1.6); the machine's median "
                  f"ceiling for two processes {statistics.median(ceilings):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
