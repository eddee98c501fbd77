"""The shipped JSON Schema of ``graphinstruct-report/2`` describes exactly what
``RunReport.to_json()`` writes: every field, closed objects, the release's field names.

Reports are built the way producers build them (``build_cell`` → ``with_pareto``) from a variety
of items — errors, skips, absent dimensions, unknown usage, several cells — and from generated
items (Hypothesis); each validates and reads back equal (``RunReport.from_json``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from pytest_graphinstruct.run.aggregate import build_cell, build_run_report, with_pareto
from pytest_graphinstruct.run.records.codec import json_fields
from pytest_graphinstruct.run.records.results import (
    SCHEMA,
    CellMetadata,
    CellReport,
    CellSummary,
    ItemResult,
    LevelRow,
    ParetoSummary,
    RunReport,
    SampleResult,
    cell_label,
)
from pytest_graphinstruct.run.records.schema import schema_text, shipped_path
from pytest_graphinstruct.run.records.writer import report_json
from pytest_graphinstruct.score.details import ScoreDetails
from pytest_graphinstruct.vocab import DIMENSIONS, LEVELS, OUTCOMES, PASS_RULES, SIZE_BUCKETS
from tests.packaging import wheel_ships
from tests.report.schema_check import assert_valid_report, report_errors, report_schema

ROOT = Path(__file__).resolve().parents[2]

# -- building items and reports ----------------------------------------------------------------


def sample(**kw: Any) -> SampleResult:
    base: dict[str, Any] = {"parsed": True, "refusal": False, "input_tokens": 40,
                            "output_tokens": 60, "usage_source": "provider"}
    return SampleResult(**{**base, **kw})


def item(model: str, strategy: str, iid: str, *, method: str = "baseline",
         outcome: str = "passed", score: float | None = 0.8, tokens: int | None = 100,
         **kw: Any) -> ItemResult:
    """An item as the evaluation path builds it (scored items have all five dimensions)."""
    label = cell_label(model, strategy, method)
    level = int(iid[1])
    if outcome not in ("passed", "failed"):
        return ItemResult(instruction_id=iid, level=level, cell=label, model=model,
                          strategy=strategy, method=method, outcome=outcome,
                          error=kw.pop("error", "backend gave up" if outcome == "error"
                                       else None), **kw)
    dims = {"D1": 0.7, "D2": 0.6, "D3": 0.5, "D4": 1.0 if outcome == "passed" else 0.4,
            "D5": 0.9}
    defaults: dict[str, Any] = {
        "samples": (sample(), sample(violations=() if outcome == "passed" else ("num_nodes=4",))),
        "d4_instruction_score": dims["D4"], "valid_samples": 2, "valid_rate": 1.0,
        "tokens": tokens, "api_calls": 2, "dimension_scores": dims, "level_score": score,
        "level_score_with_d5": score, "tpv": None if tokens is None else tokens / 2,
        "api_per_valid": 1.0, "d5_valid": 2,
        "details": ScoreDetails(d1={"value": 0.7, "formula": True}),
        "size": "small",
    }
    return ItemResult(instruction_id=iid, level=level, cell=label, model=model,
                      strategy=strategy, method=method, outcome=outcome, **{**defaults, **kw})


def ids(level: int, n: int) -> list[str]:
    return [f"L{level}-{k:03d}" for k in range(n)]


def varied_items(model: str, strategy: str, method: str = "baseline", *,
                 unknown_usage: bool = True) -> list[ItemResult]:
    """Passed and failed items on every level, an error, a skip, an expected failure, an item
    with D3 absent (renormalized level score), one with no sample, and (``unknown_usage``) one
    without token usage, which leaves the cell's TPV unknown."""
    out = []
    for lv in LEVELS:
        for k, iid in enumerate(ids(lv, 4)):
            out.append(item(model, strategy, iid, method=method,
                            outcome="passed" if k % 2 == 0 else "failed",
                            score=0.5 + 0.1 * k))
    out += [
        item(model, strategy, "L1-100", method=method, outcome="error"),
        item(model, strategy, "L1-101", method=method, outcome="skipped"),
        item(model, strategy, "L2-100", method=method, outcome="failed",
             expected_failure=True),
        item(model, strategy, "L3-100", method=method,
             dimension_scores={"D1": 0.7, "D2": 0.6, "D3": None, "D4": 1.0, "D5": 0.9},
             absent_dimensions={"D3": "no reference pool for this level"},
             missing_dimensions=("D3",)),
        item(model, strategy, "L4-100", method=method, tokens=None if unknown_usage else 80,
             samples=(sample(input_tokens=None, output_tokens=None, usage_source=None),)
             if unknown_usage else (sample(),)),
        item(model, strategy, "L5-100", method=method, outcome="failed", score=0.0,
             samples=(), valid_samples=0, valid_rate=None, d5_valid=0, tpv=None,
             api_per_valid=None),
    ]
    return out


