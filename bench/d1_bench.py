"""D1 throughput: MMD scoring of 4,000 outputs against a synthetic pool of 3,000 graphs.

Builds an L3-like synthetic pool (BA / ER / WS / SBM graphs of 10–100 nodes), 800 instructions
with k = 5 outputs each, and prints:

* pool features: computed once (cold), then read back from the disk cache (warm);
* pool matching for the 800 instructions (L3-style constraints: exact node count, density,
  clustering, average path length, modularity): cold (checks + graph facts) and on a second
  load (from the disk cache);
* MMD scoring throughput (output features + kernels) against (a) size-band subsets of a few
  hundred graphs and (b) the whole pool as every instruction's reference set (worst case),
  with the one-off per-subset reference statistics timed separately;
* full D1 (:func:`instruction_d1`: VR, exact uniqueness, MMD) per output.

Absolute timings on shared machines are noisy; compare ratios.

Usage::

    python bench/d1_bench.py [--pool 3000] [--instructions 800] [--k 5]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import networkx as nx

from pytest_graphinstruct.graphs.model import Outcome, ParsedGraph, ParseResult
from pytest_graphinstruct.kernels.mmd import FeatureTable
from pytest_graphinstruct.pools import Pool, ReferencePools
from pytest_graphinstruct.score.d1 import instruction_d1
from pytest_graphinstruct.suite.constraints import parse_constraint
from pytest_graphinstruct.suite.loader import instruction_from_record
from pytest_graphinstruct.verify.verdict import Verification
from pytest_graphinstruct.verify.verifier import Verifier


def random_graph(rng: random.Random, n: int) -> nx.Graph:
    kind = rng.choice(("ba", "er", "ws", "sbm"))
    seed = rng.randrange(10**9)
    if kind == "ba":
        g = nx.barabasi_albert_graph(n, rng.choice((1, 2, 3)), seed=seed)
    elif kind == "er":
        g = nx.gnp_random_graph(n, min(1.0, rng.uniform(2.0, 6.0) / n), seed=seed)
    elif kind == "ws":
        g = nx.connected_watts_strogatz_graph(n, 4, rng.uniform(0.05, 0.4), seed=seed)
    else:
        a = n // 2
        g = nx.stochastic_block_model([a, n - a], [[0.3, 0.02], [0.02, 0.3]], seed=seed)
        g = nx.Graph(g)
    g.graph.clear()
    g.graph["subgroup"] = kind
    return g


def timed(label: str, fn, *args):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = fn(*args)
    dt = time.perf_counter() - t0
    print(f"{label:<58s} {dt:8.3f} s")
    return out, dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", type=int, default=3000)
    ap.add_argument("--instructions", type=int, default=800)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)

    pool_graphs = [random_graph(rng, rng.randint(10, 100)) for _ in range(args.pool)]
    insts = []
    outputs: list[list[nx.Graph]] = []
    for i in range(args.instructions):
        n = rng.randint(10, 100)
        explicit = [f"num_nodes={n}", "connected=true", "directed=false",
                    f"density<={rng.uniform(0.05, 0.4):.3f}",
                    f"clustering_coefficient>={rng.uniform(0.0, 0.3):.3f}",
                    f"average_path_length<={rng.uniform(2.0, 5.0):.3f}",
                    f"modularity>={rng.uniform(0.1, 0.5):.3f}"]
        rec = {"id": f"L3-{i:03d}", "level": 3, "instruction": "x",
               "explicit_constraints": explicit, "implicit_constraints": []}
        inst = instruction_from_record(rec)
        assert inst is not None
        insts.append(inst)
        outputs.append([random_graph(rng, n) for _ in range(args.k)])
    total = args.instructions * args.k
    print(f"pool: {args.pool} graphs; outputs: {total} ({args.instructions} instructions "
          f"x k={args.k})")

    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        cold = Pool.from_graphs(pool_graphs, name="bench", cache_dir=cache)
        timed("pool features, cold (computed once)", lambda: cold.features)
        warm = Pool.from_graphs(pool_graphs, name="bench", cache_dir=cache)
        timed("pool features, second load (disk cache)", lambda: warm.features)
        assert warm.computed["features"] == 0

        timed("match 800 L3-style instructions, cold",
                              lambda: [cold.match_instruction(x) for x in insts])
        cold.flush()  # (the plugin flushes at session end; also done at interpreter exit)
        again = Pool.from_graphs(pool_graphs, name="bench", cache_dir=cache)
        matches, _ = timed("match 800 L3-style instructions, second load",
                           lambda: [again.match_instruction(x) for x in insts])
        using = sum(m.count >= 20 for m in matches)
        print(f"  instructions with >= 20 matching pool graphs: {using} / {len(insts)}; "
              f"checks made cold: {cold.computed['checks']}, second load: "
              f"{again.computed['checks']}")

        out_tables, feat_s = timed("output features (4,000 graphs)",
                                   lambda: [FeatureTable.of_graphs(o) for o in outputs])

        # (a) size-band subsets: every instruction against the pool graphs within ±5 nodes
        bands = [cold.match([parse_constraint(f"num_nodes>={max(1, x.num_nodes - 5)}"),
                             parse_constraint(f"num_nodes<={x.num_nodes + 5}")])
                 for x in insts]
        distinct = {b.key: b for b in bands}
        timed(f"reference stats for {len(distinct)} distinct band subsets (once)",
                           lambda: [b.reference_set() for b in distinct.values()])
        refs = [b.reference_set() for b in bands]
        mean_band = sum(len(r) for r in refs) / len(refs)
        _, band_s = timed(f"MMD scoring vs band subsets (mean {mean_band:.0f} refs)",
                          lambda: [r.score(t) for r, t in zip(refs, out_tables, strict=True)])
        print(f"  -> {total / (feat_s + band_s):8.0f} outputs/s incl. output features, "
              f"{total / band_s:8.0f} outputs/s kernels only")

        # (b) worst case: the whole pool is every instruction's reference set
        whole = cold.match([])
        timed("reference stats for the whole pool (once)",
                                 whole.reference_set)
        ref = whole.reference_set()
        _, whole_s = timed(f"MMD scoring vs the whole pool ({len(ref)} refs)",
                           lambda: [ref.score(t) for t in out_tables])
        print(f"  -> {total / (feat_s + whole_s):8.0f} outputs/s incl. output features, "
              f"{total / whole_s:8.0f} outputs/s kernels only")

        # full D1 with pools (VR, exact uniqueness, MMD where >= 20 graphs match)
        verifier = Verifier()
        samples = []
        for inst, outs in zip(insts, outputs, strict=True):
            vs = []
            for g in outs:
                pg = ParsedGraph(nx.relabel_nodes(g, str))
                vs.append(Verification(inst.id, ParseResult(Outcome.GRAPH, pg),
                                       verifier.check_graph(inst, pg)))
            samples.append(vs)
        pools = ReferencePools({3: again})
        results, d1_s = timed("full D1 (instruction_d1) for 800 instructions",
                              lambda: [instruction_d1(x, s, pools)
                                       for x, s in zip(insts, samples, strict=True)])
        dist = sum(r.formula == "distribution" for r in results)
        print(f"  -> {total / d1_s:8.0f} outputs/s; distribution formula: {dist}, "
              f"constraint formula: {len(results) - dist}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
