"""Would D3's GCN training gain from a thread of its own?  It would train beside the checks
(pure Python) on the second core; this measures what the GIL leaves of that.

Times D3 (features and GCN training) of the first ``--items`` official L3 instructions, their
references as 5 answers each: alone, then while another thread of the same process runs a
pure-Python loop, at each ``--switch`` interval (``sys.setswitchinterval``).  A gain needs the
second time to stay near the first.

Usage::

    python bench/gcn_beside_python.py [--items 60] [--switch 0.005 0.001]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

from reference_answers import CELL, reference_answers

from pytest_graphinstruct.run.evaluate import check
from pytest_graphinstruct.score import d3, gcn
from pytest_graphinstruct.score.instruction_score import d3_results
from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.verify.verifier import Verifier

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SUITE = ROOT.parent / "shared/official-suite/instructions"


def _spin(stop: threading.Event) -> None:
    x = 0
    while not stop.is_set():
        for i in range(10_000):
            x += i


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=str(DEFAULT_SUITE))
    ap.add_argument("--items", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--switch", type=float, nargs="+", default=[0.005, 0.001])
    args = ap.parse_args()
    suite = [i for i in load_suite(args.suite) if i.level == 3][:args.items]
    verifier = Verifier()
    items = [(c.instruction, c.verifications) for c in
             (check(i, reference_answers(i, 5), cell=CELL, verifier=verifier) for i in suite)]
    if gcn.unavailable_reason() is not None:  # imports torch before anything is timed
        sys.exit("torch/torch_geometric are not importable")

    def timed() -> float:
        d3.clear_caches()
        t = time.perf_counter()
        d3_results(items)
        return time.perf_counter() - t

    default = sys.getswitchinterval()
    for interval in args.switch:
        sys.setswitchinterval(interval)
        alone, beside = [], []
        for _ in range(args.rounds):
            alone.append(timed())
            stop = threading.Event()
            spinner = threading.Thread(target=_spin, args=(stop,))
            spinner.start()
            try:
                beside.append(timed())
            finally:
                stop.set()
                spinner.join()
        a, b = statistics.median(alone), statistics.median(beside)
        print(f"switch interval {interval * 1000:g} ms: D3 of {len(items)} L3 items alone "
              f"{a:.2f} s, beside a pure-Python thread {b:.2f} s ({b / a:.1f}×; medians of "
              f"{args.rounds})")
    sys.setswitchinterval(default)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
