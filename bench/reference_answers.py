"""The official references scored as model answers, and the digest of their report.

Shared by ``bench/score_bench.py``, ``bench/replay_bench.py`` and
``tests/run/test_score_digest.py``, so the bench times exactly the answers whose scores the test
pins.  Each instruction gets ``k`` samples cycling its references (a refusal when it has none:
an infeasible instruction), with the usage the bench has always given them.

The report is built through the one evaluation path (:func:`~pytest_graphinstruct.run.evaluate.
check` and :func:`~pytest_graphinstruct.run.evaluate.score`, then the run report's aggregation)
and written by :func:`~pytest_graphinstruct.run.writer.report_json`, whose floats are Python's
``repr`` (exact); its cell metadata names no path, machine or version, so the same answers give
the same bytes on any machine, in any process, under any ``PYTHONHASHSEED``.

``python bench/reference_answers.py --write`` recomputes the committed digests
(``tests/run/score_digest.json``): only for a change that is meant to change scores, said so in
its commit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.pools import ReferencePools
from pytest_graphinstruct.run.aggregate import build_run_report
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.evaluate import check, score
from pytest_graphinstruct.run.results import CellMetadata, Coverage, ItemResult, RunReport
from pytest_graphinstruct.run.writer import report_json
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.verifier import Verifier

ROOT = Path(__file__).resolve().parents[1]
#: the project's own reference pools: what ``score`` and the plugin use by default
PROJECT_POOLS = ROOT / "references" / "pools"
#: the committed digests (written by ``--write``, read by the test)
DIGESTS = ROOT / "tests" / "run" / "score_digest.json"
REFUSAL = "No such graph exists: the constraints are contradictory, so this is infeasible."
CELL = Cell("references", "zero-shot")


def reference_texts(inst: Instruction, k: int) -> list[str]:
    """``k`` answers to ``inst``: its references in turn, or a refusal when it has none."""
    raws = list(inst.references) or [REFUSAL]
    return [raws[i % len(raws)] for i in range(k)]


def reference_answers(inst: Instruction, k: int) -> list[Answer]:
    """:func:`reference_texts` as answers: 400 input tokens, a quarter of the characters as
    output tokens, one call each."""
    return [Answer(text=t, usage=Usage(400, len(t) // 4), calls=1)
            for t in reference_texts(inst, k)]


def few_per_level(suite: Iterable[Instruction], per_level: int = 2) -> list[Instruction]:
    """The fast tier's instructions, in suite order: of each level, the first infeasible one
    (when the level has one) and then the first feasible ones, ``per_level`` in all."""
    by_level: dict[int, list[Instruction]] = {}
    for inst in suite:
        by_level.setdefault(inst.level, []).append(inst)
    chosen: set[str] = set()
    for insts in by_level.values():
        infeasible = [i for i in insts if not i.feasible][:1]
        feasible = [i for i in insts if i.feasible]
        chosen.update(i.id for i in (infeasible + feasible)[:per_level])
    return [i for insts in by_level.values() for i in insts if i.id in chosen]


def reference_report(instructions: Sequence[Instruction], k: int,
                     pools: ReferencePools | None, verifier: Verifier | None = None) -> RunReport:
    """The run report of the references as answers (one cell, :data:`CELL`), through
    ``check`` + ``score`` and the run report's aggregation; no tool version in it."""
    verifier = verifier or Verifier()
    checked = [check(i, reference_answers(i, k), cell=CELL, verifier=verifier)
               for i in instructions]
    return report_of(instructions, score(checked, pools), k)


def report_of(instructions: Sequence[Instruction], results: Sequence[ItemResult],
              k: int) -> RunReport:
    """The run report of ``results`` (items of :data:`CELL`), its metadata free of paths,
    machine and version."""
    meta = CellMetadata(model=CELL.model, strategy=CELL.strategy, suite="official",
                        samples_per_instruction=k, pass_rule="all")
    report = build_run_report([(meta, results)],
                              suite_order={i.id: n for n, i in enumerate(instructions)},
                              coverage=Coverage(selected=len(results)))
    return replace(report, tool=None)


@dataclass(frozen=True)
class Digest:
    """sha256 of the whole report JSON, and of each item's part (to name what changed)."""

    report: str
    items: dict[str, str]

    @classmethod
    def of(cls, report: RunReport) -> Digest:
        text = report_json(report)
        items = {}
        for cell in report.cells:
            for item in cell.per_instruction:
                blob = json.dumps(item.to_json(), sort_keys=True, ensure_ascii=False)
                items[item.instruction_id] = hashlib.sha256(blob.encode()).hexdigest()[:16]
        return cls(hashlib.sha256(text.encode("utf-8")).hexdigest(), items)

    def differences(self, pinned: Digest, limit: int = 10) -> list[str]:
        """What differs from ``pinned``: the items by id, else the aggregates."""
        changed = sorted(set(self.items) ^ set(pinned.items)
                         | {i for i in self.items if self.items[i] != pinned.items.get(i)})
        lines = [f"item {i} differs" for i in changed[:limit]]
        if len(changed) > limit:
            lines.append(f"… and {len(changed) - limit} more items")
        if not changed and self.report != pinned.report:
            lines.append("every item is the same: the summary, per-level rows or Pareto differ")
        return lines

    def to_json(self) -> dict[str, object]:
        return {"report": self.report, "items": self.items}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Digest:
        items = data["items"]
        assert isinstance(items, dict)
        return cls(str(data["report"]), {str(k): str(v) for k, v in items.items()})


@dataclass(frozen=True)
class Variant:
    """A pinned configuration: how many instructions of each level (``None``: all), the
    samples per instruction, and whether the project's pools score D1 (else its formula)."""

    per_level: int | None
    k: int
    pools: bool


#: the pinned variants: the 4,000 answers score_bench.py times, and a fast tier
VARIANTS = {"full": Variant(None, 5, pools=True), "fast": Variant(2, 2, pools=False)}


def variant_report(name: str, suite: Sequence[Instruction], cache_dir: Path) -> RunReport:
    """The report of a pinned variant of :data:`VARIANTS` on ``suite`` (pool features cached
    under ``cache_dir``)."""
    v = VARIANTS[name]
    chosen = list(suite) if v.per_level is None else few_per_level(suite, v.per_level)
    pools = ReferencePools.load(PROJECT_POOLS, cache_dir=cache_dir) if v.pools else None
    return reference_report(chosen, v.k, pools)


def pinned(name: str) -> Digest:
    """The committed digest of a variant."""
    data = json.loads(DIGESTS.read_text(encoding="utf-8"))
    return Digest.from_json(data[name])


def main() -> int:
    import tempfile

    from pytest_graphinstruct.suite.loader import load_suite

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=str(ROOT.parent / "shared/official-suite/instructions"))
    ap.add_argument("--variant", choices=sorted(VARIANTS), action="append",
                    help="only these (default: every variant)")
    ap.add_argument("--write", action="store_true", help=f"write {DIGESTS.relative_to(ROOT)}")
    args = ap.parse_args()
    suite = list(load_suite(args.suite))
    out = json.loads(DIGESTS.read_text(encoding="utf-8")) if DIGESTS.is_file() else {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.variant or VARIANTS:
            digest = Digest.of(variant_report(name, suite, Path(tmp)))
            print(f"{name}: {digest.report} ({len(digest.items)} items)")
            out[name] = digest.to_json()
    if args.write:
        DIGESTS.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {DIGESTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
