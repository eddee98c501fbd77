"""The older report shapes migrated to the current records: ``graphinstruct-report/1`` (one
cell, several, a ``score`` report) and the release's ``*.quality.json`` files (and the
leaderboard tables they reproduce).

The release files are read from ``../shared/published-results`` (never copied into the
repository); the tests that need them skip when the folder is absent.  The small shapes are
committed fixtures (:mod:`tests.run.old_reports`).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest

from pytest_graphinstruct.run.aggregate import cell_point
from pytest_graphinstruct.run.records.migrations import (
    RELEASE_SOURCE,
    finite,
    from_release,
    from_v1,
)
from pytest_graphinstruct.run.records.results import (
    PREVIOUS_SCHEMA,
    CellReport,
    ReportError,
    RunReport,
    SampleResult,
)
from pytest_graphinstruct.run.records.writer import report_json
from pytest_graphinstruct.score.pareto import analyze
from pytest_graphinstruct.vocab import DIMENSIONS, LEVELS, STRATEGIES
from tests.report.schema_check import assert_valid_report
from tests.run.old_reports import quality, v1_cell, v1_score

PUBLISHED = Path(__file__).resolve().parents[3].parent / "shared" / "published-results"
SUFFIX = ".quality.json"


@pytest.fixture(scope="module")
def published() -> Path:
    """The release's published results; skips the test when they are not on this machine."""
    if not (PUBLISHED / "quality").is_dir():
        pytest.skip(f"published results not found ({PUBLISHED})")
    return PUBLISHED


def release_files(root: Path) -> list[Path]:
    return sorted((root / "quality").glob("*" + SUFFIX))


def stem(path: Path) -> str:
    return path.name[: -len(SUFFIX)]


def _read(path: Path) -> RunReport:
    """A release file migrated (as the reader does, without the file's errors)."""
    return from_release(json.loads(path.read_text(encoding="utf-8")), path.name)


@pytest.fixture(scope="module")
def release(published: Path) -> dict[str, tuple[dict[str, Any], RunReport]]:
    """Every release file: ``{stem: (its JSON, what read_report makes of it)}``."""
    return {stem(p): (json.loads(p.read_text(encoding="utf-8")), _read(p))
            for p in release_files(published)}


# -- the release's quality.json files ----------------------------------------------------------


@pytest.mark.slow
def test_the_release_folder_holds_72_files_10_without_metadata(
    release: dict[str, tuple[dict[str, Any], RunReport]],
) -> None:
    assert len(release) == 72
    assert sum("metadata" not in data for data, _ in release.values()) == 10


def test_every_release_file_reads(release: dict[str, tuple[dict[str, Any], RunReport]]) -> None:
    for name, (data, report) in release.items():
        (cell,) = report.cells
        model, _, strategy = name.partition("-")
        meta, s = cell.metadata, cell.summary
        assert (cell.label, meta.model, meta.strategy, meta.method) == (
            name, model, strategy, "baseline"), name
        assert meta.source == RELEASE_SOURCE and report.tool is None
        assert meta.samples_per_instruction == (data.get("metadata") or {}).get("samples")
        assert s.s_total == data["total_score"] and s.s_final == data["final_score"], name
        assert s.s_total_renormalized == pytest.approx(data["total_score"], abs=1e-12)
        assert s.levels_present == LEVELS and s.levels_missing == ()
        assert {str(lv): row.level_score for lv, row in cell.per_level.items()} == (
            data["per_level_scores"])
        rows = data["per_instruction"]
        assert [r.instruction_id for r in cell.per_instruction] == [
            r["instruction_id"] for r in rows]
        for got, row in zip(cell.per_instruction, rows, strict=True):
            assert (got.level, got.d4_instruction_score, got.valid_rate, got.tpv,
                    got.level_score) == (row["level"], row["d4_instruction_score"],
                                         row["d1_valid_rate"], row["d5_tokens_per_valid"],
                                         row["level_score"])
            assert dict(got.dimension_scores) == {d: row["dimension_scores"].get(d)
                                                  for d in DIMENSIONS}
            assert got.passed == (row["d4_instruction_score"] == 1.0)
        assert s.items == len(rows) and s.passed + s.failed == len(rows)
        tpvs = [r["d5_tokens_per_valid"] for r in rows]
        assert s.tpv == pytest.approx(fmean(
            t for t in tpvs if t is not None and math.isfinite(t) and t > 0), rel=1e-12)


