"""Scoring throughput: the official references scored as model answers, all five dimensions.

k samples per instruction cycle its two references (a refusal for each infeasible instruction;
``bench/reference_answers.py``), so 800 instructions × k=5 gives 4,000 outputs.  Prints
outputs/second, the time per stage (verification = parsing + every check, then D1–D5) and peak
memory (the process's max RSS; ``--tracemalloc`` also traces Python allocations, at a large
slowdown).  Single process.

The stages are split further by timing the functions they call (a wrapper each, about a
microsecond a call): verification into parsing, the checks by constraint key (the first check
that needs a shared fact of the graph pays for it: ``modularity``'s communities are its own),
the no-contradiction checks, the L5 task checks and the rest; D3 into the import of its backend
(``gcn.unavailable_reason``, where D3 first imports torch and torch_geometric), GCN training
(``gcn.soft_accuracies``) and the rest (spectra, Grassmann, embedding MMD).

Then the same answers go through the one evaluation path the plugin and the ``score`` command
use (:func:`pytest_graphinstruct.run.evaluate.check` and ``score``: all five dimensions and
the level scores, D3 batched) and its time is printed beside the per-dimension total; its report
is built, written and read back (timed), and compared with the committed pins
(``tests/run/score_digest.json``) when the configuration is the pinned one (k=5,
``--pools project``, the official suite): within the pins' tolerances, and to the last digit
where the pins were written on this machine and the bench runs in their kernel environment
(``reference_answers.PINNED_ENV``; natively the last digits of D3 differ, ~1e-8 at most).

Last, the paper's study (262,000 answers, score only) is projected from the measured rates: the
fixed cost of a process (imports, suite, pools, D3's backend) plus the evaluation path's time
per answer; one process, ``-n 2`` here (the item work divided by the two-process ceiling
measured at the end of the run, and by ``--xdist-speedup`` when given: the oracle's speed-up
``bench/replay_bench.py`` measured), and K shards of the ci/ kit (one process per shard job,
as the kit runs them; a runner core taken as fast as one here), merged by one job that reads
the K reports and writes one.

The whole bench runs with the garbage collector's thresholds of a run
(:mod:`pytest_graphinstruct.run.gc_policy`), as the ``score`` command and the plugin do.

Usage::

    python bench/score_bench.py [--suite DIR] [--k 5] [--pools DIR|project]
        [--xdist-speedup S] [--release-s SECONDS]
"""

from __future__ import annotations

import time

T_START = time.perf_counter()

import argparse  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from types import ModuleType  # noqa: E402
from typing import Any  # noqa: E402

from reference_answers import (  # noqa: E402
    CELL,
    PROJECT_POOLS,
    VARIANTS,
    compared,
    read_pins,
    reference_answers,
    report_of,
)

from pytest_graphinstruct.score import gcn as gcn_module  # noqa: E402
from pytest_graphinstruct.score.d1 import instruction_d1  # noqa: E402
from pytest_graphinstruct.score.d2 import instruction_d2  # noqa: E402
from pytest_graphinstruct.score.d3 import instructions_d3  # noqa: E402
from pytest_graphinstruct.score.d4 import instruction_d4, is_valid  # noqa: E402
from pytest_graphinstruct.score.d5 import Spend, infeasible_d5, instruction_d5  # noqa: E402
from pytest_graphinstruct.suite.loader import load_suite  # noqa: E402
from pytest_graphinstruct.verify import verifier as verifier_module  # noqa: E402
from pytest_graphinstruct.verify.verifier import Verifier  # noqa: E402

T_IMPORTED = time.perf_counter()
DEFAULT_SUITE = Path(__file__).resolve().parents[1].parent / "shared/official-suite/instructions"
PAPER_ANSWERS = 262_000
SHARDS = (4, 16, 64)


