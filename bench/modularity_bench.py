"""The verifier's modularity against networkx's, side by side on the same graphs (single process).

Takes the undirected view of every reference graph of the official suite (or of our own suite,
with ``--suite instructions``) that has at least two nodes and an edge, checks that
``verify.modularity.greedy_modularity`` gives exactly networkx's communities (same order) and
float (``==``) on each, then times both over all the graphs in alternating rounds (A/B: the same
load reaches both) and prints the medians and their ratio.  CPU time by default (steadier than
wall time on a shared machine); ``--wall`` for wall time.

Usage::

    python bench/modularity_bench.py [--suite ../shared/official-suite/instructions] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import networkx as nx

from pytest_graphinstruct.graphs.model import ParsedGraph
from pytest_graphinstruct.graphs.parse import parse_answer
from pytest_graphinstruct.suite.loader import load_suite
from pytest_graphinstruct.verify.modularity import greedy_modularity
from pytest_graphinstruct.verify.properties import GraphFacts
from pytest_graphinstruct.verify.tasks import NODE_REMOVING_TASKS

DEFAULT_SUITE = Path(__file__).resolve().parents[1].parent / "shared/official-suite/instructions"


def suite_graphs(directory: str) -> list[nx.Graph]:
    """The undirected views the verifier takes the modularity of, for every reference."""
    out = []
    for inst in load_suite(directory):
        for ref in inst.references:
            parsed = parse_answer(ref, base=inst.base,
                                  drop_isolated=inst.task_type in NODE_REMOVING_TASKS).graph
            if isinstance(parsed, ParsedGraph):
                facts = GraphFacts(parsed.graph)
                if facts.n >= 2 and facts.undirected_m:
                    out.append(facts.undirected)
    return out


def networkx_modularity(g: nx.Graph) -> tuple[list[frozenset[object]], float]:
    """What the verifier computed before: networkx's partition and modularity."""
    parts = nx.community.greedy_modularity_communities(g, weight=None)
    return [frozenset(p) for p in parts], float(nx.community.modularity(g, parts, weight=None))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=str(DEFAULT_SUITE))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--wall", action="store_true", help="time wall clock, not CPU")
    args = ap.parse_args()
    if not Path(args.suite).is_dir():
        print(f"suite not found: {args.suite}", file=sys.stderr)
        return 2
    graphs = suite_graphs(args.suite)
    equal = 0
    for g in graphs:
        ours = greedy_modularity(g)
        parts, q = networkx_modularity(g)
        equal += list(ours.parts) == parts and ours.modularity == q
    clock = time.perf_counter if args.wall else time.process_time

    def timed(f: Callable[[nx.Graph], object]) -> float:
        t0 = clock()
        for g in graphs:
            f(g)
        return clock() - t0

    theirs: list[float] = []
    mine: list[float] = []
    for _ in range(args.rounds):
        theirs.append(timed(networkx_modularity))
        mine.append(timed(greedy_modularity))
    nx_s, our_s = statistics.median(theirs), statistics.median(mine)
    ratios = [t / o for t, o in zip(theirs, mine, strict=True)]
    n = len(graphs)
    nodes = statistics.median(g.number_of_nodes() for g in graphs)
    print(f"graphs: {n} (undirected views of the references; median {nodes:g} nodes), "
          f"rounds: {args.rounds}, {'wall' if args.wall else 'CPU'} time")
    print(f"identical to networkx (parts in order, float ==): {equal}/{n}")
    print(f"networkx:          {nx_s:7.3f} s  ({nx_s / n * 1e3:6.3f} ms/graph, median)")
    print(f"verify.modularity: {our_s:7.3f} s  ({our_s / n * 1e3:6.3f} ms/graph, median)")
    print(f"speed-up: {nx_s / our_s:.1f}x (ratio of medians; per round "
          f"{min(ratios):.1f}-{max(ratios):.1f}x)")
    return 0 if equal == n else 1


if __name__ == "__main__":
    sys.exit(main())
