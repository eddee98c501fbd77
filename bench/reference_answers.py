"""The official references scored as model answers, and the digest of their report.

Shared by ``bench/score_bench.py``, ``bench/replay_bench.py`` and
``tests/run/test_score_digest.py``, so the bench times exactly the answers whose scores the test
pins.  Each instruction gets ``k`` samples cycling its references (a refusal when it has none:
an infeasible instruction), with the usage the bench has always given them.

The report is built through the one evaluation path (:func:`~pytest_graphinstruct.run.evaluate.
check` and :func:`~pytest_graphinstruct.run.evaluate.score`, then the run report's aggregation)
and written by :func:`~pytest_graphinstruct.run.writer.report_json`, whose floats are Python's
``repr`` (exact); its cell metadata names no path, machine or version.

The last digits of some floats depend on the CPU's instruction set: OpenBLAS (numpy, scipy) and
MKL (torch's matrix products, D3's GCN) pick their kernels by CPU, and torch its vectorized
loops (AVX-512 vs AVX2 changes D3 by ~1e-10 and the level scores and S_total with it).  So the
pinned digests are computed with every library held to AVX2 (:data:`PINNED_ENV`: MKL's
conditional numerical reproducibility, OpenBLAS's Haswell kernels, torch's AVX2 loops): the same
bytes on any x86-64 CPU with AVX2, in any process, under any ``PYTHONHASHSEED`` or thread count.

``python bench/reference_answers.py [--variant NAME] [--out DIR] [--write]`` runs itself under
:data:`PINNED_ENV`, prints the digests, writes each report to ``DIR`` and, with ``--write``,
recomputes the committed digests (``tests/run/score_digest.json``): only for a change that is
meant to change scores, said so in its commit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
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
#: the environment the pinned digests are computed in: every library's kernels held to AVX2
PINNED_ENV = {"OPENBLAS_CORETYPE": "Haswell", "MKL_CBWR": "AVX2", "ATEN_CPU_CAPABILITY": "avx2",
              "DNNL_MAX_CPU_ISA": "AVX2"}


def in_pinned_env() -> bool:
    """Whether this process runs under :data:`PINNED_ENV` (read by the libraries at load)."""
    return all(os.environ.get(k) == v for k, v in PINNED_ENV.items())


def unpinnable_reason() -> str | None:
    """Why this machine cannot reproduce the pinned digests (``None``: it can): they need an
    x86-64 CPU with AVX2 (read from Linux's ``/proc/cpuinfo``)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"the pinned digests need an x86-64 CPU with AVX2, this is {platform.machine()}"
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8").split()
    except OSError:
        return "cannot tell whether the CPU has AVX2 (no /proc/cpuinfo)"
    return None if "avx2" in flags else "the pinned digests need a CPU with AVX2"


def reference_texts(inst: Instruction, k: int) -> list[str]:
    """``k`` answers to ``inst``: its references in turn, or a refusal when it has none."""
    raws = list(inst.references) or [REFUSAL]
    return [raws[i % len(raws)] for i in range(k)]


def write_recorded(path: Path, suite: Iterable[Instruction], k: int) -> None:
    """The references as a recorded-answers file (``score --responses``, ``--gi-replay``): per
    instruction ``k`` samples of :func:`reference_texts`, 400 input tokens and a quarter of the
    text's characters as output tokens, one call each."""
    with path.open("w", encoding="utf-8") as f:
        for inst in suite:
            f.write(json.dumps({"instruction_id": inst.id, "level": inst.level, "samples": [
                {"raw_output": t, "input_tokens": 400, "output_tokens": len(t) // 4,
                 "api_calls": 1} for t in reference_texts(inst, k)]}) + "\n")


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
        return cls.of_text(report_json(report))

    @classmethod
    def of_text(cls, text: str) -> Digest:
        """The digest of a written report (:func:`~pytest_graphinstruct.run.writer.report_json`)."""
        items = {}
        for cell in json.loads(text)["cells"]:
            for item in cell["per_instruction"]:
                blob = json.dumps(item, sort_keys=True, ensure_ascii=False)
                items[item["instruction_id"]] = hashlib.sha256(blob.encode()).hexdigest()[:16]
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
    ap.add_argument("--out", default=None, help="write each variant's report JSON here")
    ap.add_argument("--write", action="store_true", help=f"write {DIGESTS.relative_to(ROOT)}")
    args = ap.parse_args()
    if not in_pinned_env():  # the libraries read it when they load: start again under it
        os.execve(sys.executable, [sys.executable, __file__, *sys.argv[1:]],
                  {**os.environ, **PINNED_ENV})
    suite = list(load_suite(args.suite))
    out = json.loads(DIGESTS.read_text(encoding="utf-8")) if DIGESTS.is_file() else {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.variant or VARIANTS:
            text = report_json(variant_report(name, suite, Path(tmp)))
            if args.out:
                Path(args.out, f"{name}.json").write_text(text, encoding="utf-8")
            digest = Digest.of_text(text)
            print(f"{name}: {digest.report} ({len(digest.items)} items)")
            out[name] = digest.to_json()
    if args.write:
        DIGESTS.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {DIGESTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