class Stages:
    """Seconds spent in wrapped functions, by stage name."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(self, module: ModuleType, name: str,
             stage: Callable[..., str] | str) -> Callable[[], None]:
        """Time every call of ``module.name`` under ``stage`` (a name, or a function of the
        call's arguments giving one); returns the function that restores the original."""
        original = getattr(module, name, None)
        if original is None:
            sys.exit(f"{module.__name__}.{name} is gone: update bench/score_bench.py's stages")

        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                key = stage if isinstance(stage, str) else stage(*args, **kwargs)
                self.seconds[key] = self.seconds.get(key, 0.0) + time.perf_counter() - t

        setattr(module, name, timed)
        return lambda: setattr(module, name, original)


def _line(name: str, t: float, total: float, indent: int = 2) -> None:
    print(f"{' ' * indent}{name:{28 - indent}s} {t:7.2f} s  ({t / total:5.1%})")


def _ceiling() -> float:
    from replay_bench import ceiling

    return ceiling()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=str(DEFAULT_SUITE))
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--pools", default=None,
                    help="reference pools for D1's MMD (project: references/pools, as score)")
    ap.add_argument("--tracemalloc", action="store_true",
                    help="also trace Python allocations (slows everything down ~2x)")
    ap.add_argument("--xdist-speedup", type=float, default=None,
                    help="the -n 2 speed-up bench/replay_bench.py measured (default: the "
                         "two-process ceiling, measured here)")
    ap.add_argument("--release-s", type=float, default=None,
                    help="the reference release's time for the same answers, for a ratio")
    args = ap.parse_args()
    if not Path(args.suite).is_dir():
        print(f"suite not found: {args.suite}", file=sys.stderr)
        return 2
    if args.tracemalloc:
        tracemalloc.start()
    from pytest_graphinstruct.score import gcn_store

    os.environ[gcn_store.ENV] = "off"  # computed, not read: the warm pass at the end reads
    t_all = time.perf_counter()
    suite = load_suite(args.suite)
    t_suite = time.perf_counter() - t_all
    pools = None
    t_pools = 0.0
    if args.pools:
        from pytest_graphinstruct.pools import ReferencePools, default_cache_dir

        t = time.perf_counter()
        project = args.pools == "project"
        root = PROJECT_POOLS if project else Path(args.pools)
        pools = ReferencePools.load(root, cache_dir=default_cache_dir() if project
                                    else root / ".cache")
        for pool in pools.pools.values():
            pool.features  # noqa: B018  (computed, or read from the cache, once per pool)
        t_pools = time.perf_counter() - t
    verifier = Verifier()
    stages = Stages()
    restore = [
        stages.wrap(verifier_module, "parse_answer", "parse"),
        stages.wrap(verifier_module, "check_constraint", lambda c, *_a, **_k: f"check {c.key}"),
        stages.wrap(verifier_module, "check_contradictions", "no-contradiction checks"),
        stages.wrap(verifier_module, "check_task", "L5 task checks"),
        stages.wrap(gcn_module, "unavailable_reason", "D3 backend import"),
        stages.wrap(gcn_module, "soft_accuracies", "D3 GCN training"),
    ]
    times: dict[str, float] = dict.fromkeys(("verify", "D1", "D2", "D3", "D4", "D5"), 0.0)
    items = []
    t0 = time.perf_counter()
    for inst in suite:
        answers = reference_answers(inst, args.k)
        items.append((inst, answers, [verifier.verify(inst, a.text or "") for a in answers]))
    times["verify"] = time.perf_counter() - t0
    in_verify = dict(stages.seconds)  # D1-D5 call some of the same functions
    n = len(items) * args.k

    def timed(name: str, fn) -> None:  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        fn()
        times[name] += time.perf_counter() - t

    timed("D1", lambda: [instruction_d1(i, v, pools) for i, _, v in items])
    timed("D2", lambda: [instruction_d2(i, v) for i, _, v in items if i.level == 4])
    before_d3 = dict(stages.seconds)
    timed("D3", lambda: instructions_d3([(i, v) for i, _, v in items if i.level >= 3]))
    in_d3 = {k: v - before_d3.get(k, 0.0) for k, v in stages.seconds.items()}
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
    for undo in restore:
        undo()
    from pytest_graphinstruct.run import evaluate
    from pytest_graphinstruct.run.records.reader import read_report
    from pytest_graphinstruct.run.records.writer import write_report
    from pytest_graphinstruct.score import d3 as d3_module

    d3_module.clear_caches()  # the path must not reuse the features computed above
    t_path = time.perf_counter()
    checked = [evaluate.check(i, a, cell=CELL, verifier=verifier)
               for i, a, _ in items]
    t_checked = time.perf_counter()
    results = evaluate.score(checked, pools)
    t_scored = time.perf_counter()
    assert len(results) == len(items)
    insts = [i for i, _, _ in items]
    report = report_of(insts, results, args.k)
    t_built = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.json"
        write_report(report, path)
        t_written = time.perf_counter()
        size = path.stat().st_size
        read_report(path)
        t_read = time.perf_counter()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"outputs: {n} ({len(items)} instructions × k={args.k}); pools: {args.pools or 'none'}")
    print(f"total (incl. suite load and imports after start): {total:.1f} s "
          f"-> {n / total:.0f} outputs/s")
    checks = {k: v for k, v in in_verify.items() if k.startswith("check ")}
    d3_import = in_d3.get("D3 backend import", 0.0)
    d3_train = in_d3.get("D3 GCN training", 0.0)
    for name, t in times.items():
        _line(name, t, total)
        if name == "verify":
            parse = in_verify.get("parse", 0.0)
            _line("parse", parse, total, 4)
            _line("checks, all", sum(checks.values()), total, 4)
            shown = sorted(checks, key=checks.__getitem__, reverse=True)[:6]
            if "check modularity" not in shown:
                shown.append("check modularity")
            for key in shown:
                _line(key.removeprefix("check "), checks.get(key, 0.0), total, 6)
            rest_checks = sum(v for k, v in checks.items() if k not in shown)
            _line("other keys", rest_checks, total, 6)
            contra = in_verify.get("no-contradiction checks", 0.0)
            tasks = in_verify.get("L5 task checks", 0.0)
            _line("no-contradiction", contra, total, 4)
            _line("L5 tasks", tasks, total, 4)
            _line("rest", t - parse - sum(checks.values()) - contra - tasks, total, 4)
        if name == "D3":
            _line("backend import", d3_import, total, 4)
            _line("GCN training", d3_train, total, 4)
            _line("rest", t - d3_import - d3_train, total, 4)
    print(f"  (before the stages: imports {T_IMPORTED - T_START:.2f} s, suite load "
          f"{t_suite:.2f} s, pools load + features {t_pools:.2f} s)")
    print(f"peak memory: max RSS {rss:.0f} MiB")
    print(f"the evaluation path (run.evaluate): {t_scored - t_path:.1f} s for {n} outputs "
          f"(check {t_checked - t_path:.1f} s, score {t_scored - t_checked:.1f} s)")
    t_report = t_written - t_scored
    print(f"report: built {t_built - t_scored:.2f} s, written {t_written - t_built:.2f} s "
          f"({size / 2**20:.1f} MiB), read back {t_read - t_written:.2f} s")
    fixed = (T_IMPORTED - T_START) + t_suite + t_pools + d3_import
    one_run = fixed + (t_written - t_path)
    print(f"one process, start to report written (no D3 import cost counted twice): "
          f"{one_run:.1f} s -> {n / one_run:.0f} answers/s")
    if args.release_s:
        print(f"  the reference release: {args.release_s:.0f} s for the same answers "
              f"-> {args.release_s / one_run:.1f}× faster")
    full = VARIANTS["full"]
    if args.k != full.k or args.pools != "project" or Path(args.suite) != DEFAULT_SUITE:
        print(f"report not compared with the pins (they are k={full.k}, --pools project, the "
              "official suite)")
    else:
        from pytest_graphinstruct.run.records.writer import report_json

        print("\n".join(compared("the report", report_json(report), read_pins().get("full"))))
    if args.tracemalloc:
        _, peak = tracemalloc.get_traced_memory()
        print(f"peak traced Python allocations {peak / 2**20:.0f} MiB")

    _project(n, fixed=fixed, item_s=t_scored - t_path, report_s=t_report,
             read_s=t_read - t_written, speedup=args.xdist_speedup)
    _warm(items, verifier, pools, evaluate, d3_module, results)
    return 0


