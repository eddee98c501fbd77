"""The older report shapes, as committed fixtures: ``graphinstruct-report/1`` (a plugin cell, and
a ``score`` command report) and the release's ``*.quality.json``; built small, so a test can
change one field."""

from __future__ import annotations

from typing import Any

from pytest_graphinstruct.run.records.results import PREVIOUS_SCHEMA
from pytest_graphinstruct.vocab import LEVELS


def quality(**kw: Any) -> dict[str, Any]:
    """A small release quality.json."""
    rows = [{"instruction_id": f"L{lv}-000", "level": lv, "d1_valid_rate": 1.0,
             "d4_instruction_score": 1.0 if lv % 2 else 0.5, "d5_tokens_per_valid": 100.0 * lv,
             "dimension_scores": {"D1": 0.9, "D2": 0.8, "D3": 0.7, "D4": 1.0, "D5": None},
             "level_score": 0.8} for lv in LEVELS]
    data: dict[str, Any] = {"per_instruction": rows,
                            "per_level_scores": {str(lv): 0.8 for lv in LEVELS},
                            "total_score": 0.8, "final_score": 0.8}
    data.update(kw)
    return data



def v1_sample(**kw: Any) -> dict[str, Any]:
    return {"parsed": True, "refusal": False, "violations": [], "derived_violations": [],
            "error": None, "input_tokens": 30, "output_tokens": 70, "usage_source": "provider",
            "api_calls": 1, "truncated": False, **kw}


def v1_item(model: str, strategy: str, iid: str, score: float, **kw: Any) -> dict[str, Any]:
    """A v1 plugin item: the item record with the scores merged in (``tpv``, not
    ``d5_tokens_per_valid``; no ``d1_valid_rate``)."""
    return {"instruction_id": iid, "level": int(iid[1]), "cell": f"{model}-{strategy}",
            "model": model, "strategy": strategy, "method": "baseline", "feasible": True,
            "size": "small", "outcome": "passed", "error": None, "d4_instruction_score": 1.0,
            "valid_samples": 1, "tokens": 200, "api_calls": 2,
            "samples": [v1_sample(), v1_sample(parsed=False, error="no graph")],
            "dimension_scores": {"D1": 0.5, "D2": 0.5, "D3": None, "D4": 1.0, "D5": 0.6},
            "absent_dimensions": {"D3": "no pool"}, "level_score": score,
            "level_score_with_d5": score, "missing_dimensions": ["D3"], "tpv": 200.0,
            "api_per_valid": 2.0, "d5_valid": 1, "details": {}, **kw}


def v1_cell(model: str, strategy: str) -> dict[str, Any]:
    items = [v1_item(model, strategy, "L1-000", 0.8),
             v1_item(model, strategy, "L1-001", 0.6, outcome="failed"),
             v1_item(model, strategy, "L2-000", 0.7)]
    dims = {"D1": 0.5, "D2": 0.5, "D3": None, "D4": 1.0, "D5": 0.6}
    return {
        "schema": PREVIOUS_SCHEMA,
        "metadata": {"tool": "pytest-graphinstruct 0.0.9", "model": model,
                     "strategy": strategy, "method": "baseline", "constraint": None,
                     "model_info": None, "suite": "instructions", "levels": [1, 2],
                     "samples_per_instruction": 2, "pass_rule": "all",
                     "decoding": {"temperature": 0.0}, "partial": False, "quality_only": True,
                     "missing_dimensions": ["D3"]},
        "summary": {"items": 3, "passed": 2, "failed": 1, "error": 0, "skipped": 0,
                    "infra_errors": 0, "s_total": 0.245, "s_total_renormalized": 0.7,
                    "s_total_ci95": [0.6, 0.8], "levels_present": [1, 2],
                    "levels_missing": [0, 3, 4, 5], "tokens_total": 600,
                    "usage_missing_items": 0, "usage_sources": {"provider": 6},
                    "valid_outputs": 3, "tpv": 200.0, "api_calls": 6,
                    "pareto_optimal": True, "pareto_bonus": 1, "pareto_compared_cells": 1,
                    "s_final": 0.28175, "q_per_ktpv": 3.5, "frontier_distance": 0.0},
        "per_level": {
            "1": {"items": 2, "passed": 1, "failed": 1, "error": 0, "skipped": 0,
                  "pass_rate": 0.5, "dimensions": dims, "level_score": 0.7,
                  "level_score_ci95": [0.6, 0.8], "scored_items": 2},
            "2": {"items": 1, "passed": 1, "failed": 0, "error": 0, "skipped": 0,
                  "pass_rate": 1.0, "dimensions": dims, "level_score": 0.7,
                  "level_score_ci95": [0.7, 0.7], "scored_items": 1}},
        "per_instruction": items,
    }



def v1_score() -> dict[str, Any]:
    """A v1 ``score`` command report (no model or outcome; the model is the responses file's
    name)."""
    return {
        "schema": PREVIOUS_SCHEMA,
        "metadata": {"tool": "pytest-graphinstruct 0.0.9", "suite": "instructions",
                     "responses": "runs/gpt4o.jsonl", "instructions_in_suite": 3,
                     "instructions_scored": 2, "missing_instructions": ["L1-002"],
                     "unknown_instructions": [], "skipped_lines": []},
        "per_level": {"1": {"instructions": 2, "d4_mean": 0.5}},
        "per_instruction": [
            {"instruction_id": "L1-000", "level": 1, "feasible": True,
             "d4_instruction_score": 1.0, "valid_samples": 1,
             "samples": [{"parsed": True, "refusal": False, "violations": [],
                          "derived_violations": [], "error": None}],
             "dimension_scores": {"D1": 1.0, "D2": 0.5, "D3": None, "D4": 1.0, "D5": 0.7},
             "absent_dimensions": {"D3": "no pool"}, "level_score": 0.9,
             "level_score_with_d5": 0.85, "missing_dimensions": ["D3"], "tpv": 70.0,
             "api_per_valid": 1.0, "tokens": 70, "d5_valid": 1, "details": {}},
            {"instruction_id": "L1-001", "level": 1, "feasible": True,
             "d4_instruction_score": 0.0, "valid_samples": 0, "samples": []},
        ],
    }
