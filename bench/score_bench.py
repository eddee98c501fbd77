"""Scoring throughput: the official references scored as model answers, all five dimensions.

k samples per instruction cycle its two references (a refusal for each infeasible instruction),
so 800 instructions × k=5 gives 4,000 outputs.  Prints outputs/second, the time per stage
(verification = parsing + every check, then D1–D5) and peak memory (the process's max RSS;
``--tracemalloc`` also traces Python allocations, at a large slowdown).  Single process.

Then the same answers go through the one evaluation path the plugin and the ``score`` command
use (:func:`pytest_graphinstruct.run.evaluate.check` and ``score``: all five dimensions and
the level scores, D3 batched) and its time is printed beside the per-dimension total.

Usage::

    python bench/score_bench.py [--suite DIR] [--k 5] [--pools DIR]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.score.d1 import instruction_d1
from pytest_graphinstruct.score.d2 import instruction_d2
from pytest_graphinstruct.score.d3 import instructions_d3
from pytest_graphinstruct.score.d4 import instruction_d4, is_valid
from pytest_graphinstruct.score.d5 import Spend, infeasible_d5, instruction_d5
from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.verify.verifier import Verifier

DEFAULT_SUITE = Path(__file__).resolve().parents[1].parent / "shared/official-suite/instructions"
REFUSAL = "No such graph exists: the constraints are contradictory, so this is infeasible."


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=str(DEFAULT_SUITE))
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--pools", default=None, help="reference pools for D1's MMD")
    ap.add_argument("--tracemalloc", action="store_true",
                    help="also trace Python allocations (slows everything down ~2x)")
    args = ap.parse_args()
    if not Path(args.suite).is_dir():
        print(f"suite not found: {args.suite}", file=sys.stderr)
        return 2
    if args.tracemalloc:
        tracemalloc.start()
    t_all = time.perf_counter()
    suite = load_suite(args.suite)
    pools = None
    if args.pools:
        from pytest_graphinstruct.pools import ReferencePools

        pools = ReferencePools.load(args.pools, cache_dir=Path(args.pools) / ".cache")
    verifier = Verifier()
    times: dict[str, float] = dict.fromkeys(("verify", "D1", "D2", "D3", "D4", "D5"), 0.0)
    items = []
    t0 = time.perf_counter()
    for inst in suite:
        raws = list(inst.references) or [REFUSAL]
        texts = [raws[i % len(raws)] for i in range(args.k)]
        answers = [Answer(text=t, usage=Usage(400, len(t) // 4), calls=1) for t in texts]
        items.append((inst, answers, [verifier.verify(inst, t) for t in texts]))
    times["verify"] = time.perf_counter() - t0
    n = len(items) * args.k

    def timed(name: str, fn) -> None:  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        fn()
        times[name] += time.perf_counter() - t

    timed("D1", lambda: [instruction_d1(i, v, pools) for i, _, v in items])
    timed("D2", lambda: [instruction_d2(i, v) for i, _, v in items if i.level == 4])
    timed("D3", lambda: instructions_d3([(i, v) for i, _, v in items if i.level >= 3]))
    timed("D4", lambda: [instruction_d4(i, v) for i, _, v in items])

    def d5() -> None:
        for inst, answers, verifs in items:
            spends = [Spend.of_answer(a) for a in answers]
            if inst.feasible:
                instruction_d5(spends, sum(1 for v in verifs if is_valid(v)))
            else:
                infeasible_d5(spends, sum(1 for v in verifs if v.parse.refusal), len(verifs))

    timed("D5", d5)
    total = time.perf_counter() - t_all
    from pytest_graphinstruct.run import evaluate
    from pytest_graphinstruct.run.config import Cell
    from pytest_graphinstruct.score import d3 as d3_module

    d3_module.clear_caches()  # the path must not reuse the features computed above
    t_path = time.perf_counter()
    checked = [evaluate.check(i, a, cell=Cell("bench", "zero-shot"), verifier=verifier)
               for i, a, _ in items]
    t_checked = time.perf_counter()
    results = evaluate.score(checked, pools)
    t_scored = time.perf_counter()
    assert len(results) == len(items)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"outputs: {n} ({len(items)} instructions × k={args.k}); pools: {args.pools or 'none'}")
    print(f"total (incl. suite load and imports after start): {total:.1f} s "
          f"-> {n / total:.0f} outputs/s")
    for name, t in times.items():
        print(f"  {name:7s} {t:7.2f} s  ({t / total:5.1%})")
    print(f"peak memory: max RSS {rss:.0f} MiB")
    print(f"the evaluation path (run.evaluate): {t_scored - t_path:.1f} s for {n} outputs "
          f"(check {t_checked - t_path:.1f} s, score {t_scored - t_checked:.1f} s)")
    if args.tracemalloc:
        _, peak = tracemalloc.get_traced_memory()
        print(f"peak traced Python allocations {peak / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