def run_of(*cells: CellReport, partial: bool = False) -> RunReport:
    return with_pareto(list(cells), partial=partial)


def round_trips(report: RunReport) -> None:
    data = json.loads(report_json(report))
    assert_valid_report(data)
    assert RunReport.from_json(data) == report
    assert RunReport.from_json(report.to_json()) == report


# -- the schema itself -------------------------------------------------------------------------


def test_schema_is_a_valid_2020_12_schema() -> None:
    schema = report_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema"] == {"const": SCHEMA}


def test_every_reference_resolves_to_a_top_level_definition() -> None:
    schema = report_schema()
    refs: list[str] = []
    nested: list[str] = []

    def walk(node: Any, top: bool) -> None:
        if isinstance(node, dict):
            if "$defs" in node and not top:
                nested.append(str(sorted(node["$defs"])))
            refs.extend([node["$ref"]] if isinstance(node.get("$ref"), str) else [])
            for value in node.values():
                walk(value, False)
        elif isinstance(node, list):
            for value in node:
                walk(value, False)

    walk(schema, True)
    assert not nested, f"definitions below the top: {nested}"
    assert refs and {r.removeprefix("#/$defs/") for r in refs} <= set(schema["$defs"])


def test_schema_is_shipped_as_package_data() -> None:
    assert wheel_ships("report/schema.json")


def _records() -> RunReport:
    meta = CellMetadata("m", "zero-shot", suite="instructions", levels=(0, 1),
                        samples_per_instruction=2, pass_rule="all", decoding={"temperature": 0})
    return run_of(build_cell(meta, varied_items("m", "zero-shot")),
                  build_cell(CellMetadata("n", "few-shot"), varied_items("n", "few-shot")))


# (definition in the schema, a function giving the JSON object that definition describes)
DEFINITIONS: list[tuple[str, Callable[[RunReport], dict[str, Any]]]] = [
    ("SampleResult", lambda r: r.cells[0].per_instruction[0].samples[0].to_json()),
    ("ItemResult", lambda r: r.cells[0].per_instruction[0].to_json()),
    ("CellMetadata", lambda r: r.cells[0].metadata.to_json()),
    ("LevelRow", lambda r: r.cells[0].per_level[0].to_json()),
    ("CellSummary", lambda r: r.cells[0].summary.to_json()),
    ("CellReport", lambda r: r.cells[0].to_json()),
    ("ParetoSummary", lambda r: r.pareto.to_json()),
    ("ItemResult.dimension_scores",
     lambda r: r.cells[0].per_instruction[0].to_json()["dimension_scores"]),
]


def _definition(name: str) -> dict[str, Any]:
    record, _, key = name.partition(".")
    definition: dict[str, Any] = report_schema()["$defs"][record]
    return definition["properties"][key] if key else definition


@pytest.mark.parametrize(("name", "written"), DEFINITIONS, ids=[d[0] for d in DEFINITIONS])
def test_every_written_field_is_described_required_and_closed(
    name: str, written: Callable[[RunReport], dict[str, Any]]
) -> None:
    definition = _definition(name)
    keys = set(written(_records()))
    record = _RECORDS.get(name)
    optional = {f.key for f in json_fields(record) if f.omit_none} if record else set()
    assert set(definition["properties"]) == keys | optional
    assert set(definition["required"]) == keys - optional
    assert definition["additionalProperties"] is False


_RECORDS: dict[str, type] = {"SampleResult": SampleResult, "ItemResult": ItemResult,
                             "CellMetadata": CellMetadata, "LevelRow": LevelRow,
                             "CellSummary": CellSummary, "CellReport": CellReport,
                             "ParetoSummary": ParetoSummary}