@pytest.mark.parametrize(
    ("name", "model", "strategy"),
    [
        # no metadata: from the file name
        ("claudesonnet420250514-zero-shot", "claudesonnet420250514", "zero-shot"),
        ("gpt35turbo-few-cot", "gpt35turbo", "few-cot"),
        # metadata spelling the model otherwise (QwenQwen35122BA10B): the file name wins
        ("qwen35122ba10b-zero-shot", "qwen35122ba10b", "zero-shot"),
        ("gpt4omini-few-shot", "gpt4omini", "few-shot"),  # metadata: gpt-4o-mini
        # method runs, whose metadata says model gpt-4o-mini / strategy zero-shot
        ("gpt4omini-vgig-T5", "gpt4omini", "vgig-T5"),
        ("gpt4omini-caap", "gpt4omini", "caap"),
        ("deepseekaiDeepSeekV3-combined", "deepseekaiDeepSeekV3", "combined"),
        ("qwen3535ba3b-nothink-sc", "qwen3535ba3b", "nothink-sc"),
        ("qwen3535ba3b-oracle", "qwen3535ba3b", "oracle"),
    ],
)
def test_release_names(published: Path, name: str, model: str, strategy: str) -> None:
    (cell,) = _read(published / "quality" / (name + SUFFIX)).cells
    assert (cell.metadata.model, cell.metadata.strategy, cell.label) == (model, strategy, name)


@pytest.mark.slow
def test_all_release_files_together_have_distinct_labels(published: Path) -> None:
    files = release_files(published)
    assert [_read(p).cells[0].label for p in files] == [stem(p) for p in files]


@pytest.mark.slow
def test_a_release_file_read_is_a_valid_report_that_round_trips(published: Path) -> None:
    for name in ("gpt4o-zero-shot", "claudesonnet420250514-zero-shot", "gpt4omini-vgig-T5"):
        report = _read(published / "quality" / (name + SUFFIX))
        data = json.loads(report_json(report))
        assert_valid_report(data)
        assert RunReport.from_json(data) == report
        # and our cell keeps the release's own fields
        cell = data["cells"][0]
        original = json.loads((published / "quality" / (name + SUFFIX)).read_text("utf-8"))
        assert cell["total_score"] == original["total_score"]
        assert cell["per_level_scores"] == original["per_level_scores"]


# -- the leaderboard tables --------------------------------------------------------------------

ABBREVIATIONS = {"ZS": "zero-shot", "FS": "few-shot", "ZC": "zero-cot", "FC": "few-cot"}


def baseline_cells(root: Path) -> list[CellReport]:
    """The paper's 45 baseline cells: 11 models × 4 strategies, and Sonnet-4 zero-shot."""
    files = release_files(root)
    models = [m for m in sorted({stem(p).partition("-")[0] for p in files})
              if all((root / "quality" / f"{m}-{s}{SUFFIX}").is_file() for s in STRATEGIES)]
    assert len(models) == 11, models
    names = [f"{m}-{s}" for m in models for s in STRATEGIES]
    names.append("claudesonnet420250514-zero-shot")
    return [_read(root / "quality" / (n + SUFFIX)).cells[0] for n in names]


def table(root: Path, name: str) -> list[dict[str, str]]:
    with (root / name).open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def matched_rows(root: Path, name: str, quality_column: str,
                 cells: list[CellReport]) -> Iterator[tuple[dict[str, str], CellReport]]:
    """Each row of a table with its cell.  The tables name models by display names
    (``Sonnet-4.6``) that appear nowhere in the files, so a row is matched by its printed
    quality, which must single out exactly one cell; the strategy abbreviation and a consistent
    display name → file model mapping confirm the match."""
    display: dict[str, str] = {}
    for row in table(root, name):
        hits = [c for c in cells if f"{c.summary.s_total:.4f}" == row[quality_column]]
        assert len(hits) == 1, (row, [c.label for c in hits])
        (cell,) = hits
        assert cell.metadata.strategy == ABBREVIATIONS[row["Strategy"]], (row, cell.label)
        assert display.setdefault(row["Model"], cell.metadata.model) == cell.metadata.model
        yield row, cell


