"""``score`` on the official references' 4,000 answers as a user runs it (a process each, end to
end), with D3's two stores (score/gcn_store.py) in folders of their own:

1. both empty: the first run on this suite version and machine (it computes the reference
   side, experiment A of every reference and pool graph, and stores it);
2. answers never scored before: the result store empty, the reference side stored — what a
   CI job pays for a new model's answers (issue 35's target: ≤ 3.3 yardsticks);
3. the same in one process (``--jobs 1``);
4. a rerun on the same answers, the result stores warm — D3's GCN results and the whole item
   results (run/item_store.py) — (target: half of 2.);
5. the same in one process;
6. a rerun with D3's GCN store warm but the item store emptied (every item verified and
   scored again, only the GCNs read), as 4. measured before the item store existed.

``--jobs`` is left at its default (``auto``: the usable cores) but where it says 1.  The
reports are compared (all equal but their ``run`` records).

Each time is also given in CPU yardsticks: the wall time of a pure-Python loop of 25M additions
(``replay_bench.SPIN``, a process of its own) measured right before each ``score`` — a figure
that means the same on a faster or slower machine (issue 35: ≤ 3.3 yardsticks into an empty
store, half that reading it).

Usage::

    python bench/score_rerun.py [--suite DIR] [--k 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from reference_answers import write_recorded
from replay_bench import DEFAULT_SUITE, ENV, SPIN, _timed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=str(DEFAULT_SUITE))
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=1, help="run the five cases this many times "
                    "(fresh stores each time) and print each case's median")
    args = ap.parse_args()
    from pytest_graphinstruct.run.score_recorded import auto_jobs
    from pytest_graphinstruct.score.gcn_store import ENV as STORE
    from pytest_graphinstruct.score.gcn_store import REFERENCE_ENV as REFERENCES

    print(f"--jobs auto = {auto_jobs()} here")
    from pytest_graphinstruct.suite.loader import load_suite

    suite = load_suite(args.suite)
    reports: list[dict[str, object]] = []
    ratios: dict[str, list[float]] = {}
    for rep in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            answers = Path(tmp) / "refs.jsonl"
            write_recorded(answers, suite, args.k)
            refs = {REFERENCES: str(Path(tmp) / "references")}
            fresh = Path(tmp) / "store-fresh"
            runs = [("the first run (no store holds anything)",
                     {STORE: str(Path(tmp) / "store-first")}, "auto"),
                    ("answers never scored before (reference side stored)",
                     {STORE: str(fresh)}, "auto"),
                    ("answers never scored before, one process",
                     {STORE: str(Path(tmp) / "store-one")}, "1"),
                    ("a rerun (result store warm)", {STORE: str(fresh)}, "auto"),
                    ("a rerun, one process", {STORE: str(fresh)}, "1"),
                    ("a rerun, the item store emptied (D3's GCNs read)", {STORE: str(fresh)},
                     "auto")]
            for run, stores, jobs in runs:
                if "emptied" in run:
                    for db in fresh.glob("items-*.sqlite*"):
                        db.unlink()
                env = {**ENV, **refs, **stores}
                out = Path(tmp) / f"report{len(reports)}.json"
                spin = _timed([sys.executable, "-c", SPIN])
                t = _timed([sys.executable, "-m", "pytest_graphinstruct", "score", "--suite",
                            args.suite, "--responses", str(answers), "--report", str(out),
                            "--jobs", jobs], env)
                ratios.setdefault(run, []).append(t / spin)
                print(f"[{rep + 1}] score, {len(suite) * args.k} answers, {run}: {t:.1f} s = "
                      f"{t / spin:.2f} yardsticks (25M additions: {spin:.2f} s)", flush=True)
                report = json.loads(out.read_text(encoding="utf-8"))
                report.pop("run", None)
                reports.append(report)
    if args.repeat > 1:
        for run, values in ratios.items():
            print(f"median of {len(values)}: {run}: {statistics.median(values):.2f} yardsticks "
                  f"({min(values):.2f}–{max(values):.2f})")
    print(f"reports identical: {all(r == reports[0] for r in reports)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