def test_a_cell_of_several_samples_writes_its_consistency_and_validates() -> None:
    """The fields left out of a one-sample report (:data:`_records`): each item's passing
    samples, the consistency rows and the flaky list."""
    items = [item("m", "zero-shot", iid, outcome="passed" if k % 2 == 0 else "failed",
                  passing_samples=2 - k % 2) for k, iid in enumerate(ids(1, 4))]
    items.append(item("m", "zero-shot", "L1-100", outcome="error"))
    report = run_of(build_cell(CellMetadata("m", "zero-shot", samples_per_instruction=2), items))
    round_trips(report)
    data = report.to_json()["cells"][0]
    assert data["per_instruction"][1]["passing_samples"] == 1
    assert data["summary"]["consistency"]["left_out"] == 1
    assert data["per_level"]["1"]["consistency"]["k"] == 2
    assert data["flaky"] == [{"instruction_id": "L1-001", "level": 1, "passing": 1,
                              "samples": 2}, {"instruction_id": "L1-003", "level": 1,
                                              "passing": 1, "samples": 2}]


def test_the_run_object_is_described_required_and_closed() -> None:
    schema = report_schema()
    keys = set(_records().to_json())
    assert set(schema["properties"]) == keys == set(schema["required"])
    assert schema["additionalProperties"] is False


def test_release_field_names_are_there() -> None:
    defs = report_schema()["$defs"]
    assert {"per_level_scores", "total_score", "final_score", "per_instruction"} <= set(
        defs["CellReport"]["required"])
    assert {"instruction_id", "level", "d1_valid_rate", "d4_instruction_score",
            "d5_tokens_per_valid", "dimension_scores", "level_score"} <= set(
        defs["ItemResult"]["required"])
    assert _definition("ItemResult.dimension_scores")["required"] == list(DIMENSIONS)


def test_the_committed_schema_is_the_generated_one() -> None:
    """``report/schema.json`` is generated from the records (``python -m
    pytest_graphinstruct.run.records.schema --write``); ``.ci/run`` runs ``--check`` too."""
    assert shipped_path().read_text(encoding="utf-8") == schema_text()


# -- reports built from items validate and read back -------------------------------------------


def test_one_cell_with_every_kind_of_item() -> None:
    report = run_of(build_cell(CellMetadata("m", "zero-shot"), varied_items("m", "zero-shot")))
    round_trips(report)
    (cell,) = report.cells
    assert (cell.summary.error, cell.summary.skipped) == (1, 1)
    assert cell.metadata.missing_dimensions == ("D3",)
    assert cell.summary.usage_missing_items == 1 and cell.summary.tpv is None
    data = cell.to_json()
    assert data["total_score"] == cell.summary.s_total
    assert data["final_score"] == cell.summary.s_final == cell.summary.s_total  # alone
    assert data["per_level_scores"] == {str(lv): cell.per_level[lv].level_score for lv in LEVELS}


def test_several_cells_methods_and_a_partial_run() -> None:
    keys = [("m", "zero-shot", "baseline"), ("m", "few-shot", "baseline"),
            ("m", "zero-shot", "constrained"), ("n", "zero-cot", "vgig")]
    cells = [build_cell(CellMetadata(m, s, meth),
                        varied_items(m, s, meth, unknown_usage=m == "n"))
             for m, s, meth in keys]
    report = run_of(*cells, partial=True)
    round_trips(report)
    assert report.labels == ("m-zero-shot", "m-few-shot", "m-zero-shot-constrained",
                             "n-zero-cot-vgig")
    assert report.partial and report.pareto.excluded_unknown_cost == ("n-zero-cot-vgig",)
    known = [c.summary for c in report.cells[:3]]
    assert all(s.pareto_compared_cells == 3 and s.s_final is not None for s in known)
    assert any(s.pareto_optimal for s in known)
    assert report.cells[3].summary.s_final is None


def test_cells_with_no_scored_item_and_with_levels_missing() -> None:
    only_errors = [item("e", "zero-shot", iid, outcome="error") for iid in ids(0, 3)]
    only_l2 = [item("f", "zero-shot", iid) for iid in ids(2, 5)]
    empty = build_cell(CellMetadata("g", "zero-shot"), [])
    report = run_of(build_cell(CellMetadata("e", "zero-shot"), only_errors),
                    build_cell(CellMetadata("f", "zero-shot"), only_l2), empty)
    round_trips(report)
    e, f, g = report.cells
    assert e.summary.s_total_ci95 is None and e.per_level[0].level_score is None
    assert f.summary.levels_missing == (0, 1, 3, 4, 5)
    assert g.summary.items == 0 and g.per_level == {} and g.to_json()["per_level_scores"] == {}


