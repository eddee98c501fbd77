"""Hostile-input parsing: time per case and how it scales with input size.

Run: ``python bench/parse_bench.py``.  Prints, per hostile case, the median of 3 parses at size
N and 4N and their ratio (≈ 4 for linear time; a quadratic parser shows ≈ 16).  Tests check the
outcomes of these inputs; wall-clock figures live here because shared machines are noisy.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from pytest_graphinstruct.graphs.model import Limits
from pytest_graphinstruct.graphs.parse import parse_answer

CASES: dict[str, Callable[[int], str]] = {
    "unclosed-headers": lambda k: "Graph[name='x'] {\n" * k,
    "headers-in-comments": lambda k: "Graph[a=1] {\n" + "# Graph[a=1] {\n" * k,
    "failing-json": lambda k: '{"a": [1, 2, @]} ' * k,
    "open-json": lambda k: '{"a": 1, ' * k,
    "unresolved-snippet": lambda k: "G.add_edge(x, y)\n" * k,
    "quotes": lambda k: "'" * (16 * k),
    "long-adjacency-line": lambda k: "0: " + "1, " * (5 * k),
    "nested-brackets": lambda k: "[" * (2 * k),
    "prose": lambda k: "lorem ipsum it's dolor {x} [y] (z). " * k,
}
BIG = Limits(max_chars=50_000_000)


def _median(text: str) -> float:
    times = []
    for _ in range(3):
        t = time.perf_counter()
        parse_answer(text, limits=BIG)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(n: int = 15_000) -> None:
    print(f"{'case':<22} {'N s':>8} {'4N s':>8} {'ratio':>6}")
    for name, make in CASES.items():
        a, b = _median(make(n)), _median(make(4 * n))
        print(f"{name:<22} {a:8.3f} {b:8.3f} {b / a:6.1f}")


if __name__ == "__main__":
    main()
