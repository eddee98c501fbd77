"""Access to the paper's published per-run score files (``../shared/published-results``).

They are read in place, never copied into the repository; tests using them skip when the folder
is absent.  See that folder's README for the schema.
"""

from __future__ import annotations

import csv
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2].parent / "shared" / "published-results"
QUALITY = ROOT / "quality"

STRATEGIES = ("zero-shot", "few-shot", "zero-cot", "few-cot")
SHORT = {"ZS": "zero-shot", "FS": "few-shot", "ZC": "zero-cot", "FC": "few-cot"}

#: the tables' model names → the score files' name prefixes
MODEL_FILES = {
    "Sonnet-4.6": "claudesonnet46",
    "Sonnet-4": "claudesonnet420250514",
    "Qwen3.5-397B-A17B": "qwen35397ba17b",
    "Qwen3.5-122B-A10B": "qwen35122ba10b",
    "Qwen3.5-35B-A3B": "qwen3535ba3b",
    "GPT-4.1": "gpt41",
    "GPT-4o": "gpt4o",
    "GPT-4o-mini": "gpt4omini",
    "GPT-3.5": "gpt35turbo",
    "DeepSeek-V3": "deepseekaiDeepSeekV3",
    "Llama-3.3-70B": "metallamaLlama3370BInstructTurbo",
    "Llama-3.1-8B": "metallamaMetaLlama318BInstruct",
}

requires_published = pytest.mark.skipif(
    not QUALITY.is_dir(), reason="../shared/published-results is not available"
)


def run_names() -> list[str]:
    """All run names (file names without ``.quality.json``), sorted."""
    return sorted(p.name.removesuffix(".quality.json") for p in QUALITY.glob("*.quality.json"))


@cache
def load(name: str) -> dict[str, Any]:
    """One run's score file."""
    with (QUALITY / f"{name}.quality.json").open(encoding="utf-8") as f:
        return json.load(f)


def baseline_cells() -> dict[tuple[str, str], str]:
    """The paper's 45 baseline cells: ``(model prefix, strategy) → run name``."""
    out: dict[tuple[str, str], str] = {}
    for name in run_names():
        for s in STRATEGIES:
            if name.endswith("-" + s) and "nothink" not in name:
                out[(name.removesuffix("-" + s), s)] = name
    return out


def table(name: str) -> list[dict[str, str]]:
    """A published leaderboard CSV as rows of strings."""
    with (ROOT / name).open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))