def test_build_run_report_in_suite_order() -> None:
    items = varied_items("m", "zero-shot")
    order = {r.instruction_id: k for k, r in enumerate(sorted(items, key=lambda r: r.level))}
    report = build_run_report([(CellMetadata("m", "zero-shot"), list(reversed(items)))],
                              suite_order=order)
    round_trips(report)


def test_a_cached_sample_reads_back_equal() -> None:
    """``cached`` is volatile: never written, so it cannot take part in equality."""
    cached = item("m", "zero-shot", "L1-000", samples=(sample(cached=True),))
    report = run_of(build_cell(CellMetadata("m", "zero-shot"), [cached]))
    assert "cached" not in json.dumps(report.to_json())
    round_trips(report)


# -- the schema rejects what we never write ----------------------------------------------------


@cache
def _valid_text() -> str:
    return report_json(_records())


def _valid() -> dict[str, Any]:
    return json.loads(_valid_text())


def _set(path: Sequence[str | int], value: Any) -> dict[str, Any]:
    data = _valid()
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


def _drop(path: Sequence[str | int]) -> dict[str, Any]:
    data = _valid()
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return data


ITEM = ("cells", 0, "per_instruction", 0)
BAD = {
    "other schema": _set(("schema",), "graphinstruct-report/1"),
    "extra top-level field": _set(("extra",), 1),
    "cells not a list": _set(("cells",), {}),
    "extra item field": _set((*ITEM, "tpv"), 1.0),
    "missing item field": _drop((*ITEM, "d1_valid_rate")),
    "level as a string": _set((*ITEM, "level"), "2"),
    "level 9": _set((*ITEM, "level"), 9),
    "unknown outcome": _set((*ITEM, "outcome"), "crashed"),
    "D6": _set((*ITEM, "dimension_scores", "D6"), 0.5),
    "D5 missing": _drop((*ITEM, "dimension_scores", "D5")),
    "score above 1": _set((*ITEM, "level_score"), 1.5),
    "negative TPV": _set((*ITEM, "d5_tokens_per_valid"), -1.0),
    "sample field missing": _drop((*ITEM, "samples", 0, "parsed")),
    "cached written": _set((*ITEM, "samples", 0, "cached"), True),
    "per_level key 9": _set(("cells", 0, "per_level", "9"),
                            _valid()["cells"][0]["per_level"]["0"]),
    "per_level_scores key x": _set(("cells", 0, "per_level_scores", "x"), 0.5),
    "ci of three": _set(("cells", 0, "summary", "s_total_ci95"), [0.1, 0.2, 0.3]),
    "bonus 2": _set(("cells", 0, "summary", "pareto_bonus"), 2),
    "total_score a string": _set(("cells", 0, "total_score"), "0.8"),
    "metadata without model": _drop(("cells", 0, "metadata", "model")),
    "unknown pass rule": _set(("cells", 0, "metadata", "pass_rule"), "most"),
    "boolean count": _set(("cells", 0, "summary", "items"), True),
}


def test_the_unaltered_report_is_valid() -> None:
    assert report_errors(_valid()) == []


@pytest.mark.parametrize("name", list(BAD))
def test_schema_rejects(name: str) -> None:
    assert report_errors(copy.deepcopy(BAD[name])), name


def test_assert_valid_report_lists_the_violations() -> None:
    with pytest.raises(AssertionError, match=r"level: 9 is not one of \[0, 1, 2, 3, 4, 5\]"):
        assert_valid_report(BAD["level 9"])


# -- property: any report of generated items validates and round-trips ------------------------

finite = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
unit = st.none() | finite
nonneg = st.none() | st.floats(min_value=0.0, max_value=1e7, allow_nan=False)
count = st.integers(min_value=0, max_value=10_000)
texts = st.text(max_size=12)
json_scalars = (st.none() | st.booleans() | st.integers(-10**6, 10**6)
                | st.floats(allow_nan=False, allow_infinity=False) | texts)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(texts, inner, max_size=3), max_leaves=8)
json_objects = st.dictionaries(texts, json_values, max_size=3)
dimension_sets = st.lists(st.sampled_from(DIMENSIONS), unique=True).map(tuple)

score_details = st.builds(
    ScoreDetails, pool_references=st.none() | st.lists(texts, max_size=3).map(tuple),
    d1=st.none() | json_objects, d2=st.none() | json_objects, d3=st.none() | json_objects,
    caap=st.none() | json_objects)