@pytest.mark.slow
def test_tab2_pareto_efficiency_reproduces(published: Path) -> None:
    cells = baseline_cells(published)
    analysis = {a.point.label: a for a in analyze([cell_point(c) for c in cells]).cells}
    rows = list(matched_rows(published, "tab2_pareto_efficiency.csv", "Quality", cells))
    assert len(rows) == 20
    for row, cell in rows:
        a = analysis[cell.label]
        assert a.q_per_ktpv is not None and cell.summary.tpv is not None
        assert f"{cell.summary.tpv:.0f}" == row["TPV"], (row, cell.summary.tpv)
        assert f"{a.q_per_ktpv:.3f}" == row["Q/kTPV"], (row, a.q_per_ktpv)
        # the table's Final is the file's final_score (no Pareto bonus in the release's files)
        assert cell.summary.s_final is not None
        assert f"{cell.summary.s_final:.4f}" == row["Final"]
    # the rank order is the order of the 45 cells by that score
    ranked = sorted(cells, key=lambda c: -(c.summary.s_final or 0.0))
    assert [c.label for c in ranked[:20]] == [c.label for _, c in rows]
    assert [int(r["Sfin Rank"]) for r, _ in rows] == list(range(1, 21))


@pytest.mark.slow
def test_tab1_quality_top15_reproduces(published: Path) -> None:
    cells = baseline_cells(published)
    rows = list(matched_rows(published, "tab1_quality_top15.csv", "Quality (Total)", cells))
    assert len(rows) == 15
    for row, cell in rows:
        assert cell.summary.tpv is not None and cell.summary.s_final is not None
        assert f"{cell.summary.tpv:.0f}" == row["TPV"], (row, cell.summary.tpv)
        assert f"{cell.summary.s_final:.4f}" == row["Final (Pareto-adj)"]
        for lv in LEVELS:
            score = cell.per_level[lv].level_score
            assert score is not None and f"{score:.4f}" == row[f"L{lv}"], (row, lv)
    ranked = sorted(cells, key=lambda c: -(c.summary.s_total or 0.0))
    assert [c.label for c in ranked[:15]] == [c.label for _, c in rows]



# -- release-shaped files by hand ----------------------------------------------------------------


def test_release_shape_by_hand() -> None:
    (cell,) = from_release(quality(), "mymodel-few-cot.quality.json").cells
    assert cell.label == "mymodel-few-cot" and cell.metadata.source == RELEASE_SOURCE
    assert cell.summary.tpv == pytest.approx(300.0)  # mean over 100..500 (0 is not positive)
    assert (cell.summary.passed, cell.summary.failed) == (3, 3)
    assert cell.per_level[5].level_score == 0.8 and cell.summary.s_total == 0.8


def test_release_names_without_the_release_file_name() -> None:
    meta = {"model": "gpt-4o", "strategy": "zero-cot", "samples": 3, "eval_mode": "with-d5"}
    (cell,) = from_release(quality(metadata=meta), "run.json").cells
    assert cell.label == "gpt-4o-zero-cot" and cell.metadata.samples_per_instruction == 3
    assert cell.metadata.quality_only is False
    (cell,) = from_release(quality(), "results.json").cells
    assert (cell.metadata.model, cell.metadata.strategy) == ("results", "unknown")
    (cell,) = from_release(quality(), "").cells
    assert cell.label == "unknown-unknown"


def test_release_with_levels_missing() -> None:
    data = quality(per_level_scores={"0": 0.5, "2": 1.0}, total_score=0.2, final_score=0.2)
    (cell,) = from_release(data, "m-zero-shot.quality.json").cells
    assert cell.summary.s_total == 0.2 and cell.summary.levels_missing == (1, 3, 4, 5)
    assert sorted(cell.per_level) == [0, 2]



# -- graphinstruct-report/1 --------------------------------------------------------------------


def test_v1_single_cell() -> None:
    report = from_v1(v1_cell("gpt-4o", "zero-shot"))
    (cell,) = report.cells
    assert cell.label == "gpt-4o-zero-shot" and cell.metadata.source == PREVIOUS_SCHEMA
    assert report.tool == "pytest-graphinstruct 0.0.9"
    assert cell.metadata.levels == (1, 2) and cell.metadata.missing_dimensions == ("D3",)
    assert cell.summary.s_total == 0.245 and cell.summary.tpv == 200.0
    # one cell compares with nothing: S_final is S_total (v1 gave it the bonus)
    assert cell.summary.s_final == 0.245 and cell.summary.pareto_bonus is None
    first, failed, _ = cell.per_instruction
    assert first.tpv == 200.0 and first.valid_rate == 0.5 and not failed.passed
    assert first.samples[1] == SampleResult(parsed=False, refusal=False, error="no graph",
                                            input_tokens=30, output_tokens=70,
                                            usage_source="provider")
    assert sorted(cell.per_level) == [1, 2] and cell.per_level[1].pass_rate == 0.5
    assert_valid_report(json.loads(report_json(report)))


