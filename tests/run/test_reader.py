"""``read_report``: our reports, the previous ``graphinstruct-report/1`` shapes, the release's
``*.quality.json`` files (and the leaderboard tables they reproduce), and one clear error line for
anything else.

The release files are read from ``../shared/published-results`` (never copied into the
repository); the tests that need them skip when the folder is absent.
"""

from __future__ import annotations

import copy
import csv
import json
import math
from collections.abc import Iterator
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest

from pytest_graphinstruct.run.aggregate import build_cell, cell_point, with_pareto
from pytest_graphinstruct.run.migrations import RELEASE_SOURCE
from pytest_graphinstruct.run.reader import parse_report, read_cells, read_report
from pytest_graphinstruct.run.results import (
    PREVIOUS_SCHEMA,
    SCHEMA,
    CellMetadata,
    CellReport,
    ItemResult,
    ReportError,
    RunReport,
    SampleResult,
)
from pytest_graphinstruct.run.writer import report_json, write_report
from pytest_graphinstruct.score.pareto import analyze
from pytest_graphinstruct.vocab import DIMENSIONS, LEVELS, STRATEGIES
from tests.report.schema_check import assert_valid_report

PUBLISHED = Path(__file__).resolve().parents[2].parent / "shared" / "published-results"
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


@pytest.fixture(scope="module")
def release(published: Path) -> dict[str, tuple[dict[str, Any], RunReport]]:
    """Every release file: ``{stem: (its JSON, what read_report makes of it)}``."""
    return {stem(p): (json.loads(p.read_text(encoding="utf-8")), read_report(p))
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
    (cell,) = read_report(published / "quality" / (name + SUFFIX)).cells
    assert (cell.metadata.model, cell.metadata.strategy, cell.label) == (model, strategy, name)


@pytest.mark.slow
def test_all_release_files_together_have_distinct_labels(published: Path) -> None:
    files = release_files(published)
    cells = read_cells(files)
    assert list(cells) == [stem(p) for p in files]


@pytest.mark.slow
def test_a_release_file_read_is_a_valid_report_that_round_trips(published: Path) -> None:
    for name in ("gpt4o-zero-shot", "claudesonnet420250514-zero-shot", "gpt4omini-vgig-T5"):
        report = read_report(published / "quality" / (name + SUFFIX))
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
    return [read_report(root / "quality" / (n + SUFFIX)).cells[0] for n in names]


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


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_release_shape_by_hand(tmp_path: Path) -> None:
    (cell,) = read_report(write(tmp_path / "mymodel-few-cot.quality.json", quality())).cells
    assert cell.label == "mymodel-few-cot" and cell.metadata.source == RELEASE_SOURCE
    assert cell.summary.tpv == pytest.approx(300.0)  # mean over 100..500 (0 is not positive)
    assert (cell.summary.passed, cell.summary.failed) == (3, 3)
    assert cell.per_level[5].level_score == 0.8 and cell.summary.s_total == 0.8


def test_release_names_without_the_release_file_name(tmp_path: Path) -> None:
    meta = {"model": "gpt-4o", "strategy": "zero-cot", "samples": 3, "eval_mode": "with-d5"}
    (cell,) = read_report(write(tmp_path / "run.json", quality(metadata=meta))).cells
    assert cell.label == "gpt-4o-zero-cot" and cell.metadata.samples_per_instruction == 3
    assert cell.metadata.quality_only is False
    (cell,) = read_report(write(tmp_path / "results.json", quality())).cells
    assert (cell.metadata.model, cell.metadata.strategy) == ("results", "unknown")
    (cell,) = parse_report(quality()).cells
    assert cell.label == "unknown-unknown"


def test_release_with_levels_missing(tmp_path: Path) -> None:
    data = quality(per_level_scores={"0": 0.5, "2": 1.0}, total_score=0.2, final_score=0.2)
    (cell,) = read_report(write(tmp_path / "m-zero-shot.quality.json", data)).cells
    assert cell.summary.s_total == 0.2 and cell.summary.levels_missing == (1, 3, 4, 5)
    assert sorted(cell.per_level) == [0, 2]


# -- graphinstruct-report/1 --------------------------------------------------------------------


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


def test_v1_single_cell(tmp_path: Path) -> None:
    report = read_report(write(tmp_path / "v1.json", v1_cell("gpt-4o", "zero-shot")))
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


def test_v1_multi_cell(tmp_path: Path) -> None:
    cheap = v1_cell("m", "zero-shot")
    dear = v1_cell("m", "few-shot")
    dear["summary"].update(tpv=900.0, s_total_renormalized=0.6)
    data = {"schema": PREVIOUS_SCHEMA, "partial": True,
            "pareto": {"excluded_unknown_cost": [], "cost_at_q08": {}, "sigma_strat": {}},
            "cells": [cheap, dear]}
    report = read_report(write(tmp_path / "v1.json", data))
    assert report.labels == ("m-zero-shot", "m-few-shot") and report.partial
    a, b = (c.summary for c in report.cells)
    assert a.pareto_compared_cells == 2 and a.pareto_optimal and not b.pareto_optimal
    assert report.pareto.sigma_strat == {"m": pytest.approx(0.05)}
    assert_valid_report(json.loads(report_json(report)))


def test_v1_score_report(tmp_path: Path) -> None:
    data = {
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
    report = read_report(write(tmp_path / "score.json", data))
    (cell,) = report.cells
    assert cell.label == "gpt4o-unknown" and cell.metadata.strategy == "unknown"
    assert cell.metadata.source == PREVIOUS_SCHEMA and cell.metadata.suite == "instructions"
    ok, bad = cell.per_instruction
    assert ok.passed and not bad.passed and ok.tpv == 70.0 and ok.valid_rate == 1.0
    assert bad.valid_rate is None and bad.level_score is None
    assert cell.per_level[1].level_score == pytest.approx(0.9)
    assert_valid_report(json.loads(report_json(report)))


# -- our own reports -------------------------------------------------------------------------


def our_report(*labels: tuple[str, str]) -> RunReport:
    cells = []
    for model, strategy in labels:
        items = [ItemResult(instruction_id=f"L2-{k:03d}", level=2, cell=f"{model}-{strategy}",
                            model=model, strategy=strategy, level_score=0.5 + k / 20,
                            tokens=100 + k, d5_valid=1, api_calls=1)
                 for k in range(6)]
        cells.append(build_cell(CellMetadata(model, strategy), items))
    return with_pareto(cells)


def test_our_report_reads_back_equal(tmp_path: Path) -> None:
    report = our_report(("m", "zero-shot"), ("m", "few-shot"))
    write_report(report, tmp_path / "r.json")
    assert read_report(tmp_path / "r.json") == report
    assert read_report(str(tmp_path / "r.json")) == report


def test_read_cells_refuses_a_label_twice(tmp_path: Path) -> None:
    write_report(our_report(("m", "zero-shot")), tmp_path / "a.json")
    write_report(our_report(("m", "zero-shot"), ("n", "few-cot")), tmp_path / "b.json")
    with pytest.raises(ReportError) as info:
        read_cells([tmp_path / "a.json", tmp_path / "b.json"])
    assert str(info.value) == (f"{tmp_path / 'b.json'}: cell m-zero-shot is also in "
                               f"{tmp_path / 'a.json'}")


# -- malformed input: one line, starting with the path ------------------------------------------


def _v2_without(field: str) -> dict[str, Any]:
    data = our_report(("m", "zero-shot")).to_json()
    del data["cells"][0]["summary"][field]
    return data


def _v2_with(path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    data: Any = our_report(("m", "zero-shot")).to_json()
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return copy.deepcopy(data)


MALFORMED: dict[str, tuple[Any, str]] = {
    # name: (file content: bytes as written, else JSON; a fragment of the message)
    "empty file": (b"", "the file is empty"),
    "whitespace only": (b" \n\t \n", "the file is empty"),
    "not JSON": (b"{'schema': 1", "not JSON"),
    "truncated JSON": (b'{"schema": "graphinstruct-report/2", "cells": [', "not JSON"),
    "not UTF-8": (b"\xff\xfe{}", "cannot be read"),
    "JSON array": ([1, 2], "a JSON array, expected an object"),
    "JSON string": ("graphinstruct-report/2", "a JSON string, expected an object"),
    "JSON null": (None, "a JSON null, expected an object"),
    "JSON number": (3, "a JSON number, expected an object"),
    "empty object": ({}, "not a GraphInstruct report (no 'schema'"),
    "v2 missing field": (_v2_without("items"), "missing field 'items'"),
    "v2 missing cells": ({"schema": SCHEMA}, "missing field 'cells'"),
    "v2 cells not a list": ({"schema": SCHEMA, "cells": 7}, "malformed"),
    "v2 TPV a string": (_v2_with(("cells", 0, "summary", "tpv"), "cheap"),
                        "cells[0].summary.tpv: is not a finite number: 'cheap'"),
    "v2 negative TPV": (_v2_with(("cells", 0, "summary", "tpv"), -3),
                        "cells[0].summary.tpv: -3 is below 0"),
    "v2 S_total a list": (_v2_with(("cells", 0, "summary", "s_total_renormalized"), [1]),
                          "summary.s_total_renormalized: is not a finite number"),
    "v2 level score a string": (_v2_with(("cells", 0, "per_instruction", 0, "level_score"), "x"),
                                "per_instruction[0].level_score: is not a finite number"),
    "v2 level score above 1": (_v2_with(("cells", 0, "per_instruction", 0, "level_score"), 1.5),
                               "per_instruction[0].level_score: 1.5 is above 1"),
    "v2 unknown field": (_v2_with(("cells", 0, "summary", "bonus"), 1),
                         "cells[0].summary: unknown field 'bonus'"),
    "v2 unknown outcome": (_v2_with(("cells", 0, "per_instruction", 0, "outcome"), "boom"),
                           "per_instruction[0].outcome: expected one of 'passed'"),
    "v2 level 9": (_v2_with(("cells", 0, "per_instruction", 0, "level"), 9),
                   "per_instruction[0].level: expected one of 0, 1, 2, 3, 4, 5, got a number 9"),
    "v2 level 2.5": (_v2_with(("cells", 0, "per_instruction", 0, "level"), 2.5),
                     "per_instruction[0].level: expected one of 0, 1"),
    "unknown schema": ({"schema": "graphinstruct-report/9", "cells": []},
                       "unknown report schema 'graphinstruct-report/9'"),
    "v1 score report without metadata": ({"schema": PREVIOUS_SCHEMA, "per_instruction": []},
                                         "missing field 'metadata'"),
    "v1 cell without summary": ({k: v for k, v in v1_cell("m", "zero-shot").items()
                                 if k != "summary"}, "missing field 'summary'"),
    "quality.json total_score a string": (quality(total_score="0.8"),
                                          "total_score is not a finite number: '0.8'"),
    "quality.json final_score true": (quality(final_score=True), "final_score is not a finite"),
    "quality.json level 9": (quality(per_level_scores={"0": 0.5, "9": 0.5}),
                             "per_level_scores names levels outside 0-5: [0, 9]"),
    "quality.json level x": (quality(per_level_scores={"x": 0.5}), "ValueError"),
    "quality.json level score a string": (quality(per_level_scores={"1": "high"}), "Error"),
    "quality.json per_instruction a string": (quality(per_instruction="all"), "Error"),
    "quality.json item without level": (quality(per_instruction=[{"instruction_id": "a"}]),
                                        "missing field 'level'"),
    "quality.json item level 9": (quality(per_instruction=[{"instruction_id": "a", "level": 9}]),
                                  "unknown level 9 (one of 0, 1, 2, 3, 4, 5)"),
    "quality.json metadata a list": (quality(metadata=[1]), "'metadata' is not an object"),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_input_is_one_line_naming_the_file(tmp_path: Path, name: str) -> None:
    content, fragment = MALFORMED[name]
    path = tmp_path / "in.quality.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        write(path, content)
    assert_one_line_error(path, fragment)


def test_a_missing_file(tmp_path: Path) -> None:
    assert_one_line_error(tmp_path / "nope.json", "no such file")


def test_a_directory(tmp_path: Path) -> None:
    assert_one_line_error(tmp_path, "is a directory")


def assert_one_line_error(path: Path, fragment: str) -> None:
    with pytest.raises(ReportError) as info:
        read_report(path)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    assert "\n" not in message and fragment in message, message