def _warm(items: list[Any], verifier: Verifier, pools: Any, evaluate: ModuleType,
          d3_module: ModuleType, cold: list[Any]) -> None:
    """The evaluation path again with D3's GCN result store (score/gcn_store.py) in a new
    folder: once filling it, once reading it (in-memory caches cleared before each, as in a new
    process), each result checked equal to the cold path's."""
    from pytest_graphinstruct.score import gcn_store

    with tempfile.TemporaryDirectory() as store:
        os.environ[gcn_store.ENV] = store
        times = []
        for _ in range(2):
            d3_module.clear_caches()
            gcn_store._DEFAULT.clear()
            t = time.perf_counter()
            checked = [evaluate.check(i, a, cell=CELL, verifier=verifier) for i, a, _ in items]
            got = evaluate.score(checked, pools)
            times.append(time.perf_counter() - t)
            assert got == cold, "a stored GCN result differs from the computed one"
        os.environ[gcn_store.ENV] = "off"
    print(f"with D3's GCN result store: the evaluation path {times[0]:.1f} s filling an empty "
          f"store, {times[1]:.1f} s reading it (a rerun on the same answers: no GCN trained); "
          "results equal to the path's above")


def _project(n: int, *, fixed: float, item_s: float, report_s: float, read_s: float,
             speedup: float | None) -> None:
    """Print the paper's study (:data:`PAPER_ANSWERS`) projected from the measured rates."""
    scale = PAPER_ANSWERS / n
    item, report, read = item_s * scale, report_s * scale, read_s * scale
    ceiling = _ceiling()
    print(f"paper scale ({PAPER_ANSWERS:,} answers, score only), projected from these rates: "
          f"fixed {fixed:.1f} s per process, {item_s / n * 1e3:.2f} ms per answer checked and "
          f"scored, {report_s / n * 1e3:.3f} ms written, {read_s / n * 1e3:.3f} ms read")
    print(f"  one process:       {_hms(fixed + item + report)}")
    for factor, source in ((speedup, "the -n 2 speed-up given"),
                           (ceiling, "the two-process ceiling measured at the end of this run")):
        if factor is not None:
            print(f"  -n 2 here:         {_hms(fixed + item / factor + report)} (item work / "
                  f"{factor:.2f}, {source}; the controller writes the report)")
    for k in SHARDS:
        shard = fixed + (item + report) / k
        merge = read + report  # the merge job reads every shard's report and writes one
        print(f"  {k:2d} shards (ci/):    {_hms(shard + merge)} "
              f"(each shard {_hms(shard)}, then the merge {_hms(merge)}; job start and "
              f"install not counted)")


def _hms(seconds: float) -> str:
    m, s = divmod(round(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s"


if __name__ == "__main__":
    from pytest_graphinstruct.run.gc_policy import fewer_collections

    with fewer_collections():  # as the score command and a pytest run collect garbage
        sys.exit(main())
