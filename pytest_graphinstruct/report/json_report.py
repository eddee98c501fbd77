"""The JSON report of scoring recorded answers (the ``score`` command's output).

Schema (stable field names; later dimensions are added beside them)::

    {
      "schema": "graphinstruct-report/1",
      "metadata": {"tool": ..., "suite": ..., "responses": ..., "instructions_in_suite": N,
                   "instructions_scored": N, "missing_instructions": [...],
                   "unknown_instructions": [...], "skipped_lines": [...]},
      "per_level": {"0": {"instructions": N, "d4_mean": x}, ...},
      "per_instruction": [
        {"instruction_id": "L1-001", "level": 1, "feasible": true,
         "d4_instruction_score": x, "valid_samples": k,
         "samples": [{"parsed": bool, "refusal": bool,
                      "violations": [constraint strings as written in the instruction],
                      "derived_violations": [inferred / no-contradiction / task / feasibility],
                      "error": str | null}, ...],
         "dimension_scores": {"D1": x|null, ..., "D5": x|null}, "absent_dimensions": {...},
         "level_score": x|null, "level_score_with_d5": x|null, "missing_dimensions": [...],
         "tpv": x|null, "api_per_valid": x|null, "tokens": n|null, ...}, ...]
    }

``per_instruction`` follows suite order; the same inputs always give byte-identical output.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from pytest_graphinstruct import __version__
from pytest_graphinstruct.models.base import USAGE_RECORDED, Answer, Usage
from pytest_graphinstruct.models.recorded import Responses, Sample
from pytest_graphinstruct.score.d4 import instruction_d4, is_valid
from pytest_graphinstruct.score.instruction import score_instructions
from pytest_graphinstruct.suite.loader import Suite
from pytest_graphinstruct.verify.verdict import Source, Verification
from pytest_graphinstruct.verify.verifier import Verifier

SCHEMA = "graphinstruct-report/1"
_WRITTEN = (Source.EXPLICIT, Source.IMPLICIT)


def sample_entry(v: Verification) -> dict[str, Any]:
    """The report entry of one sample."""
    violations = [x.constraint for x in v.violations if x.source in _WRITTEN]
    derived = [x.constraint for x in v.violations
               if x.source not in _WRITTEN and x.source is not Source.PARSE]
    error = v.parse.reason if v.parse.outcome.value == "failure" else None
    return {
        "parsed": v.parse.parsed,
        "refusal": v.parse.refusal,
        "violations": violations,
        "derived_violations": derived,
        "error": error,
    }


def build_report(
    suite: Suite, responses: Responses, verifier: Verifier | None = None
) -> dict[str, Any]:
    """Verify and score every answered instruction of ``suite``.

    Instructions without a record are listed under ``metadata.missing_instructions``; records
    whose id is not in the suite under ``metadata.unknown_instructions`` (neither is scored).
    """
    verifier = verifier or Verifier()
    per_instruction: list[dict[str, Any]] = []
    missing: list[str] = []
    by_level: dict[int, list[float]] = {}
    scored = []
    for inst in suite:
        rec = responses.get(inst.id)
        if rec is None:
            missing.append(inst.id)
            continue
        verifications = [verifier.verify(inst, s.raw_output) for s in rec.samples]
        answers = [_answer(s) for s in rec.samples]
        scored.append((inst, answers, verifications))
    with_samples = [x for x in scored if x[1]]
    all_scores = dict(zip((x[0].id for x in with_samples),
                          score_instructions(with_samples), strict=True))
    for inst, _answers, verifications in scored:
        scores = all_scores.get(inst.id)
        # score_instruction already computed D4; an instruction recorded with no sample has 0
        d4 = scores.dimensions["D4"] if scores is not None else instruction_d4(inst, [])
        by_level.setdefault(inst.level, []).append(d4)
        entry = {
            "instruction_id": inst.id,
            "level": inst.level,
            "feasible": inst.feasible,
            "d4_instruction_score": d4,
            "valid_samples": sum(1 for v in verifications if is_valid(v)),
            "samples": [sample_entry(v) for v in verifications],
        }
        if scores is not None:
            entry.update(scores.to_json())
        per_instruction.append(entry)
    unknown = sorted(r.instruction_id for r in responses if r.instruction_id not in suite)
    return {
        "schema": SCHEMA,
        "metadata": {
            "tool": f"pytest-graphinstruct {__version__}",
            "suite": suite.root,
            "responses": responses.path,
            "instructions_in_suite": len(suite),
            "instructions_scored": len(per_instruction),
            "missing_instructions": missing,
            "unknown_instructions": unknown,
            "skipped_lines": list(responses.skipped),
        },
        "per_level": {
            str(lv): {"instructions": len(xs), "d4_mean": fmean(xs)}
            for lv, xs in sorted(by_level.items())
        },
        "per_instruction": per_instruction,
    }


def _answer(sample: Sample) -> Answer:
    usage = None
    if sample.input_tokens is not None or sample.output_tokens is not None:
        usage = Usage(sample.input_tokens, sample.output_tokens, USAGE_RECORDED)
    return Answer(text=sample.raw_output, usage=usage, calls=sample.api_calls)


def write_report(report: dict[str, Any], path: str | Path) -> None:
    """Write ``report`` as indented JSON (atomically: a crash never leaves half a file)."""
    from pytest_graphinstruct.report.summary import write_json

    write_json(report, path)


def level_lines(report: dict[str, Any]) -> Sequence[str]:
    """Short human summary lines of a report (one per level)."""
    out = []
    for lv, row in report["per_level"].items():
        out.append(f"L{lv}: {row['instructions']} instructions, mean D4 {row['d4_mean']:.4f}")
    return out
