"""The HTML report of an 800-item run: page size, build time and, with chromium, open time.

1. Uses ``--report FILE`` or, without one, writes the oracle's report over the project's suite
   (``pytest instructions --gi-model=oracle``: 800 items, about 1-2 minutes).
2. Builds the page ``--runs`` times (``build_page`` with the suite's instruction texts) and
   prints its size and the median build time; ``--out`` keeps the page.
3. When chromium is installed, opens the page ``--runs`` times in headless chromium (over the
   DevTools pipe) and prints the median time from navigation to the load event — the page's
   script has built the item table by then.

The project's bound: a few MB at most, open in under 2 s.  Absolute times on shared machines
are noisy.

Usage::

    python bench/html_report.py [--report FILE] [--runs 5] [--out FILE]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_graphinstruct.report.render.html import NamedReport, build_page, write_page  # noqa: E402
from pytest_graphinstruct.run.records.reader import read_report  # noqa: E402
from pytest_graphinstruct.suite.loader import load_suite  # noqa: E402


def _oracle_report(path: Path) -> None:
    cmd = [sys.executable, "-m", "pytest", "instructions", "--gi-model=oracle",
           f"--gi-report={path}", "-p", "no:cacheprovider", "-q"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"oracle run failed ({proc.returncode}):\n{proc.stdout[-2000:]}")


def _open_times(page: Path, runs: int) -> list[float] | None:
    try:
        from tests.report.html_browser import CHROMIUM, Browser
    except ImportError:
        return None
    if CHROMIUM is None:
        return None
    times = []
    with Browser() as b:
        for _ in range(runs):
            b.open(page.as_uri())
            times.append(b.js("(() => { const t = performance.getEntriesByType('navigation')[0];"
                              " return t.loadEventEnd - t.startTime; })()") / 1000)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", type=Path, default=None, help="report JSON (default: run the "
                    "oracle over instructions/)")
    ap.add_argument("--runs", type=int, default=5, help="builds (and opens) to time")
    ap.add_argument("--out", type=Path, default=None, help="keep the page here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report_path = args.report
        if report_path is None:
            report_path = Path(tmp) / "oracle.json"
            t = time.perf_counter()
            _oracle_report(report_path)
            print(f"oracle report written in {time.perf_counter() - t:.0f} s")
        report = read_report(report_path)
        suite = {i.id: i for i in load_suite(ROOT / "instructions")}
        builds = []
        for _ in range(args.runs):
            t = time.perf_counter()
            page = build_page([NamedReport(report_path.name, report)], instructions=suite)
            builds.append(time.perf_counter() - t)
        out = args.out or Path(tmp) / "report.html"
        write_page(page, out)
        size = out.stat().st_size
        print(f"page: {page.cells} cell(s), {page.items} items, {size / 1e6:.2f} MB")
        print(f"build: median {statistics.median(builds):.2f} s over {args.runs} runs "
              f"(min {min(builds):.2f}, max {max(builds):.2f})")
        opens = _open_times(out, args.runs)
        if opens is None:
            print("open: chromium not installed, not measured")
        else:
            print(f"open (navigation to load event, headless chromium): median "
                  f"{statistics.median(opens):.2f} s over {len(opens)} runs "
                  f"(max {max(opens):.2f})")


if __name__ == "__main__":
    main()
