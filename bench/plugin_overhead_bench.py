"""What installing the plugin costs a project that does not use it.

Runs a one-test project ``--runs`` times with the plugin loaded (as every pytest run in an
environment with the package installed does) and with ``-p no:graphinstruct``, alternating,
and prints the median wall time of each and their ratio.

Usage::

    python bench/plugin_overhead_bench.py [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _once(cwd: Path, *extra: str) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra,
                    "test_one.py"], cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
        _once(cwd)  # warm the file system cache
        with_plugin, without = [], []
        for _ in range(args.runs):
            with_plugin.append(_once(cwd))
            without.append(_once(cwd, "-p", "no:graphinstruct"))
    a, b = statistics.median(with_plugin), statistics.median(without)
    print(f"one-test project, median of {args.runs} runs: with the plugin {a:.3f} s, "
          f"without {b:.3f} s, ratio {a / b:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
