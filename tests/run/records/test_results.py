"""The typed result records: labels, outcomes, JSON both ways, and the errors of ``from_json``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records.results import (
    SCHEMA,
    CellMetadata,
    CellSummary,
    ItemResult,
    LevelRow,
    ParetoSummary,
    PromptSet,
    ReportError,
    RunReport,
    SampleResult,
    ShardSelection,
    cell_label,
    describe_prompts,
    items_in_order,
)
from pytest_graphinstruct.vocab import DIMENSIONS


def item(iid: str, **kw: Any) -> ItemResult:
    return ItemResult(**{"instruction_id": iid, "level": int(iid[1]), "cell": "m-zero-shot",
                         "model": "m", "strategy": "zero-shot", **kw})


def report(*items: ItemResult) -> RunReport:
    return with_pareto([build_cell(CellMetadata("m", "zero-shot"), list(items))])


def test_cell_label() -> None:
    assert cell_label("m", "zero-shot") == "m-zero-shot"
    assert cell_label("m", "zero-shot", "baseline") == "m-zero-shot"
    assert cell_label("m", "few-cot", "vgig") == "m-few-cot-vgig"
    assert CellMetadata("gpt-4o", "zero-cot", "constrained").label == (
        "gpt-4o-zero-cot-constrained")


def test_outcomes() -> None:
    with pytest.raises(ValueError, match="unknown outcome 'crashed'"):
        item("L1-000", outcome="crashed")
    passed, failed = item("L1-000"), item("L1-001", outcome="failed")
    error, skipped = item("L1-002", outcome="error"), item("L1-003", outcome="skipped")
    assert [r.scored for r in (passed, failed, error, skipped)] == [True, True, False, False]
    assert [r.passed for r in (passed, failed, error, skipped)] == [True, False, False, False]


def test_default_dimension_scores_name_all_five() -> None:
    assert dict(item("L0-000").dimension_scores) == dict.fromkeys(DIMENSIONS)


def test_sample_json_never_writes_the_cache_flag() -> None:
    s = SampleResult(parsed=True, refusal=False, violations=("a",), cached=True)
    data = s.to_json()
    assert "cached" not in data and data["violations"] == ["a"]
    back = SampleResult.from_json(data)
    assert back == s and back.cached is False  # cached is volatile: not compared


def test_item_json_uses_the_release_names() -> None:
    r = item("L2-000", valid_rate=0.5, tpv=120.0, d4_instruction_score=1.0,
             dimension_scores={"D1": 0.5, "D2": None, "D3": None, "D4": 1.0, "D5": None},
             level_score=0.75, missing_dimensions=("D2", "D3"))
    data = r.to_json()
    assert data["d1_valid_rate"] == 0.5 and data["d5_tokens_per_valid"] == 120.0
    assert data["d4_instruction_score"] == 1.0 and data["level_score"] == 0.75
    assert data["missing_dimensions"] == ["D2", "D3"]
    assert "valid_rate" not in data and "tpv" not in data
    assert ItemResult.from_json(json.loads(json.dumps(data))) == r


def test_item_from_json_fills_what_is_optional() -> None:
    r = ItemResult.from_json({"instruction_id": "L1-000", "level": 1, "cell": "m-zero-shot",
                              "model": "m", "strategy": "zero-shot", "outcome": "failed"})
    assert r == item("L1-000", outcome="failed")


def test_records_round_trip_one_by_one() -> None:
    rep = report(item("L0-000", level_score=0.5, tokens=10, d5_valid=1),
                 item("L0-001", level_score=0.9, tokens=30, d5_valid=1),
                 item("L1-000", outcome="error", error="timeout"))
    (cell,) = rep.cells
    assert CellMetadata.from_json(cell.metadata.to_json()) == cell.metadata
    assert CellSummary.from_json(cell.summary.to_json()) == cell.summary
    for row in cell.per_level.values():
        assert LevelRow.from_json(row.to_json()) == row
    assert ParetoSummary.from_json(rep.pareto.to_json()) == rep.pareto
    assert type(cell).from_json(cell.to_json()) == cell
    assert RunReport.from_json(json.loads(json.dumps(rep.to_json()))) == rep


def test_cell_lookup() -> None:
    rep = report(item("L0-000"))
    assert rep.labels == ("m-zero-shot",)
    assert rep.cell("m-zero-shot") is rep.cells[0]
    with pytest.raises(KeyError, match=r"no cell 'x' \(has: m-zero-shot\)"):
        rep.cell("x")
    with pytest.raises(KeyError, match=r"has: none"):
        RunReport(()).cell("x")


def test_scored_level_scores_leave_out_unscored_items() -> None:
    (cell,) = report(item("L0-000", level_score=0.5), item("L0-001"),
                     item("L1-000", outcome="error", level_score=0.9)).cells
    assert cell.scored_level_scores() == {"L0-000": (0, 0.5)}


def test_items_in_order() -> None:
    rs = [item("L0-002"), item("L0-000"), item("L9-999"), item("L0-001")]
    order = {"L0-000": 0, "L0-001": 1, "L0-002": 2}
    assert [r.instruction_id for r in items_in_order(rs, order)] == [
        "L0-000", "L0-001", "L0-002", "L9-999"]


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"schema": "graphinstruct-report/1"}, "not a graphinstruct-report/2 report (schema: "
                                               "'graphinstruct-report/1')"),
        ({}, "(schema: None)"),
        ([], "(schema: 'list')"),
        ({"schema": SCHEMA}, "missing field 'cells'"),
        ({"schema": SCHEMA, "cells": [{}]}, "missing field 'metadata'"),
        ({"schema": SCHEMA, "cells": 3}, "at cells: expected an array, got a number 3"),
        ({"schema": SCHEMA, "cells": [{"metadata": [], "summary": {}}]},
         "at cells[0].metadata: expected an object, got an array []"),
        ({"schema": SCHEMA, "cells": [], "extra": 1}, "unknown field 'extra'"),
    ],
)
def test_from_json_errors_are_one_line_report_errors(data: Any, fragment: str) -> None:
    with pytest.raises(ReportError) as info:
        RunReport.from_json(data)
    message = str(info.value)
    assert fragment in message and "\n" not in message
    assert isinstance(info.value, GraphInstructError) and isinstance(info.value, ValueError)


def test_a_bad_outcome_in_a_report_is_a_report_error() -> None:
    data = report(item("L0-000")).to_json()
    data["cells"][0]["per_instruction"][0]["outcome"] = "crashed"
    with pytest.raises(ReportError, match=r"per_instruction\[0\]\.outcome: expected one of "
                                          r"'passed', 'failed', 'error', 'skipped', got a "
                                          r"string 'crashed'"):
        RunReport.from_json(data)


def test_item_cluster_round_trips_and_is_optional_in_old_reports() -> None:
    r = item("L0-000", level_score=0.5, cluster="nodes_edges_directed")
    data = json.loads(json.dumps(r.to_json()))
    assert data["cluster"] == "nodes_edges_directed"
    assert ItemResult.from_json(data) == r
    del data["cluster"]  # a report written before clusters were kept
    assert ItemResult.from_json(data).cluster is None


def test_item_pass_share_counts_samples_without_any_violation() -> None:
    ok = SampleResult(parsed=True, refusal=False)
    bad = SampleResult(parsed=True, refusal=False, violations=("num_nodes=5",))
    derived = SampleResult(parsed=True, refusal=False, derived_violations=("no_self_loops",))
    broken = SampleResult(parsed=False, refusal=False, error="no graph found")
    assert item("L0-000", samples=(ok, bad, derived, broken, ok)).pass_share == 0.4
    assert item("L0-000").pass_share is None


@pytest.mark.parametrize("index,count", [(1, 10**20), (0, 4), (5, 4), (1, 100_001)])
def test_a_report_with_an_impossible_shard_is_refused(index: int, count: int) -> None:
    # a shard count read from a file bounds what merge builds (the list of missing shards)
    with pytest.raises(ValueError, match=f"shard {index}/{count} is impossible|index: 0 is "
                                         "below 1"):
        ShardSelection.from_json({"index": index, "count": count})


def test_the_largest_shard_count_reads() -> None:
    assert ShardSelection.from_json({"index": 3, "count": 100_000}).count == 100_000


def test_the_schema_vocabularies_agree_with_their_sources() -> None:
    from typing import get_args

    from pytest_graphinstruct.models.backends.recorded import PROBLEM_KINDS
    from pytest_graphinstruct.run.records.results import ProblemKind
    from pytest_graphinstruct.vocab import METHOD_BASELINE, METHOD_CONSTRAINED, METHODS, MethodName

    assert get_args(ProblemKind) == tuple(PROBLEM_KINDS)
    assert set(get_args(MethodName)) == {METHOD_BASELINE, METHOD_CONSTRAINED, *METHODS}


def test_a_replay_check_reads_back_and_a_wrong_total_is_refused() -> None:
    from pytest_graphinstruct.models.backends.recorded import RecordProblem, ReplayCheck
    from pytest_graphinstruct.run.records.results import RunInfo

    check = ReplayCheck("r.jsonl", 5, 3, 0, {"duplicate": 1, "malformed": 1},
                        (RecordProblem(2, "malformed", None, "not JSON"),))
    info = RunInfo(replay_problems=check)
    assert RunInfo.from_json(json.loads(json.dumps(info.to_json()))) == info
    data = info.to_json()
    data["replay_problems"]["total"] = 7
    with pytest.raises(ValueError, match="replay_problems: total 7 is not the sum of by_kind"):
        RunInfo.from_json(data)


def test_passing_reads_the_kept_count_else_counts_the_recorded_samples() -> None:
    ok = SampleResult(parsed=True, refusal=False)
    bad = SampleResult(parsed=True, refusal=False, derived_violations=("no_self_loops",))
    unparsed = SampleResult(parsed=False, refusal=False, error="no graph")
    base = ItemResult(instruction_id="L1-001", level=1, cell="m-zero-shot", model="m",
                      strategy="zero-shot", outcome="failed", samples=(ok, bad, unparsed))
    assert base.passing == 1 and base.passing_samples is None
    assert ItemResult.from_json({**base.to_json(), "passing_samples": 2}).passing == 2
    assert "passing_samples" not in base.to_json()  # older reports lack it and still read
    assert ItemResult.from_json(base.to_json()) == base
    assert ItemResult(instruction_id="L1-002", level=1, cell="m-zero-shot", model="m",
                      strategy="zero-shot", outcome="error").passing is None


def test_consistency_fields_are_optional_when_read() -> None:
    cell = build_cell(CellMetadata("m", "zero-shot"), [ItemResult(
        instruction_id="L1-001", level=1, cell="m-zero-shot", model="m", strategy="zero-shot",
        level_score=1.0, samples=(SampleResult(parsed=True, refusal=False),) * 2)])
    data = cell.to_json()
    assert data["flaky"] == [] and "consistency" in data["summary"]
    del data["flaky"], data["summary"]["consistency"], data["per_level"]["1"]["consistency"]
    older = type(cell).from_json(data)
    assert older.flaky is None and older.summary.consistency is None


def test_spend_is_omitted_while_not_recorded_and_reads_back() -> None:
    from pytest_graphinstruct.run.records.results import RunInfo, Spend

    assert "spend" not in RunInfo().to_json()  # oracle, replay, older reports: no key
    assert RunInfo.from_json(RunInfo().to_json()).spend is None
    priced = Spend(requests=12, retries=2, input_tokens=1000, output_tokens=300, cost=0.0125,
                   currency="USD", cached=4)
    unpriced = Spend(requests=1, retries=0, input_tokens=10, output_tokens=5, cost=None,
                     currency=None, cached=0)
    info = RunInfo(spend={"gpt-x": priced, "mystery": unpriced})
    data = json.loads(json.dumps(info.to_json()))
    assert data["spend"]["gpt-x"] == {"requests": 12, "retries": 2, "input_tokens": 1000,
                                      "output_tokens": 300, "cost": 0.0125, "currency": "USD",
                                      "cached": 4}
    assert RunInfo.from_json(data) == info
    assert RunInfo(spend={"gpt-x": priced}).spent == priced
    total = info.spent  # a model without a price leaves the total's cost unknown
    assert total is not None and (total.requests, total.cost, total.currency) == (13, None, None)
    assert priced.combined(priced) == Spend(24, 4, 2000, 600, 0.025, "USD", 8)
    interrupted = Spend(0, 0, 0, 0, 0.0, "USD", 0, in_flight=4)  # a batch still in flight
    assert interrupted.to_json()["in_flight"] == 4 and "in_flight" not in priced.to_json()
    assert Spend.from_json(interrupted.to_json()) == interrupted
    assert priced.combined(interrupted).in_flight == 4 and priced.combined(priced).in_flight is None
    data["spend"]["gpt-x"]["requests"] = -1
    with pytest.raises(ValueError, match="requests"):
        RunInfo.from_json(data)


def test_a_prompt_set_is_recorded_only_when_there_is_one_and_tells_cells_apart() -> None:
    plain = CellMetadata("m", "zero-shot")
    assert "prompts" not in plain.to_json() and plain.distinct_label == "m-zero-shot"
    assert describe_prompts(None) == "the packaged templates"
    terse = PromptSet("terse", "sha256:" + "ab" * 32, ("system_default",))
    mine = CellMetadata("m", "zero-shot", prompts=terse)
    assert mine.label == "m-zero-shot"  # gated against the same baseline cell
    assert mine.distinct_label == "m-zero-shot [prompts terse (sha256:abababababab…)]"
    assert CellMetadata.from_json(mine.to_json()) == mine
    assert CellMetadata.from_json(plain.to_json()).prompts is None  # older reports: none


def test_a_fingerprint_change_is_omitted_while_not_recorded_and_reads_back() -> None:
    """Issue 47 §9: a changed system_fingerprint is a typed field of the run record; reports
    from before it was kept (no key) still read, as ``None``."""
    from pytest_graphinstruct.run.records.results import FingerprintChange, RunInfo

    assert "fingerprint_changes" not in RunInfo().to_json()
    assert RunInfo.from_json(RunInfo().to_json()).fingerprint_changes is None
    change = FingerprintChange("gpt-4o-2024-08-06", "fp_new", {"fp_b": 1, "fp_a": 3})
    info = RunInfo(fingerprint_changes={"gpt-4o": change})
    data = json.loads(json.dumps(info.to_json()))
    assert data["fingerprint_changes"] == {"gpt-4o": {
        "snapshot": "gpt-4o-2024-08-06", "served": "fp_new", "cached": {"fp_b": 1, "fp_a": 3}}}
    assert RunInfo.from_json(data) == info
    assert change.line("gpt-4o") == (
        "gpt-4o: the endpoint serves gpt-4o-2024-08-06 (fp_new), and 4 answer(s) cached from "
        "gpt-4o-2024-08-06 came with another system_fingerprint (3 with fp_a, 1 with fp_b): "
        "reused (a fingerprint is shown, never compared), but the provider's backend "
        "configuration changed since")
    for bad in ({"cached": {"fp_a": 0}}, {"served": ""}, {"extra": 1}):
        broken = json.loads(json.dumps(data))
        broken["fingerprint_changes"]["gpt-4o"].update(bad)
        with pytest.raises(ValueError):
            RunInfo.from_json(broken)


def test_a_level_change_is_one_text_for_every_view() -> None:
    """Issue 48 §6: the change as level score and pass rate, the Holm-adjusted p-value
    labelled, the words and the note; the p-value of "no rise" where the change went up."""
    from pytest_graphinstruct.run.records.results import LevelChange, format_p

    x = LevelChange(2, 30, -0.059, -0.133, 0.015, 1.2e-7, True, pass_change=-0.1,
                    pass_low=-0.214, pass_high=0.014, p_drop_holm=1.2e-7, p_rise=1.0,
                    p_rise_holm=1.0, tests=1, verdict="regressed", note="both intervals reach 0")
    assert x.describe() == ("L2 level score -0.059 [-0.133, +0.015], pass rate -0.100 "
                            "[-0.214, +0.014]; Holm p(no drop)=1.2e-07: regressed (both "
                            "intervals reach 0)")
    assert x.short_text() == "-0.059, pass rate -0.100"
    assert LevelChange.from_json(json.loads(json.dumps(x.to_json()))) == x
    up = LevelChange(1, 80, 0.4, 0.39, 0.41, 1.0, False, p_drop_holm=1.0, p_rise=2e-4,
                     p_rise_holm=4e-4, tests=2, improved=True, verdict="improved")
    assert up.p_text() == "Holm p(no rise)=0.0004" and up.verdict_text() == "improved"
    auto = LevelChange(2, 30, -0.1, -0.214, 0.014, 0.002, True, measure="pass rate",
                       paired_samples=True, p_drop_holm=0.002)
    assert auto.changes_text() == "pass rate on paired samples -0.100 [-0.214, +0.014]"
    assert auto.short_text() == "pass rate on paired samples -0.100"
    assert [format_p(p) for p in (0.00061, 1.0, 0.0625, 1.23e-7)] == ["0.00061", "1", "0.062",
                                                                        "1.2e-07"]


def test_a_level_change_of_a_report_before_issue_48_reads_and_says_what_it_holds() -> None:
    """Reports written before issue 48 hold the fields up to ``detectable``, their ``p_drop``
    unadjusted: they read, and their p-value is shown as unadjusted."""
    from pytest_graphinstruct.run.records.results import LevelChange

    old = {"level": 2, "n": 60, "change": -0.253, "low": -0.337, "high": -0.17,
           "p_drop": 0.0001, "regressed": True, "detectable": 0.05}
    x = LevelChange.from_json(old)
    assert (x.measure, x.p_drop_holm, x.verdict, x.note) == ("level score", None, None, None)
    assert x.describe() == ("L2 level score -0.253 [-0.337, -0.170]; p(no drop)=0.0001 "
                            "unadjusted: regressed")
    none = LevelChange.from_json({**old, "p_drop": None, "regressed": False})
    assert none.p_text() == "p —" and none.verdict_text() == "—"
