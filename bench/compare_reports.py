"""Two reports of the same run on different D3 devices (or machines): do they agree?

The reports are compared as the project's pins are (``tests/pinning.py``,
``json_differences``): every verdict, outcome, string and integer exactly, every float within
its tolerance (1e-5 for a score, issue 35's bound) — all but the ``run`` records, which say
when, where and on which device each ran.  Prints the D3 device each report records, the
largest difference of an item's D3, and every difference (the first ten); exits 1 if there is
any.  Usage::

    python bench/compare_reports.py A.json B.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script (bench/ on the path): tests.pinning below
    sys.path.insert(0, str(ROOT))

from tests.pinning import json_differences, summarize  # noqa: E402


def _d3(report: dict[str, Any]) -> dict[tuple[int, str], float]:
    """Each item's D3 (cell index, instruction id), where it has one."""
    return {(c, r["instruction_id"]): r["dimension_scores"]["D3"]
            for c, cell in enumerate(report.get("cells", []))
            for r in cell.get("per_instruction", []) if r["dimension_scores"].get("D3") is not None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    args = ap.parse_args()
    a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (args.a, args.b))
    print("D3 device recorded: " + " / ".join(str((r.get("run") or {}).get("d3_device"))
                                              for r in (a, b)))
    d3a, d3b = _d3(a), _d3(b)
    common = d3a.keys() & d3b.keys()
    largest = max((abs(d3a[k] - d3b[k]) for k in common), default=0.0)
    print(f"items with D3 in both: {len(common)}, largest D3 difference {largest:.2e}")
    a.pop("run", None)
    b.pop("run", None)
    differences = list(json_differences(a, b))
    if differences:
        print(f"DISAGREE: {summarize(differences)}")
        return 1
    print("agree: every verdict and string exact, every float within its tolerance")
    return 0


if __name__ == "__main__":
    sys.exit(main())
