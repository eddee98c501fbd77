"""D3 throughput on ~200 synthetic (generated, reference) graph pairs of 10–60 nodes.

Usage: ``python bench/d3_bench.py [--pairs 200] [--samples 5] [--no-gcn]``

Prints samples/second for the batched API (all GCNs of all sets trained together) and for one
call per set, with the time spent on features (canonical form, spectrum, communities) and on the
GCNs.  The first pass pays for importing torch; the figures are for warm passes with cleared
feature caches.
"""

from __future__ import annotations

import argparse
import random
import time

import networkx as nx

from pytest_graphinstruct.score import d3, embedding, gcn


def _graph(rng: random.Random) -> nx.Graph:
    n = rng.randint(10, 60)
    seed = rng.randrange(10**9)
    kind = rng.choice(["er", "ba", "ws", "sbm", "tree", "regular"])
    if kind == "er":
        g = nx.gnm_random_graph(n, rng.randint(n, 3 * n), seed=seed)
    elif kind == "ba":
        g = nx.barabasi_albert_graph(n, rng.randint(1, 3), seed=seed)
    elif kind == "ws":
        g = nx.watts_strogatz_graph(n, 4, rng.choice([0.05, 0.2, 0.5]), seed=seed)
    elif kind == "sbm":
        k = rng.randint(2, 4)
        sizes = [n // k] * (k - 1) + [n - (k - 1) * (n // k)]
        p = [[0.4 if i == j else 0.03 for j in range(k)] for i in range(k)]
        g = nx.stochastic_block_model(sizes, p, seed=seed)
    elif kind == "tree":
        g = nx.random_labeled_tree(n, seed=seed)
    else:
        g = nx.random_regular_graph(3, n + (n % 2), seed=seed)
    nodes = list(g.nodes())
    rng.shuffle(nodes)
    out = nx.Graph()
    out.add_nodes_from(f"v{rng.randrange(10**6)}_{i}" for i in range(len(nodes)))
    names = dict(zip(nodes, out.nodes(), strict=True))
    out.add_edges_from((names[u], names[v]) for u, v in g.edges())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--samples", type=int, default=5, help="samples per set (pairs/samples sets)")
    ap.add_argument("--no-gcn", action="store_true")
    args = ap.parse_args()
    rng = random.Random(7)
    nsets = max(1, args.pairs // args.samples)
    sets = [([_graph(rng) for _ in range(args.samples)], [_graph(rng), _graph(rng)])
            for _ in range(nsets)]
    nsamples = nsets * args.samples
    config = d3.D3Config(gcn=not args.no_gcn)

    t0 = time.perf_counter()
    d3.graph_sets_d3(sets[:1], config)  # import torch, warm up
    print(f"warm-up (imports torch/torch_geometric): {time.perf_counter() - t0:.2f} s")

    d3.clear_caches()
    t0 = time.perf_counter()
    for gens, refs in sets:
        for g in [*gens, *refs]:
            embedding.spectral_features(g).communities  # noqa: B018
    t_feat = time.perf_counter() - t0

    tasks_time = 0.0
    original = gcn.soft_accuracies

    def timed(*a, **k):  # type: ignore[no-untyped-def]
        nonlocal tasks_time
        t = time.perf_counter()
        try:
            return original(*a, **k)
        finally:
            tasks_time += time.perf_counter() - t

    gcn.soft_accuracies = timed  # type: ignore[assignment]
    try:
        d3.clear_caches()
        t0 = time.perf_counter()
        batched = d3.graph_sets_d3(sets, config)
        t_batch = time.perf_counter() - t0
        t_batch_gcn, tasks_time = tasks_time, 0.0

        d3.clear_caches()
        t0 = time.perf_counter()
        single = [d3.graphs_d3(g, r, config) for g, r in sets]
        t_single = time.perf_counter() - t0
        t_single_gcn = tasks_time
    finally:
        gcn.soft_accuracies = original  # type: ignore[assignment]

    same = all(a == b for a, b in zip(batched, single, strict=True))
    print(f"{nsets} sets x {args.samples} samples, 2 references each = {nsamples} samples "
          f"({2 * nsamples} sample-reference pairs); GCN {'off' if args.no_gcn else 'on'}")
    ngraphs = len(sets) * (args.samples + 2)
    print(f"features only (canonical form + spectrum + communities, {ngraphs} graphs): "
          f"{t_feat:.2f} s")
    print(f"batched   : {t_batch:.2f} s  -> {nsamples / t_batch:7.1f} samples/s "
          f"(GCN {t_batch_gcn:.2f} s)")
    print(f"per set   : {t_single:.2f} s  -> {nsamples / t_single:7.1f} samples/s "
          f"(GCN {t_single_gcn:.2f} s)")
    print(f"batched == per-set results (bit-identical): {same}")


if __name__ == "__main__":
    main()
