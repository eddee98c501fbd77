"""Test data for the leaderboard and analyses tests: synthetic release-format score files, and
the published score files and paper tables (read from ../shared, skipped when absent)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from pytest_graphinstruct.report.analyses.models_table import load_models_table
from pytest_graphinstruct.report.analyses.run_set import Run, read_runs

SHARED = Path(__file__).resolve().parents[4] / "shared"
QUALITY = SHARED / "published-results" / "quality"
PAPER = SHARED / "paper" / "graphinstruct-paper.txt"
TOP15 = SHARED / "published-results" / "tab1_quality_top15.csv"
WEIGHTS = (0.05, 0.10, 0.15, 0.20, 0.25, 0.25)
HALF = 0.0005 + 1e-9
"""Within rounding of the paper's third decimal."""
METHOD_PARTS = ("-oracle", "-caap", "-combined", "-retry", "-sc", "-vgig")


def write_cell(folder: Path, model: str, strategy: str, levels: Mapping[int, Sequence[float]],
               *, tpv: float | None = 500.0, name: str | None = None) -> Path:
    """A release-format ``<model>-<strategy>.quality.json`` whose items at level ``L`` have the
    level scores ``levels[L]`` (ids ``L<L>-<NNN>``) and the given TPV."""
    items = []
    for lv, scores in levels.items():
        for i, s in enumerate(scores):
            items.append({"instruction_id": f"L{lv}-{i + 1:03d}", "level": lv,
                          "d1_valid_rate": 1.0, "d4_instruction_score": s,
                          "d5_tokens_per_valid": tpv,
                          "dimension_scores": {"D1": s, "D2": 0.0, "D3": 0.0, "D4": s,
                                               "D5": 0.5},
                          "level_score": s})
    per_level = {str(lv): sum(xs) / len(xs) for lv, xs in levels.items()}
    total = sum(WEIGHTS[lv] * v for lv, v in ((int(k), v) for k, v in per_level.items()))
    path = folder / (name or f"{model}-{strategy}.quality.json")
    path.write_text(json.dumps({"per_instruction": items, "per_level_scores": per_level,
                                "total_score": total, "final_score": total,
                                "metadata": {"model": model, "strategy": strategy}}),
                    encoding="utf-8")
    return path


def uniform(value: float, n: int = 4) -> dict[int, list[float]]:
    """Every level with ``n`` items of score ``value``."""
    return {lv: [value] * n for lv in range(6)}


STRATS = ("zero-shot", "few-shot", "zero-cot", "few-cot")


def family(folder: Path) -> list[Path]:
    """GPT-4o (T2, scale 3) and GPT-4o-mini (T3, scale 2), one GPT family, each with the four
    strategies at a uniform score (0.8 and 0.6): few-shot lifts L4 by 0.1, zero-CoT moves L2 by
    +0.02 (GPT-4o) and -0.04 (mini); TPV 500 for zero-shot, 1500 for the others."""
    files = []
    for model, base in (("gpt4o", 0.8), ("gpt4omini", 0.6)):
        for s in STRATS:
            levels = uniform(base)
            if s == "few-shot":
                levels[4] = [base + 0.1] * 4
            if s == "zero-cot":
                levels[2] = [base + (0.02 if model == "gpt4o" else -0.04)] * 4
            files.append(write_cell(folder, model, s, levels, tpv=500 if s == "zero-shot"
                                    else 1500))
    return files


def published_files(baseline_only: bool = False) -> list[Path]:
    if not QUALITY.is_dir():
        pytest.skip("../shared/published-results/quality is absent")
    files = sorted(QUALITY.glob("*.quality.json"))
    if baseline_only:
        files = [f for f in files if not any(p in f.name for p in METHOD_PARTS)]
    return files


def published_runs(baseline_only: bool = False) -> list[Run]:
    return read_runs(published_files(baseline_only), load_models_table())


def paper_table(caption: str, end: str) -> list[list[str]]:
    """The tab-separated rows of the paper table whose caption starts with ``caption``, up to
    the first line starting with ``end`` (header and blank lines included as read)."""
    if not PAPER.is_file():
        pytest.skip("../shared/paper is absent")
    lines = PAPER.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(caption))
    rows = []
    for line in lines[start + 1:]:
        if line.startswith(end):
            break
        if "\t" in line:
            rows.append(line.split("\t"))
    return rows


def number(text: str) -> float:
    """A paper cell as a number: ``$\\mathbf{-0.034}$`` → -0.034, ``+0.007`` → 0.007."""
    m = re.search(r"[-+−]?\d+\.\d+", text.replace("−", "-"))
    assert m is not None, text
    return float(m.group(0))
