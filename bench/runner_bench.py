"""Scheduler + OpenAIBackend throughput against the local fake server (no network).

For each concurrency (default 1, 8, 32) it sends distinct requests to a
:class:`~pytest_graphinstruct.testing.openai_server.FakeOpenAIServer` with a fixed latency (default
200 ms), through the answer cache as a benchmark run would, and prints:

* answers/second, and the ideal ``concurrency / latency``;
* the harness overhead per item: ``(wall − rounds × latency) × concurrency / N`` with
  ``rounds = ceil(N / concurrency)`` — the time a worker slot spends per item beyond the
  server's latency (client, HTTP, JSON, cache append with fsync, scheduling);
* a zero-latency serial run (the full per-request cost of the harness plus a local HTTP round
  trip) and a fully cached rerun (time per cached answer, cache load time).

Usage::

    python bench/runner_bench.py [--latency 0.2] [--concurrency 1 8 32] [--per-worker 8]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

from pytest_graphinstruct.answers import Message
from pytest_graphinstruct.models.backends.openai_backend import OpenAIBackend
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.models.caching.cache import AnswerCache
from pytest_graphinstruct.models.scheduling.scheduler import Scheduler
from pytest_graphinstruct.testing.openai_server import FakeOpenAIServer

KEY_ENV = "GI_BENCH_API_KEY"


def _requests(tag: str, n: int) -> list[Request]:
    return [Request(model="fake-model", messages=(Message("user", f"{tag} question {i}"),),
                    instruction_id=f"L1-{i:03d}", cell=f"fake-model/{tag}") for i in range(n)]


def _run(backend: OpenAIBackend, cache: AnswerCache | None, concurrency: int,
         requests: list[Request]) -> tuple[float, dict[str, object]]:
    with Scheduler(backend, concurrency=concurrency, cache=cache) as sched:
        t0 = time.perf_counter()
        answers = [f.result() for f in sched.submit_all(requests)]
        wall = time.perf_counter() - t0
        stats = sched.stats()
    bad = [a.error for a in answers if not a.ok]
    if bad:
        raise SystemExit(f"{len(bad)} request(s) failed, e.g. {bad[0]}")
    return wall, stats


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.2, help="server latency in seconds")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--per-worker", type=int, default=8,
                    help="requests per worker slot (N = concurrency × this; at least 10)")
    args = ap.parse_args()
    os.environ.setdefault(KEY_ENV, "sk-bench-not-a-real-key")

    rows = []
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(latency_s=args.latency) as srv:
        cache = AnswerCache(Path(tmp) / "cache")
        backend = OpenAIBackend(srv.base_url, "fake-model", api_key_env=KEY_ENV, timeout_s=30)
        _run(backend, None, 1, _requests("warmup", 2))  # imports, connection pool
        all_requests: list[Request] = []
        for c in args.concurrency:
            n = max(10, c * args.per_worker)
            requests = _requests(f"c{c}", n)
            all_requests += requests
            wall, _ = _run(backend, cache, c, requests)
            rounds = math.ceil(n / c)
            overhead_ms = (wall - rounds * args.latency) * c / n * 1000
            rows.append([c, n, f"{wall:.2f}", f"{n / wall:.1f}", f"{c / args.latency:.1f}",
                         f"{n / wall / (c / args.latency):.0%}", f"{overhead_ms:.2f}"])
        print(f"Scheduler + OpenAIBackend + cache vs fake server, latency "
              f"{args.latency * 1000:.0f} ms")
        print(tabulate(rows, headers=["concurrency", "N", "wall s", "answers/s", "ideal/s",
                                      "efficiency", "overhead ms/item"],
                       colalign=("right",) * 7))

        srv.latency_s = 0.0
        n0 = 200
        wall0, _ = _run(backend, None, 1, _requests("zero", n0))
        t0 = time.perf_counter()
        reopened = AnswerCache(Path(tmp) / "cache")
        load_s = time.perf_counter() - t0
        before = srv.request_count
        wall_c, stats = _run(backend, reopened, 8, all_requests)
        assert srv.request_count == before and stats["cache_hits"] == len(all_requests)
        print()
        print(tabulate([
            ["zero-latency serial request (harness + local HTTP)", n0,
             f"{wall0 / n0 * 1000:.2f} ms"],
            ["cached answer (all hits, concurrency 8)", len(all_requests),
             f"{wall_c / len(all_requests) * 1e6:.1f} µs"],
            ["cache load on open", len(reopened), f"{load_s * 1000:.1f} ms"],
        ], headers=["measure", "N", "per item / total"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