def test_v1_multi_cell() -> None:
    cheap = v1_cell("m", "zero-shot")
    dear = v1_cell("m", "few-shot")
    dear["summary"].update(tpv=900.0, s_total_renormalized=0.6)
    data = {"schema": PREVIOUS_SCHEMA, "partial": True,
            "pareto": {"excluded_unknown_cost": [], "cost_at_q08": {}, "sigma_strat": {}},
            "cells": [cheap, dear]}
    report = from_v1(data)
    assert report.labels == ("m-zero-shot", "m-few-shot") and report.partial
    a, b = (c.summary for c in report.cells)
    assert a.pareto_compared_cells == 2 and a.pareto_optimal and not b.pareto_optimal
    assert report.pareto.sigma_strat == {"m": pytest.approx(0.05)}
    assert_valid_report(json.loads(report_json(report)))


def test_v1_score_report() -> None:
    report = from_v1(v1_score())
    (cell,) = report.cells
    assert cell.label == "gpt4o-unknown" and cell.metadata.strategy == "unknown"
    assert cell.metadata.source == PREVIOUS_SCHEMA and cell.metadata.suite == "instructions"
    ok, bad = cell.per_instruction
    assert ok.passed and not bad.passed and ok.tpv == 70.0 and ok.valid_rate == 1.0
    assert bad.valid_rate is None and bad.level_score is None
    assert cell.per_level[1].level_score == pytest.approx(0.9)
    assert_valid_report(json.loads(report_json(report)))


# -- the migration's own steps -----------------------------------------------------------------


def test_a_v1_item_becomes_the_current_items_json() -> None:
    from pytest_graphinstruct.run.records.migrations import _v1_item

    item = _v1_item({"tpv": 12.0, "valid_samples": 1, "samples": [{}, {}, {}, {}]})
    assert item == {"d5_tokens_per_valid": 12.0, "valid_samples": 1,
                    "samples": [{}, {}, {}, {}], "d1_valid_rate": 0.25}
    kept = _v1_item({"d5_tokens_per_valid": 3.0, "tpv": 99.0, "d1_valid_rate": 0.5,
                     "samples": []})
    assert kept["d5_tokens_per_valid"] == 3.0 and kept["d1_valid_rate"] == 0.5
    assert _v1_item({"samples": []})["d1_valid_rate"] is None


def test_a_v1_single_cell_keeps_its_partial_flag_and_a_multi_cell_report_has_no_tool() -> None:
    cell = v1_cell("m", "zero-shot")
    cell["metadata"]["partial"] = True
    assert from_v1(cell).partial
    several = from_v1({"schema": PREVIOUS_SCHEMA, "cells": [v1_cell("m", "zero-shot")]})
    assert several.tool is None and not several.partial


@pytest.mark.parametrize(("value", "expected"), [(None, None), (1, 1.0), (0.25, 0.25)])
def test_finite_numbers_pass(value: Any, expected: float | None) -> None:
    assert finite(value, "x") == expected


@pytest.mark.parametrize("value", ["0.8", True, float("nan"), float("inf"), [1]])
def test_anything_else_is_not_a_finite_number(value: Any) -> None:
    with pytest.raises(ReportError, match=r"^total_score is not a finite number: "):
        finite(value, "total_score")


def test_release_metadata_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(ReportError, match="release 'metadata' is not an object"):
        from_release(quality(metadata="gpt-4o"), "m-zero-shot.quality.json")


def test_a_release_file_without_outcomes_passes_an_item_at_d4_one() -> None:
    (cell,) = from_release(quality(), "m-zero-shot.quality.json").cells
    assert [r.outcome for r in cell.per_instruction] == [
        "failed", "passed", "failed", "passed", "failed", "passed"]
    assert cell.per_level[1].pass_rate == 1.0 and cell.per_level[0].pass_rate == 0.0
    assert cell.metadata.quality_only and cell.summary.error == 0
