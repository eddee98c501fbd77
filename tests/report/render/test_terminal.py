"""The terminal summary (report/render/terminal.py): what the CI
column belongs to, what "—" means."""

from __future__ import annotations

from pytest_graphinstruct.report.render.terminal import (
    FLAKY_SHOWN,
    consistency_lines,
    fingerprint_lines,
    spend_lines,
    summary_lines,
)
from pytest_graphinstruct.run.aggregate import build_cell, with_pareto
from pytest_graphinstruct.run.records.results import (
    CellMetadata,
    ItemResult,
    RunInfo,
    RunReport,
    SampleResult,
    Spend,
)


def _report(dims: dict[str, float]) -> RunReport:
    items = [ItemResult(instruction_id=f"L1-{n:03d}", level=1, cell="m-zero-shot", model="m",
                        strategy="zero-shot", outcome="passed", level_score=0.9,
                        dimension_scores=dims, tokens=10, d5_valid=1)
             for n in range(4)]
    return with_pareto([build_cell(CellMetadata("m", "zero-shot"), items)])


def _header(lines: list[str], first: str) -> str:
    return next(line for line in lines if line.startswith(first))


def test_the_s_total_ci_stands_beside_s_total_and_says_so() -> None:
    lines = summary_lines(_report({"D1": 1.0, "D4": 1.0, "D5": 0.5}))
    head = _header(lines, "cell (* Pareto-optimal)")
    assert "S_total 95% CI" in head
    assert head.index("S_total 95% CI") < head.index("S_total (levels run)")
    assert head.index("S_total ") < head.index("S_total 95% CI")
    level_head = _header(lines, "cell ")
    assert "S_level 95% CI" in level_head


def test_a_dash_in_a_dimension_column_has_a_legend() -> None:
    lines = summary_lines(_report({"D1": 1.0, "D4": 1.0, "D5": 0.5}))
    legend = [line for line in lines if line.startswith("— in a D column")]
    assert len(legend) == 1 and "has weight 0 there" in legend[0] and "D2" in legend[0]
    full = summary_lines(_report({"D1": 1.0, "D2": 0.5, "D3": 0.5, "D4": 1.0, "D5": 0.5}))
    assert not any(line.startswith("— in a D column") for line in full)


def test_labels_coverage_and_notes_from_outside_are_escaped() -> None:
    from dataclasses import replace

    from pytest_graphinstruct.report.render.terminal import warning_lines
    from pytest_graphinstruct.run.records.results import Coverage

    items = [ItemResult(instruction_id="L1-001", level=1, cell="m\x1b[2J-zero-shot",
                        model="m\x1b[2J", strategy="zero-shot", outcome="error",
                        error="HTTP 400")]
    report = replace(with_pareto([build_cell(CellMetadata("m\x1b[2J", "zero-shot"), items)]),
                     coverage=Coverage.partial("usage error: served \x1b]0;pwned\x07"))
    text = "\n".join([*summary_lines(report),
                      *warning_lines(["the endpoint serves \x1b]0;pwned\x07model"])])
    assert "\x1b" not in text and "\x07" not in text
    assert "m\\x1b[2J-zero-shot" in text and "\\x1b]0;pwned\\x07" in text


def _sampled(n_flaky: int, *, samples: int = 3) -> RunReport:
    """One always-right item and ``n_flaky`` items of one passing sample in ``samples``."""
    ok = SampleResult(parsed=True, refusal=False)
    items = [ItemResult(instruction_id=f"L1-{n:03d}", level=1, cell="m-zero-shot", model="m",
                        strategy="zero-shot", outcome="passed" if n == 0 else "failed",
                        level_score=0.9, samples=(ok,) * samples,
                        passing_samples=samples if n == 0 else 1 if samples > 1 else None)
             for n in range(n_flaky + 1)]
    return with_pareto([build_cell(CellMetadata("m", "zero-shot"), items)])


def test_consistency_is_shown_with_several_samples_and_the_flaky_list_is_capped() -> None:
    lines = summary_lines(_sampled(FLAKY_SHOWN + 2))
    head = _header(lines, "consistency over samples")
    table = lines[lines.index(head) + 1:]
    assert "pass@1 95% CI" in table[0] and "pass^k 95% CI" in table[0]
    row = next(line for line in table if line.startswith("m-zero-shot  all"))
    assert row.split()[2:5] == ["3", "13", "0"] and row.split()[-1] == "12"
    (flaky,) = [line for line in lines if "flaky (some samples pass" in line]
    assert flaky.startswith("m-zero-shot: flaky (some samples pass, some fail): L1-001 1/3, ")
    assert "L1-010 1/3 … and 2 more" in flaky and "L1-011" not in flaky


def test_one_sample_shows_no_consistency() -> None:
    assert consistency_lines(_sampled(2, samples=1)) == []
    assert not any("consistency" in line for line in summary_lines(_sampled(2, samples=1)))


def test_what_was_sent_is_one_line_over_every_model() -> None:
    a = Spend(requests=10, retries=2, input_tokens=12_000, output_tokens=3_000, cost=0.0123,
              currency="USD", cached=5)
    b = Spend(requests=0, retries=0, input_tokens=0, output_tokens=0, cost=0.0,
              currency="USD", cached=7)
    report = RunReport((), run=RunInfo(spend={"m": a, "n": b}))
    line = ("sent to the endpoints: 10 request(s) (2 of them retries), 12,000 input + 3,000 "
            "output tokens, 0.0123 USD at list price; 12 answer(s) from the cache (a request "
            "cells share is sent once and counted in each cell's API calls)")
    assert spend_lines(report.run) == [line] and summary_lines(report)[-1] == line
    free = Spend(requests=3, retries=0, input_tokens=9, output_tokens=9, cost=None,
                 currency=None, cached=0)
    unpriced = spend_lines(RunInfo(spend={"m": a, "x\x1b[31m": free}))
    assert "cost unknown (no price for x\\x1b[31m)" in unpriced[0]
    assert spend_lines(RunInfo()) == [] and spend_lines(None) == []


def test_requests_in_a_batch_still_in_flight_are_said_never_a_bare_zero() -> None:
    interrupted = Spend(requests=0, retries=0, input_tokens=0, output_tokens=0, cost=0.0,
                        currency="USD", cached=0, in_flight=1_200)
    (line,) = spend_lines(RunInfo(spend={"m": interrupted}))
    assert line == ("sent to the endpoints: 0 request(s), 0 input + 0 output tokens, 0 USD at "
                    "list price; 1,200 request(s) in batch(es) still in flight at the endpoint, "
                    "not counted above (billed when they finish; a rerun with --gi-batch on "
                    "this cache collects them); 0 answer(s) from the cache (a request cells "
                    "share is sent once and counted in each cell's API calls)")


def test_a_changed_fingerprint_is_one_escaped_line_per_model() -> None:
    from pytest_graphinstruct.run.records.results import FingerprintChange

    assert fingerprint_lines(None) == [] and fingerprint_lines(RunInfo()) == []
    hostile = FingerprintChange("s\x1b[2J1", "fp_\u202enew", {"fp_old\r": 2})
    plain = FingerprintChange("gpt-2024", "fp_b", {"fp_a": 1})
    lines = fingerprint_lines(RunInfo(fingerprint_changes={"z": hostile, "gpt": plain}))
    assert lines[0] == plain.line("gpt")  # by model name
    assert lines[1].startswith("z: the endpoint serves s\\x1b[2J1 (fp_\\u202enew), and 2 ")
    assert all(line.isprintable() for line in lines)