samples = st.builds(
    SampleResult, parsed=st.booleans(), refusal=st.booleans(),
    violations=st.lists(texts, max_size=3).map(tuple),
    derived_violations=st.lists(texts, max_size=2).map(tuple),
    error=st.none() | texts, input_tokens=st.none() | count, output_tokens=st.none() | count,
    usage_source=st.none() | st.sampled_from(["provider", "recorded", "tiktoken:o200k_base"]),
    api_calls=count, truncated=st.booleans(), cached=st.booleans())


@st.composite
def items_of(draw: st.DrawFn, model: str, strategy: str, method: str) -> list[ItemResult]:
    label = cell_label(model, strategy, method)
    numbers = draw(st.lists(st.integers(0, 999), unique=True, max_size=8))
    out = []
    for n in numbers:
        level = draw(st.sampled_from(LEVELS))
        outcome = draw(st.sampled_from(OUTCOMES))
        common: dict[str, Any] = {
            "instruction_id": f"L{level}-{n:03d}", "level": level, "cell": label,
            "model": model, "strategy": strategy, "method": method, "outcome": outcome,
            "feasible": draw(st.booleans()), "size": draw(st.none() | st.sampled_from(
                SIZE_BUCKETS)), "expected_failure": draw(st.booleans()),
            "api_calls": draw(count),
        }
        if outcome not in ("passed", "failed"):
            out.append(ItemResult(**common, error=draw(st.none() | texts)))
            continue
        out.append(ItemResult(
            **common,
            samples=tuple(draw(st.lists(samples, max_size=3))),
            d4_instruction_score=draw(unit), valid_samples=draw(count),
            valid_rate=draw(unit), tokens=draw(st.none() | count),
            dimension_scores=draw(st.fixed_dictionaries({d: unit for d in DIMENSIONS})),
            absent_dimensions=draw(st.dictionaries(st.sampled_from(DIMENSIONS), texts)),
            level_score=draw(unit), level_score_with_d5=draw(unit),
            missing_dimensions=draw(dimension_sets), tpv=draw(nonneg),
            api_per_valid=draw(nonneg), d5_valid=draw(count), details=draw(score_details),
        ))
    return out


names = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1,
                max_size=8)


def _label_of(key: tuple[str, str, str]) -> str:  # a def, not a lambda: Hypothesis reads
    return cell_label(*key)                         # a lambda's source as a regex


cell_keys = st.lists(st.tuples(names, st.sampled_from(["zero-shot", "few-shot", "zero-cot",
                                                       "few-cot", "x"]),
                               st.sampled_from(["baseline", "constrained", "vgig"])),
                     min_size=1, max_size=3, unique_by=_label_of)


@st.composite
def run_reports(draw: st.DrawFn) -> RunReport:
    cells = []
    for model, strategy, method in draw(cell_keys):
        meta = CellMetadata(
            model, strategy, method, tool=draw(st.none() | texts),
            constraint=draw(st.none() | texts), model_info=draw(st.none() | texts),
            suite=draw(st.none() | texts),
            levels=draw(st.none() | st.lists(st.sampled_from(LEVELS), unique=True).map(
                lambda xs: tuple(sorted(xs)))),
            samples_per_instruction=draw(st.none() | st.integers(1, 20)),
            pass_rule=draw(st.none() | st.sampled_from(sorted(PASS_RULES))),
            decoding=draw(json_objects), partial=draw(st.booleans()),
            quality_only=draw(st.booleans()), source=draw(st.none() | texts))
        cells.append(build_cell(meta, draw(items_of(model, strategy, method))))
    return with_pareto(cells, partial=draw(st.booleans()), tool=draw(st.none() | texts))


@given(run_reports())
@pytest.mark.slow
def test_any_built_report_validates_and_round_trips(report: RunReport) -> None:
    round_trips(report)


@given(run_reports())
@pytest.mark.slow
def test_reading_back_keeps_the_record_types(report: RunReport) -> None:
    back = RunReport.from_json(json.loads(report_json(report)))
    assert isinstance(back.cells, tuple) and isinstance(back.pareto, ParetoSummary)
    for cell in back.cells:
        assert isinstance(cell.per_instruction, tuple)
        assert all(isinstance(lv, int) and isinstance(row, LevelRow)
                   for lv, row in cell.per_level.items())
        assert isinstance(cell.metadata.missing_dimensions, tuple)
        for r in cell.per_instruction:
            assert isinstance(r.samples, tuple) and isinstance(r.missing_dimensions, tuple)
            assert all(isinstance(s.violations, tuple) for s in r.samples)
