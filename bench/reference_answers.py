"""The official references scored as model answers, and the pins of their report.

Shared by ``bench/score_bench.py``, ``bench/replay_bench.py`` and
``tests/run/test_score_digest.py``, so the bench times exactly the answers whose scores the test
pins.  Each instruction gets ``k`` samples cycling its references (a refusal when it has none:
an infeasible instruction), with the usage the bench has always given them.

The report is built through the one evaluation path (:func:`~pytest_graphinstruct.run.evaluate.
check` and :func:`~pytest_graphinstruct.run.evaluate.score`, then the run report's aggregation)
and written by :func:`~pytest_graphinstruct.run.records.writer.report_json`, whose floats are
Python's ``repr`` (exact); its cell metadata names no path, machine or version.

The pins (:class:`Pins`, ``tests/run/score_digest.json``) hold what must not change: each
item's outcome and every verdict, string and integer exactly (a hash of the item with its floats
left out), and its floats and the report's aggregates within the tolerances of
``tests/pinning.py`` (measured spread and reasons: ``docs/SCORING.md``, "Pinned scores").  The
last digits of D3 follow the CPU's instruction set (OpenBLAS and MKL pick their kernels by CPU,
torch its vectorized loops) and the device, so they cannot be pinned across machines; the
report's sha256 is kept too, with the machine that wrote it (:func:`machine`: the CPU, its
flags, Python and the numeric libraries' versions), and compared to the last digit only on that
machine, on request (``GI_EXACT_DIGESTS=1``).  The report is computed with every library held
to AVX2 kernels where the CPU has them (:data:`PINNED_ENV`: MKL's conditional numerical
reproducibility, OpenBLAS's Haswell kernels, torch's AVX2 loops), which narrows the spread
between CPUs but does not remove it.

``python bench/reference_answers.py [--variant NAME] [--out DIR] [--write]`` runs itself under
:data:`PINNED_ENV` (where it applies), compares each variant's report with the pins (prints
what differs), writes each report to ``DIR`` and, with ``--write``, rewrites the pins
(``tests/run/score_digest.json``): only for a change that is meant to change scores, said so in
its commit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.pools import ReferencePools
from pytest_graphinstruct.run.aggregate import build_run_report
from pytest_graphinstruct.run.config import Cell
from pytest_graphinstruct.run.evaluate import check, score
from pytest_graphinstruct.run.records.results import CellMetadata, Coverage, ItemResult, RunReport
from pytest_graphinstruct.run.records.writer import report_json
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.verifier import Verifier

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script (bench/ on the path): tests.pinning below
    sys.path.insert(0, str(ROOT))

from tests.pinning import (  # noqa: E402
    floats_agree,
    json_differences,
    shape_digest,
    split_floats,
    tolerance,
)

#: the project's own reference pools: what ``score`` and the plugin use by default
PROJECT_POOLS = ROOT / "references" / "pools"
#: the committed pins (written by ``--write``, read by the test)
PINS_FILE = ROOT / "tests" / "run" / "score_digest.json"
REFUSAL = "No such graph exists: the constraints are contradictory, so this is infeasible."
CELL = Cell("references", "zero-shot")
#: the environment the pinned reports are computed in: every library's kernels held to AVX2
PINNED_ENV = {"OPENBLAS_CORETYPE": "Haswell", "MKL_CBWR": "AVX2", "ATEN_CPU_CAPABILITY": "avx2",
              "DNNL_MAX_CPU_ISA": "AVX2"}
#: the environment variables that choose numeric kernels (part of :func:`machine`)
KERNEL_ENV = (*PINNED_ENV, "MKL_ENABLE_INSTRUCTIONS", "NPY_DISABLE_CPU_FEATURES")
#: the distributions whose versions the report's last digits depend on (part of :func:`machine`)
NUMERIC_DISTS = ("torch", "torch_geometric", "numpy", "scipy", "networkx")


def _cpuinfo() -> dict[str, str]:
    """The first processor's entries of Linux's ``/proc/cpuinfo`` (empty elsewhere)."""
    info: dict[str, str] = {}
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return info
    for line in text.splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        info.setdefault(key.strip(), value.strip())
    return info


def unpinnable_reason() -> str | None:
    """Why :data:`PINNED_ENV` does not apply here (``None``: it does): it needs an x86-64 CPU
    with AVX2 (read from Linux's ``/proc/cpuinfo``)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"PINNED_ENV needs an x86-64 CPU with AVX2, this is {platform.machine()}"
    flags = _cpuinfo().get("flags")
    if flags is None:
        return "cannot tell whether the CPU has AVX2 (no /proc/cpuinfo)"
    return None if "avx2" in flags.split() else "PINNED_ENV needs a CPU with AVX2"


def kernel_env() -> dict[str, str]:
    """The environment the reports are computed in: :data:`PINNED_ENV` where it applies, else
    nothing (the libraries' own choice)."""
    return dict(PINNED_ENV) if unpinnable_reason() is None else {}


def in_kernel_env() -> bool:
    """Whether this process runs under :func:`kernel_env` (read by the libraries at load)."""
    return all(os.environ.get(k) == v for k, v in kernel_env().items())


def machine(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a report's last digits depend on besides the code and the answers: the CPU (model,
    family, model number, stepping, instruction-set flags), Python and :data:`NUMERIC_DISTS`'
    versions, and :data:`KERNEL_ENV` as ``env`` (default: this process's) sets them."""
    from importlib import metadata

    env = os.environ if env is None else env
    info = _cpuinfo()
    out = {"cpu": info.get("model name") or platform.processor() or platform.machine(),
           "cpu_id": "/".join(info.get(k, "?") for k in ("cpu family", "model", "stepping")),
           "cpu_flags": " ".join(sorted(info.get("flags", "").split())),
           "python": platform.python_version()}
    for dist in NUMERIC_DISTS:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = ""
    out["kernel_env"] = " ".join(f"{k}={env[k]}" for k in KERNEL_ENV if k in env)
    return out


def machine_differences(pinned: Mapping[str, str], here: Mapping[str, str]) -> list[str]:
    """How the machine ``here`` differs from ``pinned`` (:func:`machine`), one entry each."""
    out = []
    for key in sorted(set(pinned) | set(here)):
        a, b = pinned.get(key, ""), here.get(key, "")
        if a == b:
            continue
        if key == "cpu_flags":
            gone, new = sorted(set(a.split()) - set(b.split())), sorted(
                set(b.split()) - set(a.split()))
            listed = [f"-{f}" for f in gone] + [f"+{f}" for f in new]
            more = f" (and {len(listed) - 8} more)" if len(listed) > 8 else ""
            out.append(f"CPU flags {' '.join(listed[:8])}{more}")
        else:
            out.append(f"{key} {a!r} there, {b!r} here")
    return out


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


def _exact(_path: str) -> float:
    return 0.0


@dataclass(frozen=True)
class ItemPin:
    """One item of a pinned report: its outcome, :func:`~tests.pinning.shape_digest` (every
    verdict, string and integer) and its floats in order."""

    outcome: str
    shape: str
    floats: tuple[float, ...]

    def to_json(self) -> dict[str, object]:
        return {"outcome": self.outcome, "shape": self.shape, "floats": list(self.floats)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ItemPin:
        return cls(str(data["outcome"]), str(data["shape"]),
                   tuple(float(f) for f in data["floats"]))


def _items(report: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["instruction_id"]: item for cell in report["cells"]
            for item in cell["per_instruction"]}


def _aggregates(report: Mapping[str, Any]) -> dict[str, Any]:
    """The report without its items: every cell's ``per_instruction`` emptied."""
    return {**report, "cells": [{**c, "per_instruction": []} for c in report["cells"]]}


@dataclass(frozen=True)
class Pins:
    """What a variant's report must hold: per item an :class:`ItemPin`, the aggregates (the
    report without its items: summary, per-level rows, Pareto, coverage) as they were written,
    and, for the machine that wrote them (:func:`machine`), the sha256 of the whole report."""

    report: str
    machine: dict[str, str]
    items: dict[str, ItemPin]
    aggregates: dict[str, Any]

    @classmethod
    def of_text(cls, text: str, machine: dict[str, str]) -> Pins:
        """The pins of a written report
        (:func:`~pytest_graphinstruct.run.records.writer.report_json`), computed on ``machine``."""
        report = json.loads(text)
        items = {}
        for iid, item in _items(report).items():
            _, floats = split_floats(item)
            items[iid] = ItemPin(str(item.get("outcome")), shape_digest(item),
                                 tuple(v for _, v in floats))
        return cls(hashlib.sha256(text.encode("utf-8")).hexdigest(), machine, items,
                   _aggregates(report))

    def differences(self, text: str, *, exact: bool = False) -> list[str]:
        """Where the written report ``text`` differs from the pins, one line each naming the
        item (or aggregate) and field, expected and observed: an item missing or not pinned,
        its outcome, its other non-float content, a float beyond its tolerance
        (:func:`tests.pinning.tolerance`; ``exact``: any float that is not the same)."""
        tol = _exact if exact else tolerance
        report = json.loads(text)
        observed = _items(report)
        out = [f"item {i}: missing" for i in self.items if i not in observed]
        out += [f"item {i}: not pinned" for i in observed if i not in self.items]
        for iid, item in observed.items():
            pin = self.items.get(iid)
            if pin is None:
                continue
            outcome = str(item.get("outcome"))
            if outcome != pin.outcome:
                out.append(f"item {iid} outcome: expected {pin.outcome!r}, observed {outcome!r}")
            elif shape_digest(item) != pin.shape:
                out.append(f"item {iid}: a verdict, string or integer differs (its floats "
                           "are not compared)")
            else:
                _, floats = split_floats(item)
                for (path, value), want in zip(floats, pin.floats, strict=True):
                    if not floats_agree(want, value, tol(path)):
                        out.append(f"item {iid} {path}: expected {want!r}, observed {value!r} "
                                   f"(|Δ| {abs(want - value):.2g} > {tol(path):g})")
        out += [f"aggregate {line}" for line in
                json_differences(self.aggregates, _aggregates(report), tol=tol)]
        return out

    def to_json(self) -> dict[str, object]:
        return {"report": self.report, "machine": self.machine, "aggregates": self.aggregates,
                "items": {i: p.to_json() for i, p in self.items.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Pins:
        return cls(str(data["report"]), {str(k): str(v) for k, v in data["machine"].items()},
                   {str(i): ItemPin.from_json(p) for i, p in data["items"].items()},
                   dict(data["aggregates"]))


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


def pinned(name: str) -> Pins:
    """The committed pins of a variant."""
    return Pins.from_json(json.loads(PINS_FILE.read_text(encoding="utf-8"))[name])


def pins_text(pins: Mapping[str, Pins]) -> str:
    """The pins file: JSON with one line per item (a rewrite's diff names the items it moved)."""
    variants = []
    for name, p in sorted(pins.items()):
        data = p.to_json()
        items = data.pop("items")
        assert isinstance(items, dict)
        fields = [f"  {json.dumps(k)}: " + json.dumps(v, indent=1, ensure_ascii=False).replace(
            "\n", "\n  ") for k, v in sorted(data.items())]  # the report's own key order
        rows = ",\n".join(f"   {json.dumps(i)}: {json.dumps(v)}" for i, v in items.items())
        fields.append('  "items": {\n' + rows + "\n  }")
        variants.append(f" {json.dumps(name)}: {{\n" + ",\n".join(fields) + "\n }")
    return "{\n" + ",\n".join(variants) + "\n}\n"


def read_pins() -> dict[str, Pins]:
    """Every variant's committed pins that can be read (none when the file is absent; a
    variant in an older format is left out, so ``--write`` replaces it)."""
    if not PINS_FILE.is_file():
        return {}
    out = {}
    for name, data in json.loads(PINS_FILE.read_text(encoding="utf-8")).items():
        try:
            out[name] = Pins.from_json(data)
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return out


def compared(name: str, text: str, pins: Pins | None) -> list[str]:
    """Lines that say how the report ``text`` of variant ``name`` stands against ``pins``:
    within the tolerances or not (with what differs), and to the last digit when ``pins``
    were written on this machine."""
    if pins is None:
        return [f"{name}: no pins to compare with"]
    diffs = pins.differences(text)
    lines = [f"{name}: " + ("as pinned, within the tolerances" if not diffs else
                            f"DIFFERS from the pins in {len(diffs)} places:")]
    lines += [f"  {d}" for d in diffs[:10]] + ([f"  … and {len(diffs) - 10} more"]
                                               if len(diffs) > 10 else [])
    other = machine_differences(pins.machine, machine())
    if other:
        lines.append(f"{name}: exact digest not compared (pinned on another machine: "
                     + "; ".join(other[:3]) + ")")
    elif hashlib.sha256(text.encode("utf-8")).hexdigest() == pins.report:
        lines.append(f"{name}: the pinned report to the last digit (this machine wrote it)")
    else:
        lines.append(f"{name}: NOT the pinned report to the last digit, on the machine that "
                     f"wrote it ({len(pins.differences(text, exact=True))} values differ)")
    return lines


def main() -> int:
    import tempfile

    from pytest_graphinstruct.suite.loader import load_suite

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=str(ROOT.parent / "shared/official-suite/instructions"))
    ap.add_argument("--variant", choices=sorted(VARIANTS), action="append",
                    help="only these (default: every variant)")
    ap.add_argument("--out", default=None, help="write each variant's report JSON here")
    ap.add_argument("--write", action="store_true", help=f"write {PINS_FILE.relative_to(ROOT)}")
    args = ap.parse_args()
    if not in_kernel_env():  # the libraries read it when they load: start again under it
        os.execve(sys.executable, [sys.executable, __file__, *sys.argv[1:]],
                  {**os.environ, **kernel_env()})
    suite = list(load_suite(args.suite))
    pins = read_pins()
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.variant or VARIANTS:
            text = report_json(variant_report(name, suite, Path(tmp)))
            if args.out:
                Path(args.out, f"{name}.json").write_text(text, encoding="utf-8")
            print("\n".join(compared(name, text, pins.get(name))))
            if args.write:
                pins[name] = Pins.of_text(text, machine())
    if args.write:
        PINS_FILE.write_text(pins_text(pins), encoding="utf-8")
        print(f"wrote {PINS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
