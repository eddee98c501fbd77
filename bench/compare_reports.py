"""Two reports of the same run on different D3 devices (or machines): do they agree?

Prints, for each cell, the largest difference of an item's D3 and of each level score, whether
every item's verdict (its outcome and each sample's pass) is the same, and the D3 device each
report records.  Exits 1 when a verdict differs or an item's D3 moves by more than ``--tol``
(default 1e-5, issue 35's bound).  Usage::

    python bench/compare_reports.py A.json B.json [--tol 1e-5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_graphinstruct.run.records.reader import read_report


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--tol", type=float, default=1e-5)
    args = ap.parse_args()
    a, b = read_report(args.a), read_report(args.b)
    devices = [None if r.run is None else r.run.d3_device for r in (a, b)]
    print(f"D3 device recorded: {devices[0]} / {devices[1]}")
    if len(a.cells) != len(b.cells) or not a.cells:
        print(f"DISAGREE: {len(a.cells)} cell(s) against {len(b.cells)}")
        return 1
    ok = True
    for ca, cb in zip(a.cells, b.cells, strict=True):
        items_b = {r.instruction_id: r for r in cb.per_instruction}
        label = ca.metadata.label
        d3_max, verdicts_differ = 0.0, []
        for ra in ca.per_instruction:
            rb = items_b.get(ra.instruction_id)
            if rb is None:
                verdicts_differ.append(f"{ra.instruction_id} missing")
                continue
            verdicts = [(s.violations, s.refusal, s.error) for s in ra.samples]
            if (ra.outcome, verdicts) != (rb.outcome, [(s.violations, s.refusal, s.error)
                                                       for s in rb.samples]):
                verdicts_differ.append(ra.instruction_id)
            d3a, d3b = ra.dimension_scores.get("D3"), rb.dimension_scores.get("D3")
            if (d3a is None) != (d3b is None):
                verdicts_differ.append(f"{ra.instruction_id} D3 absent in one")
            elif d3a is not None and d3b is not None:
                d3_max = max(d3_max, abs(d3a - d3b))
        levels = {lv: abs(qa - qb) for lv, qa in ca.per_level_scores.items()
                  for qb in [cb.per_level_scores.get(lv)] if qa is not None and qb is not None}
        print(f"{label}: items {len(ca.per_instruction)}, verdicts differ: "
              f"{len(verdicts_differ)} {verdicts_differ[:5]}, largest item D3 difference "
              f"{d3_max:.2e}, level quality differences "
              + ", ".join(f"L{lv} {d:.1e}" for lv, d in sorted(levels.items())))
        ok = ok and not verdicts_differ and d3_max <= args.tol
    print("agree" if ok else "DISAGREE")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
