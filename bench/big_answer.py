"""One big answer through the whole item path: seconds and peak memory per format, size, level.

An answer of ``m`` random distinct undirected edges over ``--nodes`` nodes (seeded) is written in
each answer format the parser reads (edge-list lines, JSON, code style) and goes through exactly
what one item of a run does: :func:`pytest_graphinstruct.run.evaluate.check` (``Verifier.parse``
+ every check) and :func:`~pytest_graphinstruct.run.evaluate.score` (D1 with the project's
reference pools, D2, D3, D4, D5) for the first feasible instruction of each level of the suite.

Every (format, size, level) runs in its own child process, after a warm-up item (the torch
import and the pools' first use are not counted), so ``peak MB`` is that item's own peak resident
memory (``ru_maxrss`` of the child; the line also shows the warm-up baseline).  ``--profile``
prints each case's cProfile (top functions by cumulative time) instead of the table.

Usage::

    python bench/big_answer.py                          # 10k 50k 100k 190k × 3 formats × L0–L5
    python bench/big_answer.py --sizes 190000 --levels 3,4 --formats lines
    python bench/big_answer.py --sizes 190000 --levels 3 --formats lines --profile
    python bench/big_answer.py --sizes 200000 --nodes 20000 --levels 3 --formats lines \
        --key average_path_length     # the first L3 instruction with that constraint key
    python bench/big_answer.py --distance-limit   # exact distances at / just above their budget
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SIZES = (10_000, 50_000, 100_000, 190_000)
FORMATS = ("lines", "json", "code")
LEVELS = (0, 1, 2, 3, 4, 5)


def random_edges(m: int, n: int, seed: int = 1) -> list[tuple[int, int]]:
    """``m`` distinct undirected edges (no self-loops) over nodes ``0..n-1``, sorted."""
    if m > n * (n - 1) // 2:
        raise SystemExit(f"{m} edges do not fit a simple graph on {n} nodes")
    rng = random.Random(seed)
    edges: set[tuple[int, int]] = set()
    while len(edges) < m:
        u, v = rng.randrange(n), rng.randrange(n)
        if u != v:
            edges.add((min(u, v), max(u, v)))
    return sorted(edges)


def as_lines(edges: list[tuple[int, int]], n: int) -> str:
    return "Edges:\n" + "\n".join(f"{u} {v}" for u, v in edges)


def as_json(edges: list[tuple[int, int]], n: int) -> str:
    return json.dumps({"directed": False, "nodes": list(range(n)),
                       "edges": [[u, v] for u, v in edges]}, separators=(",", ":"))


def as_code(edges: list[tuple[int, int]], n: int) -> str:
    nodes = ",".join(str(v) for v in range(n))
    body = ",".join(f"({u},{v})" for u, v in edges)
    return f"Graph[name='big', directed=false, nodes={n}] {{\n node_list=[{nodes}];\n" \
           f" edge_list=[{body}];\n}}"


WRITERS: dict[str, Callable[[list[tuple[int, int]], int], str]] = {
    "lines": as_lines, "json": as_json, "code": as_code}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def child(fmt: str, m: int, level: int, nodes: int, suite_dir: str, pools_dir: str,
          profile: bool, key: str | None = None) -> dict[str, object]:
    """Run one case in this process; returns its figures."""
    from pytest_graphinstruct.answers import Answer
    from pytest_graphinstruct.pools import ReferencePools
    from pytest_graphinstruct.run import evaluate
    from pytest_graphinstruct.run.config import Cell
    from pytest_graphinstruct.suite.loader import load_suite

    suite = load_suite(suite_dir)
    pools = ReferencePools.load(pools_dir, cache_dir=Path(pools_dir) / ".cache") \
        if Path(pools_dir).is_dir() else None
    inst = next(i for i in suite if i.level == level and i.feasible
                and (key is None or any(c.key == key for c in i.explicit)))
    cell = Cell("bench", "zero-shot")
    # warm-up: imports (torch), pool matching and caches, on the instruction's own reference
    evaluate.score([evaluate.check(inst, [Answer(text=inst.references[0])], cell=cell)], pools)
    text = WRITERS[fmt](random_edges(m, nodes), nodes)
    base_mb = _peak_mb()
    prof = None
    if profile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    t0 = time.perf_counter()
    checked = evaluate.check(inst, [Answer(text=text)], cell=cell)
    t1 = time.perf_counter()
    result = evaluate.score([checked], pools)[0]
    t2 = time.perf_counter()
    if prof is not None:
        import io
        import pstats

        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(30)
        print(out.getvalue(), file=sys.stderr)
    parse = checked.verifications[0].parse
    return {
        "format": fmt, "edges": m, "level": level, "instruction": inst.id, "chars": len(text),
        "outcome": parse.outcome.value, "reason": parse.reason,
        "check_s": round(t1 - t0, 2), "score_s": round(t2 - t1, 2),
        "peak_mb": round(_peak_mb(), 1), "base_mb": round(base_mb, 1),
        "absent": dict(result.absent_dimensions),
        "failed": [f"{v.constraint}: {v.observed}" for v in checked.verifications[0].verdicts
                   if not v.satisfied and key is not None and v.key == key],
    }


def _connected_random(n: int, m: int, seed: int = 1) -> list[tuple[int, int]]:
    """A path through ``0..n-1`` plus random distinct edges, ``m`` in all (connected)."""
    rng = random.Random(seed)
    edges = {(i, i + 1) for i in range(n - 1)}
    while len(edges) < m:
        u, v = rng.randrange(n), rng.randrange(n)
        if u < v:
            edges.add((u, v))
    return sorted(edges)


def distance_limit() -> None:
    """Seconds of diameter + average path length (``GraphFacts``) on graphs whose per-source BFS
    work ``n × (n + m)`` is at or just above ``DISTANCE_WORK_LIMIT``: a star (the costliest
    shape per step: scipy's search holds every leaf in its heap), a path, and sparse random
    graphs with more nodes than the all-at-once product route takes."""
    import networkx as nx

    from pytest_graphinstruct.verify.distances import DISTANCE_WORK_LIMIT
    from pytest_graphinstruct.verify.properties import GraphFacts

    def largest_n(per_node: Callable[[int], int]) -> int:
        n = 2
        while (n + 1) * per_node(n + 1) <= DISTANCE_WORK_LIMIT:
            n += 1
        return n

    star_n = largest_n(lambda n: 2 * n - 1)
    rand_n = 4097
    rand_m = DISTANCE_WORK_LIMIT // rand_n - rand_n
    cases: list[tuple[str, Callable[[], nx.Graph]]] = [
        (f"star {star_n}", lambda: nx.star_graph(star_n - 1)),
        (f"star {star_n + 1}", lambda: nx.star_graph(star_n)),
        (f"path {star_n}", lambda: nx.path_graph(star_n)),
        (f"random {rand_n} / {rand_m}", lambda: nx.Graph(_connected_random(rand_n, rand_m))),
        ("random 20000 / 180000", lambda: nx.Graph(_connected_random(20_000, 180_000))),
    ]
    print(f"DISTANCE_WORK_LIMIT = {DISTANCE_WORK_LIMIT}")
    for name, build in cases:
        facts = GraphFacts(build())
        t0 = time.perf_counter()
        diameter = facts.diameter
        seconds = time.perf_counter() - t0
        print(f"{name:24} work {facts.distance_work:>12} {seconds:7.2f} s  "
              f"{facts.distances_not_computed or f'diameter {diameter}'}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--levels", default=",".join(map(str, LEVELS)))
    ap.add_argument("--nodes", type=int, default=1000, help="node count of every answer")
    ap.add_argument("--suite", default=str(ROOT / "instructions"))
    ap.add_argument("--pools", default=str(ROOT / "references/pools"))
    ap.add_argument("--profile", action="store_true", help="print cProfile of each case")
    ap.add_argument("--key", default=None,
                    help="use the first instruction of each level with this constraint key")
    ap.add_argument("--distance-limit", action="store_true",
                    help="time exact distances at and just above DISTANCE_WORK_LIMIT, then stop")
    ap.add_argument("--child", nargs=3, metavar=("FORMAT", "EDGES", "LEVEL"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.distance_limit:
        distance_limit()
        return 0
    if args.child:
        fmt, m, level = args.child
        print(json.dumps(child(fmt, int(m), int(level), args.nodes, args.suite, args.pools,
                               args.profile, args.key)))
        return 0
    print(f"{'format':6} {'edges':>7} {'chars':>9} lvl {'check s':>8} {'score s':>8} "
          f"{'peak MB':>8} {'(base)':>7}  outcome / absent dimensions")
    for fmt in args.formats.split(","):
        for m in (int(s) for s in args.sizes.split(",")):
            for level in (int(x) for x in args.levels.split(",")):
                cmd = [sys.executable, __file__, "--child", fmt, str(m), str(level),
                       "--nodes", str(args.nodes), "--suite", args.suite, "--pools", args.pools]
                if args.profile:
                    cmd.append("--profile")
                if args.key:
                    cmd += ["--key", args.key]
                proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
                if args.profile:
                    print(proc.stderr)
                if proc.returncode != 0:
                    print(f"{fmt:6} {m:>7} L{level} child failed:\n{proc.stderr}")
                    continue
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                absent = {k: v for k, v in r["absent"].items()
                          if not v.startswith(("not weighted", "token usage"))}
                what = r["outcome"] if r["reason"] is None else f"{r['outcome']}: {r['reason']}"
                print(f"{fmt:6} {m:>7} {r['chars']:>9} L{level} {r['check_s']:>8.2f} "
                      f"{r['score_s']:>8.2f} {r['peak_mb']:>8.0f} {r['base_mb']:>7.0f}  "
                      f"{what}{'  ' + json.dumps(absent) if absent else ''}", flush=True)
                for line in r["failed"]:
                    print(f"{'':6} {'':>7} {'':>9}     {line}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
